/**
 * Hostile chunks against the real server of `hansard serve` (docs/api.md "Hostile input", the `chunk:`
 * rows): first lines that are no writer.start, later lines that are not events (stored as written and
 * quarantined) or odd ones that are, misrouted lines, a line longer than a chunk, empty and unterminated
 * chunks. The harness is test/support/hostile-input.ts.
 */
import { expect } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { MAX_CHUNK_BYTES } from '../../lib/service/index.js';
import { deep, describeHostile, type HostileCase, useHostileServer } from '../support/hostile-input.js';
import { type Answer, request } from '../support/http.js';
import { type LocalSegment, writeSession } from '../support/segments.js';

const hostile = useHostileServer();
const { srv, probe, chunkReq, get } = hostile;

const enc = new TextEncoder();

/** The first line of a fresh segment, parsed, to mutate. */
function firstLine(): { seg: LocalSegment; obj: Record<string, unknown> } {
  const seg = writeSession(srv.workDir, { open: true });
  return { seg, obj: JSON.parse(seg.lines[0]!.toString('utf8')) };
}

/** A first line with one envelope field of a wrong type. */
function badFirstLine(field: string, value: unknown): () => Promise<Answer> {
  return () => {
    const { seg, obj } = firstLine();
    return request(srv, chunkReq(seg.sid, seg.w, 0, `${JSON.stringify({ ...obj, [field]: value })}\n`));
  };
}

/** A writer whose writer.start is stored; `line(seq, fields)` builds its next lines. */
async function started(): Promise<{
  seg: LocalSegment;
  offset: number;
  line: (seq: number, fields?: Record<string, unknown>) => string;
}> {
  const seg = writeSession(srv.workDir, { open: true });
  const a = await request(srv, chunkReq(seg.sid, seg.w, 0, seg.lines[0]!));
  expect(a.status, a.text).toBe(201);
  const ts = JSON.parse(seg.lines[0]!.toString('utf8')).ts as string;
  const line = (seq: number, fields: Record<string, unknown> = {}) =>
    JSON.stringify({
      v: 3,
      sid: seg.sid,
      w: seg.w,
      seq,
      id: newId('e'),
      ts,
      mono: seq,
      type: 'note',
      author: 'hostile',
      text: 'a note',
      ...fields,
    });
  return { seg, offset: seg.lines[0]!.length, line };
}

/** Sends `body` as the second line(s) of a started writer. */
function laterLine(
  build: (line: (seq: number, f?: Record<string, unknown>) => string) => string | Uint8Array,
  after?: (st: Awaited<ReturnType<typeof started>>, sent: Uint8Array) => Promise<void>,
): { setup: () => Promise<void>; run: () => Promise<Answer>; check: (a: Answer) => Promise<void> } {
  let st: Awaited<ReturnType<typeof started>>;
  let sent: Uint8Array;
  return {
    setup: async () => {
      st = await started();
    },
    run: async () => {
      const b = build(st.line);
      sent = typeof b === 'string' ? enc.encode(b) : b;
      return request(srv, chunkReq(st.seg.sid, st.seg.w, st.offset, sent));
    },
    check: async () => {
      await after?.(st, sent);
    },
  };
}

/** A case on a writer whose writer.start is stored by its setup. */
function onStarted(run: (st: Awaited<ReturnType<typeof started>>) => Promise<Answer>): {
  setup: () => Promise<void>;
  run: () => Promise<Answer>;
} {
  let st: Awaited<ReturnType<typeof started>>;
  return {
    setup: async () => {
      st = await started();
    },
    run: () => run(st),
  };
}

/** Every read of the session answers 200 (none of them trips on what was stored). */
async function readsAnswer(sid: string): Promise<void> {
  for (const p of ['replay', 'replay?format=text', 'replay?raw=1', 'verify', 'inspect', 'attribution']) {
    const a = await get(`/v1/sessions/${sid}/${p}`);
    expect(a.status, `${p}: ${a.text.slice(0, 300)}`).toBe(200);
  }
  const page = await get(`/sessions/${sid}`);
  expect(page.status, page.text.slice(0, 300)).toBe(200);
  const board = await get('/v1/board');
  expect(board.status).toBe(200);
}

/**
 * The line (2 of its segment) was stored as written and quarantined: verify reports it, the segment and the
 * raw replay hold its bytes, the merged replay skips it, and every read still answers.
 */
async function expectQuarantined(st: Awaited<ReturnType<typeof started>>, sent: Uint8Array): Promise<void> {
  const body = Buffer.from(sent.subarray(0, sent.length - 1));
  const verify = await get(`/v1/sessions/${st.seg.sid}/verify`);
  expect(verify.json.problems).toContainEqual(expect.objectContaining({ code: 'malformed_line', line: 2 }));
  const segment = await get(`/v1/sessions/${st.seg.sid}/writers/${st.seg.w}/segment`);
  expect(segment.bytes.subarray(st.offset).equals(Buffer.from(sent))).toBe(true);
  const raw = await get(`/v1/sessions/${st.seg.sid}/replay?raw=1`);
  expect(raw.bytes.includes(body)).toBe(true);
  const merged = await get(`/v1/sessions/${st.seg.sid}/replay`);
  expect(merged.bytes.includes(body)).toBe(false);
  await readsAnswer(st.seg.sid);
}

/** The line was stored as an event: the merged replay gives its bytes as written. */
async function expectStoredAsEvent(st: Awaited<ReturnType<typeof started>>, sent: Uint8Array): Promise<void> {
  const merged = await get(`/v1/sessions/${st.seg.sid}/replay`);
  expect(merged.bytes.includes(Buffer.from(sent))).toBe(true);
  await readsAnswer(st.seg.sid);
}

const CASES: HostileCase[] = [
  ...(
    [
      ['v', '3'],
      ['sid', 42],
      ['w', null],
      ['seq', '1'],
      ['id', 7],
      ['ts', 1700000000],
      ['mono', '0.5'],
      ['type', ['writer.start']],
    ] as const
  ).map(
    ([field, value]): HostileCase => ({
      name: `a first line whose ${field} is ${JSON.stringify(value)}`,
      row: 'chunk: a first line that is not a parseable writer.start (a wrong type in any of v, sid, w, seq, id, ts, mono, type; an array; not JSON; nested too deep)',
      status: 400,
      code: 'missing_writer_start',
      run: badFirstLine(field, value),
      check: (a) => expect(a.json.error.details.line).toBe(1),
    }),
  ),
  {
    name: 'a first line that is a JSON array',
    row: 'chunk: a first line that is not a parseable writer.start (a wrong type in any of v, sid, w, seq, id, ts, mono, type; an array; not JSON; nested too deep)',
    status: 400,
    code: 'missing_writer_start',
    run: () => request(srv, chunkReq(newId('s'), newId('w'), 0, '[1,2,3]\n')),
  },
  {
    name: 'a first line that is not JSON',
    row: 'chunk: a first line that is not a parseable writer.start (a wrong type in any of v, sid, w, seq, id, ts, mono, type; an array; not JSON; nested too deep)',
    status: 400,
    code: 'missing_writer_start',
    run: () => request(srv, chunkReq(newId('s'), newId('w'), 0, 'hello\n')),
  },
  {
    name: 'a first line nested 10,000 deep',
    row: 'chunk: a first line that is not a parseable writer.start (a wrong type in any of v, sid, w, seq, id, ts, mono, type; an array; not JSON; nested too deep)',
    status: 400,
    code: 'missing_writer_start',
    run: () => {
      const { seg, obj } = firstLine();
      const line = JSON.stringify({ ...obj, meta: 'DEEP' }).replace('"DEEP"', deep(10_000));
      return request(srv, chunkReq(seg.sid, seg.w, 0, `${line}\n`));
    },
  },

  // --- chunks: later lines are stored as written; what is not an event is quarantined ---
  {
    name: 'a line of invalid UTF-8',
    row: 'chunk: a later line of invalid UTF-8, with a raw lone surrogate, NUL padding, envelope fields of wrong types, or nested more than 512 deep',
    status: 201,
    accepted: true,
    ...laterLine(
      (line) =>
        Buffer.concat([Buffer.from(line(2).slice(0, -2)), Buffer.from([0xc3, 0x28]), Buffer.from('"}\n')]),
      expectQuarantined,
    ),
  },
  {
    name: 'a line with a lone surrogate as raw bytes',
    row: 'chunk: a later line of invalid UTF-8, with a raw lone surrogate, NUL padding, envelope fields of wrong types, or nested more than 512 deep',
    status: 201,
    accepted: true,
    ...laterLine(
      (line) =>
        Buffer.concat([
          Buffer.from(line(2).slice(0, -2)),
          Buffer.from([0xed, 0xa0, 0x80]),
          Buffer.from('"}\n'),
        ]),
      expectQuarantined,
    ),
  },
  {
    name: 'a line of NUL padding',
    row: 'chunk: a later line of invalid UTF-8, with a raw lone surrogate, NUL padding, envelope fields of wrong types, or nested more than 512 deep',
    status: 201,
    accepted: true,
    ...laterLine(() => Buffer.concat([Buffer.alloc(64), Buffer.from('\n')]), expectQuarantined),
  },
  {
    name: 'a line whose seq is a string',
    row: 'chunk: a later line of invalid UTF-8, with a raw lone surrogate, NUL padding, envelope fields of wrong types, or nested more than 512 deep',
    status: 201,
    accepted: true,
    ...laterLine((line) => `${line(2, { seq: '2', mono: 'soon' })}\n`, expectQuarantined),
  },
  {
    name: 'a line nested 10,000 deep',
    row: 'chunk: a later line of invalid UTF-8, with a raw lone surrogate, NUL padding, envelope fields of wrong types, or nested more than 512 deep',
    status: 201,
    accepted: true,
    ...laterLine(
      (line) => `${line(2, { text: 'DEEP' }).replace('"DEEP"', deep(10_000))}\n`,
      expectQuarantined,
    ),
  },
  {
    name: 'an agent action whose input is nested 100,000 deep',
    row: 'chunk: a later line of invalid UTF-8, with a raw lone surrogate, NUL padding, envelope fields of wrong types, or nested more than 512 deep',
    status: 201,
    accepted: true,
    ...laterLine(
      (line) =>
        `${line(2, { type: 'agent.action', turn_id: newId('t'), tool: 'bash', input: 'DEEP', call_id: null, caused_by: null }).replace('"DEEP"', `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`)}\n`,
      expectQuarantined,
    ),
  },
  {
    name: 'a correction whose value is nested 10,000 deep',
    row: 'chunk: a later line of invalid UTF-8, with a raw lone surrogate, NUL padding, envelope fields of wrong types, or nested more than 512 deep',
    status: 201,
    accepted: true,
    ...laterLine(
      (line) =>
        `${line(2, { type: 'correction', target_id: newId('m'), field: 'text', value: 'DEEP', reason: 'r' }).replace('"DEEP"', deep(10_000))}\n`,
      expectQuarantined,
    ),
  },
  {
    name: 'an agent action nested 512 deep is an event, and the text replay shows it',
    row: 'chunk: a later line with an escaped lone surrogate, duplicate keys, a `__proto__` field, or nested at most 512 deep',
    status: 201,
    accepted: true,
    ...laterLine(
      (line) =>
        `${line(2, { type: 'agent.action', turn_id: newId('t'), tool: 'bash', input: 'DEEP', call_id: null, caused_by: null }).replace('"DEEP"', deep(511))}\n`,
      async (st, sent) => {
        await expectStoredAsEvent(st, sent);
        const text = await get(`/v1/sessions/${st.seg.sid}/replay?format=text`);
        expect(text.text).toContain(`bash ${'['.repeat(100)}`);
      },
    ),
  },
  {
    name: 'a line with an escaped lone surrogate is an event',
    row: 'chunk: a later line with an escaped lone surrogate, duplicate keys, a `__proto__` field, or nested at most 512 deep',
    status: 201,
    accepted: true,
    ...laterLine((line) => `${line(2).replace('"a note"', '"a \\ud800 note"')}\n`, expectStoredAsEvent),
  },
  {
    name: 'a line with duplicate keys: the last one wins wherever it is read',
    row: 'chunk: a later line with an escaped lone surrogate, duplicate keys, a `__proto__` field, or nested at most 512 deep',
    status: 201,
    accepted: true,
    ...laterLine(
      (line) => `${line(2, { text: 'first' }).slice(0, -1)},"text":"second"}\n`,
      async (st, sent) => {
        await expectStoredAsEvent(st, sent);
        const text = await get(`/v1/sessions/${st.seg.sid}/replay?format=text`);
        expect(text.text).toContain('second');
        expect(text.text).not.toContain('first');
      },
    ),
  },
  {
    name: 'a line with a __proto__ field keeps it, also once corrected, and pollutes nothing',
    row: 'chunk: a later line with an escaped lone surrogate, duplicate keys, a `__proto__` field, or nested at most 512 deep',
    status: 201,
    accepted: true,
    ...laterLine(
      (line) => {
        const msgId = newId('m');
        const msg = `${line(2, { id: msgId, type: 'message', user_id: 'u', text: 'helo' }).slice(0, -1)},"__proto__":{"polluted":true}}`;
        const fix = line(3, {
          type: 'correction',
          target_id: msgId,
          field: 'text',
          value: 'hello',
          reason: 'typo',
        });
        return `${msg}\n${fix}\n`;
      },
      async (st, sent) => {
        // the line as written is in the raw replay; the merged one gives its corrected view
        const raw = await get(`/v1/sessions/${st.seg.sid}/replay?raw=1`);
        expect(raw.bytes.includes(Buffer.from(sent))).toBe(true);
        await readsAnswer(st.seg.sid);
        const replay = await get(`/v1/sessions/${st.seg.sid}/replay`);
        const corrected = replay.text.split('\n').find((l) => l.includes('"corrected"'))!;
        expect(corrected).toContain('"text":"hello"');
        expect(corrected).toContain('"__proto__":{"polluted":true}');
        expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      },
    ),
  },
  {
    name: 'a line whose duplicate sid names another session last',
    row: 'chunk: a line naming another session or writer (duplicate keys: the last one counts)',
    status: 400,
    code: 'misrouted_line',
    ...onStarted((st) => {
      const body = `${st.line(2).slice(0, -1)},"sid":"${newId('s')}"}\n`;
      return request(srv, chunkReq(st.seg.sid, st.seg.w, st.offset, body));
    }),
    check: (a) => expect(a.json.error.details.line).toBe(2),
  },
  {
    name: 'one line of 5 MiB + 1 bytes',
    row: 'chunk: a line longer than a chunk (5 MiB + 1 bytes)',
    status: 413,
    code: 'payload_too_large',
    ...onStarted((st) => {
      const body = Buffer.alloc(MAX_CHUNK_BYTES + 1, 0x78);
      body[MAX_CHUNK_BYTES] = 0x0a;
      return request(srv, chunkReq(st.seg.sid, st.seg.w, st.offset, body));
    }),
    check: (a) => {
      const err = a.json.error;
      expect(err.details).toMatchObject({ max_bytes: MAX_CHUNK_BYTES, line: 2 });
      expect(err.message).toMatch(
        new RegExp(
          `^the line 2 at byte offset \\d+ of writer w_\\w+ is longer than ${MAX_CHUNK_BYTES} bytes`,
        ),
      );
    },
  },
  {
    name: 'an empty chunk',
    row: 'chunk: empty, or not ending with a newline',
    status: 400,
    code: 'empty_body',
    run: () => request(srv, chunkReq(probe.sid, probe.w, probe.bytes.length, '')),
  },
  {
    name: 'a chunk without its last newline',
    row: 'chunk: empty, or not ending with a newline',
    status: 400,
    code: 'incomplete_line',
    run: () => request(srv, chunkReq(probe.sid, probe.w, probe.bytes.length, '{"v":3')),
  },
  {
    name: 'a chunk sent as application/json',
    row: 'chunk: another content type (not checked: the body is read as NDJSON)',
    status: 201,
    accepted: true,
    run: async () => {
      const seg = writeSession(srv.workDir);
      return request(srv, {
        ...chunkReq(seg.sid, seg.w, 0, seg.bytes),
        headers: { 'content-type': 'application/json' },
      });
    },
  },
];

describeHostile('hostile chunks against the real server', hostile, ['chunk'], CASES);

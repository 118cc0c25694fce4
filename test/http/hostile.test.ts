/**
 * Hostile input against the real server of `hansard serve` (lib/cli/serve.ts `startServer`, port 0, a
 * temp data dir), so Node's own limits and timeouts apply: 431 for oversized headers, 400 for bytes that
 * are not HTTP, 408 for a client that stalls (timeouts shortened to 1 s / 1.5 s here).
 *
 * Each case is one row of a table: what is sent, the documented status (and error code where the app
 * answers), and whether anything may be stored. After every case the server still answers /healthz, and
 * for every refused case the tenant's segment files, its writer index, status, listing and tokens are
 * unchanged. Each case names the row of docs/api.md "Hostile input" it belongs to, and the last test
 * checks that the documented status there is the one the case asserts.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { MAX_CHUNK_BYTES } from '../../lib/service/index.js';
import { type Answer, expectError, type LocalSegment, writeSession } from './helpers.js';
import {
  expectAlive,
  type RawAnswer,
  type RealServer,
  type Req,
  rawExchange,
  rawJson,
  send,
  snapshot,
  startRealServer,
} from './suite-helpers.js';

let srv: RealServer;
/** the session and writer whose state every refused case must leave alone */
let probe: LocalSegment;

/** A case of the table. */
interface Case {
  name: string;
  /** the row of docs/api.md "Hostile input" this case belongs to */
  row: string;
  status: number;
  /** the error code of the JSON answer (absent: a success, or Node answered without a body) */
  code?: string;
  /** the input is accepted: stored data may change */
  accepted?: boolean;
  /** what the case needs stored first (not part of what must stay unchanged) */
  setup?: () => Promise<void>;
  run: () => Promise<Answer | RawAnswer>;
  check?: (a: Answer) => Promise<void> | void;
}

const admin = () => srv.admin;
const enc = new TextEncoder();

function statusReq(body: string | Uint8Array, headers: Record<string, string> = {}): Req {
  return {
    method: 'POST',
    path: `/v1/sessions/${newId('s')}/status`,
    token: admin(),
    body,
    headers: { 'content-type': 'application/json', ...headers },
  };
}

/** A POST of a status body to a fresh session. */
const status = (body: string | Uint8Array, headers?: Record<string, string>) => () =>
  send(srv, statusReq(body, headers));

function chunkReq(sid: string, w: string, offset: number | string, body: string | Uint8Array): Req {
  return {
    method: 'POST',
    path: `/v1/sessions/${sid}/writers/${w}/chunks?offset=${offset}`,
    token: admin(),
    body,
  };
}

/** The first line of a fresh segment, parsed, to mutate. */
function firstLine(): { seg: LocalSegment; obj: Record<string, unknown> } {
  const seg = writeSession(srv.workDir, { open: true });
  return { seg, obj: JSON.parse(seg.lines[0]!.toString('utf8')) };
}

/** A first line with one envelope field of a wrong type. */
function badFirstLine(field: string, value: unknown): () => Promise<Answer> {
  return () => {
    const { seg, obj } = firstLine();
    return send(srv, chunkReq(seg.sid, seg.w, 0, `${JSON.stringify({ ...obj, [field]: value })}\n`));
  };
}

/** A writer whose writer.start is stored; `line(seq, fields)` builds its next lines. */
async function started(): Promise<{
  seg: LocalSegment;
  offset: number;
  line: (seq: number, fields?: Record<string, unknown>) => string;
}> {
  const seg = writeSession(srv.workDir, { open: true });
  const a = await send(srv, chunkReq(seg.sid, seg.w, 0, seg.lines[0]!));
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
      return send(srv, chunkReq(st.seg.sid, st.seg.w, st.offset, sent));
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

const get = (path: string) => send(srv, { method: 'GET', path, token: admin() });

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

const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
const H = () => `Host: 127.0.0.1\r\nAuthorization: Bearer ${admin()}\r\n`;

const statusOf = async (sid: string) => (await get(`/v1/sessions/${sid}/status`)).json;

const CASES: Case[] = [
  // --- JSON bodies (a status report to a fresh session: a refused one must not create it) ---
  {
    name: 'a status body that is not JSON',
    row: 'JSON body: not JSON, a JSON array, string or null',
    status: 400,
    code: 'invalid_body',
    run: status('state=working'),
  },
  {
    name: 'a status body that is a JSON array',
    row: 'JSON body: not JSON, a JSON array, string or null',
    status: 400,
    code: 'invalid_body',
    run: status('[{"state":"working"}]'),
  },
  {
    name: 'a status body that is a JSON string',
    row: 'JSON body: not JSON, a JSON array, string or null',
    status: 400,
    code: 'invalid_body',
    run: status('"working"'),
  },
  {
    name: 'a status body that is null',
    row: 'JSON body: not JSON, a JSON array, string or null',
    status: 400,
    code: 'invalid_body',
    run: status('null'),
  },
  {
    name: 'a status body with every field of a wrong type',
    row: 'JSON body: a field of a wrong type, an unknown field',
    status: 400,
    code: 'invalid_body',
    run: status('{"state":1,"note":["x"],"events":{"kind":"plan"}}'),
    check: (a) => {
      const paths = a.json.error.details.issues.map((i: { path: string }) => i.path).sort();
      expect(paths).toEqual(['events', 'note', 'state']);
    },
  },
  {
    name: 'a status body with invalid UTF-8',
    row: 'JSON body: invalid UTF-8',
    status: 400,
    code: 'invalid_body',
    run: status(
      Buffer.concat([
        Buffer.from('{"state":"working","note":"'),
        Buffer.from([0xff, 0xfe]),
        Buffer.from('"}'),
      ]),
    ),
    check: (a) => expect(a.json.error.message).toContain('UTF-8'),
  },
  {
    name: 'a status body with an escaped lone surrogate',
    row: 'JSON body: a lone surrogate, escaped (`"\\ud800"`) or as raw bytes',
    status: 400,
    code: 'invalid_body',
    run: status('{"state":"working","note":"x\\ud800y"}'),
    check: (a) => expect(a.json.error.message).toContain('surrogate'),
  },
  {
    name: 'a status body with an escaped lone surrogate in a key',
    row: 'JSON body: a lone surrogate, escaped (`"\\ud800"`) or as raw bytes',
    status: 400,
    code: 'invalid_body',
    run: status('{"state":"working","\\udc00":1}'),
  },
  {
    name: 'a status body with a lone surrogate as raw bytes (ED A0 80)',
    row: 'JSON body: a lone surrogate, escaped (`"\\ud800"`) or as raw bytes',
    status: 400,
    code: 'invalid_body',
    run: status(
      Buffer.concat([
        Buffer.from('{"state":"working","note":"'),
        Buffer.from([0xed, 0xa0, 0x80]),
        Buffer.from('"}'),
      ]),
    ),
  },
  {
    name: 'a status body with a surrogate pair (an emoji, escaped) is fine',
    row: 'JSON body: a surrogate pair, escaped',
    status: 201,
    accepted: true,
    run: status('{"state":"working","note":"ship \\ud83d\\ude80"}'),
    check: (a) => expect(a.json.note).toBe('ship 🚀'),
  },
  {
    name: 'a status body with a raw NUL byte',
    row: 'JSON body: a raw NUL byte',
    status: 400,
    code: 'invalid_body',
    run: status(
      Buffer.concat([Buffer.from('{"state":"working","note":"a'), Buffer.from([0]), Buffer.from('b"}')]),
    ),
  },
  {
    name: 'a status note with an escaped NUL is kept exactly',
    row: 'JSON body: an escaped NUL (`"\\u0000"`) in a string',
    status: 201,
    accepted: true,
    run: status('{"state":"working","note":"a\\u0000b"}'),
    check: async (a) => {
      expect(a.json.note).toBe('a\u0000b');
      expect((await statusOf(a.json.sid)).note).toBe('a\u0000b');
    },
  },
  {
    name: 'a status body nested 10,000 deep',
    row: 'JSON body: nested 10,000 deep',
    status: 400,
    code: 'invalid_body',
    run: status(`{"state":${deep(10_000)}}`),
  },
  {
    name: 'a status body nested 10,000 deep under an unknown key',
    row: 'JSON body: nested 10,000 deep',
    status: 400,
    code: 'invalid_body',
    run: status(`{"state":"working","x":${deep(10_000)}}`),
  },
  {
    name: 'a note of 241 characters',
    row: 'status: a note over 240 characters, a ref over 160, more than 4 events or evidence items',
    status: 400,
    code: 'invalid_body',
    run: status(JSON.stringify({ state: 'working', note: 'n'.repeat(241) })),
    check: (a) => expect(a.json.error.details.issues[0].path).toBe('note'),
  },
  {
    name: 'a note of exactly 240 characters',
    row: 'status: a note of exactly 240 characters',
    status: 201,
    accepted: true,
    run: status(JSON.stringify({ state: 'working', note: 'n'.repeat(240) })),
  },
  {
    name: 'an evidence ref of 161 characters',
    row: 'status: a note over 240 characters, a ref over 160, more than 4 events or evidence items',
    status: 400,
    code: 'invalid_body',
    run: status(
      JSON.stringify({
        state: 'done',
        events: [
          { kind: 'evidence', evidence: [{ type: 'file', ref: 'r'.repeat(161), result: 'modified' }] },
        ],
      }),
    ),
    check: (a) => expect(a.json.error.details.issues[0].path).toBe('events.0.evidence.0.ref'),
  },
  {
    name: 'five events',
    row: 'status: a note over 240 characters, a ref over 160, more than 4 events or evidence items',
    status: 400,
    code: 'invalid_body',
    run: status(JSON.stringify({ state: 'done', events: Array(5).fill({ kind: 'plan' }) })),
  },
  {
    name: 'duplicate keys: the last one wins, in the answer and in what is stored',
    row: 'JSON body: duplicate keys',
    status: 201,
    accepted: true,
    run: status('{"state":"working","note":"first","state":"done","note":"second"}'),
    check: async (a) => {
      expect(a.json).toMatchObject({ state: 'done', note: 'second' });
      expect(await statusOf(a.json.sid)).toMatchObject({ state: 'done', note: 'second' });
      const board = await get('/v1/board');
      const row = board.json.sessions.find((s: { sid: string }) => s.sid === a.json.sid);
      expect(row).toMatchObject({ state: 'done', note: 'second' });
    },
  },
  {
    name: 'a __proto__ key in a status body',
    row: 'JSON body: `__proto__`, `constructor` or `prototype` keys',
    status: 400,
    code: 'invalid_body',
    run: status('{"state":"working","__proto__":{"polluted":true}}'),
    check: (a) => expect(JSON.stringify(a.json.error.details)).toContain('__proto__'),
  },
  {
    name: 'a constructor.prototype key in a status body',
    row: 'JSON body: `__proto__`, `constructor` or `prototype` keys',
    status: 400,
    code: 'invalid_body',
    run: status('{"state":"working","constructor":{"prototype":{"polluted":true}}}'),
  },
  {
    name: 'a __proto__ key in a token request',
    row: 'JSON body: `__proto__`, `constructor` or `prototype` keys',
    status: 400,
    code: 'invalid_body',
    run: () =>
      send(srv, {
        method: 'POST',
        path: '/v1/tokens',
        token: admin(),
        body: '{"scopes":["read"],"__proto__":{"scopes":["admin"]}}',
        headers: { 'content-type': 'application/json' },
      }),
  },
  {
    name: 'an empty status body',
    row: 'JSON body: empty or only whitespace',
    status: 400,
    code: 'empty_body',
    run: status(''),
  },
  {
    name: 'a status body of whitespace',
    row: 'JSON body: empty or only whitespace',
    status: 400,
    code: 'empty_body',
    run: status(' \r\n\t '),
  },
  {
    name: 'a status body over 256 KiB',
    row: 'JSON body: over 256 KiB (declared or streamed)',
    status: 413,
    code: 'payload_too_large',
    run: status(JSON.stringify({ state: 'working', note: 'n'.repeat(300 * 1024) })),
  },
  {
    name: 'a streamed status body over 256 KiB (no Content-Length)',
    row: 'JSON body: over 256 KiB (declared or streamed)',
    status: 413,
    code: 'payload_too_large',
    run: async () => {
      let sent = 0;
      const body = new ReadableStream<Uint8Array>({
        pull(controller) {
          if (sent === 0) controller.enqueue(enc.encode('{"state":"working","note":"'));
          else if (sent > 40) controller.close();
          else controller.enqueue(enc.encode('n'.repeat(8192)));
          sent += 1;
        },
      });
      const res = await fetch(`${srv.url}/v1/sessions/${newId('s')}/status`, {
        method: 'POST',
        headers: { authorization: `Bearer ${admin()}`, 'content-type': 'application/json' },
        body,
        duplex: 'half',
      } as RequestInit);
      const bytes = Buffer.from(await res.arrayBuffer());
      const text = bytes.toString('utf8');
      return { status: res.status, headers: res.headers, bytes, text, json: JSON.parse(text) };
    },
  },
  {
    name: 'a status body sent as text/plain',
    row: 'JSON body: another content type (the type is not checked; the body must be JSON)',
    status: 201,
    accepted: true,
    run: status('{"state":"working"}', { 'content-type': 'text/plain' }),
  },
  {
    name: 'a status body sent as a form',
    row: 'JSON body: another content type (the type is not checked; the body must be JSON)',
    status: 400,
    code: 'invalid_body',
    run: status('state=working', { 'content-type': 'application/x-www-form-urlencoded' }),
  },

  // --- chunks: the first line of a new segment ---
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
    ([field, value]): Case => ({
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
    run: () => send(srv, chunkReq(newId('s'), newId('w'), 0, '[1,2,3]\n')),
  },
  {
    name: 'a first line that is not JSON',
    row: 'chunk: a first line that is not a parseable writer.start (a wrong type in any of v, sid, w, seq, id, ts, mono, type; an array; not JSON; nested too deep)',
    status: 400,
    code: 'missing_writer_start',
    run: () => send(srv, chunkReq(newId('s'), newId('w'), 0, 'hello\n')),
  },
  {
    name: 'a first line nested 10,000 deep',
    row: 'chunk: a first line that is not a parseable writer.start (a wrong type in any of v, sid, w, seq, id, ts, mono, type; an array; not JSON; nested too deep)',
    status: 400,
    code: 'missing_writer_start',
    run: () => {
      const { seg, obj } = firstLine();
      const line = JSON.stringify({ ...obj, meta: 'DEEP' }).replace('"DEEP"', deep(10_000));
      return send(srv, chunkReq(seg.sid, seg.w, 0, `${line}\n`));
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
      return send(srv, chunkReq(st.seg.sid, st.seg.w, st.offset, body));
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
      return send(srv, chunkReq(st.seg.sid, st.seg.w, st.offset, body));
    }),
    check: (a) => {
      const err = a.json.error;
      expect(err.details).toMatchObject({ max_bytes: MAX_CHUNK_BYTES, line: 2 });
      expect(err.message).toMatch(
        /^the line 2 at byte offset \d+ of writer w_\w+ is longer than 5242880 bytes/,
      );
    },
  },
  {
    name: 'an empty chunk',
    row: 'chunk: empty, or not ending with a newline',
    status: 400,
    code: 'empty_body',
    run: () => send(srv, chunkReq(probe.sid, probe.w, probe.bytes.length, '')),
  },
  {
    name: 'a chunk without its last newline',
    row: 'chunk: empty, or not ending with a newline',
    status: 400,
    code: 'incomplete_line',
    run: () => send(srv, chunkReq(probe.sid, probe.w, probe.bytes.length, '{"v":3')),
  },
  {
    name: 'a chunk sent as application/json',
    row: 'chunk: another content type (not checked: the body is read as NDJSON)',
    status: 201,
    accepted: true,
    run: async () => {
      const seg = writeSession(srv.workDir);
      return send(srv, {
        ...chunkReq(seg.sid, seg.w, 0, seg.bytes),
        headers: { 'content-type': 'application/json' },
      });
    },
  },

  // --- ids in paths ---
  ...[
    ['s_bad', 's_bad'],
    ['a lowercase ULID', `s_${newId('s').slice(2).toLowerCase()}`],
    ['27 characters', `${newId('s')}A`],
    ['an encoded ../..', '..%2F..%2Ftenants'],
    ['an encoded NUL', `s_%00${newId('s').slice(3)}`],
    ['unicode dots (one-dot leaders)', '%E2%80%A4%E2%80%A4'],
    ['fullwidth dots and slash', '%EF%BC%8E%EF%BC%8E%EF%BC%8F'],
    ['a double-encoded ../', '%252E%252E%252F'],
    ['encoded backslashes', '..%5C..%5Ctenants'],
    ['overlong UTF-8 dots', '%C0%AE%C0%AE'],
    ['an 8 KiB id', `s_${'A'.repeat(8 * 1024)}`],
  ].map(
    ([what, sid]): Case => ({
      name: `a session id that is ${what}`,
      row: 'path: an id that is not s_/w_/tok_ + ULID (s_bad, lowercase, 27 characters, `..%2F..`, `%00`, unicode or fullwidth dots, double-encoded, backslashes)',
      status: 400,
      code: 'invalid_id',
      run: () => get(`/v1/sessions/${sid}/status`),
      check: (a) => expect(a.json.error.details).toEqual({ param: 'sid' }),
    }),
  ),
  {
    name: 'a writer id with an encoded ../',
    row: 'path: an id that is not s_/w_/tok_ + ULID (s_bad, lowercase, 27 characters, `..%2F..`, `%00`, unicode or fullwidth dots, double-encoded, backslashes)',
    status: 400,
    code: 'invalid_id',
    run: () => send(srv, chunkReq(probe.sid, '..%2F..%2Fstate.sqlite', 0, probe.bytes)),
    check: (a) => expect(a.json.error.details).toEqual({ param: 'w' }),
  },
  {
    name: 'a token id with an encoded ../',
    row: 'path: an id that is not s_/w_/tok_ + ULID (s_bad, lowercase, 27 characters, `..%2F..`, `%00`, unicode or fullwidth dots, double-encoded, backslashes)',
    status: 400,
    code: 'invalid_id',
    run: () => send(srv, { method: 'DELETE', path: '/v1/tokens/tok_..%2F..', token: admin() }),
    check: (a) => expect(a.json.error.details).toEqual({ param: 'id' }),
  },
  {
    name: 'a raw ../../ path (not normalized by the client)',
    row: 'path: dot segments, raw or `%2e%2e` (resolved before routing, as URLs are: they only reach another route, under its own auth)',
    status: 404,
    code: 'not_found',
    run: () =>
      rawExchange(srv.port, [`GET /v1/../../../../etc/passwd HTTP/1.1\r\n${H()}Connection: close\r\n\r\n`]),
  },
  {
    name: 'a %2e%2e path that resolves to the token listing, with a read token',
    row: 'path: dot segments, raw or `%2e%2e` (resolved before routing, as URLs are: they only reach another route, under its own auth)',
    status: 403,
    code: 'forbidden',
    ...(() => {
      let read = '';
      return {
        setup: async () => {
          const a = await send(srv, {
            method: 'POST',
            path: '/v1/tokens',
            token: admin(),
            json: { scopes: ['read'] },
          });
          read = a.json.token;
        },
        run: () =>
          rawExchange(srv.port, [
            `GET /v1/sessions/x/%2e%2e/%2e%2e/tokens HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${read}\r\nConnection: close\r\n\r\n`,
          ]),
      };
    })(),
  },

  // --- query strings ---
  {
    name: 'an offset given twice',
    row: 'query: a parameter given twice (`?offset=1&offset=2`)',
    status: 400,
    code: 'bad_request',
    run: () => send(srv, chunkReq(probe.sid, probe.w, `${probe.bytes.length}&offset=0`, probe.lines[1]!)),
    check: (a) => expect(a.json.error.details).toEqual({ param: 'offset' }),
  },
  {
    name: 'a limit given twice',
    row: 'query: a parameter given twice (`?offset=1&offset=2`)',
    status: 400,
    code: 'bad_request',
    run: () => get('/v1/sessions?limit=1&limit=200'),
  },
  {
    name: 'offset[]=0 instead of offset',
    row: 'query: a missing, non-decimal, negative or oversized offset or limit',
    status: 400,
    code: 'bad_request',
    run: () =>
      send(srv, {
        ...chunkReq(probe.sid, probe.w, 0, probe.bytes),
        path: `/v1/sessions/${probe.sid}/writers/${probe.w}/chunks?offset[]=0`,
      }),
  },
  ...[
    ['an offset of 20 digits', `/v1/sessions/SID/writers/W/chunks?offset=${'9'.repeat(20)}`],
    ['an offset past 2^53', '/v1/sessions/SID/writers/W/chunks?offset=9007199254740993'],
    ['a negative offset', '/v1/sessions/SID/writers/W/chunks?offset=-1'],
    ['an offset in hex', '/v1/sessions/SID/writers/W/chunks?offset=0x10'],
    ['a limit of 1e9', '/v1/sessions?limit=1e9'],
    ['a negative limit', '/v1/sessions?limit=-1'],
    ['a limit of 0', '/v1/sessions?limit=0'],
    ['a fractional limit', '/v1/sessions?limit=1.5'],
  ].map(
    ([what, path]): Case => ({
      name: what!,
      row: 'query: a missing, non-decimal, negative or oversized offset or limit',
      status: 400,
      code: 'bad_request',
      run: () => {
        const p = path!.replace('SID', probe.sid).replace('/W/', `/${probe.w}/`);
        return send(srv, {
          method: p.includes('chunks') ? 'POST' : 'GET',
          path: p,
          token: admin(),
          body: p.includes('chunks') ? probe.lines[1]! : undefined,
        });
      },
    }),
  ),
  {
    name: 'an unknown replay format',
    row: 'query: an unknown `format` or `raw` value',
    status: 400,
    code: 'bad_request',
    run: () => get(`/v1/sessions/${probe.sid}/replay?format=xml`),
  },
  {
    name: 'raw=yes',
    row: 'query: an unknown `format` or `raw` value',
    status: 400,
    code: 'bad_request',
    run: () => get(`/v1/sessions/${probe.sid}/replay?raw=yes`),
  },
  ...['token', 'access_token'].flatMap((param) =>
    ['/v1/sessions', '/v1/board'].map(
      (path): Case => ({
        name: `a token in ?${param}= on ${path}`,
        row: 'auth: a token in the query string of an API route (never read), a wrong scheme, an unknown token',
        status: 401,
        code: 'unauthorized',
        run: () => send(srv, { method: 'GET', path: `${path}?${param}=${admin()}` }),
      }),
    ),
  ),
  {
    name: 'Basic instead of Bearer',
    row: 'auth: a token in the query string of an API route (never read), a wrong scheme, an unknown token',
    status: 401,
    code: 'unauthorized',
    run: () =>
      send(srv, { method: 'GET', path: '/v1/sessions', headers: { authorization: `Basic ${admin()}` } }),
  },
  {
    name: 'a well-formed token that was never issued',
    row: 'auth: a token in the query string of an API route (never read), a wrong scheme, an unknown token',
    status: 401,
    code: 'unauthorized',
    run: () => send(srv, { method: 'GET', path: '/v1/sessions', token: `hns_${'z'.repeat(43)}` }),
  },

  // --- HTTP itself (raw sockets: Node answers, without a JSON body, and closes) ---
  {
    name: 'a Content-Length larger than the body, then silence',
    row: 'HTTP: a Content-Length larger than the body, then silence',
    status: 408,
    run: async () => {
      const a = await rawExchange(
        srv.port,
        [
          `POST /v1/sessions/${probe.sid}/writers/${probe.w}/chunks?offset=${probe.bytes.length} HTTP/1.1\r\n${H()}Content-Type: application/x-ndjson\r\nContent-Length: 100000\r\n\r\n`,
          probe.lines[1]!,
        ],
        { gapMs: 50, waitMs: 10_000 },
      );
      expect(a.closed).toBe(true);
      expect(a.ms).toBeLessThan(8000);
      return a;
    },
  },
  {
    name: 'a Content-Length smaller than the body',
    row: 'HTTP: a Content-Length smaller than the body, both Content-Length and chunked, bad chunk framing, a NUL in a header, an unknown method, no Host',
    status: 400,
    run: async () => {
      const body = `{"state":"working","note":"the rest of this is not a request"}`;
      const a = await rawExchange(srv.port, [
        `POST /v1/sessions/${newId('s')}/status HTTP/1.1\r\n${H()}Content-Type: application/json\r\nContent-Length: 10\r\n\r\n${body}`,
      ]);
      expect(a.closed).toBe(true);
      return a;
    },
  },
  {
    name: 'both Content-Length and Transfer-Encoding: chunked',
    row: 'HTTP: a Content-Length smaller than the body, both Content-Length and chunked, bad chunk framing, a NUL in a header, an unknown method, no Host',
    status: 400,
    run: () =>
      rawExchange(srv.port, [
        `POST /v1/sessions/${newId('s')}/status HTTP/1.1\r\n${H()}Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`,
      ]),
  },
  {
    name: 'chunked framing with a chunk size that is not hex',
    row: 'HTTP: a Content-Length smaller than the body, both Content-Length and chunked, bad chunk framing, a NUL in a header, an unknown method, no Host',
    status: 400,
    run: () =>
      rawExchange(srv.port, [
        `POST /v1/sessions/${newId('s')}/status HTTP/1.1\r\n${H()}Transfer-Encoding: chunked\r\n\r\nZZ\r\n{"state":"done"}\r\n0\r\n\r\n`,
      ]),
  },
  {
    name: 'a NUL byte in a header value',
    row: 'HTTP: a Content-Length smaller than the body, both Content-Length and chunked, bad chunk framing, a NUL in a header, an unknown method, no Host',
    status: 400,
    run: () => rawExchange(srv.port, [`GET /v1/sessions HTTP/1.1\r\n${H()}X-Note: a\0b\r\n\r\n`]),
  },
  {
    name: 'an unknown method',
    row: 'HTTP: a Content-Length smaller than the body, both Content-Length and chunked, bad chunk framing, a NUL in a header, an unknown method, no Host',
    status: 400,
    run: () => rawExchange(srv.port, [`BREW /v1/sessions HTTP/1.1\r\n${H()}\r\n`]),
  },
  {
    name: 'an HTTP/1.1 request without Host',
    row: 'HTTP: a Content-Length smaller than the body, both Content-Length and chunked, bad chunk framing, a NUL in a header, an unknown method, no Host',
    status: 400,
    run: () =>
      rawExchange(srv.port, [`GET /v1/sessions HTTP/1.1\r\nAuthorization: Bearer ${admin()}\r\n\r\n`]),
  },
  {
    name: 'headers sent a byte every 100 ms',
    row: 'HTTP: headers sent slowly (slower than the headers timeout)',
    status: 408,
    run: async () => {
      const head = `GET /v1/sessions HTTP/1.1\r\n${H()}X-Slow: ${'s'.repeat(40)}\r\n\r\n`;
      const a = await rawExchange(srv.port, head.split(''), { gapMs: 100, waitMs: 12_000 });
      // sending it all would take over 10 s: the server closed the connection long before
      expect(a.closed).toBe(true);
      expect(a.ms).toBeLessThan(8000);
      return a;
    },
  },
  {
    name: 'a 64 KiB cookie',
    row: 'HTTP: headers over 16 KiB (a 64 KiB cookie, a 20 KiB URL)',
    status: 431,
    run: () =>
      rawExchange(srv.port, [
        `GET /v1/sessions HTTP/1.1\r\n${H()}Cookie: c=${'c'.repeat(64 * 1024)}\r\n\r\n`,
      ]),
  },
  {
    name: 'a 20 KiB URL',
    row: 'HTTP: headers over 16 KiB (a 64 KiB cookie, a 20 KiB URL)',
    status: 431,
    run: () => rawExchange(srv.port, [`GET /v1/sessions/s_${'A'.repeat(20 * 1024)} HTTP/1.1\r\n${H()}\r\n`]),
  },
];

beforeAll(async () => {
  srv = await startRealServer();
  probe = writeSession(srv.workDir, { open: true });
  const a = await send(srv, chunkReq(probe.sid, probe.w, 0, probe.bytes));
  expect(a.status, a.text).toBe(201);
  const st = await send(srv, {
    method: 'POST',
    path: `/v1/sessions/${probe.sid}/status`,
    token: admin(),
    json: { state: 'working', note: 'holding still' },
  });
  expect(st.status, st.text).toBe(201);
});

afterAll(async () => {
  if (!srv) return;
  // No hostile input made the app fail (an unhandled error is logged), and nothing logged a token.
  expect(srv.logged).toEqual([]);
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  await srv.close();
});

describe('hostile input against the real server', () => {
  it('has at least 40 cases', () => {
    expect(CASES.length).toBeGreaterThanOrEqual(40);
    expect(new Set(CASES.map((c) => c.name)).size).toBe(CASES.length);
  });

  for (const c of CASES) {
    it(`${c.name}: ${c.status}${c.code ? ` ${c.code}` : ''}${c.accepted ? ' (accepted)' : ''}`, async () => {
      await c.setup?.();
      const before = await snapshot(srv, admin(), probe);
      const a = await c.run();
      if ('headers' in a) {
        if (c.code) expectError(srv, a, c.status, c.code);
        else expect(a.status, a.text.slice(0, 500)).toBe(c.status);
        await c.check?.(a);
      } else {
        expect(a.status, a.received.slice(0, 500)).toBe(c.status);
        if (c.code) {
          const body = rawJson(a) as { error: { code: string; message: string; details: object } };
          expect(Object.keys(body)).toEqual(['error']);
          expect(body.error.code).toBe(c.code);
          expect(Object.keys(body.error).sort()).toEqual(['code', 'details', 'message']);
        }
      }
      await expectAlive(srv);
      if (!c.accepted) expect(await snapshot(srv, admin(), probe)).toEqual(before);
    });
  }

  it('every case’s status is the one docs/api.md "Hostile input" gives for its row', () => {
    const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Hostile input'));
    const rows = new Map<string, string>();
    for (const line of section.split('\n').slice(1)) {
      if (line.startsWith('## ')) break;
      const m = /^\| (.+) \| (.+) \|$/.exec(line);
      if (m && !m[1]!.startsWith('---') && m[1] !== 'what is sent') rows.set(m[1]!, m[2]!);
    }
    for (const c of CASES) {
      const answer = rows.get(c.row);
      expect(answer, `docs/api.md has no Hostile input row "${c.row}"`).toBeDefined();
      expect(answer!.includes(String(c.status)), `${c.name}: ${answer}`).toBe(true);
      if (c.code) expect(answer!.includes(`\`${c.code}\``), `${c.name}: ${answer}`).toBe(true);
    }
    // and no row is left without a case
    const used = new Set(CASES.map((c) => c.row));
    expect([...rows.keys()].filter((r) => !used.has(r))).toEqual([]);
  });
});

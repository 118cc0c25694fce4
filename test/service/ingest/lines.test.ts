/**
 * Ingest's line checks with the byte scan (`scanLines`, lib/service/ingest/lines.ts over
 * lib/log/format/ingest-scan.ts, issue 16.3) give exactly the verdicts of the parse of every line
 * (`scanLinesReference`, the code ingest ran before): the same lines, last seq, ended flag, agent and
 * summary delta, or the same refusal (code, message, details). On every .jsonl/.ndjson file in
 * test/fixtures (as a new segment, as a later chunk, and misrouted), on hand-picked lines, and on chunks of
 * valid event lines of any type, mutated or not (fast-check).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ingestParsedLines, scanLines, scanLinesReference } from '../../../lib/service/ingest/lines.js';
import { AppError } from '../../../lib/service/shared/errors.js';
import type { WriterRecord } from '../../../lib/store/index.js';
import { eventLine } from '../../log/envelope-scan-helpers.js';

const SID = 's_01KBXM0000000000000000000A';
const W = 'w_01KBXM0000000000000000000B';
const OTHER_SID = 's_01KBXM0000000000000000000C';

/** A writer already holding `lines` lines (a later chunk), or null (a new segment). */
function writer(lines: number | null, sid = SID, w = W): WriterRecord | null {
  if (lines === null) return null;
  return {
    tenant: 't',
    sid,
    w,
    length: 100,
    lines,
    last_seq: lines,
    ended: false,
    agent: null,
    provenance: null,
    token_id: null,
    token_label: null,
    mixed_tokens: false,
    chain: null,
    created_at: '2026-12-01T00:00:00.000Z',
    updated_at: '2026-12-01T00:00:00.000Z',
  };
}

type Outcome = { scan: unknown } | { refused: { code: string; message: string; details: unknown } };

function outcome(
  fn: typeof scanLines,
  body: Uint8Array,
  sid: string,
  w: string,
  current: WriterRecord | null,
) {
  try {
    return { scan: fn(body, sid, w, current) } as Outcome;
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { refused: { code: err.code, message: err.message, details: err.details } } as Outcome;
  }
}

/** Asserts both give the same outcome for the chunk `body` (lines ending with newlines). */
function expectSame(body: Uint8Array, sid = SID, w = W, current: WriterRecord | null = writer(1)): Outcome {
  const want = outcome(scanLinesReference, body, sid, w, current);
  const got = outcome(scanLines, body, sid, w, current);
  expect(got, Buffer.from(body).toString('latin1').slice(0, 400)).toStrictEqual(want);
  return got;
}

const chunk = (...lines: Array<string | Uint8Array>) =>
  Buffer.concat(lines.flatMap((l) => [typeof l === 'string' ? Buffer.from(l) : l, Buffer.from('\n')]));

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return files(p);
    return /\.(jsonl|ndjson)$/.test(name) ? [p] : [];
  });
}

const ENV = (sid = SID, w = W) =>
  `"v":3,"sid":"${sid}","w":"${w}","seq":7,"id":"e_1","ts":"2026-11-01T10:00:00.123456Z","mono":0.5`;
const ev = (rest = '"type":"note","text":"hi"', sid = SID, w = W) => `{${ENV(sid, w)},${rest}}`;
const START = `{"v":3,"sid":"${SID}","w":"${W}","seq":1,"id":"${W}","ts":"2026-11-01T09:00:00.000000Z","mono":0,"type":"writer.start","writer_id":"${W}","meta":{"agent":"bot"}}`;

describe('scanLines gives the verdicts of the parse of every line', () => {
  it('on every fixture segment: as a new segment, a later chunk, cut in chunks, and sent to another session', () => {
    const all = files(join(import.meta.dirname, '../../fixtures'));
    expect(all.length).toBeGreaterThan(10);
    let accepted = 0;
    for (const file of all) {
      const raw = readFileSync(file);
      const body = raw[raw.length - 1] === 0x0a ? raw : Buffer.concat([raw, Buffer.from('\n')]);
      let sid = SID;
      let w = W;
      try {
        const first = JSON.parse(body.subarray(0, body.indexOf(0x0a)).toString()) as Record<string, unknown>;
        if (typeof first.sid === 'string') sid = first.sid;
        if (typeof first.w === 'string') w = first.w;
      } catch {
        // not JSON: the path's ids are the test's
      }
      for (const current of [null, writer(5, sid, w)]) {
        if ('scan' in expectSame(body, sid, w, current)) accepted++;
        expectSame(body, OTHER_SID, w, current);
      }
      // Every 3 lines as a chunk of their own, a later one.
      const lines = body.toString('latin1').split('\n').slice(0, -1);
      for (let k = 0; k < lines.length; k += 3) {
        expectSame(
          chunk(...lines.slice(k, k + 3).map((l) => Buffer.from(l, 'latin1'))),
          sid,
          w,
          writer(k + 1, sid, w),
        );
      }
    }
    expect(accepted).toBeGreaterThan(10);
  });

  it('on hand-picked lines: envelopes with escapes, other ids, wrong types, writer.end, summary types, torn and invalid lines', () => {
    const esc = (s: string) => s.replace(/_/, '\\u005f');
    const lines = [
      ev(),
      ev('"type":"writer.end"'),
      ev('"type":"writer.en\\u0064"'),
      ev('"type":"message","user_id":"priya","text":"fix the build\\nplease","id":"m_1"'),
      ev('"type":"participant.join","user_id":"sam"'),
      ev('"type":"correction","target_id":"m_1","field":"user_id","value":"pat"'),
      ev('"type":"correction","target_id":"m_1","field":"text","value":"a title"'),
      ev('"type":"writer.start","meta":{"agent":"x"}'),
      ev('"type":"note"', OTHER_SID),
      ev('"type":"note"', SID, 'w_01KBXM0000000000000000000Z'),
      ev('"type":"note"', esc(SID)),
      ev('"type":"note"', esc(OTHER_SID)),
      ev('"type":"note"', SID, esc(W)),
      `{"sid":7,${ENV().replace(`"sid":"${SID}",`, '')},"type":"note"}`,
      `{"sid":"${OTHER_SID}","type":"note"}`,
      `{"sid":"${OTHER_SID}","type":"note"`,
      `{"w":"${W}x"}`,
      `{"\\u0073id":"${OTHER_SID}","v":1}`,
      ev('"type":"note","sid":"other"'),
      ev(`"type":"note","sid":"s_1","sid":"${SID}"`),
      ev().replace('"seq":7', '"seq":7.0'),
      ev().replace('"seq":7', '"seq":-0'),
      ev().replace('"seq":7', '"seq":-12'),
      ev().replace('"seq":7', '"seq":1234567890123456789'),
      ev().replace('"seq":7', '"seq":123456789012345'),
      ev().replace('"seq":7', '"seq":1e2'),
      ev().replace('"seq":7', '"seq":"7"'),
      ev().replace('"v":3', '"v":3.5'),
      ev().replace('"v":3', '"v":3e0'),
      ev().replace('"mono":0.5', '"mono":"0"'),
      ev().replace('2026-11-01T10:00:00.123456Z', 'not a time'),
      ev().replace('2026-11-01T10:00:00.123456Z', '2026-11-01T10:00:00\\u002e123456Z'),
      ev().replace('"id":"e_1"', '"id":"e\\u005f1"'),
      ev().replace('"id":"e_1"', '"id":7'),
      `${'['.repeat(600)}${']'.repeat(600)}`,
      `{"sid":"${OTHER_SID}","x":${'['.repeat(600)}${']'.repeat(600)}}`,
      ev(`"type":"note","x":${'['.repeat(511)}${']'.repeat(511)}`),
      ev(`"type":"note","x":${'['.repeat(512)}${']'.repeat(512)}`),
      '',
      '   ',
      '{}',
      'null',
      `\uFEFF${ev()}`,
      ` \t\r${ev()} \r`,
    ];
    const invalidUtf8 = Buffer.concat([
      Buffer.from(ev('"type":"note","text":"').slice(0, -1)),
      Buffer.from([0xff]),
      Buffer.from('"}'),
    ]);
    const invalidMisrouted = Buffer.concat([
      Buffer.from(`{"sid":"${OTHER_SID}","x":"`),
      Buffer.from([0xc0, 0x80]),
      Buffer.from('"}'),
    ]);
    for (const current of [null, writer(1)]) {
      for (const line of [...lines, invalidUtf8, invalidMisrouted]) {
        expectSame(chunk(line), SID, W, current);
        expectSame(chunk(START, line, ev('"type":"message","user_id":"a","text":"t"')), SID, W, current);
        expectSame(chunk(START, ev(), line), SID, W, current);
      }
    }
  });

  it('parses only the lines the summary reads: notes and tool events of this writer are scanned', () => {
    const before = ingestParsedLines();
    const notes = Array.from({ length: 50 }, (_, k) => ev(`"type":"note","text":"n ${k}"`));
    const got = expectSame(
      chunk(START, ...notes, ev('"type":"message","user_id":"a","text":"t"')),
      SID,
      W,
      null,
    );
    expect(got).toMatchObject({ scan: { lines: 52, lastSeq: 7, agent: 'bot' } });
    // The reference parses 52 lines; the scan parses writer.start and the message only.
    expect(ingestParsedLines() - before).toBe(52 + 2);
  });
});

/** A valid event line of this writer, any type (envelope-scan-helpers' generator, ids replaced). */
const ownLine = fc
  .tuple(
    eventLine,
    fc.constantFrom(SID, OTHER_SID, SID, SID),
    fc.constantFrom(W, W, W, 'w_01KBXM0000000000000000000Z'),
  )
  // serializeEvent writes the envelope first: `{"v":3,"sid":"s_…","w":"w_…",…`
  .map(([line, sid, w]) =>
    line.replace(/^\{"v":3,"sid":"[^"]*","w":"[^"]*"/, `{"v":3,"sid":"${sid}","w":"${w}"`),
  );

/** A line damaged: a byte flipped, bytes cut or inserted, the line cut short. */
const damage = fc.oneof(
  fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })).map(([p, x]) => (b: Buffer) => {
    const c = Buffer.from(b);
    if (c.length) c[p % c.length] = c[p % c.length]! ^ x;
    return c;
  }),
  fc.tuple(fc.nat(), fc.integer({ min: 1, max: 4 })).map(([p, n]) => (b: Buffer) => {
    const k = b.length ? p % b.length : 0;
    return Buffer.concat([b.subarray(0, k), b.subarray(k + n)]);
  }),
  fc.tuple(fc.nat(), fc.uint8Array({ minLength: 1, maxLength: 3 })).map(([p, xs]) => (b: Buffer) => {
    const k = b.length ? p % b.length : 0;
    return Buffer.concat([b.subarray(0, k), Buffer.from(xs), b.subarray(k)]);
  }),
  fc.nat().map((p) => (b: Buffer) => b.subarray(0, b.length ? p % b.length : 0)),
);

describe('scanLines and the reference agree on generated chunks', () => {
  it('chunks of valid event lines of any type, some of another session or writer, after a writer.start or not', () => {
    fc.assert(
      fc.property(fc.array(ownLine, { minLength: 1, maxLength: 8 }), fc.boolean(), (lines, isNew) => {
        expectSame(chunk(...(isNew ? [START] : []), ...lines), SID, W, isNew ? null : writer(3));
      }),
      { numRuns: 1500 },
    );
  });

  it('chunks whose lines are damaged (newlines in them removed: a chunk is whole lines)', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(ownLine, fc.option(damage, { nil: undefined })), { minLength: 1, maxLength: 6 }),
        fc.boolean(),
        (lines, isNew) => {
          const damaged = lines.map(([l, d]) => {
            const b = d ? d(Buffer.from(l)) : Buffer.from(l);
            return Buffer.from(b.filter((x) => x !== 0x0a));
          });
          expectSame(chunk(...(isNew ? [START] : []), ...damaged), SID, W, isNew ? null : writer(3));
        },
      ),
      { numRuns: 2000 },
    );
  });
});

/**
 * Issue 16.3 attacks on ingest's line scanner (lib/log/format/ingest-scan.ts under lib/service/ingest/lines.ts
 * `scanLines`): it must give exactly the verdicts of `scanLinesReference` (a parse of every line): the
 * same Scan (lines, last seq, ended, agent, summary) or the same refusal (code, message, details).
 *
 * Lines are built key by key from pools meant to break a byte scan: every envelope key plain, escaped
 * (`"s\u0069d"`) or duplicated with another value before or after (the last wins), `sid`/`w` of the
 * path, of another session or writer, escaped to the path's or another's, nested objects holding
 * `sid`/`w`, seq of 15/16/17/400 digits, `-0`, `1e2`, `7.0`, strings; `type` of every summary type,
 * `writer.end`, `writer.start`, escaped; ts plain, escaped, not a timestamp, a number; whitespace of
 * every JSON kind (and a form feed, which JSON refuses) around every token; trailing garbage; lone
 * surrogates; a first chunk of a new segment whose writer.start is written any of these ways. Also a
 * chunk with CRLF line ends and one beginning with a BOM. All held when written (20,000 chunks).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanLines, scanLinesReference } from '../../lib/service/ingest/lines.js';
import { AppError } from '../../lib/service/shared/errors.js';
import type { WriterRecord } from '../../lib/store/index.js';

const SID = 's_01KBXM0000000000000000000A';
const W = 'w_01KBXM0000000000000000000B';
const OTHER_SID = 's_01KBXM0000000000000000000C';
const OTHER_W = 'w_01KBXM0000000000000000000D';

function writer(lines: number | null): WriterRecord | null {
  if (lines === null) return null;
  return {
    tenant: 't',
    sid: SID,
    w: W,
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

function outcome(fn: typeof scanLines, body: Uint8Array, current: WriterRecord | null): unknown {
  try {
    return { scan: fn(body, SID, W, current) };
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    return { refused: { code: err.code, message: err.message, details: err.details } };
  }
}

const escAll = (s: string) =>
  [...s].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('');
const escOne = (s: string) =>
  s.length ? `\\u${s.charCodeAt(0).toString(16).padStart(4, '0')}${s.slice(1)}` : s;
const q = (s: string) => `"${s}"`;

const ws = fc.constantFrom('', '', '', ' ', '\t', '\r', ' \r\t ', '\f');
const keyText = (k: string) => fc.constantFrom(q(k), q(k), q(k), q(escOne(k)));
const idValue = (own: string, other: string) =>
  fc.constantFrom(
    q(own),
    q(own),
    q(own),
    q(other),
    q(escOne(own)),
    q(escAll(other)),
    q(`${own}x`),
    '7',
    'null',
    `{"sid":${q(other)}}`,
    q('\\ud800'),
  );
const seqValue = fc.constantFrom(
  '7',
  '12',
  '-0',
  '0',
  '-12',
  '7.0',
  '1e2',
  '"7"',
  '123456789012345',
  '1234567890123456',
  '12345678901234567',
  '9'.repeat(400),
  '1'.repeat(308),
);
const typeValue = fc.constantFrom(
  ...[
    'note',
    'message',
    'participant.join',
    'participant.leave',
    'correction',
    'writer.start',
    'writer.end',
    'agent.action',
    'turn.start',
    'x.y',
  ].flatMap((t) => [q(t), q(t)]),
  q(escOne('writer.start')),
  q(escOne('message')),
  q('writer.en\\u0064'),
  '5',
);
const tsValue = fc.constantFrom(
  q('2026-11-01T10:00:00.123456Z'),
  q('2026-11-01T09:00:00.000000Z'),
  q('2026-11-01T11:00:00Z'),
  q('not a time'),
  q('2026-11-01T10:00:00\\u002e123456Z'),
  '17',
);
const extraField = fc.constantFrom(
  `"user_id":"priya"`,
  `"user_id":"\\u0070at"`,
  `"text":"fix the build"`,
  `"meta":{"agent":"bot","sid":${q(OTHER_SID)}}`,
  `"meta":{"agent":"${'a'.repeat(250)}"}`,
  `"meta":{"agent":"b\\u006ft"}`,
  `"target_id":"m_1","field":"user_id","value":"sam"`,
  `"target_id":"m_1","field":"text","value":"a title"`,
  `"x":[[[{"w":${q(OTHER_W)}}]]]`,
  `"display_name":null`,
  `"\\u0073id":${q(OTHER_SID)}`,
  `"\\u0077":${q(W)}`,
);

/** One field `key: value` with whitespace around its tokens. */
const field = (key: fc.Arbitrary<string>, value: fc.Arbitrary<string>) =>
  fc.tuple(ws, key, ws, ws, value, ws).map(([a, k, b, c, v, d]) => `${a}${k}${b}:${c}${v}${d}`);

const envelopeFields = fc.tuple(
  field(keyText('v'), fc.constantFrom('3', '3', '3.5', '"3"', '30')),
  field(keyText('sid'), idValue(SID, OTHER_SID)),
  field(keyText('w'), idValue(W, OTHER_W)),
  field(keyText('seq'), seqValue),
  field(keyText('id'), fc.constantFrom(q('m_1'), q('e_2'), q(escOne('m_1')), '5')),
  field(keyText('ts'), tsValue),
  field(keyText('mono'), fc.constantFrom('0.5', '1', '1e400', '-0', '"0"')),
  field(keyText('type'), typeValue),
);

const line = fc
  .tuple(
    envelopeFields,
    fc.array(field(fc.constant(''), fc.constant('')), { maxLength: 0 }),
    fc.array(extraField, { maxLength: 3 }),
    fc.array(fc.tuple(fc.nat(11), fc.constantFrom('sid', 'w', 'type', 'seq')), { maxLength: 2 }),
    fc.subarray([0, 1, 2, 3, 4, 5, 6, 7]),
    fc.constantFrom('', '', '', ' ', 'x', ',', '}'),
    ws,
  )
  .map(([env, _none, extras, dups, drop, trailing, lead]) => {
    const fields: string[] = env.filter((_, k) => !drop.includes(k) || drop.length > 2);
    fields.push(...extras);
    for (const [at, key] of dups) {
      const v =
        key === 'sid' ? q(OTHER_SID) : key === 'w' ? q(OTHER_W) : key === 'type' ? q('message') : '99';
      fields.splice(at % (fields.length + 1), 0, `"${key}":${v}`);
    }
    return `${lead}{${fields.join(',')}}${trailing}`;
  });

const START = `{"v":3,"sid":"${SID}","w":"${W}","seq":1,"id":"${W}","ts":"2026-11-01T10:00:00.000000Z","mono":0,"type":"writer.start","writer_id":"${W}","meta":{"agent":"bot"}}`;

describe('ingest scan against the parse of every line', () => {
  it('20,000 chunks of hostile lines, as a new segment and as a later chunk', () => {
    fc.assert(
      fc.property(
        fc.array(line, { minLength: 1, maxLength: 6 }),
        fc.constantFrom('new-own-start', 'new-hostile-start', 'later'),
        fc.boolean(),
        (lines, kind, crlf) => {
          const all = kind === 'new-own-start' ? [START, ...lines] : lines;
          const body = Buffer.from(all.map((l) => `${l}${crlf ? '\r' : ''}\n`).join(''));
          const current = kind === 'later' ? writer(3) : null;
          expect(outcome(scanLines, body, current), body.toString().slice(0, 600)).toStrictEqual(
            outcome(scanLinesReference, body, current),
          );
        },
      ),
      { numRuns: 20_000 },
    );
  }, 300_000);

  it('a BOM before the first line, and lone surrogates in the envelope', () => {
    for (const body of [
      `\uFEFF${START}\n`,
      `${START}\n\uFEFF${START.replace('"seq":1', '"seq":2')}\n`,
      `${START}\n${START.replace(`"sid":"${SID}"`, '"sid":"\\ud800"')}\n`,
      `${START}\n${START.replace(`"id":"${W}"`, '"id":"\\udfff"').replace('writer.start', 'note')}\n`,
    ]) {
      for (const current of [null, writer(2)]) {
        const b = Buffer.from(body);
        expect(outcome(scanLines, b, current)).toStrictEqual(outcome(scanLinesReference, b, current));
      }
    }
  });
});

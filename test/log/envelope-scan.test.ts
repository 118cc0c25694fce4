/**
 * scanLine (lib/log/format/envelope-scan.ts, issue 16) gives parseLine's verdict, ts, correction flag and id on
 * every line of every segment in test/fixtures, on hand-picked edge cases of the JSON grammar and the
 * envelope, and on any valid event line of any type. Mutated and arbitrary lines: envelope-scan-fuzz.test.ts.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { MAX_LINE_DEPTH } from '../../lib/log/format/codec.js';
import { scanFallbacks } from '../../lib/log/format/envelope-scan.js';
import { eventLine, expectAgrees } from './envelope-scan-helpers.js';

function jsonlFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return jsonlFiles(p);
    return name.endsWith('.jsonl') ? [p] : [];
  });
}

const ENV = '"v":3,"sid":"s_1","w":"w_1","seq":7,"id":"e_1","ts":"2026-11-01T10:00:00.123456Z","mono":0.5';
const ev = (rest = '"type":"note"') => `{${ENV},${rest}}`;
const nest = (d: number, inner = '1') => '['.repeat(d) + inner + ']'.repeat(d);
const nestObj = (d: number) => `${'{"a":'.repeat(d)}0${'}'.repeat(d)}`;

/** Lines at the edges of the grammar and the envelope: each must get parseLine's verdict. */
const CASES: string[] = [
  ev(),
  ev('"type":"correction"'),
  ev('"type":"correctionx"'),
  ev('"type":"Correction"'),
  ev('"type":"correctio\\u006e"'),
  ev('"type":7'),
  '',
  ' ',
  '{}',
  '[]',
  'null',
  '"x"',
  '{',
  `{${ENV}`,
  `{${ENV},"type":"note"`,
  `{${ENV},"type":"note"}}`,
  `{${ENV},"type":"note"},`,
  `{${ENV},"type":"note",}`,
  `{${ENV},,"type":"note"}`,
  `\uFEFF${ev()}`,
  ` \t\r\n${ev()} \t\r\n`,
  `${ev()}\u00a0`,
  `{ "v" : 3 , "sid" : "s" , "w" : "w" , "seq" : 1 , "id" : "i" , "ts" : "t" , "mono" : 1 , "type" : "x" }`,
  ev('"type":"note","x":"a\u0001b"'),
  ev('"type":"note","x":"a\u001fb"'),
  ev('"type":"note","x":"a\u007fb"'),
  ev('"type":"note","x":"a\\u001fb\\ud800\\udfff\\uDBFF"'),
  ev('"type":"note","x":"\\x41"'),
  ev('"type":"note","x":"\\\'"'),
  ev('"type":"note","x":"\\u12"'),
  ev('"type":"note","x":"\\u12G4"'),
  ev('"type":"note","x":"\\/\\b\\f\\n\\r\\t\\"\\\\"'),
  ev('"type":"note","x":"😀é中"'),
  ev('"type":"note","😀":1'),
  ev('"type":"note","x":[1,2,{"a":[]},{},[[]],true,false,null,-0.5e+3,1E-2]'),
  ev('"type":"note","x":tru'),
  ev('"type":"note","x":nul'),
  ev('"type":"note","x":True'),
  ev('"type":"note","x":undefined'),
  ev('"type":"note","x":NaN'),
  ev('"type":"note","x":Infinity'),
  ev('"type":"note","x":[1,]'),
  ev('"type":"note","x":{"a":1,}'),
  ev('"type":"note","x":{"a"}'),
  ev('"type":"note","x":{1:2}'),
  ev('"type":"note","x":[1 2]'),
  ev('"type":"note","x":]'),
  ev('"type":"note","x":{"a":1]'),
  ev('"type":"note","x":[1}'),
];
for (const n of [
  '3',
  '3.0',
  '3e0',
  '30e-1',
  '-0',
  '0',
  '-3',
  '1e400',
  '-1e400',
  '0.1e1',
  '3.5',
  '1e-400',
  '12345678901234567890',
  '123456789012345',
  '1234567890123456',
  '9007199254740993',
  '00',
  '01',
  '-',
  '+3',
  '.5',
  '3.',
  '3e',
  '3e+',
  '-.5',
  '0x10',
  '"3"',
  'null',
  'true',
  '[3]',
  '1'.repeat(400),
]) {
  CASES.push(ev().replace('"v":3', `"v":${n}`));
  CASES.push(ev().replace('"seq":7', `"seq":${n}`));
  CASES.push(ev().replace('"mono":0.5', `"mono":${n}`));
}
for (const key of ['v', 'sid', 'w', 'seq', 'id', 'ts', 'mono', 'type']) {
  const esc = `\\u00${key.charCodeAt(0).toString(16)}${key.slice(1)}`;
  CASES.push(ev(`"type":"note","${key}":null`)); // the last value decides
  CASES.push(ev(`"type":"note","${esc}":null`));
  CASES.push(`{"${key}":null,${ENV},"type":"note"}`); // an earlier wrong value is overridden
  CASES.push(ev().replace(`"${key}":`, `"${esc}":`));
  CASES.push(
    ev()
      .replace(new RegExp(`"${key}":[^,}]*,?`), '')
      .replace(',}', '}'),
  ); // missing
  CASES.push(ev(`"type":"note","${key}x":null,"x${key}":null`));
  CASES.push(ev(`"type":"note","\\u0000${key}":null,"${key}\\u0000":null,"\\u0000":null`));
  CASES.push(
    ev().replace(
      `"${key}":`,
      `"\\u${key.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}${key.slice(1)}":`,
    ),
  );
}
for (const ts of [
  '2026-11-01T10:00:00.123456Z',
  '2026-02-29T10:00:00.123456Z',
  '2024-02-29T10:00:00.123456Z',
  '2026-11-01T10:00:60.123456Z',
  '2026-11-01T24:00:00.123456Z',
  '2026-13-01T10:00:00.123456Z',
  '2026-11-01T10:00:00.12345aZ',
  '2026-11-01T10:00:00Z',
  '2026-11-01 10:00:00.1+01:00',
  '0000-01-01T00:00:00.000000Z',
  '9999-12-31T23:59:59.999999Z',
  '2026-11-01T10:00:00.123456z',
  '2026-11-01T10:00:00\\u002e123456Z',
  'x',
  '',
]) {
  CASES.push(ev().replace('2026-11-01T10:00:00.123456Z', ts));
}
for (const id of ['', 'é', '😀', 'a\\nb', '\\ud800', '\\u0041'])
  CASES.push(ev().replace('"id":"e_1"', `"id":"${id}"`));
for (const d of [
  MAX_LINE_DEPTH - 2,
  MAX_LINE_DEPTH - 1,
  MAX_LINE_DEPTH,
  MAX_LINE_DEPTH + 1,
  MAX_LINE_DEPTH + 5,
]) {
  CASES.push(ev(`"type":"note","x":${nest(d)}`));
  CASES.push(ev(`"type":"note","x":${nestObj(d)}`));
  CASES.push(ev(`"type":"note","x":${nest(d, '"[[[[{{{{"')}`));
  CASES.push(nest(d + 1, ev()));
}

describe('scanLine gives parseLine’s verdict', () => {
  it('on every line of every segment in test/fixtures, with few fallbacks to parseLine', () => {
    const files = jsonlFiles(join(import.meta.dirname, '../fixtures'));
    expect(files.length).toBeGreaterThan(10);
    let lines = 0;
    const before = scanFallbacks();
    for (const file of files) {
      const bytes = readFileSync(file);
      let at = 0;
      while (at < bytes.length) {
        let nl = bytes.indexOf(10, at);
        if (nl < 0) nl = bytes.length;
        expectAgrees(bytes.subarray(at, nl), file);
        lines++;
        at = nl + 1;
      }
    }
    expect(lines).toBeGreaterThan(100);
    // 12 calls per line (wantId × checked × Buffer/Uint8Array); our writers' lines never need the full parse.
    expect(scanFallbacks() - before).toBe(0);
  });

  it(`on ${CASES.length} hand-picked lines: grammar, numbers, escapes, duplicated keys, ts forms, depth ${MAX_LINE_DEPTH} ± 5`, () => {
    for (const line of CASES) expectAgrees(Buffer.from(line));
  });

  it('on any valid event line of any type (serializeEvent), without falling back to parseLine', () => {
    const before = scanFallbacks();
    fc.assert(
      fc.property(eventLine, (line) => {
        expectAgrees(Buffer.from(line));
      }),
      { numRuns: 5000 },
    );
    // Only an escape in `ts` or `type` (arbitrary strings: a control character) or in an id asked for
    // needs the full parse; 12 scans a line.
    expect(scanFallbacks() - before).toBeLessThan(5000 * 12 * 0.05);
  });
});

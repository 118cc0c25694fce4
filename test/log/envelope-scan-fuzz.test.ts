/**
 * scanLine (lib/log/format/envelope-scan.ts, issue 16) gives parseLine's verdict, ts, correction flag and id on
 * valid event lines mutated every way a line gets damaged or written oddly (bytes flipped, deleted,
 * inserted, cut; control characters, escapes, duplicated and reordered keys, whitespace, envelope values of
 * the wrong type, numbers in every form, nesting around MAX_LINE_DEPTH, 4-byte and invalid UTF-8), and on
 * arbitrary JSON and arbitrary strings.
 */
import fc from 'fast-check';
import { describe, it } from 'vitest';
import { MAX_LINE_DEPTH } from '../../lib/log/format/codec.js';
import { eventLine, expectAgrees, tsArb } from './envelope-scan-helpers.js';

const RUNS = 4000;
const enc = (s: string) => Buffer.from(s, 'utf8');
const ENVELOPE = ['v', 'sid', 'w', 'seq', 'id', 'ts', 'mono', 'type'];

/** Bytes worth inserting: JSON's structural characters, controls, whitespace, quotes and UTF-8 pieces. */
const interestingByte = fc.oneof(
  fc.constantFrom(...[...'{}[]:,"\\ \t\r\n0-.eE+utfnl/'].map((c) => c.charCodeAt(0))),
  fc.integer({ min: 0, max: 0x1f }),
  fc.integer({ min: 0x80, max: 0xff }),
  fc.integer({ min: 0, max: 255 }),
);

/** A number literal, valid or not, in any form. */
const numberText = fc.oneof(
  fc.integer().map(String),
  fc.double().map((d) => JSON.stringify(d)),
  fc.constantFrom(
    '-0',
    '0.0',
    '1.0',
    '1e2',
    '1E+2',
    '10e-1',
    '1e400',
    '-1e400',
    '1e-400',
    '00',
    '01',
    '-',
    '.5',
    '5.',
    '1e',
    '+1',
    '0x1',
    'NaN',
    '1_000',
  ),
  fc.bigInt({ min: -(10n ** 40n), max: 10n ** 40n }).map(String),
  fc
    .tuple(fc.integer({ min: 0, max: 999 }), fc.nat(999), fc.integer({ min: -400, max: 400 }))
    .map(([a, b, e]) => `${a}.${b}e${e}`),
);

/** A JSON text of any type, for an envelope value of the wrong (or right) type. */
const anyValueText = fc.oneof(
  numberText,
  fc.json({ maxDepth: 2 }),
  tsArb.map((t) => JSON.stringify(t)),
);

type Mutation = (line: string, bytes: Uint8Array) => Uint8Array;
const at = (n: number, len: number) => (len === 0 ? 0 : n % (len + 1));

const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  fc.tuple(fc.nat(), fc.integer({ min: 1, max: 255 })).map(
    ([p, x]): Mutation =>
      (_l, b) => {
        const c = Buffer.from(b);
        if (c.length) c[p % c.length] = c[p % c.length]! ^ x;
        return c;
      },
  ),
  fc.tuple(fc.nat(), fc.integer({ min: 1, max: 4 })).map(
    ([p, n]): Mutation =>
      (_l, b) => {
        const k = at(p, b.length);
        return Buffer.concat([b.subarray(0, k), b.subarray(k + n)]);
      },
  ),
  fc.tuple(fc.nat(), fc.array(interestingByte, { minLength: 1, maxLength: 4 })).map(
    ([p, xs]): Mutation =>
      (_l, b) => {
        const k = at(p, b.length);
        return Buffer.concat([b.subarray(0, k), Buffer.from(xs), b.subarray(k)]);
      },
  ),
  fc.nat().map(
    (p): Mutation =>
      (_l, b) =>
        b.subarray(0, at(p, b.length)),
  ),
  // A control character, an escape or a 4-byte character inside a string (after a quote).
  fc
    .tuple(
      fc.nat(),
      fc.constantFrom(
        '\u0001',
        '\u001f',
        '\t',
        '\\u0041',
        '\\ud83d',
        '\\udc00',
        '\\"',
        '\\\\',
        '\\/',
        '\\q',
        '\\u00',
        '😀',
        'é',
        '\u2028',
      ),
    )
    .map(
      ([p, s]): Mutation =>
        (l) => {
          const quotes = [...l.matchAll(/"/g)].map((m) => m.index!);
          const q = quotes[p % Math.max(1, quotes.length)] ?? 0;
          return enc(l.slice(0, q + 1) + s + l.slice(q + 1));
        },
    ),
  // An envelope key escaped (`"\u0076"`), duplicated with any value before or after, or dropped.
  fc
    .tuple(
      fc.constantFrom(...ENVELOPE),
      anyValueText,
      fc.constantFrom('escape', 'first', 'last', 'drop', 'set'),
    )
    .map(
      ([key, val, how]): Mutation =>
        (l) => {
          const o = JSON.parse(l) as Record<string, unknown>;
          if (how === 'escape')
            return enc(
              l.replace(
                `"${key}":`,
                `"\\u${key.charCodeAt(0).toString(16).padStart(4, '0')}${key.slice(1)}":`,
              ),
            );
          if (how === 'first') return enc(`{"${key}":${val},${l.slice(1)}`);
          if (how === 'last') return enc(`${l.slice(0, -1)},"${key}":${val}}`);
          if (how === 'drop') delete o[key];
          else o[key] = JSON.parse(JSON.stringify(val) ?? 'null');
          return enc(
            how === 'set'
              ? `{${Object.entries(o)
                  .map(([k, v]) => `${JSON.stringify(k)}:${k === key ? val : JSON.stringify(v)}`)
                  .join(',')}}`
              : JSON.stringify(o),
          );
        },
    ),
  // Keys reordered; whitespace of every kind (valid and not) between the tokens.
  fc.array(fc.nat(), { minLength: 12, maxLength: 12 }).map(
    (order): Mutation =>
      (l) => {
        const entries = Object.entries(JSON.parse(l) as Record<string, unknown>);
        entries.sort((a, b) => order[a[0].length % 12]! - order[b[0].length % 12]! || 0);
        return enc(JSON.stringify(Object.fromEntries(entries)));
      },
  ),
  fc
    .tuple(
      fc.constantFrom(' ', '\t', '\r', '\n', ' \t\r\n ', '\u00a0', '\u000b', '\u000c', '\ufeff'),
      fc.nat(),
    )
    .map(
      ([ws, p]): Mutation =>
        (l) => {
          const parts = l.split(/(?<=[{}[\]:,])|(?=[{}[\]:,])/);
          return enc(
            parts
              .map((t, k) => (p % 3 === 0 || k % (1 + (p % 5)) === 0 ? ws + t : t))
              .join(ws.length > 1 ? '' : ''),
          );
        },
    ),
  // A field nested around the depth limit.
  fc.tuple(fc.integer({ min: MAX_LINE_DEPTH - 3, max: MAX_LINE_DEPTH + 3 }), fc.boolean(), fc.boolean()).map(
    ([d, obj, wrapWhole]): Mutation =>
      (l) => {
        const inner = wrapWhole ? l : '"x"';
        const deep = obj ? '{"a":'.repeat(d) + inner + '}'.repeat(d) : '['.repeat(d) + inner + ']'.repeat(d);
        return enc(wrapWhole ? deep : `${l.slice(0, -1)},"deep":${deep}}`);
      },
  ),
  // Invalid UTF-8 inside a string: a lone continuation, an overlong form, a surrogate, a cut 4-byte one.
  fc
    .tuple(
      fc.nat(),
      fc.constantFrom(
        [0x80],
        [0xc0, 0x80],
        [0xed, 0xa0, 0x80],
        [0xf0, 0x9f, 0x98],
        [0xff],
        [0xf4, 0x90, 0x80, 0x80],
      ),
    )
    .map(
      ([p, xs]): Mutation =>
        (l, b) => {
          const quotes = [...l.matchAll(/"/g)].map((m) => Buffer.byteLength(l.slice(0, m.index! + 1)));
          const k = quotes[p % Math.max(1, quotes.length)] ?? 0;
          return Buffer.concat([b.subarray(0, k), Buffer.from(xs), b.subarray(k)]);
        },
    ),
);

describe('scanLine gives parseLine’s verdict on damaged and odd lines', () => {
  it('valid event lines with one to three mutations', () => {
    fc.assert(
      fc.property(eventLine, fc.array(mutation, { minLength: 1, maxLength: 3 }), (line, ms) => {
        let b: Uint8Array = enc(line);
        let l = line;
        for (const m of ms) {
          try {
            b = m(l, b);
          } catch {
            // a structural mutation needs a line JSON.parse reads; after a byte-level one it may not
          }
          l = Buffer.from(b).toString('utf8');
        }
        expectAgrees(b);
      }),
      { numRuns: RUNS },
    );
  });

  it('arbitrary JSON texts, as they are and as an envelope’s values', () => {
    fc.assert(
      fc.property(fc.json(), fc.array(anyValueText, { minLength: 8, maxLength: 8 }), (json, vals) => {
        expectAgrees(enc(json));
        expectAgrees(enc(`{${ENVELOPE.map((k, i) => `"${k}":${vals[i]}`).join(',')}}`));
      }),
      { numRuns: RUNS },
    );
  });

  it('arbitrary strings and bytes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.uint8Array({ maxLength: 40 }), (s, bytes) => {
        expectAgrees(enc(s));
        expectAgrees(bytes);
      }),
      { numRuns: RUNS },
    );
  });
});

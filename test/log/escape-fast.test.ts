/**
 * `escapeControl`'s fast path (issue 16: a charCode loop that returns printable ASCII and most of Latin
 * as they are, before the regex) gives exactly what the regex alone gives: every code point alone and in
 * the contexts the regex looks at (after a pictograph, next to a joiner), and random strings from
 * alphabets built around the loop's bounds.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeControl, escapeControlByRegex, hasControl } from '../../lib/log/format/escape.js';

const same = (s: string): void => {
  const want = escapeControlByRegex(s);
  if (escapeControl(s) !== want) expect(escapeControl(s)).toBe(want);
  if (hasControl(s) !== (want !== s)) expect(hasControl(s)).toBe(want !== s);
};

// The loop's bounds and their neighbours, the regex's special cases, pictographs and lone surrogates.
const EDGES = [
  0x00, 0x09, 0x0a, 0x0d, 0x1b, 0x1f, 0x20, 0x41, 0x5c, 0x7e, 0x7f, 0x80, 0x9f, 0xa0, 0xac, 0xad, 0xae, 0xff,
  0x100, 0x34e, 0x34f, 0x350, 0x61c, 0x200b, 0x200d, 0x200e, 0x2028, 0x202e, 0x2060, 0x2764, 0x23ce, 0xd83d,
  0xdc69, 0xdcbb, 0xfe0e, 0xfe0f, 0xfeff, 0xffa0,
].map((c) => String.fromCharCode(c));
const PICTOGRAPHS = ['👩', '💻', '❤', '\u{e0041}', '\u{1f3fb}'];

describe('escapeControl fast path', () => {
  it('gives what the regex gives for every code point, alone and in context', () => {
    for (let c = 0; c <= 0x10ffff; c++) {
      const ch = String.fromCodePoint(c);
      same(ch);
      same(`ab${ch}cd`);
      if (c < 0x400 || c === 0x200d || c === 0xfe0f) {
        same(`❤${ch}`);
        same(`${ch}\u200d`);
        same(`x${ch}\ufe0f`);
      }
    }
  });

  it('gives what the regex gives for random strings around its bounds', () => {
    const unit = fc.oneof(
      fc.constantFrom(...EDGES, ...PICTOGRAPHS),
      fc.integer({ min: 0, max: 0x400 }).map((c) => String.fromCharCode(c)),
      fc.string({ unit: 'binary', maxLength: 3 }),
    );
    fc.assert(
      fc.property(fc.string({ unit, maxLength: 40 }), (s) => {
        same(s);
        same(`m_01KZ${s}`);
      }),
      { numRuns: 20_000 },
    );
    fc.assert(fc.property(fc.string({ unit: 'grapheme', maxLength: 30 }), (s) => same(s)));
  });

  it('leaves printable ASCII and Latin alone, and escapes what follows them', () => {
    expect(escapeControl('m_01KZ0000000001 person-1')).toBe('m_01KZ0000000001 person-1');
    expect(escapeControl('Zoë Ångström ǅ')).toBe('Zoë Ångström ǅ');
    expect(escapeControl('ali\u00adce')).toBe('ali\\xadce');
    expect(escapeControl('priya\u034f')).toBe('priya\\u034f');
    expect(escapeControl('a~\u007fb')).toBe('a~\\x7fb');
  });
});

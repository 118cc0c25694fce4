/**
 * lib/log/format/text-cut.ts: cuts of user text never split a surrogate pair and leave well-formed strings, and
 * the board's link builders never throw on a lone surrogate (test/attack/board-lone-surrogate over HTTP).
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { agentHref, personHref, sessionHref } from '../../lib/board/components.js';
import { cutText, graphemeFloor, uriComponent, wellFormed } from '../../lib/log/format/text-cut.js';
import { mergeSummary } from '../../lib/store/session-summary.js';

const EMOJI = '\u{1F600}';
const isWell = (s: string) => !/\p{Cs}/u.test(s);

describe('cutText', () => {
  it('cuts before a pair that straddles the cut, after one that fits', () => {
    expect(cutText(`ab${EMOJI}`, 3)).toBe('ab');
    expect(cutText(`ab${EMOJI}`, 4)).toBe(`ab${EMOJI}`);
    expect(cutText(`a${EMOJI}c`, 3)).toBe(`a${EMOJI}`);
  });

  it('leaves every cut of an emoji string well-formed', () => {
    const s = `x${EMOJI.repeat(50)}`;
    for (let n = 1; n <= s.length; n++) {
      const cut = cutText(s, n);
      expect(cut.length).toBeLessThanOrEqual(n);
      expect(isWell(cut)).toBe(true);
    }
  });

  it('replaces lone surrogates with U+FFFD', () => {
    expect(wellFormed('a\ud83db')).toBe('a\ufffdb');
    expect(cutText('\udc00abc', 10)).toBe('\ufffdabc');
  });
});

describe('links and summaries of names with lone surrogates', () => {
  it('never throw', () => {
    for (const bad of ['a\ud83d', '\ude00', `u${EMOJI.repeat(3)}`.slice(0, 4)]) {
      expect(() => personHref(bad)).not.toThrow();
      expect(() => agentHref(bad)).not.toThrow();
      expect(() => sessionHref('s_x', bad)).not.toThrow();
      expect(() => uriComponent(bad)).not.toThrow();
    }
    expect(personHref('a\ud83d')).toBe('/people/a%EF%BF%BD');
  });

  it('the summary keeps names, titles and asked well-formed', () => {
    const name = `u-${EMOJI.repeat(99)}x`; // the 200-unit cut falls inside an emoji
    const next = mergeSummary(
      { title: null, title_at: null, people: [], agents: [], asked: [], title_id: null, fixes: [] },
      {
        title: { text: `t${EMOJI.repeat(100)}`, at: 1 },
        people: [name, 'b\ud83d'],
        agents: [`a${EMOJI.repeat(120)}`],
        asked: [{ user_id: name, text: `q${EMOJI.repeat(100)}`, at: 1 }],
      },
    )!;
    for (const s of [
      next.title!,
      ...next.people,
      ...next.agents,
      ...next.asked.flatMap((a) => [a.user_id, a.text]),
    ])
      expect(isWell(s), JSON.stringify(s)).toBe(true);
    expect(next.asked).toHaveLength(1);
  });
});

/** Issue 25.6: every display cut falls between grapheme clusters. */
const FLAG = '\u{1F1EB}\u{1F1F7}'; // 🇫🇷, two regional indicators
const CODER = '\u{1F469}\u200D\u{1F4BB}'; // 👩‍💻
const HALF_FLAG = /(?<!\p{RI})\p{RI}(?:\p{RI}\p{RI})*(?!\p{RI})/u;
const BARE_JOINER = /\u200D(?!\p{Extended_Pictographic})/u;

describe('cutText on grapheme clusters', () => {
  it('never keeps half a flag: a title cut at 160 in the middle of one ends before it', () => {
    const title = `x${FLAG.repeat(50)}`; // unit 160 is inside the 40th flag
    const cut = cutText(title, 160);
    expect(cut).toBe(`x${FLAG.repeat(39)}`);
    for (let n = 1; n <= 40; n++) expect(cutText(title, n), String(n)).not.toMatch(HALF_FLAG);
  });

  it('never ends a name on a bare joiner of a ZWJ emoji', () => {
    const name = `${'a'.repeat(61)}${CODER}z`; // 61 + 👩 (2) + joiner (1) = 64
    expect(cutText(name, 64)).toBe('a'.repeat(61));
    expect(cutText(name, 66)).toBe(`${'a'.repeat(61)}${CODER}`);
    for (let n = 61; n <= 67; n++) expect(cutText(name, n)).not.toMatch(BARE_JOINER);
  });

  it('keeps a letter with its combining accent', () => {
    expect(cutText('Jose\u0301 and more', 4)).toBe('Jos');
    expect(cutText('Jose\u0301 and more', 5)).toBe('Jose\u0301');
  });

  it('cuts a cluster longer than the cut between code points rather than to nothing', () => {
    const zalgo = `e${'\u0301'.repeat(200)}`;
    expect(cutText(zalgo, 64)).toBe(zalgo.slice(0, 64));
    expect(cutText(`\u{1F469}${'\u{1F3FB}'.repeat(40)}`, 5)).toBe('\u{1F469}\u{1F3FB}');
  });
});

/**
 * Pieces that exercise every grapheme rule: regional indicators, emoji with a ZWJ, skin tones and the
 * emoji selector, combining accents, Hangul jamo and syllables, a Devanagari conjunct (virama), Thai
 * SARA AM (a spacing mark that is a letter), an Arabic prepend, CR LF, controls, lone surrogates, and
 * the `simple` units the fast path trusts (ASCII, Latin-1, ©, Greek, Cyrillic, kana and its marks, CJK).
 */
const PIECES = [
  '\u{1F1EB}',
  '\u{1F1F7}',
  '\u{1F469}',
  '\u200d',
  '\u{1F4BB}',
  '\u{1F3FB}',
  '\ufe0f',
  '\u2764',
  'e',
  '\u0301',
  '\u0308',
  '\u1100',
  '\u1161',
  '\u11a8',
  '\uac00',
  '\u0915',
  '\u094d',
  '\u0937',
  '\u0e01',
  '\u0e33',
  '\u0600',
  '\r',
  '\n',
  '\u0007',
  '\ud83d',
  '\ude00',
  'a',
  ' ',
  '\u00e9',
  '\u00a9',
  '\u03b1',
  '\u0430',
  '\u3042',
  '\u3099',
  '\u6f22',
  '\u0483',
];

/** The last boundary at or before `at` by segmenting the whole text, with graphemeFloor's fallback. */
function reference(text: string, at: number): number {
  if (at <= 0) return 0;
  if (at >= text.length) return text.length;
  let last = 0;
  for (const { index } of new Intl.Segmenter(undefined, { granularity: 'grapheme' }).segment(text)) {
    if (index > at) break;
    last = index;
  }
  if (last > 0) return last;
  const c = text.charCodeAt(at - 1);
  return c >= 0xd800 && c <= 0xdbff ? at - 1 : at;
}

describe('graphemeFloor', () => {
  it('agrees with segmenting the whole text, at every index of random texts of tricky pieces', () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...PIECES), { maxLength: 400 }), (pieces) => {
        const text = pieces.join('');
        for (let at = 0; at <= text.length; at++) expect(graphemeFloor(text, at)).toBe(reference(text, at));
      }),
      { numRuns: 300 },
    );
  });

  it('agrees past the look-back window: long runs of flags, marks and jamo', () => {
    const flags = `x${'\u{1F1EB}\u{1F1F7}'.repeat(300)}`;
    const marks = `a${'e\u0301\u0308'.repeat(200)}`;
    const zwj = `\u{1F469}${'\u0301'.repeat(300)}\u200d\u{1F4BB}`;
    for (const text of [flags, marks, zwj, '\u1100'.repeat(600)])
      for (let at = 0; at <= text.length; at += 7) expect(graphemeFloor(text, at)).toBe(reference(text, at));
  });
});

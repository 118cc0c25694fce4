/**
 * Each place that shortens text for display cuts between grapheme clusters (issue 25.6): the timeline's
 * one-line summaries (titles, input summaries, writer names) and its byte-bounded excerpts of messages
 * and outputs, the text replay's lines, a malformed line's excerpt, and the writer's cut of a field over
 * 1 MiB. The HTTP side is test/http/board-text-cut.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { parseLine } from '../../lib/log/format/codec.js';
import { oneLine as replayLine } from '../../lib/log/replay/replay-text.js';
import { cutLongFields, MAX_FIELD_BYTES } from '../../lib/log/write/field-limits.js';
import { excerpt, oneLine } from '../../lib/service/timeline/text.js';

const FLAG = '\u{1F1EB}\u{1F1F7}'; // 🇫🇷: four UTF-16 units, eight UTF-8 bytes
const CODER = '\u{1F469}\u200D\u{1F4BB}'; // 👩‍💻
const HALF_FLAG = /(?<!\p{RI})\p{RI}(?:\p{RI}\p{RI})*(?!\p{RI})/u;
const BARE_JOINER = /\u200D(?!\p{Extended_Pictographic})/u;

function expectWhole(s: string): void {
  expect(s).not.toMatch(HALF_FLAG);
  expect(s).not.toMatch(BARE_JOINER);
}

describe('cuts for display', () => {
  it("the timeline's one-line summaries end before a flag or ZWJ emoji the cut would split", () => {
    // 1 + 4k + 2 units: every cut below falls between the two indicators of a flag
    for (const max of [80, 120, 200]) {
      const cut = oneLine(`x${FLAG.repeat(100)}`, max);
      expect(cut.endsWith('…')).toBe(true);
      expectWhole(cut);
    }
    expect(oneLine(`${'c'.repeat(76)}${CODER}`, 80)).toBe(`${'c'.repeat(76)}…`);
  });

  it("the timeline's excerpts cut at a byte bound keep whole flags and accents", () => {
    const flags = `x${FLAG.repeat(2000)}`; // 8,192 bytes fall inside the 1,024th flag
    const cut = excerpt(flags, 8192);
    expect(cut.text).toBe(`x${FLAG.repeat(1023)}`);
    expect(cut.more_bytes).toBe(Buffer.byteLength(flags) - 1 - 8 * 1023);
    // 'e' (1 byte) then U+0301 (2 bytes): a cut after the e leaves it out with its accent
    expect(excerpt(`caf${'e\u0301'.repeat(10)}`, 4).text).toBe('caf');
  });

  it('the text replay cuts a long line before a flag it would split', () => {
    const line = replayLine(`x${FLAG.repeat(100)}`); // 240 units: 239 kept, then …
    expect(line.endsWith('…')).toBe(true);
    expectWhole(line);
    expect(replayLine(`${'r'.repeat(236)}${CODER}${'r'.repeat(10)}`)).toBe(`${'r'.repeat(236)}…`);
  });

  it("a malformed line's excerpt keeps whole flags", () => {
    const p = parseLine(Buffer.from(`{x${FLAG.repeat(100)}`), 1, 0, true);
    expect(p.ok).toBe(false);
    if (!p.ok) {
      expect(p.problem.excerpt.startsWith(`{x${FLAG}`)).toBe(true);
      expectWhole(p.problem.excerpt);
    }
  });

  it("the writer's cut of a field over 1 MiB ends on a cluster boundary", () => {
    // JSON adds 2 quote bytes; 7 bytes are left after the 100th flag: one regional indicator (4) fits
    const text = `${'y'.repeat(MAX_FIELD_BYTES - 2 - 8 * 100 - 7)}${FLAG.repeat(200)}`;
    const { fields, truncated } = cutLongFields({ text });
    expect(truncated).toEqual(['text']);
    const kept = fields.text as string;
    expect(kept.length).toBeGreaterThan(MAX_FIELD_BYTES - 2 - 8 * 100 - 7);
    expect(kept.endsWith(FLAG)).toBe(true);
    expect(kept.slice(-4 * 120)).not.toMatch(HALF_FLAG);
  });
});

/**
 * Display escaping (issue 8.4): what a session's writer put in a field must not pass for something else
 * when a person reads it. A newline in a `user_id` would start a second, forged line of the text replay
 * ("priya: I approve…"); an escape sequence would reach the terminal raw (retitle it, hide lines, move
 * the cursor); a bidi override (U+202E) would reorder what follows it on screen. So every field the text
 * replay, the CLI's summaries and the board pages show goes through `escapeControl`, and verify warns
 * about such characters in ids and names (`control_characters`, docs/verify.md).
 *
 * Escaped: C0 controls (U+0000–U+001F, tab and newline included), DEL, C1 controls (U+0080–U+009F), the
 * line and paragraph separators U+2028, U+2029, every format character (Unicode `Cf`: the bidi and
 * direction marks U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069, zero-width U+200B–U+200D, U+2060,
 * U+FEFF, the soft hyphen U+00AD, U+180E, the invisible operators U+2061–U+2064, the tag characters
 * U+E0000–U+E007F) and every other default-ignorable code point (characters that render as nothing: the
 * combining grapheme joiner U+034F, the Hangul fillers U+115F, U+1160, U+3164, U+FFA0, the variation
 * selectors), so `ali\u00adce` is not shown as `alice`, another user_id. Two exceptions keep emoji
 * whole: a zero-width joiner or the emoji variation selector U+FE0F right after a pictograph (`❤️`, `👩‍💻`).
 * Everything else, other scripts and emoji included, is shown as
 * written. The escapes are for reading, not reversible: a backslash is not doubled, so a literal `\n`
 * typed by a writer looks like an escaped newline (the NDJSON replay has the exact bytes).
 */

/**
 * One of the characters `escapeControl` rewrites (a code point: the `u` flag). The first branch is the
 * joiner and the emoji selector where they do not follow a pictograph.
 */
const UNSAFE_SOURCE =
  '(?<!\\p{Extended_Pictographic})[\\u200d\\ufe0f]' +
  '|(?![\\u200d\\ufe0f])[\\p{Cc}\\p{Cf}\\p{Default_Ignorable_Code_Point}\\u2028\\u2029]';
const UNSAFE = new RegExp(UNSAFE_SOURCE, 'u');
const UNSAFE_ALL = new RegExp(UNSAFE_SOURCE, 'gu');

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOne(ch: string): string {
  const named = NAMED[ch];
  if (named) return named;
  const code = ch.codePointAt(0)!;
  if (code <= 0xff) return `\\x${code.toString(16).padStart(2, '0')}`;
  return code <= 0xffff ? `\\u${code.toString(16).padStart(4, '0')}` : `\\u{${code.toString(16)}}`;
}

/**
 * `text` with every control, DEL, C1, separator, format and other invisible character written as a visible
 * escape: `\n`, `\r`, `\t`, `\x1b` (C0, DEL, C1), `\u202e`, `\u{e0041}` (the others). The result holds
 * none of them, so it is one line and shows left to right as written; applying it twice changes nothing.
 * @example escapeControl('priya\n2026-01-01  sam') // 'priya\\n2026-01-01  sam'
 * @example escapeControl('\u001b[2J') // '\\x1b[2J'
 */
export function escapeControl(text: string): string {
  return allSafe(text) || !UNSAFE.test(text) ? text : text.replace(UNSAFE_ALL, escapeOne);
}

/** Whether `text` holds a character `escapeControl` would rewrite. */
export function hasControl(text: string): boolean {
  return !allSafe(text) && UNSAFE.test(text);
}

/**
 * True when every UTF-16 unit of `text` is one `UNSAFE` never matches whatever surrounds it: printable
 * ASCII and U+00A0–U+034E but the soft hyphen U+00AD (test/log/escape-fast.test.ts checks each code
 * point against the regex). False says nothing: the regex decides. Ids, names and timestamps, most of
 * what the text replay escapes, are all ASCII, and this loop is several times faster than the regex's
 * test on them (it was the text replay's largest cost, issue 16).
 */
function allSafe(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x7f ? c < 0x20 : c < 0xa0 || c > 0x34e || c === 0xad) return false;
  }
  return true;
}

/**
 * `escapeControl` by the regex alone, without the fast path: the reference test/log/escape-fast.test.ts
 * checks `escapeControl` and `hasControl` against. Same contract as `escapeControl`.
 */
export function escapeControlByRegex(text: string): string {
  return UNSAFE.test(text) ? text.replace(UNSAFE_ALL, escapeOne) : text;
}

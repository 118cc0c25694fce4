/**
 * Display escaping (issue 8.4): what a session's writer put in a field must not pass for something else
 * when a person reads it. A newline in a `user_id` would start a second, forged line of the text replay
 * ("priya: I approve…"); an escape sequence would reach the terminal raw (retitle it, hide lines, move
 * the cursor); a bidi override (U+202E) would reorder what follows it on screen. So every field the text
 * replay, the CLI's summaries and the board pages show goes through `escapeControl`, and verify warns
 * about such characters in ids and names (`control_characters`, docs/verify.md).
 *
 * Escaped: C0 controls (U+0000–U+001F, tab and newline included), DEL, C1 controls (U+0080–U+009F), the
 * bidi and direction marks (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069) and the line and
 * paragraph separators U+2028, U+2029, and the invisible format characters U+200B zero-width space,
 * U+200C/U+200D zero-width (non-)joiner, U+2060 word joiner and U+FEFF (so `ali\u200bce` is not shown as
 * `alice`, another user_id). Everything else, other scripts and emoji included, is shown as
 * written. The escapes are for reading, not reversible: a backslash is not doubled, so a literal `\n`
 * typed by a writer looks like an escaped newline (the NDJSON replay has the exact bytes).
 */

/** One of the characters `escapeControl` rewrites. */
const UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
  /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u202a-\u202e\u2060\u2066-\u2069\u2028\u2029\ufeff]/;
const UNSAFE_ALL = new RegExp(UNSAFE.source, 'g');

const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function escapeOne(ch: string): string {
  const named = NAMED[ch];
  if (named) return named;
  const code = ch.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every control, DEL, C1, bidi/separator and zero-width character written as a visible escape:
 * `\n`, `\r`, `\t`, `\x1b` (C0, DEL, C1), `\u202e` (the others). The result holds none of them, so it is
 * one line and shows left to right as written; applying it twice changes nothing.
 * @example escapeControl('priya\n2026-01-01  sam') // 'priya\\n2026-01-01  sam'
 * @example escapeControl('\u001b[2J') // '\\x1b[2J'
 */
export function escapeControl(text: string): string {
  return UNSAFE.test(text) ? text.replace(UNSAFE_ALL, escapeOne) : text;
}

/** Whether `text` holds a character `escapeControl` would rewrite. */
export function hasControl(text: string): boolean {
  return UNSAFE.test(text);
}

/**
 * User text made safe to cut, store and put in a link (issue 14, the board): a writer's `user_id`,
 * agent name or prompt may hold a lone surrogate (a raw `"\ud83d"` JSON escape), and a cut by
 * `String.prototype.slice` can split an emoji's surrogate pair. Such a string is not well-formed
 * UTF-16: `encodeURIComponent` throws `URIError` on it and UTF-8 encoders write U+FFFD for it. So the
 * summary and ingest cut with `cutText`, and the pages build links with `uriComponent`.
 */

/** ES2024's String methods (Node 20 has them; the project's `lib` is ES2023). */
interface WellFormedString {
  isWellFormed(): boolean;
  toWellFormed(): string;
}

/** `text` with every lone surrogate replaced by U+FFFD (`String.prototype.toWellFormed`). */
export function wellFormed(text: string): string {
  const s = text as unknown as WellFormedString;
  return s.isWellFormed() ? text : s.toWellFormed();
}

/**
 * `text` made well-formed and cut to at most `max` UTF-16 units, never between the two halves of a
 * surrogate pair (a pair that would straddle the cut is left out whole).
 * @example cutText('ab😀', 3) // 'ab'
 */
export function cutText(text: string, max: number): string {
  const s = wellFormed(text);
  if (s.length <= max) return s;
  const code = s.charCodeAt(max - 1);
  // a high surrogate at the last kept unit: its low half is past the cut
  return s.slice(0, code >= 0xd800 && code <= 0xdbff ? max - 1 : max);
}

/** `encodeURIComponent` that never throws: lone surrogates are encoded as U+FFFD (`%EF%BF%BD`). */
export function uriComponent(text: string): string {
  return encodeURIComponent(wellFormed(text));
}

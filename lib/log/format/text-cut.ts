/**
 * User text made safe to cut, store and put in a link (issue 14, the board; issue 25.6): a writer's
 * `user_id`, agent name or prompt may hold a lone surrogate (a raw `"\ud83d"` JSON escape), and a cut by
 * `String.prototype.slice` can split an emoji's surrogate pair. Such a string is not well-formed
 * UTF-16: `encodeURIComponent` throws `URIError` on it and UTF-8 encoders write U+FFFD for it. A cut
 * between two code points can still split what a reader sees as one character (a grapheme cluster,
 * UAX #29): half a flag (one regional indicator of two), an emoji ZWJ sequence ending in a bare joiner
 * (`👩‍` of `👩‍💻`), a letter without its combining accent. So every cut of text for display (titles, names,
 * the timeline's excerpts, the text replay, verify's messages) goes through `cutText` or `graphemeFloor`,
 * which cut on cluster boundaries, and the pages build links with `uriComponent`.
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
 * One segmenter for every cut: making one costs far more than a cut (ICU's grapheme rules, any locale).
 * Made at the first cut that needs it, not at import: the capture hook imports this module and starts
 * on every event.
 */
let graphemes: Intl.Segmenter | null = null;

const isHigh = (code: number) => code >= 0xd800 && code <= 0xdbff;

/**
 * Whether UTF-16 unit `c` is a whole character that no grapheme rule joins to a neighbour it is not
 * joined by: below U+0300 (no combining mark, joiner, regional indicator or Hangul jamo there; CR is
 * checked apart), Greek U+0370–U+03FF, Cyrillic letters U+0400–U+0482, kana but its two combining marks,
 * CJK ideographs. Between two such units there is always a boundary, and no rule's context (a run of
 * regional indicators, an emoji ZWJ sequence, an Indic conjunct) reaches across it.
 */
function simple(c: number): boolean {
  return (
    c < 0x300 ||
    (c >= 0x370 && c <= 0x482) ||
    (c >= 0x3040 && c <= 0x30ff && c !== 0x3099 && c !== 0x309a) ||
    (c >= 0x3400 && c <= 0x4dbf) ||
    (c >= 0x4e00 && c <= 0x9fff)
  );
}

/** Whether `at` (0 < at < length) lies between two `simple` units that are not CR LF: surely a boundary. */
function simplePair(text: string, at: number): boolean {
  const before = text.charCodeAt(at - 1);
  const after = text.charCodeAt(at);
  return simple(before) && simple(after) && !(before === 13 && after === 10);
}

/** How far back from a cut `graphemeFloor` looks for a sure boundary to segment from (UTF-16 units). */
const WINDOW = 256;

/**
 * The last grapheme-cluster boundary of `text` at or before UTF-16 index `at` (clamped to 0..length):
 * where to cut `text` to at most `at` units without splitting a user-perceived character (UAX #29, as
 * ICU's `Intl.Segmenter` has it). Cheap whatever the text's length: a cut between two `simple` units
 * (ASCII, Latin-1, Greek, Cyrillic, CJK) is a boundary with no segmenting; otherwise only the stretch
 * from the last sure boundary within `WINDOW` units before the cut (else from the start) to the code
 * point after it is segmented (a boundary depends on what precedes it and on that one code point).
 * A cluster that starts at 0 and runs past `at` (a letter under hundreds of marks) is cut between code
 * points instead, so a long cluster never leaves nothing.
 * @example graphemeFloor('ab🇫🇷', 3) // 2: the flag is two code points, one cluster
 */
export function graphemeFloor(text: string, at: number): number {
  if (at <= 0) return 0;
  if (at >= text.length) return text.length;
  if (simplePair(text, at)) return at;
  let from = 0;
  for (let q = at - 1; q > 0 && q >= at - WINDOW; q--) {
    if (simplePair(text, q)) {
      from = q;
      break;
    }
  }
  graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  const start =
    from + (graphemes.segment(text.slice(from, at + 2)).containing(at - from)?.index ?? at - from);
  if (start > 0) return start;
  // a high surrogate at the last kept unit: its low half is past the cut
  return isHigh(text.charCodeAt(at - 1)) ? at - 1 : at;
}

/**
 * `text` made well-formed and cut to at most `max` UTF-16 units on a grapheme-cluster boundary
 * (`graphemeFloor`): a character that would straddle the cut is left out whole, a flag, a ZWJ emoji
 * sequence or a letter with its accents alike. Only the head of a long text is read.
 * @example cutText('ab😀', 3) // 'ab'
 * @example cutText('x🇫🇷🇩🇪', 7) // 'x🇫🇷' (not 'x🇫🇷' plus half of 🇩🇪)
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return wellFormed(text);
  // Lone surrogates become U+FFFD, one unit for one: the head's indexes stay the text's.
  const head = wellFormed(text.slice(0, max + 2));
  return head.slice(0, graphemeFloor(head, max));
}

/** `encodeURIComponent` that never throws: lone surrogates are encoded as U+FFFD (`%EF%BF%BD`). */
export function uriComponent(text: string): string {
  return encodeURIComponent(wellFormed(text));
}

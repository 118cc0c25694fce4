/**
 * A hit's snippet (issue 30 item 2 "a highlighted snippet"): made here from the document's text, not by
 * the engine (FTS5's `snippet()` and PostgreSQL's `ts_headline` cut and mark differently, and would mark
 * the lower-cased terms rather than the text as written). The words whose terms are among the query's are
 * marked; the window starts a little before the first of them.
 */
import { SNIPPET_CHARS, type SnippetPart } from '../../contract/search.js';
import { TERM_MAX } from './terms.js';

/** Characters of context kept before the first marked word. */
const LEAD = 60;
const WORD = /[\p{L}\p{M}\p{N}]+/gu;

function termOf(word: string): string {
  const t = word.normalize('NFKC').toLowerCase();
  return t.length > TERM_MAX ? Array.from(t).slice(0, TERM_MAX).join('') : t;
}

/**
 * The snippet of `text` for the query terms `terms`: at most `SNIPPET_CHARS` characters (with `…` where
 * cut), newlines shown as spaces, the matching words as parts with `hit: true`. The text's start when no
 * word matches (the document matched by its names or filters alone).
 */
export function snippetOf(text: string, terms: ReadonlySet<string>): SnippetPart[] {
  const flat = text.replace(/\s+/g, ' ').trim();
  const hits: Array<[number, number]> = [];
  for (const m of flat.matchAll(WORD)) {
    if (terms.has(termOf(m[0]))) hits.push([m.index, m.index + m[0].length]);
  }
  let start = 0;
  const first = hits[0];
  if (first && first[0] > LEAD) {
    start = first[0] - LEAD;
    const space = flat.indexOf(' ', start);
    if (space !== -1 && space < first[0]) start = space + 1;
  }
  let end = Math.min(flat.length, start + SNIPPET_CHARS);
  // Never end inside a marked word (end before it), nor between the halves of a surrogate pair; but the
  // first marked word is cut where the snippet ends: a writer's word of 16,000 letters (a blob, a hash)
  // would otherwise make a snippet of it all (test/attack/search-content.test.ts SEARCH-SNIPPET-LONG).
  for (const [a, b] of hits) if (a < end && b > end && a > (first?.[0] ?? 0)) end = a;
  if (end < flat.length && /[\uD800-\uDBFF]/.test(flat[end - 1] ?? '')) end -= 1;
  const parts: SnippetPart[] = [];
  const push = (s: string, hit: boolean) => {
    if (!s) return;
    const last = parts.at(-1);
    if (last && last.hit === hit) last.text += s;
    else parts.push({ text: s, hit });
  };
  if (start > 0) push('…', false);
  let at = start;
  for (const [a, b] of hits) {
    if (b <= start || a >= end) continue;
    push(flat.slice(at, a), false);
    push(flat.slice(a, Math.min(b, end)), true);
    at = Math.min(b, end);
  }
  push(flat.slice(at, end), false);
  if (end < flat.length) push('…', false);
  return parts;
}

/**
 * How `SqliteSearchIndex` (sqlite/search.ts) ranks the candidates of a query with words (issue 30,
 * SEARCH-IDF): from each candidate's own terms alone. FTS5's bm25 reads the document frequencies, count
 * and average length of the whole FTS table, which every tenant shares, so the order of one tenant's hits
 * told whether another's text held a word; and it scored every match of a common word before sorting.
 * Here a score depends on the document and the query only: what another document holds, of any tenant,
 * moves no score.
 */

/** A candidate as `selectOf` reads it (search-sql.ts): its key, its order's columns, what it is matched by. */
export interface Candidate {
  rid: number;
  at_us: number | null;
  sid: string;
  w: string;
  seq: number;
  /** the FTS5 `body` column: the effective terms, space-separated (search-sql.ts `FTS_BODY`) */
  body: string;
  /** the FTS5 `facets` column: the facets' names (NFKC) when a fix applies, else '' */
  facets: string;
}

/** A candidate's key and order with its score (higher is better). */
export interface Scored extends Omit<Candidate, 'body' | 'facets'> {
  score: number;
}

/** As lib/service/search/terms.ts cuts text (and FTS5's `unicode61` reads it back): runs of letters and digits. */
const SEPARATORS = /[^\p{L}\p{M}\p{N}]+/u;

const wordsOf = (s: string): string[] =>
  s
    .normalize('NFKC')
    .toLowerCase()
    .split(SEPARATORS)
    .filter((t) => t.length > 0);

/** How many times `phrase` (terms adjacent, in order) is in `tokens`. */
function occurrences(tokens: readonly string[], phrase: readonly string[]): number {
  const k = phrase.length;
  if (k === 0) return 0;
  let n = 0;
  for (let i = 0; i + k <= tokens.length; i++) {
    let j = 0;
    while (j < k && tokens[i + j] === phrase[j]) j++;
    if (j === k) n++;
  }
  return n;
}

/** The query's entries (each a word or a phrase) as the terms a document's columns hold. */
export const phrasesOf = (entries: ReadonlyArray<readonly string[]>): string[][] =>
  entries.map((terms) => terms.flatMap(wordsOf));

/**
 * The score of a document for the query's `phrases` (`phrasesOf`): the occurrences of the phrases in its
 * terms (a phrase counts once each time its words are adjacent in order; body and facets apart), divided
 * by 1 + the natural log of its length in terms, as PostgreSQL's `ts_rank_cd` with normalisation 1
 * divides its own rank. Deterministic: equal terms give an equal score. 0 for a document of no terms.
 * @example scoreOf({ body: 'parser parser fix', facets: '' }, [['parser']]) → 2 / (1 + ln 3)
 */
export function scoreOf(doc: Pick<Candidate, 'body' | 'facets'>, phrases: readonly string[][]): number {
  const body = doc.body === '' ? [] : doc.body.split(' ');
  const facets = doc.facets === '' ? [] : wordsOf(doc.facets);
  const length = body.length + facets.length;
  if (length === 0) return 0;
  let hits = 0;
  for (const phrase of phrases) hits += occurrences(body, phrase) + occurrences(facets, phrase);
  return hits / (1 + Math.log(length));
}

/** `a` before `b` in UTF-8 byte order (SQLite's BINARY collation, PostgreSQL's "C"): code point order. */
export function byteOrder(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.codePointAt(i)!;
    const y = b.codePointAt(i)!;
    if (x !== y) return x < y ? -1 : 1;
    if (x > 0xffff) i++;
  }
  return a.length - b.length;
}

/** The port's order of hits: score (higher first), newest first (an unknown instant last), then sid, w, seq. */
export function hitOrder(a: Scored, b: Scored): number {
  if (a.score !== b.score) return b.score - a.score;
  if (a.at_us !== b.at_us) {
    if (a.at_us === null) return 1;
    if (b.at_us === null) return -1;
    return b.at_us - a.at_us;
  }
  return byteOrder(a.sid, b.sid) || byteOrder(a.w, b.w) || a.seq - b.seq;
}

/** The candidates scored for the query's entries (each a word or a phrase), best first (`hitOrder`). */
export function rankCandidates(
  candidates: readonly Candidate[],
  entries: ReadonlyArray<readonly string[]>,
): Scored[] {
  const phrases = phrasesOf(entries);
  const scored: Scored[] = candidates.map((c) => ({
    rid: c.rid,
    at_us: c.at_us,
    sid: c.sid,
    w: c.w,
    seq: c.seq,
    score: scoreOf(c, phrases),
  }));
  return scored.sort(hitOrder);
}

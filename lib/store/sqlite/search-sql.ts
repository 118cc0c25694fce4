/**
 * The SQL of `SqliteSearchIndex` (sqlite/search.ts, issue 30 item 4): its tables, and a query of the
 * port (`EngineQuery`, lib/store/search.ts) as one SELECT with its parameters. Split from the index so
 * that each file stays readable; nothing here runs a statement.
 */
import { type EngineQuery, SEARCH_CANDIDATES } from '../search.js';

/**
 * The index's tables, made by the first open (`IF NOT EXISTS`), in the state store's database file:
 * - `search_docs`: one row per document, its own text and terms, the lower-cased facets the filters
 *   compare (`*_lc`), its facets' names (`facets`, NFKC), and the winning fix's text and terms
 *   (`fix_text`, `fix_terms`; null: no fix);
 * - `search_fts`: FTS5 over each document's effective terms (`FTS_BODY`: its own terms, or the fix's
 *   text's terms when a fix applies, with the facets' names in `FTS_FACETS` then, since a fix's terms are
 *   its text's alone), its rowid `search_docs.rid`. Contentless (`content=''`: the text is in
 *   `search_docs`, not twice), so a row is removed with FTS5's 'delete' command given the values it was
 *   indexed with: both are written by the SQL of `ftsAdd` and `ftsRemove` from the document's row, never
 *   from JavaScript values, so they cannot differ. (`contentless_delete=1` was not used: its deletes
 *   leave FTS5's document counts off, so a rebuilt index would differ from the one it replaced.)
 *   `unicode61 remove_diacritics 0` reads the space-separated terms of lib/service/search/terms.ts back
 *   as the same words, marks kept;
 * - `search_fixes`: corrections by the correction event (sid, w, seq) and what they target;
 * - `search_causes`: recorded causes (`SearchCause`): message `message_id` is filed under `key`, a
 *   document's `cause` (an agent event's `e:<id>`, a turn's `t:<turn_id>`), whichever writer or batch
 *   filed it; the `person:` filter reads through it (its primary key's prefix (tenant, sid, key));
 * - `search_cursors`: each writer's indexed length (`applyWriter`'s condition);
 * - `search_facts`: each session's reported state and title (the `state:` filter, the hits' title).
 */
export const SEARCH_SCHEMA = `
CREATE TABLE IF NOT EXISTS search_docs (
  rid INTEGER PRIMARY KEY, tenant TEXT NOT NULL, sid TEXT NOT NULL, w TEXT NOT NULL, seq INTEGER NOT NULL,
  id TEXT NOT NULL, ts TEXT NOT NULL, at_us INTEGER, type TEXT NOT NULL, field TEXT NOT NULL, agent TEXT,
  person TEXT, person_name TEXT, tool TEXT, cause TEXT, text TEXT NOT NULL, terms TEXT NOT NULL,
  person_lc TEXT, person_name_lc TEXT, tool_lc TEXT, facets TEXT NOT NULL, fix_text TEXT, fix_terms TEXT,
  UNIQUE (tenant, sid, w, seq)
);
CREATE INDEX IF NOT EXISTS search_docs_target ON search_docs (tenant, sid, id, field);
CREATE INDEX IF NOT EXISTS search_docs_newest ON search_docs (tenant, at_us DESC, sid, w, seq);
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(
  body, facets, content = '', tokenize = 'unicode61 remove_diacritics 0'
);
CREATE TABLE IF NOT EXISTS search_fixes (
  tenant TEXT NOT NULL, sid TEXT NOT NULL, w TEXT NOT NULL, seq INTEGER NOT NULL, target_id TEXT NOT NULL,
  field TEXT NOT NULL, text TEXT NOT NULL, terms TEXT NOT NULL, at_us INTEGER, by TEXT NOT NULL,
  PRIMARY KEY (tenant, sid, w, seq, target_id, field)
);
CREATE INDEX IF NOT EXISTS search_fixes_target ON search_fixes (tenant, sid, target_id, field);
CREATE TABLE IF NOT EXISTS search_causes (
  tenant TEXT NOT NULL, sid TEXT NOT NULL, key TEXT NOT NULL, message_id TEXT NOT NULL,
  PRIMARY KEY (tenant, sid, key, message_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS search_cursors (
  tenant TEXT NOT NULL, sid TEXT NOT NULL, w TEXT NOT NULL, length INTEGER NOT NULL,
  PRIMARY KEY (tenant, sid, w)
);
CREATE TABLE IF NOT EXISTS search_facts (
  tenant TEXT NOT NULL, sid TEXT NOT NULL, state TEXT, title TEXT, PRIMARY KEY (tenant, sid)
);
`;

/** A document row's FTS5 columns (see `SEARCH_SCHEMA`). */
const ftsBody = (d = '') => `COALESCE(${d}fix_terms, ${d}terms)`;
const ftsFacets = (d = '') => `CASE WHEN ${d}fix_terms IS NULL THEN '' ELSE ${d}facets END`;
const FTS_BODY = ftsBody();
const FTS_FACETS = ftsFacets();

/** Indexes the documents of `search_docs` matching `where` (which must not be indexed already). */
export const ftsAdd = (where: string): string =>
  `INSERT INTO search_fts (rowid, body, facets) SELECT rid, ${FTS_BODY}, ${FTS_FACETS} FROM search_docs WHERE ${where}`;

/** Takes the documents matching `where` out of the index (call before their row changes or goes). */
export const ftsRemove = (where: string): string =>
  `INSERT INTO search_fts (search_fts, rowid, body, facets)
     SELECT 'delete', rid, ${FTS_BODY}, ${FTS_FACETS} FROM search_docs WHERE ${where}`;

/**
 * One entry's FTS5 form: every term double-quoted (a `"` inside doubled), so nothing of a term is FTS5
 * syntax (`NEAR`, `OR`, `*`, `-`, `:`, `^` are words inside quotes); several terms in one quoted string
 * are a phrase (adjacent, in order), as FTS5 reads a quoted string through the table's tokenizer.
 */
export function phraseOf(terms: readonly string[]): string {
  return `"${terms.join(' ').replace(/"/g, '""')}"`;
}

/**
 * A query's SELECT and its parameters: `page`, the rows of `search_docs d` with the session's `title` and
 * `state`, the page itself (a query of filters alone); `candidates`, the `Candidate`s of a query with words
 * (sqlite/search-rank.ts), to be ranked and paged by the adapter, then read by `rowsOf`.
 */
export interface SearchSelect {
  kind: 'page' | 'candidates';
  sql: string;
  params: unknown[];
}

const marks = (n: number) => Array.from({ length: n }, () => '?').join(', ');

/** A count as SQLite's LIMIT and OFFSET must have it: SQLite reads a negative LIMIT as none at all. */
export const countOf = (n: number): number => (Number.isFinite(n) ? Math.max(0, Math.floor(n)) : 0);

/**
 * The SELECT of `query` in `tenant`. Filters alone: the page (`limit`, `offset`), newest first. With
 * words: the matching documents newest indexed first (FTS5's rowid order, from its doclists: no sort of
 * the matches), at most `candidates` of them (`SEARCH_CANDIDATES`), with the columns their score is made
 * of; `limit` and `offset` are the adapter's to apply after ranking. Null when a filter's empty list makes
 * the answer empty without asking. Every statement is filtered by `d.tenant = ?`.
 */
export function selectOf(
  tenant: string,
  query: EngineQuery,
  candidates = SEARCH_CANDIDATES,
): SearchSelect | null {
  const where: string[] = ['d.tenant = ?'];
  const params: unknown[] = [tenant];
  const f = query.filters;
  const lists: Array<[string[] | undefined, string]> = [
    [f.agent, 'd.agent'],
    [f.tool?.map((t) => t.toLowerCase()), 'd.tool_lc'],
    [f.type, 'd.type'],
    [f.sid, 'd.sid'],
    [f.state, 'f.state'],
  ];
  for (const [values, column] of lists) {
    if (values === undefined) continue;
    if (values.length === 0) return null;
    where.push(`${column} IN (${marks(values.length)})`);
    params.push(...values);
  }
  if (f.person !== undefined) {
    if (f.person.length === 0) return null;
    const people = f.person.map((p) => p.toLowerCase());
    const m = marks(people.length);
    // An agent's event is a person's too when a message of the session filed under its `cause` key (its
    // `caused_by`, or its turn's context) is theirs: replay's recorded attribution. CROSS JOIN keeps the
    // causes of the key the outer loop (SQLite's planner, without statistics, would read every document
    // of the session first), then each named message by `search_docs_target`.
    where.push(`(d.person_lc IN (${m}) OR d.person_name_lc IN (${m}) OR (d.cause IS NOT NULL AND EXISTS (
      SELECT 1 FROM search_causes k
        CROSS JOIN search_docs c ON c.tenant = k.tenant AND c.sid = k.sid AND c.id = k.message_id
      WHERE k.tenant = d.tenant AND k.sid = d.sid AND k.key = d.cause AND c.type = 'message'
        AND (c.person_lc IN (${m}) OR c.person_name_lc IN (${m})))))`);
    params.push(...people, ...people, ...people, ...people);
  }
  if (f.after_us !== undefined) {
    where.push('d.at_us >= ?');
    params.push(f.after_us);
  }
  if (f.before_us !== undefined) {
    where.push('d.at_us < ?');
    params.push(f.before_us);
  }
  const match = query.match.map((m) => phraseOf(m.terms));
  const exclude = query.exclude.map((m) => phraseOf(m.terms));
  const facts = 'LEFT JOIN search_facts f ON f.tenant = d.tenant AND f.sid = d.sid';
  if (match.length > 0) {
    const positive = match.join(' AND ');
    where.push('search_fts MATCH ?');
    params.push(exclude.length > 0 ? `(${positive}) NOT (${exclude.join(' OR ')})` : positive);
    params.push(countOf(candidates));
    // CROSS JOIN: the full-text match is the outer loop. With a range or facet filter SQLite's planner
    // would otherwise walk `search_docs_newest` and test MATCH row by row (74 s for one common word over
    // 100,000 documents, against 0.15 s with the match first). In rowid order, FTS5 reads its doclists
    // newest first and the LIMIT stops it: a word in every document costs `candidates` rows, no sort.
    return {
      kind: 'candidates',
      sql: `SELECT d.rid, d.at_us, d.sid, d.w, d.seq, ${ftsBody('d.')} AS body, ${ftsFacets('d.')} AS facets
        FROM search_fts CROSS JOIN search_docs d ON d.rid = search_fts.rowid ${facts}
        WHERE ${where.join(' AND ')}
        ORDER BY search_fts.rowid DESC LIMIT ?`,
      params,
    };
  }
  if (exclude.length > 0) {
    where.push('d.rid NOT IN (SELECT rowid FROM search_fts WHERE search_fts MATCH ?)');
    params.push(exclude.join(' OR '));
  }
  params.push(countOf(query.limit), countOf(query.offset));
  // Filters alone list newest first: in the order of `search_docs_newest`, so no sort of the tenant's rows.
  return {
    kind: 'page',
    sql: `SELECT d.*, f.title AS title, f.state AS state FROM search_docs d ${facts}
      WHERE ${where.join(' AND ')}
      ORDER BY d.at_us DESC, d.sid, d.w, d.seq LIMIT ? OFFSET ?`,
    params,
  };
}

/**
 * The rows of `n` documents of `tenant` by rid (parameters: the rids, then the tenant), with their facts.
 * `+d.tenant`: each row by its rid, the tenant checked on it (with `d.tenant = ?` SQLite's planner read
 * the tenant's every row through `search_docs_newest` from 21 rids on, 15 ms for a page of 21 of 100,000).
 */
export const rowsOf = (n: number): string =>
  `SELECT d.*, f.title AS title, f.state AS state FROM search_docs d
     LEFT JOIN search_facts f ON f.tenant = d.tenant AND f.sid = d.sid
     WHERE d.rid IN (${marks(n)}) AND +d.tenant = ?`;

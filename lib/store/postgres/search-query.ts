/**
 * The SQL of one search (issue 30 items 2 and 4) on the tables of lib/store/postgres/schema.ts: an
 * `EngineQuery` turned into one statement with named parameters. Nothing the person typed is pasted into
 * the text: each word or phrase is a parameter given to `phraseto_tsquery('simple', …)` (its terms, space
 * separated, become `t1 <-> t2 …`, adjacent in order), and each filter's values one JSON array parameter.
 */
import { type EngineQuery, SEARCH_CANDIDATES } from '../search.js';
import type { SqlParams } from './runner.js';

/**
 * Text bytes one answer carries at most, in octets (texts and terms added up): the Data API answers at
 * most 1 MiB, and JSON may double a text (quotes, backslashes); rows past it come without their text and
 * terms, fetched afterwards (`valuesStatement`).
 */
export const TEXT_BUDGET_BYTES = 256 * 1024;

/**
 * Most text and terms bytes one row carries: the Data API refuses a row over 64 KB, and a document's text
 * of 16,384 characters in a 3-byte script with its terms can be 96 KiB; such a row's text and terms come
 * afterwards, each in a row of its own.
 */
export const ROW_BUDGET_BYTES = 48 * 1024;

/** The statement and its parameters; `none` when the query cannot match anything (an empty phrase). */
export interface BuiltQuery {
  sql: string;
  params: SqlParams;
  none: boolean;
}

/** The hit's sort order, best first (the port's: rank, newest, then sid, w, seq in byte order). */
function order(p: string): string {
  return `rank DESC, ${p}at_us DESC NULLS LAST, ${p}sid COLLATE "C", ${p}w COLLATE "C", ${p}seq`;
}

/** `expr` is one of the JSON array parameter `name`'s strings (an empty array: none). */
function inList(expr: string, name: string): string {
  return `${expr} IN (SELECT jsonb_array_elements_text(CAST(:${name} AS jsonb)))`;
}

/** The same, compared lower-cased. */
function inListFolded(expr: string, name: string): string {
  return `lower(${expr}) IN (SELECT lower(v) FROM jsonb_array_elements_text(CAST(:${name} AS jsonb)) AS v)`;
}

/**
 * The search statement for `query` in `tenant`: a page of hits (`limit`, `offset`), of a query with words
 * among its newest `candidates` matches that pass its filters (schema.ts `search_matching`), with the document's
 * columns, the session's title and state, `rank` (`ts_rank_cd` over the cover density, divided by 1 + the
 * log of the document's length so that, as with FTS5's bm25, a short document beats a long one; 0
 * without words), `ord` (the row's place
 * in the page) and `text`/`terms` (the effective ones, null past `TEXT_BUDGET_BYTES`).
 */
export function searchStatement(
  tenant: string,
  query: EngineQuery,
  candidates: number = SEARCH_CANDIDATES,
): BuiltQuery {
  const params: SqlParams = {
    tenant,
    limit: query.limit,
    offset: query.offset,
    budget: TEXT_BUDGET_BYTES,
    row_budget: ROW_BUDGET_BYTES,
  };
  const where = ['d.tenant = :tenant'];
  let none = false;

  const matches = query.match.map((entry, i) => {
    if (entry.terms.length === 0) none = true;
    params[`m${i}`] = entry.terms.join(' ');
    return `phraseto_tsquery('simple', :m${i})`;
  });
  const tsquery = matches.length > 0 ? `(${matches.join(' && ')})` : null;

  const excluded: string[] = [];
  query.exclude.forEach((entry, i) => {
    // An exclusion without terms excludes nothing (phraseto_tsquery of nothing matches nothing).
    if (entry.terms.length === 0) return;
    params[`x${i}`] = entry.terms.join(' ');
    excluded.push(`phraseto_tsquery('simple', :x${i})`);
    where.push(`NOT (d.tsv @@ phraseto_tsquery('simple', :x${i}))`);
  });

  const f = query.filters;
  const list = (name: string, values: readonly string[]) => {
    params[name] = JSON.stringify(values);
  };
  if (f.agent) {
    list('f_agent', f.agent);
    where.push(inList('d.agent', 'f_agent'));
  }
  if (f.person) {
    list('f_person', f.person);
    // The person of an agent's event is that of a message of the session filed under its `cause` key
    // (its `caused_by`, or its turn's context: replay's recorded attribution).
    where.push(`(${inListFolded('d.person', 'f_person')} OR ${inListFolded('d.person_name', 'f_person')}
      OR (d.cause IS NOT NULL AND EXISTS (
        SELECT 1 FROM search_causes k
        JOIN search_docs c ON c.tenant = k.tenant AND c.sid = k.sid AND c.id = k.message_id
        WHERE k.tenant = d.tenant AND k.sid = d.sid AND k.key = d.cause AND c.type = 'message'
          AND (${inListFolded('c.person', 'f_person')} OR ${inListFolded('c.person_name', 'f_person')}))))`);
  }
  if (f.state) {
    list('f_state', f.state);
    where.push(inList('fa.state', 'f_state'));
  }
  if (f.tool) {
    list('f_tool', f.tool);
    where.push(inListFolded('d.tool', 'f_tool'));
  }
  if (f.type) {
    list('f_type', f.type);
    where.push(inList('d.type', 'f_type'));
  }
  if (f.sid) {
    list('f_sid', f.sid);
    where.push(inList('d.sid', 'f_sid'));
  }
  if (f.after_us !== undefined) {
    params.after_us = f.after_us;
    where.push('d.at_us >= CAST(:after_us AS bigint)');
  }
  if (f.before_us !== undefined) {
    params.before_us = f.before_us;
    where.push('d.at_us < CAST(:before_us AS bigint)');
  }

  // The words go through search_matching (schema.ts: row-level security keeps the app role's own `@@`
  // from the GIN index), which answers the tenant's newest `SEARCH_CANDIDATES` matches that pass the
  // exclusions and filters, ranked; the rows are read here, under the policy, and filtered again.
  const rank = tsquery ? 'm.rank' : 'CAST(0 AS real)';
  if (tsquery) {
    params.f = JSON.stringify(f);
    params.candidates = candidates;
  }
  const exclusion = excluded.length > 0 ? `(${excluded.join(' || ')})` : 'CAST(NULL AS tsquery)';
  const matched = tsquery
    ? `JOIN search_matching(${tsquery}, ${exclusion}, CAST(:f AS jsonb), CAST(:candidates AS integer)) AS m
      ON m.sid = d.sid AND m.w = d.w AND m.seq = d.seq`
    : '';
  const sql = `WITH page AS (
    SELECT d.sid, d.w, d.seq, d.id, d.ts, d.at_us, d.type, d.field, d.agent, d.person, d.person_name,
      d.tool, d.cause, COALESCE(d.fix_text <> d.text, false) AS corrected,
      COALESCE(d.fix_text, d.text) AS eff_text, COALESCE(d.fix_terms, d.terms) AS eff_terms,
      fa.title, fa.state,
      CAST(${rank} AS double precision) AS rank
    FROM search_docs d
    ${matched}
    LEFT JOIN search_facts fa ON fa.tenant = d.tenant AND fa.sid = d.sid
    WHERE ${where.join('\n      AND ')}
    ORDER BY ${order('d.')}
    LIMIT CAST(:limit AS integer) OFFSET CAST(:offset AS integer)
  ), numbered AS (
    SELECT page.*, row_number() OVER (ORDER BY ${order('')}) AS ord,
      octet_length(eff_text) AS text_bytes, octet_length(eff_terms) AS terms_bytes,
      sum(octet_length(eff_text) + octet_length(eff_terms)) OVER (ORDER BY ${order('')}) AS upto
    FROM page
  ), inline AS (
    SELECT numbered.*, (upto <= CAST(:budget AS bigint)
      AND text_bytes + terms_bytes <= CAST(:row_budget AS bigint)) AS whole
    FROM numbered
  )
  SELECT sid, w, seq, id, ts, at_us, type, field, agent, person, person_name, tool, cause, corrected,
    title, state, rank, ord, text_bytes, terms_bytes,
    CASE WHEN whole THEN eff_text END AS text,
    CASE WHEN whole THEN eff_terms END AS terms
  FROM inline
  ORDER BY ord`;
  return { sql, params, none };
}

/**
 * The effective text (or terms) of the documents keyed in `keys` (sid, w, seq), for hits answered without
 * them, as rows `{sid, w, seq, value}`.
 */
export function valuesStatement(
  tenant: string,
  column: 'text' | 'terms',
  keys: Array<{ sid: string; w: string; seq: number }>,
): { sql: string; params: SqlParams } {
  const value = column === 'text' ? 'COALESCE(d.fix_text, d.text)' : 'COALESCE(d.fix_terms, d.terms)';
  return {
    sql: `SELECT d.sid, d.w, d.seq, ${value} AS value
      FROM search_docs d
      JOIN jsonb_to_recordset(CAST(:keys AS jsonb)) AS k(sid text, w text, seq bigint)
        ON d.sid = k.sid AND d.w = k.w AND d.seq = k.seq
      WHERE d.tenant = :tenant`,
    params: { tenant, keys: JSON.stringify(keys) },
  };
}

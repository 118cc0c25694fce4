/**
 * The search port on PostgreSQL full-text search (issue 30 item 4): `tsvector` over the documents' terms
 * with a GIN index (lib/store/postgres/schema.ts), through a `SqlRunner`: `pg` on any PostgreSQL, or the
 * RDS Data API on Aurora Serverless v2. The semantics are the port's (lib/store/search.ts) and the
 * contract suite's; what is PostgreSQL's:
 *
 * - Tenants (item 6): every statement runs in `runner.transaction(tenant, …)`, so row-level security
 *   admits only the tenant's rows, and says `tenant = :tenant` besides. Words are matched through the
 *   owner's `search_matching` (schema.ts: why the GIN index needs it under row-level security), whose
 *   keys are joined to the rows read under the policy.
 * - Ranking: a query with words ranks its newest `SEARCH_CANDIDATES` matches that pass its filters and
 *   exclusions (newest by `at_us`, unknown instants last: SQLite takes its newest indexed), with
 *   `ts_rank_cd`, which reads the document's own terms alone: a word in most documents costs that many
 *   ranks (500,000 documents, 'to' in 6 of 7: 20 ms, against 0.4 s ranking every match).
 * - Corrections: a fix is stored once; the documents it may change (its target's, by id and field) get
 *   their winning fix copied onto them in the same transaction, the latest in `(at_us, w, seq)` order (an
 *   unreadable `at_us` first, as in the merged order), so the order fixes and documents arrive in does
 *   not matter, and the GIN index always holds what a search should find. `corrected` is true when the
 *   winning fix's text differs from the document's own (as on SQLite).
 * - Size of answers: a page's texts are bounded (search-query.ts `TEXT_BUDGET_BYTES`) and the rest are
 *   fetched in groups, within the Data API's 1 MiB.
 * - `stats().bytes` is the size of the tenant's own rows as stored (`pg_column_size` of each row of its
 *   tables: compressed values counted compressed), without the indexes' and free space's share: a figure
 *   of the tenant's data alone, so it does not move when another tenant writes (SEARCH-STATUS-BYTES; it
 *   was the tables' total size times the tenant's share of the rows). It reads every row of the tenant.
 */
import { z } from 'zod';
import {
  type EngineHit,
  type EngineQuery,
  type SearchCause,
  SearchCauseSchema,
  type SearchDoc,
  SearchDocSchema,
  type SearchFix,
  SearchFixSchema,
  type SearchIndex,
  type SearchIndexStats,
  type SessionFacts,
  storedDoc,
  type WriterBatch,
} from '../search.js';
import type { SqlRunner, SqlTx } from './runner.js';
import { SEARCH_TABLES } from './schema.js';
import { searchStatement, TEXT_BUDGET_BYTES, valuesStatement } from './search-query.js';

export interface PgSearchIndexOptions {
  runner: SqlRunner;
  /** how long one query may run before the server cancels it, in ms (`SqlTimeoutError`); none: no limit */
  timeoutMs?: number;
}

/** Documents (or fixes, or causes) per INSERT: bounded by their JSON's size too (`chunks`). */
const ROWS_PER_INSERT = 200;
/** JSON characters per INSERT's parameter: well inside a Data API request. */
const JSON_PER_INSERT = 512 * 1024;

const DOC_COLUMNS =
  'sid text, w text, seq bigint, id text, ts text, at_us bigint, type text, field text, agent text, ' +
  'person text, person_name text, tool text, cause text, text text, terms text';

/** Documents in, their winning fix left to `RECOMPUTE` (a replaced row keeps its fix columns until then). */
const INSERT_DOCS = `INSERT INTO search_docs (tenant, sid, w, seq, id, ts, at_us, type, field, agent, person,
    person_name, tool, cause, text, terms, facets)
  SELECT :tenant, x.sid, x.w, x.seq, x.id, x.ts, x.at_us, x.type, x.field, x.agent, x.person, x.person_name,
    x.tool, x.cause, x.text, x.terms,
    normalize(concat_ws(' ', x.tool, x.agent, x.person, x.person_name), NFKC)
  FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS x(${DOC_COLUMNS})
  ON CONFLICT (tenant, sid, w, seq) DO UPDATE SET id = EXCLUDED.id, ts = EXCLUDED.ts, at_us = EXCLUDED.at_us,
    type = EXCLUDED.type, field = EXCLUDED.field, agent = EXCLUDED.agent, person = EXCLUDED.person,
    person_name = EXCLUDED.person_name, tool = EXCLUDED.tool, cause = EXCLUDED.cause, text = EXCLUDED.text,
    terms = EXCLUDED.terms, facets = EXCLUDED.facets`;

const INSERT_FIXES = `INSERT INTO search_fixes (tenant, sid, w, seq, target_id, field, text, terms, at_us, by_id)
  SELECT :tenant, x.sid, x.w, x.seq, x.target_id, x.field, x.text, x.terms, x.at_us, x.by
  FROM jsonb_to_recordset(CAST(:rows AS jsonb))
    AS x(sid text, w text, seq bigint, target_id text, field text, text text, terms text, at_us bigint, by text)
  ON CONFLICT (tenant, sid, w, seq, target_id, field) DO UPDATE SET text = EXCLUDED.text,
    terms = EXCLUDED.terms, at_us = EXCLUDED.at_us, by_id = EXCLUDED.by_id`;

/** Causes in, each kept once: filed again (a replay, the same turn's start read again) it changes nothing. */
const INSERT_CAUSES = `INSERT INTO search_causes (tenant, sid, key, message_id)
  SELECT DISTINCT :tenant, x.sid, x.key, x.message_id
  FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS x(sid text, key text, message_id text)
  ON CONFLICT (tenant, sid, key, message_id) DO NOTHING`;

/**
 * The winning fix of the session's documents with one of the ids: the latest fix of the document's own
 * field (null: none). Rows already right are left alone (no dead tuples, no index churn).
 *
 * Linear in the ids (SEARCH-PG-RECOMPUTE): the documents are found by `search_docs_id` with the ids as
 * one array (an index condition, whatever the planner's statistics), their winning fixes computed once
 * (MATERIALIZED), and the rows to change joined back by their whole primary key. The earlier form joined
 * `search_docs` to itself on the session, and without statistics the planner nested a scan of the
 * session's documents inside the ids: N x the session's documents.
 */
const RECOMPUTE = `WITH want AS MATERIALIZED (
    SELECT d0.w, d0.seq, lf.text, lf.terms
    FROM search_docs d0
    LEFT JOIN LATERAL (
      SELECT f.text, f.terms FROM search_fixes f
      WHERE f.tenant = d0.tenant AND f.sid = d0.sid AND f.target_id = d0.id AND f.field = d0.field
      ORDER BY f.at_us DESC NULLS LAST, f.w COLLATE "C" DESC, f.seq DESC
      LIMIT 1
    ) lf ON true
    WHERE d0.tenant = :tenant AND d0.sid = :sid
      AND d0.id = ANY (ARRAY(SELECT jsonb_array_elements_text(CAST(:ids AS jsonb))))
      AND (d0.fix_text IS DISTINCT FROM lf.text OR d0.fix_terms IS DISTINCT FROM lf.terms)
  )
  UPDATE search_docs d
  SET fix_text = want.text, fix_terms = want.terms
  FROM want
  WHERE d.tenant = :tenant AND d.sid = :sid AND d.w = want.w AND d.seq = want.seq`;

/**
 * The tenant's documents and the bytes of its rows in every table (see the module comment); `search_docs`
 * read once for both (500,000 documents: about 0.2 s, a count alone 0.1 s).
 */
const STATS = `SELECT docs.n AS docs, docs.bytes + ${SEARCH_TABLES.filter((t) => t !== 'search_docs')
  .map(
    (t) =>
      `(SELECT COALESCE(CAST(sum(pg_column_size(r.*)) AS bigint), 0) FROM ${t} r WHERE r.tenant = :tenant)`,
  )
  .join('\n    + ')} AS bytes
  FROM (SELECT count(*) AS n, COALESCE(CAST(sum(pg_column_size(r.*)) AS bigint), 0) AS bytes
    FROM search_docs r WHERE r.tenant = :tenant) AS docs`;

/** A row of the search statement, as either runner answers it. */
const HitRow = SearchDocSchema.omit({ text: true, terms: true }).extend({
  seq: z.coerce.number().int(),
  at_us: z.coerce.number().int().nullable(),
  corrected: z.boolean(),
  title: z.string().nullable(),
  state: z.string().nullable(),
  rank: z.coerce.number(),
  text_bytes: z.coerce.number(),
  terms_bytes: z.coerce.number(),
  text: z.string().nullable(),
  terms: z.string().nullable(),
});
const ValueRow = z.object({ sid: z.string(), w: z.string(), seq: z.coerce.number(), value: z.string() });
type Hit = z.infer<typeof HitRow>;

/** The search port on PostgreSQL (see the module comment). */
export class PgSearchIndex implements SearchIndex {
  private readonly runner: SqlRunner;
  private readonly timeoutMs: number | undefined;

  constructor(options: PgSearchIndexOptions) {
    this.runner = options.runner;
    this.timeoutMs = options.timeoutMs;
  }

  indexedLength(tenant: string, sid: string, w: string): Promise<number> {
    return this.runner.transaction(tenant, async (tx) => {
      const [row] = await tx.query(
        'SELECT length FROM search_cursors WHERE tenant = :tenant AND sid = :sid AND w = :w',
        { tenant, sid, w },
      );
      return row ? Number(row.length) : 0;
    });
  }

  /**
   * See the port.
   * @throws ZodError when a document, fix or cause does not fit its schema; Error when a document is not
   *   of the batch's session and writer or a fix or cause not of its session (as on SQLite: nothing is
   *   written either way); the server's error when a statement fails (the transaction rolled back:
   *   nothing is written)
   */
  async applyWriter(batch: WriterBatch): Promise<boolean> {
    const { tenant, sid, w, fromLength, toLength } = batch;
    const docs = batch.docs.map((d) => SearchDocSchema.parse(d));
    const fixes = batch.fixes.map((f) => SearchFixSchema.parse(f));
    const causes = batch.causes.map((c) => SearchCauseSchema.parse(c));
    // What one writer's bytes hold is of its session and writer: anything else would outlive a
    // dropSession of its session and be counted in no writer's indexed length.
    const stray =
      docs.find((d) => d.sid !== sid || d.w !== w) ??
      fixes.find((f) => f.sid !== sid) ??
      causes.find((c) => c.sid !== sid);
    if (stray) throw new Error(`a batch of ${sid}/${w} holds a document, fix or cause of ${stray.sid}`);
    return this.runner.transaction(tenant, async (tx) => {
      // The condition, as one write that locks the cursor: a concurrent apply of the same writer waits,
      // then finds the length moved and answers false.
      const advanced = await tx.query(
        fromLength === 0
          ? `INSERT INTO search_cursors (tenant, sid, w, length) VALUES (:tenant, :sid, :w, :to)
              ON CONFLICT (tenant, sid, w) DO UPDATE SET length = EXCLUDED.length
              WHERE search_cursors.length = 0
              RETURNING length`
          : `UPDATE search_cursors SET length = :to
              WHERE tenant = :tenant AND sid = :sid AND w = :w AND length = :from
              RETURNING length`,
        fromLength === 0
          ? { tenant, sid, w, to: toLength }
          : { tenant, sid, w, to: toLength, from: fromLength },
      );
      if (advanced.length === 0) return false;
      await insertRows(tx, INSERT_DOCS, tenant, docs);
      await insertRows(tx, INSERT_FIXES, tenant, fixes);
      await insertRows(tx, INSERT_CAUSES, tenant, causes);
      await recompute(tx, tenant, sid, [...docs.map((d) => d.id), ...fixes.map((f) => f.target_id)]);
      return true;
    });
  }

  /**
   * See the port.
   * @throws Error when a report document has a writer or another sid; ZodError when one does not fit
   *   (as on SQLite: nothing is written)
   */
  async putSessionFacts(facts: SessionFacts): Promise<void> {
    const { tenant, sid } = facts;
    const reports = facts.reports.map((r) => SearchDocSchema.parse(r));
    const stray = reports.find((d) => d.w !== '' || d.sid !== sid);
    if (stray) {
      throw new Error(`a report document has w '' and its session's sid, not ${stray.w}/${stray.sid}`);
    }
    return this.runner.transaction(tenant, async (tx) => {
      await tx.query(
        `INSERT INTO search_facts (tenant, sid, state, title) VALUES (:tenant, :sid, :state, :title)
          ON CONFLICT (tenant, sid) DO UPDATE SET state = EXCLUDED.state, title = EXCLUDED.title`,
        { tenant, sid, state: facts.state, title: facts.title },
      );
      // Reports are the documents no writer wrote (w = ''): the new ones replace them all.
      await tx.query("DELETE FROM search_docs WHERE tenant = :tenant AND sid = :sid AND w = ''", {
        tenant,
        sid,
      });
      await insertRows(tx, INSERT_DOCS, tenant, reports);
      await recompute(
        tx,
        tenant,
        sid,
        reports.map((r) => r.id),
      );
    });
  }

  dropSession(tenant: string, sid: string | null): Promise<void> {
    return this.runner.transaction(tenant, async (tx) => {
      for (const table of SEARCH_TABLES) {
        if (sid === null) await tx.query(`DELETE FROM ${table} WHERE tenant = :tenant`, { tenant });
        else await tx.query(`DELETE FROM ${table} WHERE tenant = :tenant AND sid = :sid`, { tenant, sid });
      }
    });
  }

  query(tenant: string, query: EngineQuery): Promise<EngineHit[]> {
    const built = searchStatement(tenant, query);
    if (built.none) return Promise.resolve([]);
    const options = this.timeoutMs === undefined ? {} : { timeoutMs: this.timeoutMs };
    return this.runner.transaction(
      tenant,
      async (tx) => {
        const rows = (await tx.query(built.sql, built.params)).map((r) => HitRow.parse(r));
        await fillTexts(tx, tenant, rows);
        return rows.map(toHit);
      },
      options,
    );
  }

  stats(tenant: string): Promise<SearchIndexStats> {
    return this.runner.transaction(tenant, async (tx) => {
      const [row] = await tx.query(STATS, { tenant });
      return { docs: Number(row?.docs ?? 0), bytes: Number(row?.bytes ?? 0) };
    });
  }

  async close(): Promise<void> {
    await this.runner.close();
  }
}

/** Inserts `rows` with `sql` (a `jsonb_to_recordset(:rows)` statement), in groups bounded in count and size. */
async function insertRows(
  tx: SqlTx,
  sql: string,
  tenant: string,
  rows: ReadonlyArray<SearchDoc | SearchFix | SearchCause>,
): Promise<void> {
  for (const group of chunks(rows.map((r) => JSON.stringify(r)))) {
    await tx.query(sql, { tenant, rows: `[${group.join(',')}]` });
  }
}

/** `items` (JSON texts) in groups of at most `ROWS_PER_INSERT` and `JSON_PER_INSERT` characters. */
function chunks(items: string[]): string[][] {
  const out: string[][] = [];
  let group: string[] = [];
  let size = 0;
  for (const item of items) {
    if (group.length > 0 && (group.length >= ROWS_PER_INSERT || size + item.length > JSON_PER_INSERT)) {
      out.push(group);
      group = [];
      size = 0;
    }
    group.push(item);
    size += item.length + 1;
  }
  if (group.length > 0) out.push(group);
  return out;
}

/** Recomputes the effective text of the session's documents with one of `ids`. */
async function recompute(tx: SqlTx, tenant: string, sid: string, ids: string[]): Promise<void> {
  const unique = [...new Set(ids)];
  for (let i = 0; i < unique.length; i += 1000) {
    await tx.query(RECOMPUTE, { tenant, sid, ids: JSON.stringify(unique.slice(i, i + 1000)) });
  }
}

/**
 * Fetches the texts and terms the search statement left out (past its byte budgets): each in rows of its
 * own, in groups whose bytes stay within `TEXT_BUDGET_BYTES`.
 */
async function fillTexts(tx: SqlTx, tenant: string, rows: Hit[]): Promise<void> {
  const missing = rows.filter((r) => r.text === null);
  for (const column of ['text', 'terms'] as const) {
    const bytes = (r: Hit) => (column === 'text' ? r.text_bytes : r.terms_bytes);
    let group: Hit[] = [];
    let size = 0;
    const flush = async () => {
      if (group.length === 0) return;
      const { sql, params } = valuesStatement(
        tenant,
        column,
        group.map((r) => ({ sid: r.sid, w: r.w, seq: r.seq })),
      );
      for (const raw of await tx.query(sql, params)) {
        const v = ValueRow.parse(raw);
        const row = group.find((r) => r.sid === v.sid && r.w === v.w && r.seq === v.seq);
        if (row) row[column] = v.value;
      }
      group = [];
      size = 0;
    };
    for (const r of missing) {
      if (size + bytes(r) > TEXT_BUDGET_BYTES) await flush();
      group.push(r);
      size += bytes(r);
    }
    await flush();
  }
}

function toHit(r: Hit): EngineHit {
  return {
    doc: storedDoc(r, r.text ?? '', r.terms ?? ''),
    corrected: r.corrected,
    title: r.title,
    state: r.state,
    rank: r.rank,
  };
}

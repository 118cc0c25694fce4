/**
 * `SqliteSearchIndex`: the local engine of search (issue 30 item 4, DESIGN §6d), SQLite's FTS5 in the
 * data directory's database (`{data}/state.sqlite`, the state store's own file: its indexing queue,
 * sqlite/search-queue.ts, and the index are one file, so a reindex and a drain see one database). The
 * tables and the query's SQL are in sqlite/search-sql.ts; what the port promises is lib/store/search.ts,
 * and test/store/contract/search.contract.ts checks it.
 *
 * Corrections: a document keeps its own text and terms; the winning fix of its (sid, id, field), the
 * last in `(at_us, w, seq)` order, is copied onto it (`fix_text`, `fix_terms`) when the document is
 * written after its fixes, and when a fix arrives after the document its row and FTS entry are written
 * again.
 *
 * Ranking (SEARCH-IDF): FTS5's table is one for every tenant, so its bm25 (document frequencies, count
 * and average length of the whole table) let one tenant's order tell another's words. A query with words
 * takes its newest indexed `SEARCH_CANDIDATES` matches and scores each by its own terms alone
 * (sqlite/search-rank.ts); bm25 is not used.
 *
 * better-sqlite3 cannot interrupt a statement (no `sqlite3_interrupt` nor progress handler), so a query
 * is bounded by what it is given: the parser's bounds on terms and filter values, and the service's
 * page depth (`MAX_SEARCH_DEPTH`). `SearchTimeoutError` is never thrown here.
 */
import {
  type EngineHit,
  type EngineQuery,
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
import { type Candidate, rankCandidates } from './search-rank.js';
import { countOf, ftsAdd, ftsRemove, rowsOf, SEARCH_SCHEMA, selectOf } from './search-sql.js';
import type { SqliteStatement } from './status-work.js';

/**
 * What the index needs of a better-sqlite3 `Database` (which has it: the state store passes its own;
 * only the store imports better-sqlite3, test/architecture/rules.ts).
 */
export interface SearchDatabase {
  exec(sql: string): unknown;
  prepare(sql: string): SqliteStatement;
  /** wraps `fn` in a transaction: calling the answer runs it (rolled back if it throws) */
  transaction<T>(fn: () => T): () => T;
}

/** A row of `search_docs` as read back (with the session's facts). */
interface DocRow {
  rid: number;
  sid: string;
  w: string;
  seq: number;
  id: string;
  ts: string;
  at_us: number | null;
  type: SearchDoc['type'];
  field: string;
  agent: string | null;
  person: string | null;
  person_name: string | null;
  tool: string | null;
  cause: string | null;
  text: string;
  terms: string;
  fix_text: string | null;
  fix_terms: string | null;
  title: string | null;
  state: string | null;
}

/**
 * What `stats` counts a document's row for besides its text columns: its keys, ids, instant and facets,
 * and its share of the table's and FTS5's structures (a fixed estimate, the same for every row).
 */
export const ROW_BYTES = 128;

/** A hit of the row `r` with rank `rank`: the document with its effective text (the fix's, if any). */
function hitOf(r: DocRow, rank: number): EngineHit {
  return {
    doc: storedDoc(r, r.fix_text ?? r.text, r.fix_terms ?? r.terms),
    corrected: r.fix_text !== null && r.fix_text !== r.text,
    title: r.title,
    state: r.state,
    rank,
  };
}

const lower = (s: string | null): string | null => (s === null ? null : s.toLowerCase());

export class SqliteSearchIndex implements SearchIndex {
  /** Prepared statements of the fixed SQL (a query's SELECT varies with its filters: prepared each time). */
  private readonly statements = new Map<string, SqliteStatement>();

  /** Makes the index's tables if the database lacks them (one transaction). */
  constructor(private readonly db: SearchDatabase) {
    db.transaction(() => db.exec(SEARCH_SCHEMA))();
  }

  private q(sql: string): SqliteStatement {
    let st = this.statements.get(sql);
    if (!st) {
      st = this.db.prepare(sql);
      this.statements.set(sql, st);
    }
    return st;
  }

  async indexedLength(tenant: string, sid: string, w: string): Promise<number> {
    return this.length(tenant, sid, w);
  }

  private length(tenant: string, sid: string, w: string): number {
    const row = this.q('SELECT length FROM search_cursors WHERE tenant = ? AND sid = ? AND w = ?').get(
      tenant,
      sid,
      w,
    ) as { length: number } | undefined;
    return row?.length ?? 0;
  }

  /**
   * In one transaction, on condition of the writer's indexed length: the fixes (replacing those of the
   * same correction and target), the causes (one row each, kept once whoever files it again), the
   * documents (replacing those of the same sid, w, seq), each with its winning fix, the documents of
   * earlier batches whose winning fix changed, and the new length.
   * @throws ZodError when a document, fix or cause does not fit its schema; Error when a document is not
   *   of the batch's session and writer or a fix or cause not of its session (nothing is written either way)
   */
  async applyWriter(batch: WriterBatch): Promise<boolean> {
    const docs = batch.docs.map((d) => SearchDocSchema.parse(d));
    const fixes = batch.fixes.map((f) => SearchFixSchema.parse(f));
    const causes = batch.causes.map((c) => SearchCauseSchema.parse(c));
    // What one writer's bytes hold is of its session and writer: anything else would outlive a
    // `dropSession` of its session and be counted in no writer's indexed length.
    const stray =
      docs.find((d) => d.sid !== batch.sid || d.w !== batch.w) ??
      fixes.find((f) => f.sid !== batch.sid) ??
      causes.find((c) => c.sid !== batch.sid);
    if (stray) {
      throw new Error(`a batch of ${batch.sid}/${batch.w} holds a document, fix or cause of ${stray.sid}`);
    }
    return this.db.transaction(() => {
      if (this.length(batch.tenant, batch.sid, batch.w) !== batch.fromLength) return false;
      for (const f of fixes) this.putFix(batch.tenant, f);
      const putCause = this.q(
        `INSERT INTO search_causes (tenant, sid, key, message_id) VALUES (?, ?, ?, ?)
           ON CONFLICT (tenant, sid, key, message_id) DO NOTHING`,
      );
      for (const c of causes) putCause.run(batch.tenant, c.sid, c.key, c.message_id);
      for (const d of docs) this.putDoc(batch.tenant, d);
      const targets = new Map(fixes.map((f) => [JSON.stringify([f.sid, f.target_id, f.field]), f]));
      for (const f of targets.values()) this.refresh(batch.tenant, f.sid, f.target_id, f.field);
      this.q(
        `INSERT INTO search_cursors (tenant, sid, w, length) VALUES (?, ?, ?, ?)
           ON CONFLICT (tenant, sid, w) DO UPDATE SET length = excluded.length`,
      ).run(batch.tenant, batch.sid, batch.w, batch.toLength);
      return true;
    })();
  }

  /**
   * Replaces the session's report documents (`w` ''), its state and its title, in one transaction.
   * @throws Error when a report document has a writer or another sid; ZodError when one does not fit
   */
  async putSessionFacts(facts: SessionFacts): Promise<void> {
    const reports = facts.reports.map((d) => SearchDocSchema.parse(d));
    const stray = reports.find((d) => d.w !== '' || d.sid !== facts.sid);
    if (stray) {
      throw new Error(`a report document has w '' and its session's sid, not ${stray.w}/${stray.sid}`);
    }
    const { tenant, sid } = facts;
    this.db.transaction(() => {
      const reportsOf = "tenant = ? AND sid = ? AND w = ''";
      this.q(ftsRemove(reportsOf)).run(tenant, sid);
      this.q(`DELETE FROM search_docs WHERE ${reportsOf}`).run(tenant, sid);
      for (const d of reports) this.putDoc(tenant, d);
      this.q(
        `INSERT INTO search_facts (tenant, sid, state, title) VALUES (?, ?, ?, ?)
           ON CONFLICT (tenant, sid) DO UPDATE SET state = excluded.state, title = excluded.title`,
      ).run(tenant, sid, facts.state, facts.title);
    })();
  }

  async dropSession(tenant: string, sid: string | null): Promise<void> {
    const scope = sid === null ? 'tenant = ?' : 'tenant = ? AND sid = ?';
    const params = sid === null ? [tenant] : [tenant, sid];
    this.db.transaction(() => {
      this.q(ftsRemove(scope)).run(...params);
      for (const table of [
        'search_docs',
        'search_fixes',
        'search_causes',
        'search_cursors',
        'search_facts',
      ]) {
        this.q(`DELETE FROM ${table} WHERE ${scope}`).run(...params);
      }
    })();
  }

  /**
   * Filters alone: the page as SQLite lists it, newest first. With words: the newest indexed
   * `SEARCH_CANDIDATES` matches, each scored by its own terms (sqlite/search-rank.ts: no statistic of
   * other documents, SEARCH-IDF), sorted by the port's order, paged, and then only the page's rows read.
   */
  async query(tenant: string, query: EngineQuery): Promise<EngineHit[]> {
    const select = selectOf(tenant, query);
    if (select === null) return [];
    if (select.kind === 'page') {
      return (this.db.prepare(select.sql).all(...select.params) as DocRow[]).map((r) => hitOf(r, 0));
    }
    const candidates = this.db.prepare(select.sql).all(...select.params) as Candidate[];
    const offset = countOf(query.offset);
    const entries = query.match.map((m) => m.terms);
    const page = rankCandidates(candidates, entries).slice(offset, offset + countOf(query.limit));
    if (page.length === 0) return [];
    const rows = this.db.prepare(rowsOf(page.length)).all(...page.map((c) => c.rid), tenant) as DocRow[];
    const byRid = new Map(rows.map((r) => [r.rid, r]));
    // Read in the statement that found them (better-sqlite3 is synchronous: nothing ran in between).
    return page.map((c) => hitOf(byRid.get(c.rid)!, c.score));
  }

  /**
   * The tenant's documents, and the bytes of its own rows: the UTF-8 lengths of each document's text,
   * terms, facets and fix columns plus `ROW_BYTES` a row for its keys and facets (an estimate of what the
   * tenant holds, not the file's pages: a share of `dbstat`'s total moved with every other tenant's
   * writes, SEARCH-STATUS-BYTES). FTS5's index of those terms is not counted apart.
   */
  async stats(tenant: string): Promise<SearchIndexStats> {
    const row = this.q(
      `SELECT COUNT(*) AS docs, COALESCE(SUM(LENGTH(CAST(text AS BLOB)) + LENGTH(CAST(terms AS BLOB))
           + LENGTH(CAST(facets AS BLOB)) + COALESCE(LENGTH(CAST(fix_text AS BLOB)), 0)
           + COALESCE(LENGTH(CAST(fix_terms AS BLOB)), 0)), 0) AS bytes
         FROM search_docs WHERE tenant = ?`,
    ).get(tenant) as { docs: number; bytes: number };
    return { docs: row.docs, bytes: row.bytes + row.docs * ROW_BYTES };
  }

  /** Nothing to close: the database is the state store's, closed with it. */
  async close(): Promise<void> {
    this.statements.clear();
  }

  /** The winning fix of (sid, id, field): the last in `(at_us, w, seq)` order (null `at_us` first). */
  private winner(tenant: string, sid: string, id: string, field: string) {
    return this.q(
      `SELECT text, terms FROM search_fixes WHERE tenant = ? AND sid = ? AND target_id = ? AND field = ?
         ORDER BY at_us DESC, w DESC, seq DESC LIMIT 1`,
    ).get(tenant, sid, id, field) as { text: string; terms: string } | undefined;
  }

  /**
   * Writes `d`'s row with its winning fix (replacing the row of the same sid, w, seq, its rowid kept) and
   * its index entry (the replaced row's taken out first).
   */
  private putDoc(tenant: string, d: SearchDoc): void {
    const key = 'tenant = ? AND sid = ? AND w = ? AND seq = ?';
    this.q(ftsRemove(key)).run(tenant, d.sid, d.w, d.seq);
    const fix = this.winner(tenant, d.sid, d.id, d.field);
    this.q(
      `INSERT INTO search_docs (tenant, sid, w, seq, id, ts, at_us, type, field, agent, person, person_name,
           tool, cause, text, terms, person_lc, person_name_lc, tool_lc, facets, fix_text, fix_terms)
         VALUES (@tenant, @sid, @w, @seq, @id, @ts, @at_us, @type, @field, @agent, @person, @person_name,
           @tool, @cause, @text, @terms, @person_lc, @person_name_lc, @tool_lc, @facets, @fix_text, @fix_terms)
         ON CONFLICT (tenant, sid, w, seq) DO UPDATE SET id = @id, ts = @ts, at_us = @at_us, type = @type,
           field = @field, agent = @agent, person = @person, person_name = @person_name, tool = @tool,
           cause = @cause, text = @text, terms = @terms, person_lc = @person_lc,
           person_name_lc = @person_name_lc, tool_lc = @tool_lc, facets = @facets, fix_text = @fix_text,
           fix_terms = @fix_terms`,
    ).run({
      tenant,
      sid: d.sid,
      w: d.w,
      seq: d.seq,
      id: d.id,
      ts: d.ts,
      at_us: d.at_us,
      type: d.type,
      field: d.field,
      agent: d.agent,
      person: d.person,
      person_name: d.person_name,
      tool: d.tool,
      cause: d.cause,
      text: d.text,
      terms: d.terms,
      person_lc: lower(d.person),
      person_name_lc: lower(d.person_name),
      tool_lc: lower(d.tool),
      // A fix's terms are its text's alone: with a fix, the names go in a column of their own, read by
      // FTS5's tokenizer (NFKC first, as lib/service/search/terms.ts does), so `priya` still finds it.
      facets: [d.tool, d.agent, d.person, d.person_name]
        .filter((v): v is string => !!v)
        .map((v) => v.normalize('NFKC'))
        .join(' '),
      fix_text: fix?.text ?? null,
      fix_terms: fix?.terms ?? null,
    });
    this.q(ftsAdd(key)).run(tenant, d.sid, d.w, d.seq);
  }

  private putFix(tenant: string, f: SearchFix): void {
    this.q(
      `INSERT INTO search_fixes (tenant, sid, w, seq, target_id, field, text, terms, at_us, by)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (tenant, sid, w, seq, target_id, field) DO UPDATE SET text = excluded.text,
           terms = excluded.terms, at_us = excluded.at_us, by = excluded.by`,
    ).run(tenant, f.sid, f.w, f.seq, f.target_id, f.field, f.text, f.terms, f.at_us, f.by);
  }

  /** Gives the documents of (sid, id, field) whose winning fix changed the new one, and indexes them again. */
  private refresh(tenant: string, sid: string, id: string, field: string): void {
    const fix = this.winner(tenant, sid, id, field);
    const [text, terms] = [fix?.text ?? null, fix?.terms ?? null];
    const stale = this.q(
      `SELECT rid FROM search_docs WHERE tenant = ? AND sid = ? AND id = ? AND field = ?
         AND (fix_text IS NOT ? OR fix_terms IS NOT ?)`,
    ).all(tenant, sid, id, field, text, terms) as Array<{ rid: number }>;
    for (const { rid } of stale) {
      this.q(ftsRemove('rid = ?')).run(rid);
      this.q('UPDATE search_docs SET fix_text = ?, fix_terms = ? WHERE rid = ?').run(text, terms, rid);
      this.q(ftsAdd('rid = ?')).run(rid);
    }
  }
}

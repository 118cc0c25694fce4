/**
 * What only the PostgreSQL search adapter has (issue 30 items 4 and 6), run over each of its runners
 * (test/store/contract/search-postgres.test.ts over `pg`, search-data-api.test.ts over the Data API's
 * emulation): row-level security holding when a statement forgets its tenant, the time limit as
 * `SqlTimeoutError`, answers kept within the Data API's size limits, and the conditional, idempotent
 * writes on a real server. The port's behaviour shared with SQLite is the contract suite's
 * (test/store/contract/search.contract.ts).
 */
import { describe, expect, it } from 'vitest';
import { type SqlRunner, SqlTimeoutError } from '../../../lib/store/postgres/runner.js';
import { migrateSearchSchema, SEARCH_SCHEMA_VERSION } from '../../../lib/store/postgres/schema.js';
import { PgSearchIndex } from '../../../lib/store/postgres/search.js';
import type { EngineQuery, SearchDoc, SearchFix, WriterBatch } from '../../../lib/store/search.js';
import type { SearchDatabase } from '../../support/postgres.js';

/** A runner of each role on one database; closed by the case. */
export interface PgCaseRunners {
  app: SqlRunner;
  owner: SqlRunner;
}

export interface PgCaseOptions {
  /** a new database with the schema (test/support/postgres.ts) */
  fresh: () => Promise<SearchDatabase>;
  /** runners as the app role and as the owner on `db` */
  runners: (db: SearchDatabase) => PgCaseRunners;
}

const T1 = 'acme';
const T2 = 'globex';
const SID = 's_01JAAAAAAAAAAAAAAAAAAAAAAA';

/** A document with defaults: a message of Priya's whose terms are its text's words. */
export function doc(over: Partial<SearchDoc> & { seq: number; text: string }): SearchDoc {
  const terms =
    over.terms ??
    over.text
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean)
      .join(' ');
  return {
    sid: SID,
    w: 'w_01JBBBBBBBBBBBBBBBBBBBBBBB',
    id: `m_${String(over.seq).padStart(26, '0')}`,
    ts: '2026-12-01T10:00:00Z',
    at_us: 1_764_583_200_000_000 + over.seq,
    type: 'message',
    field: 'text',
    agent: null,
    person: 'priya',
    person_name: 'Priya Shah',
    tool: null,
    cause: null,
    ...over,
    terms,
  };
}

export function batch(tenant: string, docs: SearchDoc[], over: Partial<WriterBatch> = {}): WriterBatch {
  return {
    tenant,
    sid: SID,
    w: 'w_01JBBBBBBBBBBBBBBBBBBBBBBB',
    fromLength: 0,
    toLength: 100,
    docs,
    fixes: [],
    causes: [],
    ...over,
  };
}

export function words(...entries: string[][]): EngineQuery {
  return { match: entries.map((terms) => ({ terms })), exclude: [], filters: {}, limit: 20, offset: 0 };
}

/** The adapter-specific cases over one runner kind (see the module comment). */
export function runPgAdapterCases(title: string, options: PgCaseOptions): void {
  /** A case on a new database, with the index over the app role's runner. */
  const withDb =
    (fn: (r: PgCaseRunners & { index: PgSearchIndex; db: SearchDatabase }) => Promise<void>) => async () => {
      const db = await options.fresh();
      const runners = options.runners(db);
      const index = new PgSearchIndex({ runner: runners.app, timeoutMs: 5000 });
      try {
        await fn({ ...runners, index, db });
      } finally {
        await runners.app.close();
        await runners.owner.close();
      }
    };

  describe(title, () => {
    it(
      'a statement that forgets its tenant filter still sees and writes only the transaction tenant’s rows (row-level security: the app role on every table, the owner on all but search_docs)',
      withDb(async ({ app, owner, index }) => {
        const causes = [{ sid: SID, key: 't:t_1', message_id: 'm_1' }];
        await index.applyWriter(batch(T1, [doc({ seq: 1, text: 'the billing migration plan' })], { causes }));
        await index.applyWriter(
          batch(T2, [doc({ seq: 1, text: 'the globex billing migration' })], { causes }),
        );
        const seen = await app.transaction(T2, (tx) =>
          tx.query("SELECT tenant, text FROM search_docs WHERE tsv @@ phraseto_tsquery('simple', 'billing')"),
        );
        expect(seen).toEqual([{ tenant: T2, text: 'the globex billing migration' }]);
        const tables = `SELECT (SELECT count(*) FROM search_docs) AS docs,
          (SELECT count(*) FROM search_cursors) AS cursors, (SELECT count(*) FROM search_causes) AS causes`;
        expect(await app.transaction(T2, (tx) => tx.query(tables))).toEqual([
          { docs: 1, cursors: 1, causes: 1 },
        ]);
        // Outside any tenant (no hansard.tenant set) the app role sees nothing at all.
        expect(await app.admin('SELECT count(*) AS n FROM search_docs')).toEqual([{ n: 0 }]);
        // The owner: FORCEd on the other tables; search_docs is not FORCEd, so that its search_matching
        // can read the GIN index (lib/store/postgres/schema.ts).
        expect(await owner.transaction(T2, (tx) => tx.query(tables))).toEqual([
          { docs: 2, cursors: 1, causes: 1 },
        ]);
        expect(await owner.admin('SELECT count(*) AS n FROM search_cursors')).toEqual([{ n: 0 }]);
        expect(await owner.admin('SELECT count(*) AS n FROM search_causes')).toEqual([{ n: 0 }]);
        // Another tenant's rows cannot be changed, nor written under its name.
        const changed = await app.transaction(T2, (tx) =>
          tx.query("UPDATE search_docs SET fix_terms = 'x' WHERE tenant = :t RETURNING 1 AS one", { t: T1 }),
        );
        expect(changed).toEqual([]);
        await expect(
          app.transaction(T2, (tx) =>
            tx.query(
              `INSERT INTO search_facts (tenant, sid, state, title) VALUES (:t, 's_x', 'done', 'planted')`,
              { t: T1 },
            ),
          ),
        ).rejects.toThrow(/row-level security/);
        await expect(
          app.transaction(T2, (tx) =>
            tx.query(
              `INSERT INTO search_causes (tenant, sid, key, message_id) VALUES (:t, 's_x', 't:t_9', 'm_9')`,
              { t: T1 },
            ),
          ),
        ).rejects.toThrow(/row-level security/);
        expect(await index.query(T1, words(['billing']))).toHaveLength(1);
        expect((await index.query(T1, words(['globex']))).map((h) => h.doc.text)).toEqual([]);
      }),
    );

    it(
      'migrated without an app role (the app may be the owner), every table stays FORCEd and searches still find',
      withDb(async ({ owner }) => {
        await migrateSearchSchema(owner);
        const index = new PgSearchIndex({ runner: owner });
        await index.applyWriter(batch(T1, [doc({ seq: 1, text: 'owner words' })]));
        await index.applyWriter(batch(T2, [doc({ seq: 1, text: 'owner words' })]));
        expect(await owner.transaction(T2, (tx) => tx.query('SELECT tenant FROM search_docs'))).toEqual([
          { tenant: T2 },
        ]);
        expect((await index.query(T2, words(['owner', 'words']))).map((h) => h.doc.sid)).toEqual([SID]);
        expect(await index.stats(T2)).toMatchObject({ docs: 1 });
      }),
    );

    it(
      'a database of schema version 1 (before search_causes) is migrated in place: the table under its policy and grants, the current version, its documents kept; a newer schema is refused',
      withDb(async ({ owner, index, db }) => {
        const ask = doc({ seq: 1, text: 'tidy the logs' });
        const out = doc({ seq: 2, text: 'logs tidied', type: 'output', person: null, person_name: null });
        await index.applyWriter(batch(T1, [ask, { ...out, cause: 't:t_1' }]));
        await owner.admin('DROP TABLE search_causes');
        await owner.admin("UPDATE search_schema SET version = 1 WHERE name = 'search'");
        await migrateSearchSchema(owner, { appRole: db.appRole });
        expect(await owner.admin("SELECT version FROM search_schema WHERE name = 'search'")).toEqual([
          { version: SEARCH_SCHEMA_VERSION },
        ]);
        expect(SEARCH_SCHEMA_VERSION).toBe(3);
        expect(
          await owner.admin(
            `SELECT c.relrowsecurity AS on, c.relforcerowsecurity AS forced,
              (SELECT count(*) FROM pg_policies p WHERE p.tablename = 'search_causes') AS policies
            FROM pg_class c WHERE c.relname = 'search_causes'`,
          ),
        ).toEqual([{ on: true, forced: true, policies: 1 }]);
        const person = { ...words(), filters: { person: ['priya'] } };
        expect((await index.query(T1, person)).map((h) => h.doc.seq)).toEqual([1]);
        // the app role writes causes in it, and `person:` reads them
        const start = batch(T1, [], {
          w: 'w_01JEEEEEEEEEEEEEEEEEEEEEEE',
          causes: [{ sid: SID, key: 't:t_1', message_id: ask.id }],
        });
        expect(await index.applyWriter(start)).toBe(true);
        expect((await index.query(T1, person)).map((h) => h.doc.seq)).toEqual([2, 1]);
        // code older than the database's schema refuses it
        await owner.admin("UPDATE search_schema SET version = 99 WHERE name = 'search'");
        await expect(migrateSearchSchema(owner, { appRole: db.appRole })).rejects.toThrow(
          /schema version 99/,
        );
      }),
    );

    it(
      'search_matching answers the keys of the transaction tenant only, and only the app role may run it',
      withDb(async ({ app, index, db }) => {
        await index.applyWriter(batch(T1, [doc({ seq: 1, text: 'shared secret word' })]));
        await index.applyWriter(batch(T2, [doc({ seq: 2, text: 'shared secret word' })]));
        const match =
          "SELECT seq FROM search_matching(phraseto_tsquery('simple', 'secret word'), NULL, '{}', 2000)";
        expect(await app.transaction(T2, (tx) => tx.query(match))).toEqual([{ seq: 2 }]);
        expect(await app.admin(match)).toEqual([]);
        const [row] = await app.admin(
          "SELECT CAST(proacl AS text) AS acl FROM pg_proc WHERE proname = 'search_matching'",
        );
        const acl = String(row?.acl);
        // `=X/owner` would be PUBLIC's: REVOKEd; the app role's grant is there.
        expect(acl).not.toMatch(/[{,]=X/);
        expect(acl).toContain(`${db.appRole}=X/`);
      }),
    );

    it(
      'a statement past its time limit is cancelled by the server as SqlTimeoutError, and the runner stays usable',
      withDb(async ({ app }) => {
        const slow = app.transaction(T1, (tx) => tx.query('SELECT pg_sleep(10)'), { timeoutMs: 100 });
        await expect(slow).rejects.toBeInstanceOf(SqlTimeoutError);
        const after = await app.transaction(T1, (tx) =>
          tx.query("SELECT current_setting('statement_timeout') AS t"),
        );
        expect(after).toEqual([{ t: '0' }]);
      }),
    );

    it(
      'the tenant and time limit are the transaction’s only: a later transaction on a pooled connection carries neither',
      withDb(async ({ app }) => {
        await app.transaction(T1, (tx) => tx.query('SELECT 1 AS one'), { timeoutMs: 1234 });
        const [row] = await app.transaction(T2, (tx) =>
          tx.query(
            "SELECT current_setting('hansard.tenant', true) AS tenant, current_setting('statement_timeout') AS t",
          ),
        );
        expect(row).toEqual({ tenant: T2, t: '0' });
      }),
    );

    it(
      'two applies of one batch at once: exactly one writes, the other finds the length moved',
      withDb(async ({ index }) => {
        const b = batch(T1, [doc({ seq: 1, text: 'raced words' })]);
        const results = await Promise.all([index.applyWriter(b), index.applyWriter(b)]);
        expect(results.sort()).toEqual([false, true]);
        const next = { ...b, fromLength: 100, toLength: 150, docs: [doc({ seq: 2, text: 'more words' })] };
        expect((await Promise.all([index.applyWriter(next), index.applyWriter(next)])).sort()).toEqual([
          false,
          true,
        ]);
        expect(await index.indexedLength(T1, SID, b.w)).toBe(150);
        expect(await index.stats(T1)).toMatchObject({ docs: 2 });
      }),
    );

    it(
      'a query runs under the index’s time limit; writes run under none',
      withDb(async ({ app }) => {
        const seen: Array<number | undefined> = [];
        const recording: SqlRunner = {
          transaction: (tenant, fn, options) => {
            seen.push(options?.timeoutMs);
            return app.transaction(tenant, fn, options);
          },
          admin: (sql, params) => app.admin(sql, params),
          close: () => app.close(),
        };
        const index = new PgSearchIndex({ runner: recording, timeoutMs: 750 });
        await index.applyWriter(batch(T1, [doc({ seq: 1, text: 'limited' })]));
        expect(await index.query(T1, words(['limited']))).toHaveLength(1);
        expect(seen).toEqual([undefined, 750]);
      }),
    );

    it(
      'a write that fails rolls the whole batch back: the cursor does not move and no document stays',
      withDb(async ({ index }) => {
        const bad = batch(T1, [doc({ seq: 1, text: 'first' }), doc({ seq: 2, text: 'second' })], {
          // Text PostgreSQL cannot hold (a NUL) fails inside the server, after the cursor moved and the
          // documents went in.
          fixes: [fix('m_x', 'corrected\u0000')],
        });
        await expect(index.applyWriter(bad)).rejects.toThrow(/\\u0000|unsupported Unicode escape/);
        expect(await index.indexedLength(T1, SID, bad.w)).toBe(0);
        expect(await index.stats(T1)).toMatchObject({ docs: 0 });
        // A document that does not fit the port's schema, or of another session or writer, is refused
        // before anything is sent.
        const unfit = batch(T1, [{ ...doc({ seq: 1, text: 'x' }), seq: 1.5 }]);
        await expect(index.applyWriter(unfit)).rejects.toThrow(/expected int/i);
        const stray = batch(T1, [doc({ seq: 1, text: 'x', sid: 's_01JZZZZZZZZZZZZZZZZZZZZZZZ' })]);
        await expect(index.applyWriter(stray)).rejects.toThrow(/holds a document, fix or cause of s_01JZZ/);
        const report = doc({ seq: 1, text: 'a report', type: 'report' });
        await expect(
          index.putSessionFacts({ tenant: T1, sid: SID, state: null, title: null, reports: [report] }),
        ).rejects.toThrow(/a report document has w ''/);
        expect(await index.applyWriter(batch(T1, [doc({ seq: 1, text: 'first' })]))).toBe(true);
      }),
    );

    it(
      'a page of 50 long texts in a script of 3-byte characters comes back whole, within the Data API’s answer size',
      withDb(async ({ index }) => {
        // About 16,000 characters of CJK each (some 43,000 bytes of text, as many of terms): over 4 MB
        // for the page, which one Data API answer (1 MiB) cannot carry.
        const long = (i: number) => `需要 ${i} ${'迁移 '.repeat(5_300)}`;
        const docs = Array.from({ length: 50 }, (_, i) => doc({ seq: i + 1, text: long(i) }));
        for (let i = 0; i < 50; i += 10) {
          expect(
            await index.applyWriter(
              batch(T1, docs.slice(i, i + 10), { fromLength: i * 10, toLength: i * 10 + 100 }),
            ),
          ).toBe(true);
        }
        const hits = await index.query(T1, { ...words(['需要']), limit: 50 });
        expect(hits).toHaveLength(50);
        expect(new Set(hits.map((h) => h.doc.text))).toEqual(new Set(docs.map((d) => d.text)));
        expect(hits.every((h, i) => i === 0 || h.rank <= (hits[i - 1]?.rank ?? 0))).toBe(true);
      }),
    );

    it(
      'stats count the tenant’s documents and give the size of its own rows in bytes',
      withDb(async ({ index }) => {
        await index.applyWriter(batch(T1, [doc({ seq: 1, text: 'one' }), doc({ seq: 2, text: 'two' })]));
        await index.applyWriter(batch(T2, [doc({ seq: 1, text: 'three' })]));
        const stats = await index.stats(T1);
        expect(stats.docs).toBe(2);
        expect(stats.bytes).toBeGreaterThan(0);
        // Another tenant's rows are not counted; the tenant's own are (a text of 5,000 random letters,
        // which compression cannot shrink much, adds at least its bytes).
        await index.applyWriter(
          batch(T2, [doc({ seq: 2, text: 'four '.repeat(2000) })], { fromLength: 100, toLength: 200 }),
        );
        expect(await index.stats(T1)).toEqual(stats);
        let x = 1;
        const letters = Array.from({ length: 5000 }, () => {
          x = (x * 48271) % 2147483647;
          return String.fromCharCode(97 + (x % 26));
        });
        await index.applyWriter(
          batch(T1, [doc({ seq: 3, text: letters.join('') })], { fromLength: 100, toLength: 200 }),
        );
        const grown = await index.stats(T1);
        expect(grown.docs).toBe(3);
        expect(grown.bytes).toBeGreaterThan((stats.bytes ?? 0) + 2000);
      }),
    );
  });
}

export function fix(target: string, text: string, over: Partial<SearchFix> = {}): SearchFix {
  return {
    sid: SID,
    target_id: target,
    field: 'text',
    text,
    terms: text
      .toLowerCase()
      .split(/[^\p{L}\p{N}]+/u)
      .filter(Boolean)
      .join(' '),
    at_us: 1_764_583_300_000_000,
    w: 'w_01JCCCCCCCCCCCCCCCCCCCCCCC',
    seq: 7,
    by: 'e_01JDDDDDDDDDDDDDDDDDDDDDDD',
    ...over,
  };
}

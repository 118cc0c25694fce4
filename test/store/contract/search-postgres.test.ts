/**
 * The search engine contract (./search.contract.ts) on PostgreSQL through `pg` (lib/store/postgres/), on
 * the run's PostgreSQL server (test/support/postgres.ts): each case on a new database copied from a
 * template migrated by the tables' owner, the index connecting as the app role, which owns nothing, so
 * row-level security applies as on Aurora. Then what only this adapter has (test/store/postgres/
 * pg-search-cases.ts): row-level security against a statement that forgets its tenant, the time limit,
 * long pages. Last, `ensureAppRole` on an empty database, as the indexer makes the app role on Aurora.
 */
import { describe, expect, it } from 'vitest';
import { PgRunner } from '../../../lib/store/postgres/pg-runner.js';
import { ensureAppRole, migrateSearchSchema } from '../../../lib/store/postgres/schema.js';
import { PgSearchIndex } from '../../../lib/store/postgres/search.js';
import { usePostgres } from '../../support/postgres.js';
import { runPgCandidateCases } from '../postgres/pg-search-candidates.js';
import { batch, doc, runPgAdapterCases, words } from '../postgres/pg-search-cases.js';
import { runSearchContract } from './search.contract.js';

const pg = usePostgres();

runSearchContract('PostgreSQL over pg', async () => {
  const db = await pg.fresh();
  const index = new PgSearchIndex({ runner: new PgRunner({ connection: db.appUrl }), timeoutMs: 5000 });
  return {
    index,
    cleanup: async () => {
      await index.close();
      await pg.drop(db);
    },
  };
});

runPgAdapterCases('PgSearchIndex over pg', {
  fresh: () => pg.fresh(),
  runners: (db) => ({
    app: new PgRunner({ connection: db.appUrl }),
    owner: new PgRunner({ connection: db.ownerUrl }),
  }),
});

runPgCandidateCases('PgSearchIndex over pg: candidates', {
  fresh: () => pg.fresh(),
  runners: (db) => ({
    app: new PgRunner({ connection: db.appUrl }),
    owner: new PgRunner({ connection: db.ownerUrl }),
  }),
});

describe('ensureAppRole: the app role made by the owner, as the indexer does on Aurora', () => {
  const T1 = 'acme';
  const T2 = 'globex';
  const plan = async (runner: PgRunner, tenant: string, sql: string) =>
    (await runner.transaction(tenant, (tx) => tx.query(`EXPLAIN ${sql}`)))
      .map((r) => String(r['QUERY PLAN']))
      .join('\n');

  it('creates a login that owns nothing, whose searches go through search_matching and the GIN index, and never see another tenant', async () => {
    const db = await pg.bare();
    const owner = new PgRunner({ connection: db.ownerUrl, max: 1 });
    const app = new PgRunner({ connection: db.appUrl('first-password'), max: 1 });
    try {
      await ensureAppRole(owner, { role: db.appRole, password: 'first-password', version: 'v1' });
      await migrateSearchSchema(owner, { appRole: db.appRole });
      // search_docs ENABLEd, not FORCEd (the owner's search_matching reads the index); the rest FORCEd
      const [docs] = await owner.admin(
        "SELECT relrowsecurity AS on, relforcerowsecurity AS forced FROM pg_class WHERE relname = 'search_docs'",
      );
      expect(docs).toEqual({ on: true, forced: false });
      const [role] = await owner.admin(
        'SELECT rolcanlogin, rolsuper, rolbypassrls, rolcreaterole FROM pg_roles WHERE rolname = :r',
        { r: db.appRole },
      );
      expect(role).toEqual({ rolcanlogin: true, rolsuper: false, rolbypassrls: false, rolcreaterole: false });

      // Enough of the tenant's rows that a plan tells an index scan from reading them all (written by the
      // owner at once: search_docs' policy is not FORCEd on it).
      await owner.admin(
        `INSERT INTO search_docs (tenant, sid, w, seq, id, ts, type, field, text, terms, facets)
          SELECT :t, 's_bulk', 'w_bulk', g, 'm_' || g, '2026-12-01T10:00:00Z', 'message', 'text',
            'common words ' || g, 'common words ' || g, '' FROM generate_series(1, 5000) AS g`,
        { t: T1 },
      );
      const index = new PgSearchIndex({ runner: app });
      await index.applyWriter(batch(T1, [doc({ seq: 1, text: 'the rare ledger' })]));
      await index.applyWriter(batch(T2, [doc({ seq: 1, text: 'the rare ledger of globex' })]));
      await owner.admin('ANALYZE search_docs');

      // search_matching's statement, as its owner (SECURITY DEFINER): through the GIN index
      const body =
        "SELECT d.seq FROM search_docs d WHERE d.tenant = current_setting('hansard.tenant', true) AND d.tsv @@ to_tsquery('simple', 'rare')";
      expect(await plan(owner, T1, body)).toContain('search_docs_tsv');
      // the same as the app role, under the policy: not through it (why search_matching exists)
      expect(await plan(app, T1, body)).not.toContain('search_docs_tsv');
      expect(
        await plan(app, T1, "SELECT * FROM search_matching(to_tsquery('simple', 'rare'), NULL, '{}', 2000)"),
      ).toContain('Function Scan on search_matching');

      const hits = await index.query(T1, words(['rare', 'ledger']));
      expect(hits.map((h) => h.doc.text)).toEqual(['the rare ledger']);
      expect((await index.query(T2, words(['rare']))).map((h) => h.doc.text)).toEqual([
        'the rare ledger of globex',
      ]);
      expect(await index.query(T1, words(['globex']))).toEqual([]);
      expect(await app.transaction(T2, (tx) => tx.query('SELECT count(*) AS n FROM search_docs'))).toEqual([
        { n: 1 },
      ]);
      // it owns nothing and may not change the schema
      await expect(app.admin('ALTER TABLE search_docs NO FORCE ROW LEVEL SECURITY')).rejects.toThrow(
        /must be owner/,
      );
    } finally {
      await app.close();
      await owner.close();
    }
  });

  it('sets the password again only when its version changes, and is idempotent with the migration', async () => {
    const db = await pg.bare();
    const owner = new PgRunner({ connection: db.ownerUrl, max: 1 });
    const login = async (password: string) => {
      const r = new PgRunner({ connection: db.appUrl(password), max: 1 });
      try {
        return (await r.admin('SELECT current_user AS u'))[0]?.u;
      } finally {
        await r.close();
      }
    };
    try {
      await ensureAppRole(owner, { role: db.appRole, password: 'one', version: 'v1' });
      await migrateSearchSchema(owner, { appRole: db.appRole });
      expect(await login('one')).toBe(db.appRole);
      // the same version: nothing written, whatever password is passed
      await ensureAppRole(owner, { role: db.appRole, password: 'two', version: 'v1' });
      expect(await login('one')).toBe(db.appRole);
      await expect(login('two')).rejects.toThrow(/password authentication failed/);
      // a new version: the new password, the old one refused; containers starting together agree
      await Promise.all([
        ensureAppRole(owner, { role: db.appRole, password: "t'wo; DROP TABLE x", version: 'v2' }),
        ensureAppRole(owner, { role: db.appRole, password: "t'wo; DROP TABLE x", version: 'v2' }),
      ]);
      await migrateSearchSchema(owner, { appRole: db.appRole });
      expect(await login("t'wo; DROP TABLE x")).toBe(db.appRole);
      await expect(login('one')).rejects.toThrow(/password authentication failed/);
      await expect(ensureAppRole(owner, { role: 'Bad-Role', password: 'x', version: 'v1' })).rejects.toThrow(
        /not a plain lowercase role name/,
      );
    } finally {
      await owner.close();
    }
  });
});

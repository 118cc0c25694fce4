/**
 * The search engine contract (./search.contract.ts) on PostgreSQL through `pg` (lib/store/postgres/), on
 * the run's PostgreSQL server (test/support/postgres.ts): each case on a new database copied from a
 * template migrated by the tables' owner, the index connecting as the app role, which owns nothing, so
 * row-level security applies as on Aurora. Then what only this adapter has (test/store/postgres/
 * pg-search-cases.ts): row-level security against a statement that forgets its tenant, the time limit,
 * long pages.
 */
import { PgRunner } from '../../../lib/store/postgres/pg-runner.js';
import { PgSearchIndex } from '../../../lib/store/postgres/search.js';
import { usePostgres } from '../../support/postgres.js';
import { runPgAdapterCases } from '../postgres/pg-search-cases.js';
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

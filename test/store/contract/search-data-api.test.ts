/**
 * The search engine contract (./search.contract.ts) on PostgreSQL through the RDS Data API
 * (`DataApiRunner`, lib/store/postgres/data-api-runner.ts), the runner the AWS functions use: the AWS
 * SDK's requests are answered by test/support/data-api-emulator.ts, which checks each against the Data
 * API's documented request shape and runs it on the run's real PostgreSQL as the app role (not the
 * tables' owner), answering in the documented shape with the documented limits (1 MiB per answer, 64 KB
 * per row). Then the adapter's own cases (test/store/postgres/pg-search-cases.ts) and the Data API's:
 * a paused cluster resuming, the calls of a transaction. What the emulation cannot show is listed in its
 * module comment.
 */
import { RDSDataClient } from '@aws-sdk/client-rds-data';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataApiRunner, DatabaseStillResumingError } from '../../../lib/store/postgres/data-api-runner.js';
import { SqlTimeoutError } from '../../../lib/store/postgres/runner.js';
import { PgSearchIndex } from '../../../lib/store/postgres/search.js';
import { type DataApiEmulatorOptions, dataApiEmulator } from '../../support/data-api-emulator.js';
import { type SearchDatabase, usePostgres } from '../../support/postgres.js';
import { runPgCandidateCases } from '../postgres/pg-search-candidates.js';
import { batch, doc, runPgAdapterCases, words } from '../postgres/pg-search-cases.js';
import { runSearchContract } from './search.contract.js';

const RESOURCE_ARN = 'arn:aws:rds:us-east-1:123456789012:cluster:hansard-search';
const pg = usePostgres();
/** Each secret's database login, as Secrets Manager would hold it. */
const secretLogins: DataApiEmulatorOptions['secrets'] = {};
const emulator = dataApiEmulator({ resourceArn: RESOURCE_ARN, secrets: secretLogins });
const msw = setupServer(...emulator.handlers);
const client = new RDSDataClient({
  region: 'us-east-1',
  credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
  maxAttempts: 1,
});
let secrets = 0;

beforeAll(() => {
  msw.listen({ onUnhandledRequest: 'error' });
});
afterAll(async () => {
  msw.close();
  await emulator.close();
  client.destroy();
});

/** A runner on `db` as `who` (a secret of its own, as a function's environment names one). */
function runner(
  db: SearchDatabase,
  who: 'app' | 'owner',
  extra: Partial<ConstructorParameters<typeof DataApiRunner>[0]> = {},
) {
  const secretArn = `arn:aws:secretsmanager:us-east-1:123456789012:secret:hansard-${who}-${++secrets}`;
  secretLogins[secretArn] = { url: who === 'app' ? db.appUrl : db.ownerUrl, database: db.name };
  return new DataApiRunner({ resourceArn: RESOURCE_ARN, secretArn, database: db.name, client, ...extra });
}

runSearchContract('PostgreSQL over the RDS Data API', async () => {
  const db = await pg.fresh();
  const index = new PgSearchIndex({ runner: runner(db, 'app'), timeoutMs: 5000 });
  return {
    index,
    cleanup: async () => {
      await index.close();
      await pg.drop(db);
    },
  };
});

runPgAdapterCases('PgSearchIndex over the RDS Data API', {
  fresh: () => pg.fresh(),
  runners: (db) => ({ app: runner(db, 'app'), owner: runner(db, 'owner') }),
});

runPgCandidateCases('PgSearchIndex over the RDS Data API: candidates', {
  fresh: () => pg.fresh(),
  runners: (db) => ({ app: runner(db, 'app'), owner: runner(db, 'owner') }),
});

describe('DataApiRunner on the Data API', () => {
  it('runs a transaction as BeginTransaction, the tenant set, the statements, CommitTransaction; a failure rolls back', async () => {
    const db = await pg.fresh();
    const r = runner(db, 'app');
    const index = new PgSearchIndex({ runner: r });
    emulator.calls.length = 0;
    await index.applyWriter(batch('acme', [doc({ seq: 1, text: 'hello world' })]));
    expect(emulator.calls[0]).toBe('BeginTransaction');
    expect(emulator.calls.at(-1)).toBe('CommitTransaction');
    expect(emulator.calls.slice(1, -1).every((c) => c === 'Execute')).toBe(true);
    emulator.calls.length = 0;
    await expect(r.transaction('acme', (tx) => tx.query('SELECT * FROM no_such_table'))).rejects.toThrow(
      /relation "no_such_table" does not exist; .*SQLState: 42P01/,
    );
    expect(emulator.calls).toEqual(['BeginTransaction', 'Execute', 'Execute', 'RollbackTransaction']);
    expect((await index.query('acme', words(['hello']))).map((h) => h.doc.text)).toEqual(['hello world']);
    await r.close();
    await pg.drop(db);
  });

  it('a statement past its time limit is SqlTimeoutError through the Data API too (its SQLState 57014)', async () => {
    const db = await pg.fresh();
    const r = runner(db, 'app');
    const err = await r
      .transaction('acme', (tx) => tx.query('SELECT pg_sleep(10)'), { timeoutMs: 100 })
      .catch((e) => e);
    expect(err).toBeInstanceOf(SqlTimeoutError);
    expect(String((err as Error).cause)).toMatch(/SQLState: 57014/);
    await pg.drop(db);
  });

  it('waits for a cluster paused at 0 ACU to resume, with backoff, then gives up with a clear error after 30 s', async () => {
    const db = await pg.fresh();
    let clock = 0;
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
      clock += ms;
    };
    const r = runner(db, 'app', { sleep, now: () => clock });
    emulator.pauseNext(3);
    expect(await r.transaction('acme', (tx) => tx.query('SELECT 1 AS one'))).toEqual([{ one: 1 }]);
    expect(waits).toEqual([500, 1000, 2000]);

    waits.length = 0;
    clock = 0;
    emulator.pauseNext(1000);
    const err = await r.transaction('acme', (tx) => tx.query('SELECT 1 AS one')).catch((e) => e);
    emulator.pauseNext(0);
    expect(err).toBeInstanceOf(DatabaseStillResumingError);
    expect((err as Error).message).toMatch(/did not resume within 30 s/);
    expect(waits.reduce((a, b) => a + b, 0)).toBe(30_000);
    await pg.drop(db);
  });

  it('every request of this file fitted the documented request shape, and no answer passed 1 MiB', () => {
    expect(emulator.refused).toEqual([]);
    expect(emulator.largestAnswer).toBeGreaterThan(0);
    expect(emulator.largestAnswer).toBeLessThanOrEqual(1024 * 1024);
    // applyWriter's condition (UPDATE … RETURNING) was answered as `records`, and read as such.
    expect(emulator.nonSelectRows).toBeGreaterThan(0);
  });
});

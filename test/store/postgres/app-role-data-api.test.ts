/**
 * The two database roles of search on AWS (issue 30 item 6; lib/deploy/aws-search.ts), through the RDS
 * Data API as the functions use it: `DataApiRunner`s on the emulation of test/support/data-api-emulator.ts
 * (each secret a login on the run's real PostgreSQL), from an empty database whose owner may create roles,
 * as a new Aurora cluster's master user. Before the indexer has migrated, the API's index answers 503
 * `search_unavailable` (the app role's login fails, then the schema is missing); the indexer's migration
 * as the owner (`migrateAsOwner`: `ensureAppRole`'s transaction of settings and a DO block, then the
 * schema) goes through the Data API's documented request shapes; then the app role indexes and searches,
 * each tenant seeing only its own rows.
 */
import { randomBytes } from 'node:crypto';
import { RDSDataClient } from '@aws-sdk/client-rds-data';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awsSearchService, indexerSearchIndex, migrateAsOwner } from '../../../lib/deploy/aws-search.js';
import { DataApiRunner } from '../../../lib/store/postgres/data-api-runner.js';
import { ensureAppRole } from '../../../lib/store/postgres/schema.js';
import { type DataApiEmulatorOptions, dataApiEmulator } from '../../support/data-api-emulator.js';
import { usePostgres } from '../../support/postgres.js';
import { batch, doc, words } from './pg-search-cases.js';

const RESOURCE_ARN = 'arn:aws:rds:us-east-1:123456789012:cluster:hansard-search';
const OWNER_SECRET = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:hansard-owner';
const APP_SECRET = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:hansard-app';
const pg = usePostgres();
/** Each secret's database login, as Secrets Manager would hold it. */
const secrets: DataApiEmulatorOptions['secrets'] = {};
const emulator = dataApiEmulator({ resourceArn: RESOURCE_ARN, secrets });
const msw = setupServer(...emulator.handlers);
const client = new RDSDataClient({
  region: 'us-east-1',
  credentials: { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' },
  maxAttempts: 1,
});

beforeAll(() => {
  msw.listen({ onUnhandledRequest: 'error' });
});
afterAll(async () => {
  msw.close();
  await emulator.close();
  client.destroy();
});

describe('the app role on the Data API', () => {
  it('answers 503 until the indexer has made the app role and migrated as the owner; then the app role indexes and searches its tenant alone', async () => {
    const db = await pg.bare();
    const password = randomBytes(12).toString('base64url');
    secrets[OWNER_SECRET] = { url: db.ownerUrl, database: db.name };
    secrets[APP_SECRET] = { url: db.appUrl(password), database: db.name };
    const runner = (secretArn: string) =>
      new DataApiRunner({ resourceArn: RESOURCE_ARN, secretArn, database: db.name, client });
    const app = runner(APP_SECRET);
    const owner = runner(OWNER_SECRET);
    const api = awsSearchService({ runner: app });

    // no app role yet: its login fails, and the API says search is not set up yet
    await expect(api.index.query('acme', words(['ledger']))).rejects.toMatchObject({
      code: 'search_unavailable',
      message: expect.stringMatching(/not set up yet/),
    });

    const login = async () => ({ role: db.appRole, password, version: 'v1' });
    // the role made but no schema yet (`DatabaseErrorException` …; SQLState: 42P01): still 503
    await ensureAppRole(owner, await login());
    await expect(api.index.query('acme', words(['ledger']))).rejects.toMatchObject({
      code: 'search_unavailable',
      cause: expect.objectContaining({ message: expect.stringMatching(/SQLState: 42P01/) }),
    });
    const indexer = indexerSearchIndex(app, migrateAsOwner(owner, login));
    expect(await indexer.applyWriter(batch('acme', [doc({ seq: 1, text: 'the billing ledger' })]))).toBe(
      true,
    );
    expect(await indexer.applyWriter(batch('globex', [doc({ seq: 1, text: 'the globex ledger' })]))).toBe(
      true,
    );

    const hits = await api.index.query('acme', words(['ledger']));
    expect(hits.map((h) => h.doc.text)).toEqual(['the billing ledger']);
    expect(await api.index.query('acme', words(['globex']))).toEqual([]);
    // the rows were written by the app role, which owns none of the tables
    const [row] = await owner.admin(
      "SELECT pg_get_userbyid(relowner) AS owner, relforcerowsecurity AS forced FROM pg_class WHERE relname = 'search_docs'",
    );
    expect(row).toEqual({ owner: new URL(db.ownerUrl).username, forced: false });
    // every request fit the Data API's documented shapes
    expect(emulator.refused).toEqual([]);
    await indexer.close();
  });
});

/**
 * The indexing function on the AWS path (issue 30 item 5, functions/search.ts) against DynamoDB Local and
 * s3rver, with the index in a real PostgreSQL (test/support/postgres.ts) through `PgSearchIndex`:
 *
 * - a session is ingested through the AWS app into a table whose stream is on (NEW_IMAGE, as the stack's),
 *   and the records DynamoDB Local's stream then holds, passed through the trigger's own filters
 *   (infra/search.ts `searchStreamFilters`) and handed over as Lambda does, are what the handler indexes:
 *   the writer's events and the session's facts (its state from a status report, its title), found by
 *   the API function's GET /v1/search over the same index;
 * - the same batch again changes nothing (the index's cursor), and the tenant's and token records the
 *   filters let through none of;
 * - an entry whose indexing throws (its segment gone) is named in `batchItemFailures` by its first
 *   record's sequence number while the batch's other entries are indexed;
 * - the function refuses to start without its cluster or the master user's secret, and its state store
 *   answers only `SEARCH_STATE_METHODS` (its IAM role).
 *
 * The two roles of Aurora (lib/deploy/aws-search.ts): the database starts empty, as a new cluster's, with
 * an owner that may create roles (the master user's stand-in, test/support/postgres.ts `bare`). Before
 * the indexer has run, the API function answers 503 `search_unavailable` (no role yet, then no schema);
 * the indexer makes the app role and migrates as the owner, then indexes as the app role, and the API
 * searches as it. The Data API runner is not used here (the runners are `pg`'s, as `createSearchHandler`
 * and `createLambdaApp` allow in tests); the app login is handed over, but in one case, where the function
 * reads it from the app secret with GetSecretValue, answered in Secrets Manager's protocol through msw
 * (there is no emulator), and `appLoginOf`'s refusals are tested last.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '@aws-lambda-powertools/logger';
import { CreateTableCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SEARCH_STATE_METHODS } from '../../functions/access.js';
import { createLambdaApp } from '../../functions/app.js';
import { createClients } from '../../functions/clients.js';
import { ConfigError, parseConfig } from '../../functions/config.js';
import { createLogger } from '../../functions/logging.js';
import type { createSearchHandler as CreateSearchHandler } from '../../functions/search.js';
import { type S3ReplayWorld, startS3ReplayWorld } from '../../harness/s3-replay-world.js';
import { searchStreamFilters } from '../../infra/search.js';
import { createAwsApp } from '../../lib/deploy/aws.js';
import { appLoginOf, type SqlRunner } from '../../lib/deploy/aws-search.js';
import { ensureTenant } from '../../lib/service/tenants/bootstrap.js';
import { createTableInput } from '../../lib/store/dynamo/schema.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import { PgRunner } from '../../lib/store/postgres/pg-runner.js';
import { ensureAppRole } from '../../lib/store/postgres/schema.js';
import { PgSearchIndex } from '../../lib/store/postgres/search.js';
import { worldDynamo } from '../support/aws-world.js';
import { passesFilters, streamRecords } from '../support/dynamo-stream.js';
import { type BareDatabase, usePostgres } from '../support/postgres.js';
import { writeSession } from '../support/segments.js';

type Json = Record<string, unknown>;

const CLUSTER = 'arn:aws:rds:us-east-1:111122223333:cluster:hansard-search';
const SECRET = 'arn:aws:secretsmanager:us-east-1:111122223333:secret:hansard-search-app-AbCdEf';
const OWNER_SECRET = 'arn:aws:secretsmanager:us-east-1:111122223333:secret:hansard-search-owner-AbCdEf';
/** The app role's password, as its secret would hold it (quotes and all: it is never pasted into SQL). */
const APP_PASSWORD = "app-password-with-'quotes'-1";
const pg = usePostgres();
let world: S3ReplayWorld;
let dynamo: DynamoDBClient;
let db: BareDatabase;
let env: Record<string, string>;
let table: string;
let token: string;
let createSearchHandler: typeof CreateSearchHandler;
const runners: PgRunner[] = [];
// Secrets Manager through msw (handlers per case); every other request (the emulators) goes through.
const msw = setupServer();
const root = mkdtempSync(join(tmpdir(), 'hansard-search-fn-'));

beforeAll(async () => {
  world = await startS3ReplayWorld();
  dynamo = worldDynamo(world);
  // The stack's table has its stream on (NEW_IMAGE): so has this one.
  table = `hansard-search-${Date.now().toString(36)}`;
  await dynamo.send(
    new CreateTableCommand({
      ...createTableInput(table),
      StreamSpecification: { StreamEnabled: true, StreamViewType: 'NEW_IMAGE' },
    }),
  );
  const created = await ensureTenant(
    new DynamoStateStore({ tableName: table, client: dynamo }),
    'acme',
    new Date(),
  );
  token = created!.token;
  db = await pg.bare();
  env = {
    ...world.env,
    TABLE_NAME: table,
    LOG_LEVEL: 'SILENT',
    SEARCH_CLUSTER_ARN: CLUSTER,
    SEARCH_SECRET_ARN: SECRET,
    SEARCH_DATABASE: 'hansard_search',
    SEARCH_OWNER_SECRET_ARN: OWNER_SECRET,
  };
  msw.listen({ onUnhandledRequest: 'bypass' });
  // The module builds its handler from process.env when loaded: give it one it accepts.
  Object.assign(process.env, env);
  ({ createSearchHandler } = await import('../../functions/search.js'));
}, 120_000);

afterEach(() => {
  msw.resetHandlers();
});

afterAll(async () => {
  msw.close();
  for (const r of runners) await r.close();
  dynamo?.destroy();
  await world?.close();
  rmSync(root, { recursive: true, force: true });
});

/** A runner as the tables' owner (the master user's secret: the indexer's, to migrate). */
function ownerRunner(): PgRunner {
  const r = new PgRunner({ connection: db.ownerUrl, max: 2 });
  runners.push(r);
  return r;
}

/** A runner as the app role (the app secret's: what both functions search and index as). */
function appRunner(): PgRunner {
  const r = new PgRunner({ connection: db.appUrl(APP_PASSWORD), max: 2 });
  runners.push(r);
  return r;
}

/** The app secret's login, as the indexer reads it (`appLoginOf` of GetSecretValue's answer). */
const appLogin = async () => ({ role: db.appRole, password: APP_PASSWORD, version: 'v1' });

/** The indexing function as deployed: indexes as the app role, migrates as the owner. */
const indexer = (logger: Logger = silent()) =>
  createSearchHandler(env, {
    clients: clients(),
    logger,
    runner: appRunner(),
    ownerRunner: ownerRunner(),
    appLogin,
  });

/** The API function over the app role's runner. */
const apiApp = (runner: PgRunner = appRunner()) =>
  createLambdaApp({
    config: parseConfig(env),
    clients: clients(),
    logger: silent(),
    serves: 'all',
    searchRunner: runner,
  });

const silent = (): Logger => createLogger({ LOG_LEVEL: 'SILENT' });
const clients = () => createClients(parseConfig(env));

/** Collects what the function logs at ERROR. */
function errorLog(): { logger: Logger; errors: Json[] } {
  const errors: Json[] = [];
  const logger = silent();
  logger.error = ((message: string, extra?: Json) => {
    errors.push({ message, ...extra });
  }) as Logger['error'];
  return { logger, errors };
}

/** Ingests a session through the AWS app over the stream-on table: one writer's segment, a status report. */
async function ingest(text: string, note: string): Promise<{ sid: string; w: string }> {
  const app = createAwsApp({
    clients: { s3: world.s3.client(), dynamodb: dynamo },
    bucket: world.bucket,
    table,
    rateLimitPerMinute: 0,
    log: (m, err) => console.error(m, err),
  });
  const seg = writeSession(root, { text });
  const auth = { authorization: `Bearer ${token}` };
  const res = await app.request(`/v1/sessions/${seg.sid}/writers/${seg.w}/chunks?offset=0`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/x-ndjson' },
    body: seg.bytes,
  });
  expect(res.status, await res.clone().text()).toBe(201);
  const report = await app.request(`/v1/sessions/${seg.sid}/status`, {
    method: 'POST',
    headers: { ...auth, 'content-type': 'application/json' },
    body: JSON.stringify({ state: 'blocked', note }),
  });
  expect(report.status, await report.clone().text()).toBe(201);
  return { sid: seg.sid, w: seg.w };
}

/** The stream's records the trigger would deliver (its filters), as one Lambda event. */
async function delivered(): Promise<{ event: DynamoDBStreamEvent; all: Json[] }> {
  const all = await streamRecords(dynamo, world.dynamo.endpoint, table);
  const filters = searchStreamFilters();
  return {
    all,
    event: { Records: all.filter((r) => passesFilters(filters, r)) } as unknown as DynamoDBStreamEvent,
  };
}

const query = (terms: string[]) => ({ match: [{ terms }], exclude: [], filters: {}, limit: 20, offset: 0 });

describe('the indexing function on AWS', () => {
  let first: { sid: string; w: string };

  it('answers 503 search_unavailable from the API before the indexer has made the app role and the schema', async () => {
    const search = (app = apiApp()) =>
      app.request('/v1/search?q=billing', { headers: { authorization: `Bearer ${token}` } });
    // no app role yet (a new cluster): its login fails
    const res = await search();
    expect(res.status, await res.clone().text()).toBe(503);
    expect(await res.json()).toMatchObject({ error: { code: 'search_unavailable' } });
    // a role, but no schema yet (another empty database whose role was made and not migrated)
    const other = await pg.bare();
    const owner = new PgRunner({ connection: other.ownerUrl, max: 1 });
    runners.push(owner);
    await ensureAppRole(owner, { role: other.appRole, password: APP_PASSWORD, version: 'v1' });
    const bare = new PgRunner({ connection: other.appUrl(APP_PASSWORD), max: 1 });
    runners.push(bare);
    const again = await search(apiApp(bare));
    expect(again.status, await again.clone().text()).toBe(503);
    expect(await again.json()).toMatchObject({
      error: { code: 'search_unavailable', message: expect.stringMatching(/not set up yet/) },
    });
  });

  it('indexes what the stream announces as the app role, after migrating as the owner: the writer’s events and the session’s facts, found through the API', async () => {
    first = await ingest('migrate the billing ledger', 'waiting on the ledger review');
    const { event, all } = await delivered();
    // the tenant's and token's records were on the stream too, and the filters kept none of them
    expect(all.some((r) => JSON.stringify(r).includes('"TENANT#acme"'))).toBe(true);
    expect(JSON.stringify(event.Records)).not.toContain('TENANT#acme');
    expect(JSON.stringify(event.Records)).not.toContain('"TOKEN#');
    // the writer item changed and the session's facts (status, session item) did, several records each
    expect(event.Records.length).toBeGreaterThanOrEqual(3);

    const handler = indexer();
    const answer = await handler(event);
    expect(answer.batchItemFailures).toEqual([]);
    // one writer and one session's facts, each indexed once however many records named it
    expect(answer.result).toMatchObject({ records: event.Records.length, entries: 2, failed: 0, skipped: 0 });

    // migrated as the owner with the app role: search_docs ENABLEd, not FORCEd (search_matching reads the
    // GIN index), the rows written by the app role, which owns none of the tables
    const owner = ownerRunner();
    expect(
      await owner.admin(
        "SELECT relforcerowsecurity AS forced, pg_get_userbyid(relowner) AS owner FROM pg_class WHERE relname = 'search_docs'",
      ),
    ).toEqual([{ forced: false, owner: new URL(db.ownerUrl).username }]);
    expect(
      await owner.admin('SELECT rolcanlogin FROM pg_roles WHERE rolname = :r', { r: db.appRole }),
    ).toEqual([{ rolcanlogin: true }]);

    const index = new PgSearchIndex({ runner: appRunner() });
    const hits = await index.query('acme', query(['billing', 'ledger']));
    expect(hits.map((h) => [h.doc.sid, h.doc.type, h.doc.text])).toContainEqual([
      first.sid,
      'message',
      'migrate the billing ledger',
    ]);
    const report = await index.query('acme', query(['review']));
    expect(report.map((h) => [h.doc.type, h.doc.text])).toEqual([['report', 'waiting on the ledger review']]);
    expect(report[0]).toMatchObject({ state: 'blocked', title: 'migrate the billing ledger' });
    // another tenant finds none of it
    expect(await index.query('other', query(['billing']))).toEqual([]);

    // the API function answers from the same index, as the app role
    const app = apiApp();
    const res = await app.request('/v1/search?q=billing%20state:blocked', {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const body = (await res.json()) as { hits: Array<{ sid: string }> };
    expect(body.hits.map((h) => h.sid)).toContain(first.sid);

    // delivered again (at least once): nothing changes
    const before = await index.stats('acme');
    const again = await handler(event);
    expect(again.batchItemFailures).toEqual([]);
    expect(await index.stats('acme')).toEqual(before);
  });

  it('names an entry that fails by its first record and indexes the rest of the batch', async () => {
    const broken = await ingest('rotate the staging keys', 'keys rotated');
    // its segment's objects gone: reading the writer's bytes fails
    const s3 = world.s3.client();
    const listed = await s3.send(
      new ListObjectsV2Command({ Bucket: world.bucket, Prefix: `tenants/acme/sessions/${broken.sid}/` }),
    );
    expect(listed.Contents?.length).toBeGreaterThan(0);
    for (const o of listed.Contents ?? [])
      await s3.send(new DeleteObjectCommand({ Bucket: world.bucket, Key: o.Key }));

    const { event } = await delivered();
    const mine = event.Records.filter((r) => JSON.stringify(r.dynamodb?.NewImage).includes(broken.sid));
    const writerRecords = mine.filter(
      (r) => r.dynamodb?.NewImage?.w?.S === broken.w && !r.dynamodb?.NewImage?.offset,
    );
    expect(writerRecords.length).toBeGreaterThan(0);
    const { logger, errors } = errorLog();
    const handler = indexer(logger);
    const answer = await handler(event);
    expect(answer.batchItemFailures).toEqual([
      { itemIdentifier: writerRecords[0]!.dynamodb!.SequenceNumber },
    ]);
    expect(answer.result).toMatchObject({ entries: 4, failed: 1 });
    expect(errors).toEqual([
      expect.objectContaining({ message: 'search: indexing an entry failed', sid: broken.sid, w: broken.w }),
    ]);
    // its facts were indexed all the same, and so was everything else of the batch
    const index = new PgSearchIndex({ runner: appRunner() });
    expect((await index.query('acme', query(['rotated']))).map((h) => h.doc.sid)).toEqual([broken.sid]);
    expect((await index.query('acme', query(['billing']))).length).toBeGreaterThan(0);
  });

  it('sets a changed app password at its next use after a failed login (the app secret changed by hand)', async () => {
    let login = { role: db.appRole, password: APP_PASSWORD, version: 'v1' };
    // The Data API reads the secret at each call: the runner logs in with the secret's password of the time.
    const byPassword = new Map<string, PgRunner>();
    const current = () => {
      let r = byPassword.get(login.password);
      if (!r) {
        r = new PgRunner({ connection: db.appUrl(login.password), max: 1 });
        runners.push(r);
        byPassword.set(login.password, r);
      }
      return r;
    };
    const secretRunner: SqlRunner = {
      transaction: (t, fn, o) => current().transaction(t, fn, o),
      admin: (sql, params) => current().admin(sql, params),
      close: async () => {},
    };
    const { logger, errors } = errorLog();
    const handler = createSearchHandler(env, {
      clients: clients(),
      logger,
      runner: secretRunner,
      ownerRunner: ownerRunner(),
      appLogin: async () => login,
    });
    const { event } = await delivered();
    const mine = {
      Records: event.Records.filter((r) => JSON.stringify(r.dynamodb?.NewImage).includes(first.sid)),
    };
    expect((await handler(mine)).batchItemFailures).toEqual([]);
    // the secret's value changes: this container's logins fail once, then it sets the role's password again
    login = { ...login, password: 'a-new-app-password', version: 'v2' };
    const failed = await handler(mine);
    expect(failed.result.failed).toBe(failed.result.entries);
    expect(errors[0]).toMatchObject({ error: { message: expect.stringMatching(/password authentication/) } });
    expect(await handler(mine)).toMatchObject({ batchItemFailures: [], result: { failed: 0 } });
    expect((await new PgSearchIndex({ runner: current() }).query('acme', query(['billing']))).length).toBe(1);
    // back to the password the other cases log in with
    login = { ...login, password: APP_PASSWORD, version: 'v3' };
    await handler(mine);
    expect(await handler(mine)).toMatchObject({ batchItemFailures: [], result: { failed: 0 } });
  });

  it('reads the app role’s login from the app secret (GetSecretValue on it alone) and sets it as the owner', async () => {
    const asked: Array<{ target: string | null; body: Record<string, unknown> }> = [];
    msw.use(
      http.post(`https://secretsmanager.${env.AWS_REGION}.amazonaws.com/`, async ({ request }) => {
        const body = (await request.json()) as Record<string, unknown>;
        asked.push({ target: request.headers.get('x-amz-target'), body });
        const headers = { 'content-type': 'application/x-amz-json-1.1' };
        if (body.SecretId !== SECRET)
          return HttpResponse.json(
            { __type: 'AccessDeniedException', message: 'denied' },
            { status: 400, headers },
          );
        // as DatabaseSecret makes it, attached to the cluster
        const value = { username: db.appRole, password: APP_PASSWORD, engine: 'postgres', port: 5432 };
        return HttpResponse.json(
          {
            ARN: SECRET,
            Name: 'SearchAppSecret',
            SecretString: JSON.stringify(value),
            VersionId: 'from-the-secret',
          },
          { headers },
        );
      }),
    );
    const handler = createSearchHandler(env, {
      clients: clients(),
      logger: silent(),
      runner: appRunner(),
      ownerRunner: ownerRunner(),
    });
    const { event } = await delivered();
    const mine = {
      Records: event.Records.filter((r) => JSON.stringify(r.dynamodb?.NewImage).includes(first.sid)),
    };
    expect(await handler(mine)).toMatchObject({ batchItemFailures: [], result: { failed: 0 } });
    // the app secret alone, once for the container (the master user's is the Data API's to read)
    expect(asked).toEqual([{ target: 'secretsmanager.GetSecretValue', body: { SecretId: SECRET } }]);
    const [mark] = await ownerRunner().admin(
      "SELECT shobj_description(oid, 'pg_authid') AS comment FROM pg_roles WHERE rolname = :r",
      { r: db.appRole },
    );
    expect(String(mark?.comment)).toMatch(/from-the-secret$/);
  });

  it('skips records that name no entry: other items, removals and what does not parse', async () => {
    const handler = indexer();
    const answer = await handler({
      Records: [
        {
          eventName: 'INSERT',
          dynamodb: { SequenceNumber: '1', NewImage: { pk: { S: 'TENANT#acme' }, sk: { S: 'TENANT' } } },
        },
        {
          eventName: 'REMOVE',
          dynamodb: { SequenceNumber: '2', Keys: { pk: { S: 'T#acme' }, sk: { S: 'WORK#wk_1' } } },
        },
        { eventName: 'MODIFY' },
        'not a record',
      ],
    });
    expect(answer).toMatchObject({
      batchItemFailures: [],
      result: { records: 4, entries: 0, skipped: 4, failed: 0 },
    });
  });

  it('refuses to start without its cluster or the master user’s secret, and its state store answers only SEARCH_STATE_METHODS', async () => {
    const {
      SEARCH_CLUSTER_ARN: _,
      SEARCH_SECRET_ARN: __,
      SEARCH_DATABASE: ___,
      SEARCH_OWNER_SECRET_ARN: ____,
      ...without
    } = env;
    expect(() => createSearchHandler(without, { clients: clients(), logger: silent() })).toThrow(ConfigError);
    expect(() => createSearchHandler({ ...without, SEARCH_DATABASE: 'x' })).toThrow(/SEARCH_CLUSTER_ARN/);
    // the API's variables alone (no owner's secret): it could index but never migrate
    const { SEARCH_OWNER_SECRET_ARN: _o, ...apiOnly } = env;
    expect(() => createSearchHandler(apiOnly, { clients: clients(), logger: silent() })).toThrow(
      /SEARCH_OWNER_SECRET_ARN \(required by the indexing function\)/,
    );
    // what the indexer calls is in the list, and the list is what the role is granted (test/infra/search-stack)
    expect([...SEARCH_STATE_METHODS].sort()).toEqual(['boardCopies', 'getStatus', 'getWriter', 'listWork']);
  });

  it('reads the app role’s login from its secret’s value, and names what is wrong with one without its password', () => {
    const value = (json: unknown) => ({ SecretString: JSON.stringify(json), VersionId: 'a1b2c3' });
    // as DatabaseSecret makes it, once attached to the cluster
    expect(
      appLoginOf(
        value({
          username: 'hansard_app',
          password: 'p4ssw0rd-xyz',
          engine: 'postgres',
          host: 'h',
          port: 5432,
        }),
      ),
    ).toEqual({ role: 'hansard_app', password: 'p4ssw0rd-xyz', version: 'a1b2c3' });
    expect(() => appLoginOf(value({ username: 'Hansard-App', password: 'p4ssw0rd-xyz' }))).toThrow(
      /username \(not a plain lowercase role name\)/,
    );
    const short = () => appLoginOf(value({ username: 'hansard_app', password: 'short' }));
    expect(short).toThrow(/password/);
    expect(short).not.toThrow(/short/);
    expect(() => appLoginOf({ SecretString: 'not json', VersionId: 'v' })).toThrow(/not JSON/);
    expect(() => appLoginOf({ VersionId: 'v' })).toThrow(/SecretString/);
  });
});

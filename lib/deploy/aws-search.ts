/**
 * Search on AWS (issue 30 items 4 and 5): the search index over the RDS Data API, for the API function
 * (`awsSearchService`: GET /v1/search) and the indexing function (`searchStreamDrainer`,
 * functions/search.ts), and the drain of the state table's stream into `indexQueued`.
 *
 * - **The queue is the stream.** Every writer advance, status report, work item and session summary change
 *   is a stream record of the state table (kept 24 h); the indexing function's trigger is filtered to those
 *   items (infra/search.ts), and a record is only a notification: `indexQueued` reads the stores and the
 *   index's own cursor, so one record of a writer catches up everything that writer has, a record seen
 *   twice changes nothing, and a lost one is caught up by the writer's next.
 * - **Decoding** (`searchEntryOf`): a record names an entry `{tenant, sid, w}` (`w` = '' for the session's
 *   facts) only when its item's attributes rebuild its key exactly with the store's key builders
 *   (lib/store/dynamo/schema.ts `keys`), so a record of any other item, or one whose attributes disagree
 *   with its key, is skipped rather than guessed at. Only the string attributes needed are read, with zod
 *   (a full unmarshall of the image is not needed).
 * - **A batch** (`drainStreamBatch`): its records' entries, each once (a busy writer has many records in a
 *   batch), indexed `SEARCH_DRAIN_PARALLEL` at a time; an entry that throws is reported in
 *   `batchItemFailures` by its first record's sequence number, so Lambda retries from there (the entries
 *   after it again too, which indexing takes as no-ops) and, past its retries, describes the batch in the
 *   dead-letter queue.
 * - **Two database roles** (issue 30 item 6; lib/store/postgres/schema.ts): the tables' owner is the
 *   cluster's master user, and the functions read and write as an app role that owns nothing, so that
 *   row-level security holds it and `search_docs` is left unFORCEd for the owner's `search_matching`,
 *   which reads the GIN index (as the owner under FORCE, every search would read all of a tenant's rows).
 *   The API function has the app role's secret only; the indexing function has both.
 * - **The schema** is applied by the indexing function alone, once per container, before the index's
 *   first use (`schemaFirst`, `migrateAsOwner`): as the owner it makes the app role a login with the
 *   password of the app secret (`ensureAppRole`), then migrates with that role's grants. Its DDL is
 *   idempotent, so containers that start together all apply it, and nothing else (no deploy-time custom
 *   resource) has to reach a cluster that may be paused. Until it has run, the API answers 503
 *   `search_unavailable` (`untilMigrated`).
 *
 * Nothing here loads the app, routes or limiter: the indexing function's bundle holds none of them.
 */
import { RDSDataClient } from '@aws-sdk/client-rds-data';
import { z } from 'zod';
import { DEFAULT_SEARCH_TIMEOUT_MS, type SearchDeps } from '../service/search/deps.js';
import { type IndexerDeps, type IndexTarget, indexQueued } from '../service/search/indexer.js';
import { AppError } from '../service/shared/errors.js';
import { keys } from '../store/dynamo/schema.js';
import type { StateStore } from '../store/index.js';
import { DataApiRunner } from '../store/postgres/data-api-runner.js';
import type { SqlRunner } from '../store/postgres/runner.js';
import { type AppLogin, ensureAppRole, migrateSearchSchema } from '../store/postgres/schema.js';
import { PgSearchIndex } from '../store/postgres/search.js';
import type { EngineQuery, SearchIndex, SessionFacts, WriterBatch } from '../store/search.js';
import { type AwsClients, openAwsStores, type SdkTimeouts, sdkTimeoutOptions } from './aws-stores.js';

// functions/ reach the store through lib/deploy only (test/architecture/rules.ts): a test's `pg` runner is one.
export type { SqlRunner } from '../store/postgres/runner.js';
export type { AppLogin } from '../store/postgres/schema.js';

/** The search index's cluster as the Data API is called with it (functions/config.ts `searchTargetOf`). */
export interface SearchTarget {
  /** the cluster's ARN (`SEARCH_CLUSTER_ARN`) */
  resourceArn: string;
  /** the credentials' secret the calls run as (`SEARCH_SECRET_ARN`: the app role's) */
  secretArn: string;
  /** the database (`SEARCH_DATABASE`) */
  database: string;
}

/**
 * The Data API client's timeouts: a statement waits for a cluster that is resuming from 0 ACU (about 15 s,
 * answered `DatabaseResumingException` meanwhile, which the runner tries again), so a try may take far
 * longer than a DynamoDB request; 2 tries of 35 s stay inside the indexing function's timeout. A query of
 * the API is bounded by its own `statement_timeout` (`SearchDeps.timeoutMs`) well before this.
 */
export const DATA_API_TIMEOUTS: SdkTimeouts = {
  connectionTimeoutMs: 2_000,
  requestTimeoutMs: 35_000,
  socketTimeoutMs: 35_000,
  maxAttempts: 2,
};

/** The Data API client of `region` (`endpoint`: tests only). */
export function dataApiClient(region: string, endpoint?: string): RDSDataClient {
  return new RDSDataClient({
    region,
    ...sdkTimeoutOptions(DATA_API_TIMEOUTS),
    ...(endpoint ? { endpoint } : {}),
  });
}

/** A `DataApiRunner` on `target` through `client`, as the role of `target.secretArn`. */
export function dataApiRunner(client: RDSDataClient, target: SearchTarget): SqlRunner {
  const { resourceArn, secretArn, database } = target;
  return new DataApiRunner({ client, resourceArn, secretArn, database });
}

/**
 * A database secret's value as Secrets Manager answers it (`GetSecretValue`: `SecretString`, JSON with
 * `username` and `password`, as CDK's `DatabaseSecret` makes it, and its `VersionId`).
 */
const DatabaseSecretValue = z.object({
  SecretString: z.string({ error: 'the app secret has no SecretString' }),
  VersionId: z.string({ error: 'the app secret has no VersionId' }),
});
const DatabaseSecretJson = z.object({
  username: z.string().regex(/^[a-z_][a-z0-9_]{0,62}$/, { error: 'not a plain lowercase role name' }),
  password: z.string().min(8),
});

/**
 * The app role's login from its secret's value (functions/search.ts reads it with GetSecretValue).
 * @throws Error naming what is wrong (never the password) when the value is not a database secret's
 */
export function appLoginOf(value: {
  SecretString?: string | undefined;
  VersionId?: string | undefined;
}): AppLogin {
  const { SecretString, VersionId } = DatabaseSecretValue.parse(value);
  let json: unknown;
  try {
    json = JSON.parse(SecretString);
  } catch {
    throw new Error('the search app secret is not JSON');
  }
  const parsed = DatabaseSecretJson.safeParse(json);
  if (!parsed.success) {
    const fields = parsed.error.issues.map((i) => `${String(i.path[0] ?? '(value)')} (${i.message})`);
    throw new Error(`the search app secret is not a database secret: ${fields.join('; ')}`);
  }
  return { role: parsed.data.username, password: parsed.data.password, version: VersionId };
}

/**
 * The indexing function's migration, as the tables' owner (the cluster's master user): the app role a
 * login with the app secret's password (`ensureAppRole`, reading the secret each time: a changed password
 * is set at the next container's start), then the schema with that role's grants (`migrateSearchSchema`
 * with `appRole`: `search_docs` ENABLEd, not FORCEd, so `search_matching` reads the GIN index).
 */
export function migrateAsOwner(owner: SqlRunner, appLogin: () => Promise<AppLogin>): () => Promise<void> {
  return async () => {
    const login = await appLogin();
    await ensureAppRole(owner, login);
    await migrateSearchSchema(owner, { appRole: login.role });
  };
}

/**
 * The indexing function's index: `PgSearchIndex` over `runner` (the app role), the schema applied by
 * `migrate` (`migrateAsOwner`) before its first use in this container. Two containers starting together
 * may race on a `CREATE … IF NOT EXISTS` (PostgreSQL can answer a duplicate-key error for the loser), so
 * a failed application is tried once more at once, then again at the next use. A call that fails as if
 * nothing were set up (`notSetUp`: the app secret's password was changed, so the role's login fails)
 * makes the next use apply it again, which sets the new password.
 */
export function indexerSearchIndex(runner: SqlRunner, migrate: () => Promise<void>): SearchIndex {
  return schemaFirst(new PgSearchIndex({ runner }), () => migrate().catch(() => migrate()), notSetUp);
}

/**
 * The API's search deps (issue 30): the index over the Data API as the app role, which never migrates
 * (the indexing function does: until then `untilMigrated` answers 503), no local queue (the stream is the
 * queue), and a query's time limit (`statement_timeout`, default `DEFAULT_SEARCH_TIMEOUT_MS`).
 * @param o.runner tests: another runner (`pg` against a local PostgreSQL) instead of the Data API's
 */
export function awsSearchService(o: { runner: SqlRunner; timeoutMs?: number | undefined }): SearchDeps {
  return {
    index: untilMigrated(new PgSearchIndex({ runner: o.runner })),
    queue: null,
    timeoutMs: o.timeoutMs ?? DEFAULT_SEARCH_TIMEOUT_MS,
  };
}

/**
 * PostgreSQL's answers while the schema or the app role is not there yet (SQLSTATE): no table, no
 * function, no grant, no database, or a login that fails (the role not made yet, or its password not yet
 * the secret's).
 */
const NOT_SET_UP = new Set(['42P01', '42883', '42501', '3D000', '28P01', '28000']);

/**
 * Whether `err` says the index is not set up yet: a `pg` error's `code`, or the Data API's message
 * (`…; SQLState: 42P01`; a failed login: `FATAL: password authentication failed for user …`).
 */
export function notSetUp(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && NOT_SET_UP.has(code)) return true;
  const state = /SQLState:\s*([0-9A-Z]{5})\b/.exec(err.message)?.[1];
  if (state !== undefined) return NOT_SET_UP.has(state);
  return /password authentication failed|role "[^"]*" does not exist/.test(err.message);
}

/**
 * `index`, whose errors that say it is not set up yet (`notSetUp`) are 503 `search_unavailable`: the API
 * never migrates, and a deployment whose indexer has not run yet (no session indexed since it was made)
 * is not an internal error.
 */
export function untilMigrated(index: SearchIndex): SearchIndex {
  const mapped =
    <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      try {
        return await f(...a);
      } catch (err) {
        if (!notSetUp(err)) throw err;
        throw new AppError(
          'search_unavailable',
          'the search index is not set up yet: the indexing function creates it when it indexes the first session after the deployment; try again shortly',
          {},
          { cause: err },
        );
      }
    };
  return {
    indexedLength: mapped((t: string, s: string, w: string) => index.indexedLength(t, s, w)),
    applyWriter: mapped((b: WriterBatch) => index.applyWriter(b)),
    putSessionFacts: mapped((f: SessionFacts) => index.putSessionFacts(f)),
    dropSession: mapped((t: string, s: string | null) => index.dropSession(t, s)),
    query: mapped((t: string, q: EngineQuery) => index.query(t, q)),
    stats: mapped((t: string) => index.stats(t)),
    close: () => index.close(),
  };
}

/**
 * `index`, each of whose methods first awaits `apply` once (memoized; forgotten when it fails, or when a
 * method fails with an error `stale` accepts, so the next call applies it again). `close` does not apply
 * it.
 */
export function schemaFirst(
  index: SearchIndex,
  apply: () => Promise<void>,
  stale: (err: unknown) => boolean = () => false,
): SearchIndex {
  let ready: Promise<void> | null = null;
  const once = (): Promise<void> => {
    ready ??= apply().catch((err: unknown) => {
      ready = null;
      throw err;
    });
    return ready;
  };
  const after =
    <A extends unknown[], R>(f: (...a: A) => Promise<R>) =>
    async (...a: A): Promise<R> => {
      await once();
      try {
        return await f(...a);
      } catch (err) {
        if (stale(err)) ready = null;
        throw err;
      }
    };
  return {
    indexedLength: after((t: string, s: string, w: string) => index.indexedLength(t, s, w)),
    applyWriter: after((b: WriterBatch) => index.applyWriter(b)),
    putSessionFacts: after((f: SessionFacts) => index.putSessionFacts(f)),
    dropSession: after((t: string, s: string | null) => index.dropSession(t, s)),
    query: after((t: string, q: EngineQuery) => index.query(t, q)),
    stats: after((t: string) => index.stats(t)),
    close: () => index.close(),
  };
}

// ---- the stream

/** A string attribute of a stream image (DynamoDB JSON). */
const S = z.object({ S: z.string() });

/**
 * The part of a DynamoDB stream record the drain reads (Lambda's `DynamoDBRecord`, view NEW_IMAGE): the
 * sequence number (what `batchItemFailures` names) and the new image's key and naming attributes. Other
 * attributes pass through unread.
 */
export const SearchStreamRecord = z.object({
  eventName: z.enum(['INSERT', 'MODIFY', 'REMOVE']),
  dynamodb: z.object({
    SequenceNumber: z.string(),
    NewImage: z
      .object({
        pk: S,
        sk: S,
        tenant: S.optional(),
        sid: S.optional(),
        w: S.optional(),
        /** chunk records have one, writer items none */
        offset: z.object({ N: z.string() }).optional(),
      })
      .optional(),
  }),
});
export type SearchStreamRecord = z.infer<typeof SearchStreamRecord>;

const sameKey = (a: { pk: string; sk: string }, pk: string, sk: string) => a.pk === pk && a.sk === sk;

/**
 * The queue entry a stream record names, or null when it names none: a writer item (`w` its id), or a
 * status, work or session item (`w` = '': the session's facts), each recognised by rebuilding its key
 * from its attributes with `keys`. A removal names none (an item's end changes no fact the index keeps:
 * work items are removed by TTL a month after their lease).
 */
export function searchEntryOf(record: SearchStreamRecord): IndexTarget | null {
  const image = record.dynamodb.NewImage;
  if (record.eventName === 'REMOVE' || !image) return null;
  const pk = image.pk.S;
  const sk = image.sk.S;
  const tenant = image.tenant?.S;
  const sid = image.sid?.S;
  if (tenant === undefined || sid === undefined) return null;
  const w = image.w?.S;
  if (w !== undefined && image.offset === undefined && sameKey(keys.writer(tenant, sid, w), pk, sk))
    return { tenant, sid, w };
  const facts = { tenant, sid, w: '' };
  if (sameKey(keys.status(tenant, sid), pk, sk) || sameKey(keys.session(tenant, sid), pk, sk)) return facts;
  const workId = sk.startsWith('WORK#') ? sk.slice('WORK#'.length) : null;
  if (workId !== null && sameKey(keys.work(tenant, workId), pk, sk)) return facts;
  return null;
}

/** What Lambda is answered for a stream batch (`DynamoDBBatchResponse`). */
export interface StreamBatchAnswer {
  batchItemFailures: Array<{ itemIdentifier: string }>;
}

/** What one drain did (logged by the function). */
export interface SearchDrainResult {
  records: number;
  /** distinct entries indexed (writers, and sessions' facts) */
  entries: number;
  /** records that named no entry (or did not parse) */
  skipped: number;
  /** entries whose indexing threw (their records are in `batchItemFailures`) */
  failed: number;
}

/** Entries of one batch indexed at once: a few, so one slow writer does not hold the rest. */
export const SEARCH_DRAIN_PARALLEL = 4;

/**
 * Indexes the entries of a stream batch (see the module comment).
 * @param onError told of each entry that threw, with the error (the function logs it)
 * @returns the answer for Lambda and what was done
 */
export async function drainStreamBatch(
  deps: IndexerDeps,
  records: readonly unknown[],
  onError: (entry: IndexTarget, err: unknown) => void = () => {},
): Promise<{ answer: StreamBatchAnswer; result: SearchDrainResult }> {
  const entries = new Map<string, { entry: IndexTarget; first: string }>();
  let skipped = 0;
  for (const raw of records) {
    const parsed = SearchStreamRecord.safeParse(raw);
    const entry = parsed.success ? searchEntryOf(parsed.data) : null;
    if (!parsed.success || !entry) {
      skipped++;
      continue;
    }
    const id = JSON.stringify([entry.tenant, entry.sid, entry.w]);
    if (!entries.has(id)) entries.set(id, { entry, first: parsed.data.dynamodb.SequenceNumber });
  }
  const queue = [...entries.values()];
  const failures: string[] = [];
  const worker = async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      try {
        await indexQueued(deps, next.entry);
      } catch (err) {
        failures.push(next.first);
        onError(next.entry, err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(SEARCH_DRAIN_PARALLEL, queue.length) }, worker));
  // Sequence numbers are decimal strings of up to 40 digits: compared by length, then by text.
  failures.sort((a, b) => a.length - b.length || (a < b ? -1 : a > b ? 1 : 0));
  return {
    answer: { batchItemFailures: failures.map((itemIdentifier) => ({ itemIdentifier })) },
    result: { records: records.length, entries: entries.size, skipped, failed: failures.length },
  };
}

/**
 * The indexing function's drain (functions/search.ts): `drainStreamBatch` over the AWS stores (S3
 * segments, the DynamoDB state as `wrapState` makes it) and the index over `runner` (the app role), the
 * schema applied by `migrate` (`migrateAsOwner`) first, made once per container.
 */
export function searchStreamDrainer(o: {
  clients: AwsClients;
  bucket: string;
  table: string;
  /** the app role's runner: indexing reads and writes under row-level security */
  runner: SqlRunner;
  /** the schema's migration as the owner (`migrateAsOwner`), once per container before the first use */
  migrate: () => Promise<void>;
  now?: (() => Date) | undefined;
  /** the state store as the function may use it (functions/state-methods.ts `SEARCH_STATE_METHODS`) */
  wrapState?: ((state: StateStore) => StateStore) | undefined;
}): (
  records: readonly unknown[],
  onError?: (entry: IndexTarget, err: unknown) => void,
) => Promise<{ answer: StreamBatchAnswer; result: SearchDrainResult }> {
  const stores = openAwsStores({
    s3: o.clients.s3,
    bucket: o.bucket,
    dynamo: o.clients.dynamodb,
    table: o.table,
  });
  const deps: IndexerDeps = {
    segments: stores.segments,
    state: o.wrapState ? o.wrapState(stores.state) : stores.state,
    index: indexerSearchIndex(o.runner, o.migrate),
    now: o.now ?? (() => new Date()),
  };
  return (records, onError) => drainStreamBatch(deps, records, onError);
}

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
 * - **The schema** is applied once per container, before the index's first use (`schemaFirst`): its DDL is
 *   idempotent, so containers that start together all apply it, and nothing else (no deploy-time custom
 *   resource) has to reach a cluster that may be paused.
 *
 * Nothing here loads the app, routes or limiter: the indexing function's bundle holds none of them.
 */
import { RDSDataClient } from '@aws-sdk/client-rds-data';
import { z } from 'zod';
import { DEFAULT_SEARCH_TIMEOUT_MS, type SearchDeps } from '../service/search/deps.js';
import { type IndexerDeps, type IndexTarget, indexQueued } from '../service/search/indexer.js';
import { keys } from '../store/dynamo/schema.js';
import type { StateStore } from '../store/index.js';
import { DataApiRunner } from '../store/postgres/data-api-runner.js';
import type { SqlRunner } from '../store/postgres/runner.js';
import { migrateSearchSchema } from '../store/postgres/schema.js';
import { PgSearchIndex } from '../store/postgres/search.js';
import type { EngineQuery, SearchIndex, SessionFacts, WriterBatch } from '../store/search.js';
import { type AwsClients, openAwsStores, type SdkTimeouts, sdkTimeoutOptions } from './aws-stores.js';

// functions/ reach the store through lib/deploy only (test/architecture/rules.ts): a test's `pg` runner is one.
export type { SqlRunner } from '../store/postgres/runner.js';

/** The search index's cluster as the Data API is called with it (functions/config.ts `searchTargetOf`). */
export interface SearchTarget {
  /** the cluster's ARN (`SEARCH_CLUSTER_ARN`) */
  resourceArn: string;
  /** its credentials' secret (`SEARCH_SECRET_ARN`) */
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

/** A `DataApiRunner` on `target` through `client`. */
export function dataApiRunner(client: RDSDataClient, target: SearchTarget): SqlRunner {
  return new DataApiRunner({ client, ...target });
}

/**
 * `PgSearchIndex` over `runner`, whose schema is applied (`migrateSearchSchema`: idempotent DDL through
 * `runner.admin`) before its first use in this container. Two containers starting together may race on a
 * `CREATE … IF NOT EXISTS` (PostgreSQL can answer a duplicate-key error for the loser), so a failed
 * application is tried once more at once, then again at the next use.
 * @param timeoutMs a query's limit (`statement_timeout`); none for the indexer
 */
export function awsSearchIndex(runner: SqlRunner, timeoutMs?: number): SearchIndex {
  const index = new PgSearchIndex({ runner, ...(timeoutMs === undefined ? {} : { timeoutMs }) });
  return schemaFirst(index, () => migrateSearchSchema(runner).catch(() => migrateSearchSchema(runner)));
}

/**
 * The API's search deps (issue 30): the index over the Data API, no local queue (the stream is the queue),
 * and a query's time limit (`statement_timeout`, default `DEFAULT_SEARCH_TIMEOUT_MS`).
 * @param o.runner tests: another runner (`pg` against a local PostgreSQL) instead of the Data API's
 */
export function awsSearchService(o: { runner: SqlRunner; timeoutMs?: number | undefined }): SearchDeps {
  return {
    index: awsSearchIndex(o.runner),
    queue: null,
    timeoutMs: o.timeoutMs ?? DEFAULT_SEARCH_TIMEOUT_MS,
  };
}

/**
 * `index`, each of whose methods first awaits `apply` once (memoized; forgotten when it fails, so the
 * next call tries again). `close` does not apply it.
 */
export function schemaFirst(index: SearchIndex, apply: () => Promise<void>): SearchIndex {
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
      return f(...a);
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
 * segments, the DynamoDB state as `wrapState` makes it) and the index over `runner`, made once per
 * container.
 */
export function searchStreamDrainer(o: {
  clients: AwsClients;
  bucket: string;
  table: string;
  runner: SqlRunner;
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
    index: awsSearchIndex(o.runner),
    now: o.now ?? (() => new Date()),
  };
  return (records, onError) => drainStreamBatch(deps, records, onError);
}

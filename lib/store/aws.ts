/**
 * The stores of the AWS deployment (DESIGN §1): S3 segments and DynamoDB state. Shared by the Lambda entry points and the operator's tooling; clients come in from the caller so
 * that connections are made once per cold start and tests can point them at emulators.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { DynamoRateLimiter } from '../ratelimit/dynamo.js';
import type { RateLimitConfigInput, RateLimiter } from '../ratelimit/interface.js';
import { NoopRateLimiter } from '../ratelimit/noop.js';
import { DynamoStateStore } from './dynamo-state-store.js';
import type { Stores } from './index.js';
import { S3SegmentStore } from './s3-segment-store.js';

export interface AwsStoresOptions {
  /** an S3 client for the bucket's region (path-style for emulators) */
  s3: S3Client;
  /** the segment bucket */
  bucket: string;
  /** see `S3SegmentStore`: when unacknowledged bytes may be replaced (default 5 minutes) */
  staleAfterMs?: number;
  /** a DynamoDB client for the state table's region (the store leaves it open on `close()`) */
  dynamo: DynamoDBClient;
  /** the state table (`dynamo-schema.ts`) */
  table: string;
}

/** The AWS stores: S3 segments and DynamoDB state. */
export function openAwsStores(opts: AwsStoresOptions): Stores {
  return {
    segments: new S3SegmentStore({
      client: opts.s3,
      bucket: opts.bucket,
      ...(opts.staleAfterMs !== undefined ? { staleAfterMs: opts.staleAfterMs } : {}),
    }),
    state: new DynamoStateStore({ tableName: opts.table, client: opts.dynamo }),
  };
}

/** The per-token rate limit of an AWS deployment: counters in the state table (issue 5, ADR 0003). */
export interface AwsRateLimiterOptions {
  /** the client of the state table (left open) */
  dynamo: DynamoDBClient;
  table: string;
  /** requests per minute per token (default 600); 0 turns the limit off */
  perMinute?: number | undefined;
  /** the whole config instead of `perMinute` (e.g. another window) */
  config?: RateLimitConfigInput;
  /** the clock in ms; tests fix it */
  now?: () => number;
}

/**
 * The limiter a Lambda entry passes to `createApp({ rateLimiter })`: a `DynamoRateLimiter` over the
 * state table, or a `NoopRateLimiter` when `perMinute` is 0. API Gateway's stage throttling stays the
 * coarse outer limit in front of it.
 * @example
 * const rateLimiter = openAwsRateLimiter({ dynamo: clients.dynamodb, table: config.TABLE_NAME,
 *   perMinute: config.RATE_LIMIT_PER_MINUTE });
 */
export function openAwsRateLimiter(o: AwsRateLimiterOptions): RateLimiter {
  if (o.perMinute === 0) return new NoopRateLimiter();
  return new DynamoRateLimiter({
    client: o.dynamo,
    tableName: o.table,
    config: o.config ?? (o.perMinute === undefined ? {} : { limit: o.perMinute, window_seconds: 60 }),
    ...(o.now ? { now: o.now } : {}),
  });
}

/** Where the operator's tooling finds a state table (`hansard tenant create --table`). */
export interface DynamoTableOptions {
  table: string;
  /** default: the SDK's (AWS_REGION, the profile) */
  region?: string | undefined;
  /** e.g. DynamoDB Local's `http://127.0.0.1:8000` */
  endpoint?: string | undefined;
}

/**
 * A `DynamoStateStore` with its own client and the caller's credentials (the SDK's default provider
 * chain); `close()` destroys the client.
 */
export function openDynamoStateStore(o: DynamoTableOptions): DynamoStateStore {
  return new DynamoStateStore({
    tableName: o.table,
    clientConfig: {
      ...(o.region ? { region: o.region } : {}),
      ...(o.endpoint ? { endpoint: o.endpoint } : {}),
    },
  });
}

export { DynamoRateLimiter } from '../ratelimit/dynamo.js';
export { DynamoStateStore } from './dynamo-state-store.js';
export { S3SegmentStore } from './s3-segment-store.js';

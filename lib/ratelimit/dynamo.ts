/**
 * `DynamoRateLimiter`: a fixed-window request counter per key in the DynamoDB state table (AWS mode,
 * where many Lambda instances serve one token and only a shared counter can count its requests). One item
 * per key and window (`lib/store/dynamo/schema.ts`): `pk = RL#{root token id}`, `sk = {window start, epoch seconds}`.
 * Each request is one conditional update:
 *
 *   absent ──ADD 1──▶ 1 ──ADD 1──▶ … ──▶ limit ──(condition fails: 429 until the next window's item)
 *
 * `ADD requests :cost` (1 for most requests) on the condition `attribute_not_exists(requests) OR
 * requests <= :limit - :cost`, so DynamoDB itself serializes concurrent requests and at most `limit`
 * requests' worth pass in a window, however many instances ask at once (`:limit` the key's own when it is
 * asked with one: its tenant's, issue 17.3). A refused request does not count. The item's TTL (`expires_at`) is the window's
 * end plus a slack, so old windows clean themselves up. Why a fixed window: `docs/adr/0003-rate-limits.md`.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoAccess } from '../store/dynamo/access.js';
import { keys, TTL_ATTRIBUTE } from '../store/dynamo/schema.js';
import {
  perMinuteLimit,
  RateLimitConfig,
  type RateLimitConfigInput,
  type RateLimitDecision,
  type RateLimiter,
  RateLimiterError,
} from './interface.js';

/**
 * What the limiter sends to the state table (lib/store/dynamo/access.ts): one conditional update of a
 * counter item per request. Every function whose requests are limited needs it in its role.
 */
export const RATE_LIMITER_ACCESS: readonly DynamoAccess[] = [{ action: 'UpdateItem', pk: 'RL#' }];

export interface DynamoRateLimiterOptions {
  /** a client for the state table's region; the limiter never closes it */
  client: DynamoDBClient;
  /** the state table (`lib/store/dynamo/schema.ts`) */
  tableName: string;
  /** see `RateLimitConfig`; `burst` does not apply to a fixed window */
  config?: RateLimitConfigInput;
  /** the clock in ms since the epoch; tests move it by hand */
  now?: () => number;
  /** how long after its window a counter is kept before TTL may remove it, in seconds (default 3600) */
  ttlSlackSeconds?: number;
}

/**
 * @example
 * const limiter = new DynamoRateLimiter({ client, tableName: 'hansard-state', config: { limit: 600 } });
 * const d = await limiter.limit(caller.id);
 */
export class DynamoRateLimiter implements RateLimiter {
  readonly config: RateLimitConfig;
  private readonly doc: DynamoDBDocumentClient;
  private readonly table: string;
  private readonly now: () => number;
  private readonly slack: number;

  /** @throws ZodError for a bad `config` */
  constructor(opts: DynamoRateLimiterOptions) {
    this.config = RateLimitConfig.parse(opts.config ?? {});
    this.doc = DynamoDBDocumentClient.from(opts.client);
    this.table = opts.tableName;
    this.now = opts.now ?? Date.now;
    this.slack = opts.ttlSlackSeconds ?? 3600;
  }

  /**
   * `ADD requests :cost` on the condition that the window has room for all of it.
   * @throws RateLimiterError for any DynamoDB error other than the refusal itself
   */
  async limit(key: string, cost = 1, perMinute?: number): Promise<RateLimitDecision> {
    const { window_seconds } = this.config;
    // A key's own limit (its tenant's, issue 17.3) only changes the condition: same item, same window.
    const limit = perMinuteLimit(this.config, perMinute);
    const n = Math.min(Math.max(1, Math.ceil(cost)), limit);
    const nowSeconds = this.now() / 1000;
    const start = Math.floor(nowSeconds / window_seconds) * window_seconds;
    const end = start + window_seconds;
    try {
      const res = await this.doc.send(
        new UpdateCommand({
          TableName: this.table,
          Key: keys.rateLimit(key, start),
          UpdateExpression: 'ADD #n :cost SET #ttl = if_not_exists(#ttl, :ttl)',
          ConditionExpression: 'attribute_not_exists(#n) OR #n <= :room',
          ExpressionAttributeNames: { '#n': 'requests', '#ttl': TTL_ATTRIBUTE },
          ExpressionAttributeValues: { ':cost': n, ':room': limit - n, ':ttl': end + this.slack },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      const count = (res.Attributes?.requests as number | undefined) ?? limit;
      return {
        allowed: true,
        limit,
        window_seconds,
        remaining: Math.max(0, limit - count),
        retry_after_seconds: 0,
      };
    } catch (err) {
      if ((err as { name?: string } | null)?.name === 'ConditionalCheckFailedException') {
        const retry = Math.max(1, Math.ceil(end - nowSeconds));
        return { allowed: false, limit, window_seconds, remaining: 0, retry_after_seconds: retry };
      }
      throw new RateLimiterError('the rate limiter could not reach its DynamoDB table', { cause: err });
    }
  }
}

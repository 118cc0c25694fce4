/**
 * The usage port (issue 27 items 3–5, DESIGN §6d "derived views are kept as the data arrives, and can be
 * rebuilt", ADR 0008): token and cost counters kept as chunks arrive, so no transcript is re-read to draw
 * the board.
 *
 * - A **writer usage record** per writer (the writer's own item): the fold state after its first `upto`
 *   bytes (lib/log/analyse/usage/fold.ts), and what the writer counted, by bucket. `applyWriterUsage`
 *   replaces it only when the stored `upto` is still `expectUpto`, so two processes never both count a
 *   chunk, and a retry of a counted chunk counts nothing.
 * - **Session counters**: the sum of the session's writers' counters (what a board row shows). On SQLite
 *   they move in the same transaction; on DynamoDB they are ADDed to the session item after the writer's
 *   record is written (soft figures, as the session's byte counts are: ADR 0008); `getSessionUsage` sums
 *   the writer records and is exact.
 * - **Tenant buckets**: counters per (UTC day, agent, person, model), summed over shards on read; on
 *   DynamoDB each bucket item is in one of `USAGE_SHARDS` partitions by the session id, so one busy
 *   session never makes a hot key. `GET /v1/usage` groups them.
 * Every counter is an integer (micro-dollars for money), added as signed deltas: order does not matter.
 */
import { z } from 'zod';

/** Partitions of a tenant's usage buckets on DynamoDB (FNV-1a of the session id, as the board's keys). */
export const USAGE_SHARDS = 8;

/** Most buckets a writer record keeps; past it, new keys fold into `OVERFLOW_KEY` (its item stays small). */
export const WRITER_BUCKETS_MAX = 200;
/** The bucket key part that stands for "more than a writer record keeps". */
export const OVERFLOW_KEY = '(other)';

/** Additive counters (lib/log/analyse/usage/totals.ts `UsageCounters`); all integers. */
export const UsageCountersSchema = z.object({
  input_tokens: z.number().int(),
  output_tokens: z.number().int(),
  cache_read_tokens: z.number().int(),
  cache_write_tokens: z.number().int(),
  cost_micros: z.number().int(),
  reported_cost_micros: z.number().int(),
  records: z.number().int(),
  unpriced_records: z.number().int(),
  partial_records: z.number().int(),
  reported_records: z.number().int(),
  turns: z.number().int(),
  unknown_turns: z.number().int(),
});
export type StoredUsageCounters = z.infer<typeof UsageCountersSchema>;

/** Where a bucket's counters belong: one UTC day, one agent, one person, one model. */
export const UsageBucketKeySchema = z.object({
  /** `YYYY-MM-DD` (UTC), or `unknown` */
  day: z.string().max(10),
  /** the writer's agent; `''` for none */
  agent: z.string().max(200),
  /** the turn's person; `''` for unattributed */
  person: z.string().max(200),
  /** the model; `''` for turns-only counters and unknown models */
  model: z.string().max(200),
});
export type UsageBucketKey = z.infer<typeof UsageBucketKeySchema>;

export const UsageBucketSchema = UsageBucketKeySchema.extend({ counters: UsageCountersSchema });
export type UsageBucket = z.infer<typeof UsageBucketSchema>;

/** A writer's usage record as stored. */
export const WriterUsageSchema = z.object({
  /** bytes of the writer's segment this record has counted (the chunks before this offset) */
  upto: z.number().int().min(0),
  /** the fold state after those bytes (JSON, bounded: fold.ts) */
  state: z.unknown(),
  /** what the writer counted, by bucket (at most `WRITER_BUCKETS_MAX`) */
  buckets: z.array(UsageBucketSchema),
  /** ISO 8601 of the last change */
  updated_at: z.string(),
});
export type WriterUsage = z.infer<typeof WriterUsageSchema>;

/** What one chunk (or a recompute) changes: the writer's new record and the deltas of its buckets. */
export interface UsageChange {
  /** the new record of the writer (its `upto` is past `expectUpto`) */
  next: WriterUsage;
  /** signed deltas of buckets (what `next.buckets` adds to the stored ones); zero buckets left out */
  deltas: UsageBucket[];
}

/** Thrown by `applyWriterUsage` when the stored `upto` is not the expected one; `currentUpto` is what is stored. */
export class UsageConflictError extends Error {
  constructor(readonly currentUpto: number | null) {
    super(`the writer's usage record is at ${currentUpto ?? 'nothing'}, not where this change expected it`);
    this.name = 'UsageConflictError';
  }
}

/** The usage port (see the module comment). */
export interface UsageStore {
  /** The writer's usage record; null when none was written. */
  getWriterUsage(tenant: string, sid: string, w: string): Promise<WriterUsage | null>;
  /**
   * Writes the writer's record and adds `deltas` to the session's counters and the tenant's buckets,
   * on condition that the stored `upto` is `expectUpto` (null: no record yet).
   * @throws UsageConflictError when it is not (nothing written)
   */
  applyWriterUsage(
    tenant: string,
    sid: string,
    w: string,
    expectUpto: number | null,
    change: UsageChange,
  ): Promise<void>;
  /** Every writer record of a session (exact), by writer id. */
  listWriterUsage(tenant: string, sid: string): Promise<Map<string, WriterUsage>>;
  /** The session counters the board shows (DynamoDB: running totals, see above); null when none. */
  getSessionUsageCounters(tenant: string, sid: string): Promise<StoredUsageCounters | null>;
  /** Several sessions' counters at once (a board page), by sid; absent sids had no usage. */
  getSessionUsageCountersMany(
    tenant: string,
    sids: readonly string[],
  ): Promise<Map<string, StoredUsageCounters>>;
  /** The tenant's buckets whose day is in `[fromDay, toDay]` (inclusive, `YYYY-MM-DD`), summed over shards. */
  listUsageBuckets(tenant: string, fromDay: string, toDay: string): Promise<UsageBucket[]>;
}

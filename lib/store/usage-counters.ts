/**
 * Counter arithmetic both usage adapters share (sqlite/usage.ts, dynamo/usage.ts; the port: usage.ts):
 * the counter names in the port's order, zero, sums, and the all-zero test. Here rather than in the port so
 * the port stays the lead's contract; not imported from lib/log/analyse/usage/totals.ts (the same names as
 * `COUNTER_KEYS`) because that module loads the price table, which a store has no use for.
 */
import { type StoredUsageCounters, type UsageBucket, UsageCountersSchema } from './usage.js';

/** The counter names in the order of the port's schema (the same as totals.ts `COUNTER_KEYS`). */
export const USAGE_COUNTERS = Object.keys(UsageCountersSchema.shape) as Array<keyof StoredUsageCounters>;

/** All-zero counters. */
export function zeroUsageCounters(): StoredUsageCounters {
  return Object.fromEntries(USAGE_COUNTERS.map((k) => [k, 0])) as StoredUsageCounters;
}

/** The sum of `list` (a new object). */
export function sumUsageCounters(list: Iterable<StoredUsageCounters>): StoredUsageCounters {
  const sum = zeroUsageCounters();
  for (const c of list) for (const k of USAGE_COUNTERS) sum[k] += c[k];
  return sum;
}

/** True when every counter is zero (a bucket whose deltas were all retracted). */
export function isZeroUsage(c: StoredUsageCounters): boolean {
  return USAGE_COUNTERS.every((k) => c[k] === 0);
}

/** Orders buckets by day, agent, person, model, comparing UTF-8 bytes (SQLite's `ORDER BY` on text). */
export function compareBucketKeys(a: UsageBucket, b: UsageBucket): number {
  for (const k of ['day', 'agent', 'person', 'model'] as const) {
    const c = Buffer.compare(Buffer.from(a[k], 'utf8'), Buffer.from(b[k], 'utf8'));
    if (c !== 0) return c;
  }
  return 0;
}

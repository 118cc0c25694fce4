/**
 * Usage deltas as store buckets (lib/store/usage.ts): the counters of the fold's deltas
 * (lib/log/analyse/usage/fold.ts) summed per (UTC day, agent, person, model), merged into a writer's
 * record, diffed against a stored record (recompute), and grouped back into the answers' totals. One
 * place, so the counters kept on arrival and the ones recomputed are made by the same code.
 */
import {
  addCounters,
  addDelta,
  COUNTER_KEYS,
  totalOf,
  type UsageCounters,
  type UsageDelta,
  type UsageTotal,
  zeroCounters,
} from '../../log/analyse/usage/index.js';
import { cutText } from '../../log/format/text-cut.js';
import {
  OVERFLOW_KEY,
  type UsageBucket,
  type UsageBucketKey,
  WRITER_BUCKETS_MAX,
} from '../../store/index.js';

/** The store key of a bucket, for maps. */
export function bucketId(k: UsageBucketKey): string {
  return JSON.stringify([k.day, k.agent, k.person, k.model]);
}

/** Field bounds of the store's bucket keys (UsageBucketKeySchema): a longer name is cut, never refused. */
const MAX_KEY_PART = 200;
// on a character boundary: half a surrogate pair is not a string DynamoDB or SQLite text can hold
const cut = (s: string | null) => cutText(s ?? '', MAX_KEY_PART);

/** The bucket key of a delta: (day, agent ?? '', person ?? '', model ?? ''). */
export function keyOfDelta(d: UsageDelta): UsageBucketKey {
  return { day: d.day.slice(0, 10), agent: cut(d.agent), person: cut(d.person), model: cut(d.model) };
}

export function isZero(c: UsageCounters): boolean {
  return COUNTER_KEYS.every((k) => c[k] === 0);
}

/**
 * `deltas` summed per bucket and merged into `buckets` (a writer record's, not changed): the new
 * buckets, and the bucket deltas that take the old to the new (zero ones left out). A key the record
 * does not hold while it holds `WRITER_BUCKETS_MAX` already is counted under `OVERFLOW_KEY` as its person
 * and model (day and agent kept), so a record stays small; the deltas use the same keys as the record,
 * so the tenant's buckets always sum to the writers'. Buckets that come to all zero are dropped.
 */
export function mergeDeltas(
  buckets: readonly UsageBucket[],
  deltas: readonly UsageDelta[],
): { buckets: UsageBucket[]; deltas: UsageBucket[] } {
  const held = new Map<string, UsageBucket>();
  for (const b of buckets) held.set(bucketId(b), { ...b, counters: { ...b.counters } });
  const moved = new Map<string, UsageBucket>();
  for (const d of deltas) {
    let key = keyOfDelta(d);
    let id = bucketId(key);
    if (!held.has(id) && held.size >= WRITER_BUCKETS_MAX) {
      key = { ...key, person: OVERFLOW_KEY, model: OVERFLOW_KEY };
      id = bucketId(key);
    }
    let b = held.get(id);
    if (!b) {
      b = { ...key, counters: zeroCounters() };
      held.set(id, b);
    }
    addDelta(b.counters, d);
    let m = moved.get(id);
    if (!m) {
      m = { ...key, counters: zeroCounters() };
      moved.set(id, m);
    }
    addDelta(m.counters, d);
  }
  return {
    buckets: [...held.values()].filter((b) => !isZero(b.counters)),
    deltas: [...moved.values()].filter((b) => !isZero(b.counters)),
  };
}

/** The bucket deltas that take `from` to `to` (recompute): per key `to - from`, zero ones left out. */
export function diffBuckets(from: readonly UsageBucket[], to: readonly UsageBucket[]): UsageBucket[] {
  const out = new Map<string, UsageBucket>();
  const put = (b: UsageBucket, sign: 1 | -1) => {
    const id = bucketId(b);
    let d = out.get(id);
    if (!d) {
      d = { day: b.day, agent: b.agent, person: b.person, model: b.model, counters: zeroCounters() };
      out.set(id, d);
    }
    for (const k of COUNTER_KEYS) d.counters[k] += sign * b.counters[k];
  };
  for (const b of to) put(b, 1);
  for (const b of from) put(b, -1);
  return [...out.values()].filter((b) => !isZero(b.counters));
}

/** What a bucket listing may be grouped by: a bucket's own key parts, or its writer (session answers). */
export type BucketGroup = 'day' | 'agent' | 'person' | 'model' | 'writer';

/** The label of a key part as the fold's groups name it (lib/log/analyse/usage/totals.ts `groupKey`). */
function labelOf(by: BucketGroup, b: UsageBucket, w: string): string {
  switch (by) {
    case 'writer':
      return w;
    case 'day':
      return b.day;
    case 'agent':
      return b.agent || '(unnamed)';
    case 'person':
      return b.person || '(unattributed)';
    case 'model':
      return b.model || '(unknown model)';
  }
}

/**
 * Buckets (each with the writer it came from; '' when none) summed per group, sorted by key. By model,
 * as the fold's `by_model`: only usage records count (a bucket's turn counters belong to no model), and
 * a model-less bucket with no record nor reported cost is no group.
 */
export function groupBuckets(
  buckets: Iterable<{ w: string; bucket: UsageBucket }>,
  by: BucketGroup,
): { key: string; counters: UsageCounters }[] {
  const out = new Map<string, UsageCounters>();
  for (const { w, bucket } of buckets) {
    const c = bucket.counters;
    if (by === 'model' && bucket.model === '' && c.records === 0 && c.reported_records === 0) continue;
    const key = labelOf(by, bucket, w);
    let g = out.get(key);
    if (!g) {
      g = zeroCounters();
      out.set(key, g);
    }
    addCounters(g, by === 'model' ? { ...c, turns: 0, unknown_turns: 0 } : c);
  }
  return [...out]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([key, counters]) => ({ key, counters }));
}

/** The sum of buckets. */
export function sumBuckets(buckets: Iterable<{ counters: UsageCounters }>): UsageCounters {
  const c = zeroCounters();
  for (const b of buckets) addCounters(c, b.counters);
  return c;
}

/** Groups as answered: `{key, …total}`. */
export function groupTotals(
  groups: { key: string; counters: UsageCounters }[],
): (UsageTotal & { key: string })[] {
  return groups.map((g) => ({ key: g.key, ...totalOf(g.counters) }));
}

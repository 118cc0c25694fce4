/**
 * The usage methods of `DynamoStateStore` (issue 27; the port and its rules: ../usage.ts; the items:
 * dynamo/schema.ts).
 *
 * - **The writer's usage item** `T#{tenant}#S#{sid}` / `USAGE#{w}` (beside its writer item, not an
 *   attribute of it: its fold state and buckets would make every advance's conditional write carry them)
 *   is Put on condition of its `upto` (`attribute_not_exists` for none): the only write of the change that
 *   decides anything, so it is alone, and no transaction joins the shared items (ADR 0008).
 * - **Counters outside it**, as the advance's byte counts are (docs/adr/0008-no-hot-keys-on-ingest.md):
 *   after the Put, one UpdateItem ADDs the sum of the deltas to the session's usage item
 *   `T#{tenant}#S#{sid}` / `USAGE`, and one per bucket ADDs its delta to the bucket item in the session's
 *   shard `T#{tenant}#USAGE#{n}`, all at once; ADD commutes, so concurrent writers never conflict. The
 *   session counters are an item of the session's own partition rather than `u_` attributes of the session
 *   item: a usage ADD on the session item would rewrite its GSI copy (the board index projects all) and
 *   add a second write per chunk to the tenant's partition `T#{tenant}`, the one ADR 0008 names as still
 *   hot; the cost, a read per session where a board page shows usage, is what
 *   `getSessionUsageCountersMany` is (eventually consistent Gets, half a read unit each).
 * - **A follow-up that fails for good** (throttled past the retries) is not lost at once: what it could
 *   not add is appended to the writer's usage item (`unapplied`, JSON strings), and the writer's next
 *   `applyWriterUsage` (its next chunk with usage, or a recompute of it that writes) takes them: its Put
 *   replaces the item and returns the old one (`ReturnValues: ALL_OLD`, free), and its follow-up adds
 *   them with its own. That costs nothing when nothing fails. ADR 0008's pending items would: their sweep
 *   is a query per 30 s per process; and a pending item holds fixed counters, where a writer's buckets
 *   are up to 200 items named by data, which its sweep's one transaction (100 items at most) could not
 *   always apply. What it leaves out: a writer with no later apply keeps its session counters and
 *   buckets short (lib/service/usage/recompute.ts skips a writer whose record is already right, so it
 *   does not carry them either), and a process killed between the Put and the follow-up loses those
 *   deltas, as a crash loses an advance's counts. An ADD is not idempotent: one DynamoDB applied whose
 *   reply was lost, then failed, is counted twice. So the session counters and the buckets are soft
 *   figures; the writer records are the truth (`listWriterUsage`, which `getSessionUsage` sums).
 *   `RetryCounts.deferred` counts these deferrals too.
 */
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import {
  type StoredUsageCounters,
  USAGE_SHARDS,
  type UsageBucket,
  UsageBucketSchema,
  type UsageChange,
  UsageConflictError,
  type UsageStore,
  type WriterUsage,
  WriterUsageSchema,
} from '../usage.js';
import {
  compareBucketKeys,
  isZeroUsage,
  sumUsageCounters,
  USAGE_COUNTERS,
  zeroUsageCounters,
} from '../usage-counters.js';
import { errorName, type Item, update } from './items.js';
import type { RetryCounts } from './retry.js';
import { keys, PK, SK, usageBucketPk, WRITER_USAGE_PREFIX } from './schema.js';
import type { DynamoPrimitives } from './tokens.js';

/** Follow-up updates in flight at once for one change (a recompute may carry a writer's 200 buckets). */
const FOLLOW_UP_CONCURRENCY = 16;
/** Session items read at once by `getSessionUsageCountersMany`. */
const READ_CONCURRENCY = 16;

/** What a failed follow-up could not add, kept on the writer's usage item until its next apply. */
interface Leftover {
  /** the session counters' part, null when that update went through */
  session: StoredUsageCounters | null;
  /** the buckets whose update failed */
  buckets: UsageBucket[];
}

const DeltasSchema = z.array(UsageBucketSchema);

/** The `UsageStore` methods on DynamoDB; each answers as `SqliteStateStore`'s does. */
export class DynamoUsage implements UsageStore {
  constructor(
    private readonly x: DynamoPrimitives,
    /** the store's counts; a deferred follow-up adds to `deferred` */
    private readonly counts: RetryCounts,
  ) {}

  async getWriterUsage(tenant: string, sid: string, w: string): Promise<WriterUsage | null> {
    const item = await this.x.get(keys.writerUsage(tenant, sid, w));
    return item ? toWriterUsage(item) : null;
  }

  /**
   * See the port and the module comment: the conditional Put of the writer's usage item, then the ADDs
   * of the deltas (with what earlier applies of this writer left unapplied) to the session's usage item
   * and to the bucket items, awaited; what fails of those for good is kept on the writer's item.
   * @throws UsageConflictError when the stored `upto` is not `expectUpto` (nothing written); the stored
   *   `upto` is the item the refused condition returned
   * @throws ZodError when `change` does not fit the port's schemas (nothing written)
   */
  async applyWriterUsage(
    tenant: string,
    sid: string,
    w: string,
    expectUpto: number | null,
    change: UsageChange,
  ): Promise<void> {
    const next = WriterUsageSchema.parse(change.next);
    const deltas = DeltasSchema.parse(change.deltas);
    const key = keys.writerUsage(tenant, sid, w);
    let old: Item | undefined;
    try {
      const res = await this.x.doc.send(
        new PutCommand({
          TableName: this.x.table,
          Item: {
            ...key,
            tenant,
            sid,
            w,
            upto: next.upto,
            state: JSON.stringify(next.state ?? null),
            buckets: JSON.stringify(next.buckets),
            updated_at: next.updated_at,
          },
          ...(expectUpto === null
            ? { ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': PK } }
            : {
                ConditionExpression: '#u = :u',
                ExpressionAttributeNames: { '#u': 'upto' },
                ExpressionAttributeValues: { ':u': expectUpto },
              }),
          ReturnValues: 'ALL_OLD',
          ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
        }),
      );
      old = res.Attributes;
    } catch (err) {
      if (errorName(err) !== 'ConditionalCheckFailedException') throw err;
      // the SDK gives the refused item as attribute values (`{ N: '123' }`), absent when there is none
      const stored = (err as { Item?: Record<string, { N?: string }> }).Item?.upto?.N;
      throw new UsageConflictError(stored === undefined ? null : Number(stored));
    }
    const carried = leftoversOf(old);
    const session = sumUsageCounters([
      ...deltas.map((d) => d.counters),
      ...carried.flatMap((l) => (l.session ? [l.session] : [])),
    ]);
    const buckets = mergeBuckets([...deltas, ...carried.flatMap((l) => l.buckets)]);
    const touchSession = deltas.length > 0 || carried.some((l) => l.session !== null);
    const left = await this.addCounters(tenant, sid, touchSession ? session : null, buckets);
    if (left.session !== null || left.buckets.length > 0) await this.defer(key, left);
  }

  /** The follow-up: ADDs to the session's usage item and the buckets; gives back what failed for good. */
  private async addCounters(
    tenant: string,
    sid: string,
    session: StoredUsageCounters | null,
    buckets: UsageBucket[],
  ): Promise<Leftover> {
    const jobs: Array<() => Promise<unknown>> = [];
    if (session) {
      jobs.push(() =>
        this.x.doc.send(
          new UpdateCommand({
            TableName: this.x.table,
            Key: keys.sessionUsage(tenant, sid),
            ...update({ set: { tenant, sid }, add: { ...session } }),
          }),
        ),
      );
    }
    for (const b of buckets) {
      jobs.push(() =>
        this.x.doc.send(
          new UpdateCommand({
            TableName: this.x.table,
            Key: keys.usageBucket(tenant, sid, b),
            ...update({
              set: { tenant, day: b.day, agent: b.agent, person: b.person, model: b.model },
              add: { ...b.counters },
            }),
          }),
        ),
      );
    }
    const settled = await pool(jobs, FOLLOW_UP_CONCURRENCY);
    const offset = session ? 1 : 0;
    return {
      session: session && settled[0]!.status === 'rejected' ? session : null,
      buckets: buckets.filter((_, i) => settled[i + offset]!.status === 'rejected'),
    };
  }

  /**
   * Appends `left` to the writer's usage item (`unapplied`), for its next apply to add. Best effort, never
   * throws: if this fails too, the counters stay short of the writer records (see the module comment).
   */
  private async defer(key: { pk: string; sk: string }, left: Leftover): Promise<void> {
    this.counts.deferred += 1;
    await this.x.doc
      .send(
        new UpdateCommand({
          TableName: this.x.table,
          Key: key,
          UpdateExpression: 'SET #un = list_append(if_not_exists(#un, :empty), :left)',
          ConditionExpression: 'attribute_exists(#pk)',
          ExpressionAttributeNames: { '#un': 'unapplied', '#pk': PK },
          ExpressionAttributeValues: { ':empty': [], ':left': [JSON.stringify(left)] },
        }),
      )
      .catch(() => {});
  }

  async listWriterUsage(tenant: string, sid: string): Promise<Map<string, WriterUsage>> {
    const items = await this.x.queryAll({
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :u)',
      ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
      ExpressionAttributeValues: { ':pk': keys.writerUsage(tenant, sid, '').pk, ':u': WRITER_USAGE_PREFIX },
      ConsistentRead: true,
    });
    return new Map(items.map((item) => [item.w as string, toWriterUsage(item)]));
  }

  async getSessionUsageCounters(tenant: string, sid: string): Promise<StoredUsageCounters | null> {
    const item = await this.x.get(keys.sessionUsage(tenant, sid));
    return item ? toCounters(item) : null;
  }

  /** See the port: one eventually consistent Get per session (running totals; a board page's figures). */
  async getSessionUsageCountersMany(
    tenant: string,
    sids: readonly string[],
  ): Promise<Map<string, StoredUsageCounters>> {
    const unique = [...new Set(sids)];
    const settled = await pool(
      unique.map((sid) => () => this.x.get(keys.sessionUsage(tenant, sid), { consistent: false })),
      READ_CONCURRENCY,
    );
    const out = new Map<string, StoredUsageCounters>();
    settled.forEach((r, i) => {
      if (r.status === 'rejected') throw r.reason;
      if (r.value) out.set(unique[i]!, toCounters(r.value));
    });
    return out;
  }

  /**
   * See the port: one query per shard, `sk BETWEEN '{fromDay}#' AND '{toDay}$'` (every key of a day starts
   * with `{day}#`, and `$` is the character after `#`; not `{toDay}#\uffff`, which a name starting with an
   * emoji sorts after in DynamoDB's UTF-8 order), page after page; equal keys summed, all-zero sums left
   * out (as on SQLite), sorted as SQLite answers. Eventually consistent (half the read units of a month of
   * buckets): a chunk counted a moment ago may be missing for a moment, as from the board's listing.
   */
  async listUsageBuckets(tenant: string, fromDay: string, toDay: string): Promise<UsageBucket[]> {
    if (fromDay > toDay) return [];
    const shards = await Promise.all(
      Array.from({ length: USAGE_SHARDS }, (_, n) =>
        this.x.queryAll({
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
          ExpressionAttributeValues: {
            ':pk': usageBucketPk(tenant, n),
            ':from': `${fromDay}#`,
            ':to': `${toDay}$`,
          },
        }),
      ),
    );
    const buckets = shards.flat().map(
      (item): UsageBucket => ({
        day: item.day as string,
        agent: item.agent as string,
        person: item.person as string,
        model: item.model as string,
        counters: toCounters(item),
      }),
    );
    return mergeBuckets(buckets.filter((b) => b.day >= fromDay && b.day <= toDay))
      .filter((b) => !isZeroUsage(b.counters))
      .sort(compareBucketKeys);
  }
}

/** Buckets with equal keys summed into one (first-seen order). */
function mergeBuckets(list: readonly UsageBucket[]): UsageBucket[] {
  const out = new Map<string, UsageBucket>();
  for (const b of list) {
    const id = JSON.stringify([b.day, b.agent, b.person, b.model]);
    const seen = out.get(id);
    if (seen) seen.counters = sumUsageCounters([seen.counters, b.counters]);
    else out.set(id, { ...b, counters: sumUsageCounters([b.counters]) });
  }
  return [...out.values()];
}

/** What earlier applies left on the writer's old item (none when it had no `unapplied`). */
function leftoversOf(old: Item | undefined): Leftover[] {
  const list = old?.unapplied;
  if (!Array.isArray(list)) return [];
  return list.map((s) => JSON.parse(String(s)) as Leftover);
}

/** Runs `jobs` with at most `limit` at once; settles each as `Promise.allSettled` does, in order. */
async function pool<T>(jobs: Array<() => Promise<T>>, limit: number): Promise<PromiseSettledResult<T>[]> {
  const out: PromiseSettledResult<T>[] = new Array(jobs.length);
  let next = 0;
  const worker = async () => {
    while (next < jobs.length) {
      const i = next++;
      try {
        out[i] = { status: 'fulfilled', value: await jobs[i]!() };
      } catch (reason) {
        out[i] = { status: 'rejected', reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, jobs.length) }, worker));
  return out;
}

function toCounters(item: Item): StoredUsageCounters {
  const c = zeroUsageCounters();
  for (const k of USAGE_COUNTERS) c[k] = Number(item[k] ?? 0);
  return c;
}

function toWriterUsage(item: Item): WriterUsage {
  return {
    upto: Number(item.upto),
    state: JSON.parse(item.state as string),
    buckets: JSON.parse(item.buckets as string),
    updated_at: item.updated_at as string,
  };
}

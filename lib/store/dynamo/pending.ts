/**
 * Deferred counts of writer advances (issue 17.1, docs/adr/0008-no-hot-keys-on-ingest.md): when the
 * follow-up of a committed advance (the session's counters and board entry, the tenant's usage shard:
 * `DynamoSessionIndex.countAdvance`) fails for good, what it could not add is kept in a pending item
 * `PENDING#{tenant}` / `{sid}#{w}` (dynamo/schema.ts), its deltas ADDed, so that two deferrals of one
 * writer add up. Any later advance of any writer of the tenant may apply it: a process sweeps the
 * tenant's pending items at its next advance after it deferred one, and every process at most every
 * `SWEEP_INTERVAL_MS` (its first advance of the tenant included). A sweep is one query of the
 * tenant's pending partition, empty nearly always (0.5 RRU on DynamoDB; DynamoDB Local reports a query
 * that finds nothing as 0), and per item found one `TransactWriteItems` that ADDs its deltas and deletes
 * it on condition that no deferral came since (`deferrals`, and `tag`, the id each deferral sets, as
 * read): applied and deleted together or not at all, so neither a crash nor a sweep of another process
 * nor a retry of a transaction that did commit counts it twice. The query is eventually consistent: a
 * copy it reads that is stale (a deferral since, or the item applied, deleted and pending again) has
 * another `tag` than the item and applies nothing.
 */
import { randomUUID } from 'node:crypto';
import {
  type DynamoDBDocumentClient,
  QueryCommand,
  TransactWriteCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { cancellationCodes, type Item, type TransactItem, update } from './items.js';
import type { RetryCounts } from './retry.js';
import { gsiKeys, keys, PK, pendingPk, usageShard } from './schema.js';
import { BOARD_MOVE_MS, type CountDelta } from './sessions.js';
import type { DynamoPrimitives } from './tokens.js';

/** How often a process sweeps a tenant's pending counts when it deferred none itself, ms. */
export const SWEEP_INTERVAL_MS = 30_000;
/** Pending items applied by one sweep at most (sequentially: two of one session touch one item). */
export const SWEEP_PAGE = 10;
/** Tenants whose last sweep a process remembers (the oldest forgotten first: it sweeps again sooner). */
const SWEPT_MAX = 10_000;

/** A pending item as a sweep reads it. */
interface Pending {
  sid: string;
  w: string;
  lines: number;
  bytes: number;
  writers: number;
  usage: number;
  /** how many deferrals were ADDed into it, and the id the latest set: the condition of its deletion */
  deferrals: number;
  tag: string;
  /** the first and the latest deferred advance's time (ISO 8601) */
  first_at: string;
  at: string;
}

/** The pending counts of one store: kept on a failed follow-up, applied by sweeps. */
export class DynamoPendingCounts {
  /** per tenant: when this process last swept it (`Date.now()`, ms) */
  private readonly sweptAt = new Map<string, number>();
  /** tenants this process must sweep at its next advance (it deferred, or a sweep left items behind) */
  private readonly owed = new Set<string>();

  /**
   * @param once the document client without the adapter's retries (the SDK's own only): a sweep runs
   *   inside the request of the chunk that triggers it, so its reads and writes are sent once, and the
   *   first that fails ends it (what is left waits for the next interval), instead of holding the chunk's
   *   acknowledgement through ~5 s of backoff per item at a partition that is throttling
   */
  constructor(
    private readonly x: DynamoPrimitives,
    private readonly counts: RetryCounts,
    private readonly intervalMs = SWEEP_INTERVAL_MS,
    private readonly once: DynamoDBDocumentClient = x.doc,
  ) {}

  /**
   * Keeps what the follow-up of an advance at `at` could not write (`done` says which part failed) on
   * the writer's pending item: one `UpdateItem` of ADDs (`deferrals` + 1) that sets a new `tag`. Best
   * effort, never throws: if this fails too, the listings' counters and the usage stay short of the
   * writers' truth, which `getSession` still reads; `RetryCounts.deferred` counts the deferrals.
   */
  async defer(
    tenant: string,
    sid: string,
    w: string,
    delta: CountDelta,
    done: { session: boolean; usage: boolean },
    at: string,
  ): Promise<void> {
    this.counts.deferred += 1;
    this.owed.add(tenant);
    const add: Record<string, number> = { deferrals: 1 };
    if (!done.session) Object.assign(add, { lines: delta.lines, bytes: delta.bytes, writers: delta.writers });
    if (!done.usage) add.usage = delta.usage;
    const parts = update({
      set: { tenant, sid, w, at, tag: randomUUID() },
      setIfAbsent: { first_at: at },
      add,
    });
    await this.x.doc
      .send(new UpdateCommand({ TableName: this.x.table, Key: keys.pending(tenant, sid, w), ...parts }))
      .catch(() => {});
  }

  /**
   * After an advance of `tenant` (its follow-up done): sweeps the tenant's pending counts when this
   * process owes it a sweep, or has not swept it for `intervalMs`; not right after a deferral of its
   * own, which would meet the throttling that caused it. Never throws (a sweep that fails is tried at
   * the next interval).
   */
  async afterAdvance(tenant: string, deferred: boolean): Promise<void> {
    if (deferred) return;
    const now = Date.now();
    const last = this.sweptAt.get(tenant);
    if (!this.owed.has(tenant) && last !== undefined && now - last < this.intervalMs) return;
    this.owed.delete(tenant);
    this.sweptAt.delete(tenant);
    this.sweptAt.set(tenant, now);
    if (this.sweptAt.size > SWEPT_MAX) this.sweptAt.delete(this.sweptAt.keys().next().value!);
    await this.sweep(tenant).catch(() => {});
  }

  /**
   * One eventually consistent query of the tenant's pending partition (`SWEEP_PAGE` items at most; 0.5
   * RRU when empty), then each item found applied (`apply`), each request sent once (`once`); a full page
   * leaves the rest owed to the next advance, and a transaction that fails other than by its condition
   * (throttled, …) ends the sweep, the rest left for the next interval.
   * @returns how many pending items were found and how many of them this sweep applied
   * @throws the query's error (throttled past its retries, …)
   */
  async sweep(tenant: string): Promise<{ found: number; applied: number }> {
    const res = await this.once.send(
      new QueryCommand({
        TableName: this.x.table,
        KeyConditionExpression: '#pk = :pk',
        ExpressionAttributeNames: { '#pk': PK },
        ExpressionAttributeValues: { ':pk': pendingPk(tenant) },
        Limit: SWEEP_PAGE,
      }),
    );
    if (res.LastEvaluatedKey) this.owed.add(tenant);
    const items = (res.Items ?? []).map(toPending);
    let applied = 0;
    for (const p of items) {
      const outcome = await this.apply(tenant, p);
      if (outcome === 'failed') {
        this.owed.delete(tenant); // not at the next advance: at the next interval
        break;
      }
      if (outcome === 'applied') applied += 1;
    }
    return { found: items.length, applied };
  }

  /**
   * One `TransactWriteItems`: ADD the session deltas to the session item (made if absent, with its board
   * keys at the deferred advance's time, as `countAdvance` makes it), ADD the usage delta to the
   * session's usage shard, and Delete the pending item on condition `deferrals` and `tag` are what was
   * read. A deferral since, a sweep of another process first, a committed try sent again, or a stale copy
   * read fails that condition and writes nothing. Then, best effort, the board move the deferred advance missed.
   * @returns `applied`; `stale` when its condition failed (applied by another, or deferred again since:
   *   left for a later sweep); `failed` for any other error (throttled, …: left for a later sweep)
   */
  private async apply(tenant: string, p: Pending): Promise<'applied' | 'stale' | 'failed'> {
    const table = this.x.table;
    const session = p.lines !== 0 || p.bytes !== 0 || p.writers !== 0;
    const tx: TransactItem[] = [];
    if (session) {
      const counters = update({
        setIfAbsent: {
          tenant,
          sid: p.sid,
          created_at: p.first_at,
          updated_at: p.at,
          ...gsiKeys.board(tenant, p.at, p.sid),
        },
        add: { writers: p.writers, lines: p.lines, bytes: p.bytes },
      });
      tx.push({ Update: { TableName: table, Key: keys.session(tenant, p.sid), ...counters } });
    }
    if (p.usage !== 0) {
      const usage = update({ set: { tenant }, add: { bytes: p.usage } });
      tx.push({ Update: { TableName: table, Key: keys.usage(tenant, usageShard(p.sid)), ...usage } });
    }
    tx.push({
      Delete: {
        TableName: table,
        Key: keys.pending(tenant, p.sid, p.w),
        ConditionExpression: '#d = :d AND #t = :t',
        ExpressionAttributeNames: { '#d': 'deferrals', '#t': 'tag' },
        ExpressionAttributeValues: { ':d': p.deferrals, ':t': p.tag },
      },
    });
    try {
      await this.once.send(new TransactWriteCommand({ TransactItems: tx }));
    } catch (err) {
      return cancellationCodes(err).includes('ConditionalCheckFailed') ? 'stale' : 'failed';
    }
    if (session) await this.moveOnBoard(tenant, p.sid, p.at);
    return 'applied';
  }

  /**
   * The board move of the deferred advance (SET `updated_at` and the board keys to `at`) on the same
   * condition as `countAdvance`'s: the stored `updated_at` at least `BOARD_MOVE_MS` older. A session moved
   * since by a later chunk stays where it is.
   */
  private async moveOnBoard(tenant: string, sid: string, at: string): Promise<void> {
    const threshold = new Date(Date.parse(at) - BOARD_MOVE_MS).toISOString();
    const move = update(
      { set: { updated_at: at, ...gsiKeys.board(tenant, at, sid) } },
      (x) => `attribute_exists(${x.n(PK)}) AND ${x.n('updated_at')} <= ${x.v(threshold)}`,
    );
    // best effort: a refused condition (moved since) is the common answer; a failure leaves it where
    // the counts put it, as a chunk's own follow-up does
    await this.once
      .send(new UpdateCommand({ TableName: this.x.table, Key: keys.session(tenant, sid), ...move }))
      .catch(() => {});
  }
}

function toPending(item: Item): Pending {
  const n = (v: unknown) => (typeof v === 'number' ? v : 0);
  return {
    sid: item.sid as string,
    w: item.w as string,
    lines: n(item.lines),
    bytes: n(item.bytes),
    writers: n(item.writers),
    usage: n(item.usage),
    deferrals: n(item.deferrals),
    tag: typeof item.tag === 'string' ? item.tag : '',
    first_at: item.first_at as string,
    at: item.at as string,
  };
}

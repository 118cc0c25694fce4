/**
 * The session index and the board of `DynamoStateStore` (dynamo/schema.ts; issue 17.1 and 17.6,
 * docs/adr/0008-no-hot-keys-on-ingest.md): session items `T#{tenant}` / `S#{sid}` on their board shard
 * `T#{tenant}#BOARD#{n}` of gsi1, and the tenant's usage shards `T#{tenant}` / `USAGE#{n}`.
 *
 * What is authoritative: the writer items. A writer advance's transaction touches only the writer's own
 * items; the session's counters (writers, lines, bytes), its board position and the tenant's usage are
 * ADDed after it commits (`countAdvance`: ADD is commutative, so concurrent writers never conflict), and
 * are what listings show. Reads that need exact figures compute them from the writers (`getSession`).
 * A session moves on the board at most every `BOARD_MOVE_MS`, so a listing's `updated_at` may be up to
 * that much older than the session's last chunk (the contract says so); `getSession` is exact.
 */
import { QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { decodeCursor, encodeCursor } from '../keys.js';
import type { BoardCopy, Page, SessionRecord, SessionSummary } from '../sessions.js';
import type { TenantUsage } from '../tenants.js';
import type { WriterRecord } from '../writers.js';
import { errorName, type Item, toSession, toSessionSummary, update } from './items.js';
import {
  BOARD_SHARDS,
  boardPartitions,
  GSI1,
  GSI1_PK,
  GSI1_SK,
  gsiKeys,
  keys,
  PK,
  SK,
  USAGE_PREFIX,
  usageShard,
} from './schema.js';
import type { DynamoPrimitives } from './tokens.js';

/** A session moves on the board (its `updated_at` and `gsi1sk`) at most this often, ms. */
export const BOARD_MOVE_MS = 5_000;
/** How long `tenantUsage` answers from this process's figure before it reads the shards again, ms. */
export const USAGE_MAX_AGE_MS = 30_000;
/** How long the items of a board listing stand in for a read of the same session items (`boardCopies`). */
const LISTED_KEPT_MS = 5_000;
const LISTED_MAX = 2_000;

/** What one committed advance adds to its session's counters and its tenant's usage. */
export interface CountDelta {
  lines: number;
  bytes: number;
  /** 1 for a writer's first advance */
  writers: number;
  /** the tenant's usage (the same as `bytes`, apart when a writer item's `uncounted_*` of before is carried) */
  usage: number;
}

/** The session index methods; `listWriters` is the writers' (dynamo/writers.ts). */
export class DynamoSessionIndex {
  /** per `{tenant}/{sid}`: the newest board `updated_at` this process knows is stored */
  private readonly boardAt = new Map<string, string>();
  /** per tenant: the usage as last read, plus what this process added since, and when it was read */
  private readonly usage = new Map<string, { bytes: number; readAt: number }>();
  /** session items of recent listings, by `{tenant}/{sid}` (insertion order: oldest first) */
  private readonly listed = new Map<string, { item: Item; at: number }>();

  constructor(
    private readonly x: DynamoPrimitives,
    private readonly listWriters: (tenant: string, sid: string) => Promise<WriterRecord[]>,
    private readonly usageMaxAgeMs = USAGE_MAX_AGE_MS,
  ) {}

  // ---- the follow-up of an advance

  /**
   * Adds a committed advance to its session item (ADD writers, lines, bytes; the item made if absent) and
   * to the tenant's usage shard of the session (ADD bytes), the two at once, each tried again on
   * throttling. The session moves on the board (SET `updated_at` and its board keys to `at`) only when
   * its stored `updated_at` is at least `BOARD_MOVE_MS` older than `at`: a condition of the same update, tried
   * only when this process does not know of a newer move, so most chunks send one unconditional update.
   * @returns which of the two succeeded (the caller keeps the counts of a failed one pending:
   *   dynamo/pending.ts)
   */
  async countAdvance(
    tenant: string,
    sid: string,
    delta: CountDelta,
    at: string,
  ): Promise<{ session: boolean; usage: boolean }> {
    this.noteUsage(tenant, delta.usage);
    const [session, usage] = await Promise.allSettled([
      this.countSession(tenant, sid, delta, at),
      delta.usage === 0
        ? Promise.resolve()
        : this.x.doc.send(
            new UpdateCommand({
              TableName: this.x.table,
              Key: keys.usage(tenant, usageShard(sid)),
              ...update({ set: { tenant }, add: { bytes: delta.usage } }),
            }),
          ),
    ]);
    return { session: session.status === 'fulfilled', usage: usage.status === 'fulfilled' };
  }

  private async countSession(tenant: string, sid: string, delta: CountDelta, at: string): Promise<void> {
    const key = keys.session(tenant, sid);
    const id = `${tenant}/${sid}`;
    const add = { writers: delta.writers, lines: delta.lines, bytes: delta.bytes };
    const known = this.boardAt.get(id);
    if (known === undefined || Date.parse(at) - Date.parse(known) >= BOARD_MOVE_MS) {
      const threshold = new Date(Date.parse(at) - BOARD_MOVE_MS).toISOString();
      const move = update(
        {
          set: { updated_at: at, ...gsiKeys.board(tenant, at, sid) },
          setIfAbsent: { tenant, sid, created_at: at },
          add,
        },
        (x) => `attribute_not_exists(${x.n('updated_at')}) OR ${x.n('updated_at')} <= ${x.v(threshold)}`,
      );
      try {
        await this.x.doc.send(
          new UpdateCommand({
            TableName: this.x.table,
            Key: key,
            ...move,
            ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
          }),
        );
        this.remember(id, at);
        return;
      } catch (err) {
        if (errorName(err) !== 'ConditionalCheckFailedException') throw err;
        // Moved by another process within the interval: what it stored says when to try next.
        // (the SDK gives the old item as attribute values: `{ S: '…' }`)
        const old = (err as { Item?: Record<string, { S?: string }> }).Item;
        const stored = old?.updated_at?.S;
        if (stored) this.remember(id, stored);
      }
    }
    const plain = update({
      setIfAbsent: { tenant, sid, created_at: at, updated_at: at, ...gsiKeys.board(tenant, at, sid) },
      add,
    });
    const res = await this.x.doc.send(
      new UpdateCommand({ TableName: this.x.table, Key: key, ...plain, ReturnValues: 'UPDATED_NEW' }),
    );
    const stored = res.Attributes?.updated_at;
    if (typeof stored === 'string') this.remember(id, stored);
  }

  private remember(id: string, updatedAt: string): void {
    const known = this.boardAt.get(id);
    if (known !== undefined && known >= updatedAt) return;
    this.boardAt.delete(id);
    this.boardAt.set(id, updatedAt);
    if (this.boardAt.size > 10_000) this.boardAt.delete(this.boardAt.keys().next().value!);
  }

  // ---- usage: `T#{tenant}` / `USAGE#{shard}`

  /**
   * The tenant's usage for the (soft) quota check: the sum of its usage shards (one strongly consistent
   * query of 8 small items), read again when this process's figure is older than `usageMaxAgeMs`; in
   * between, the bytes this process's own advances added are added to it. So one process sees its own
   * chunks at once and another's within `usageMaxAgeMs` (plus the moment a follow-up takes).
   */
  async tenantUsage(tenant: string): Promise<TenantUsage> {
    const known = this.usage.get(tenant);
    if (known && Date.now() - known.readAt < this.usageMaxAgeMs) return { bytes: known.bytes };
    const items = await this.x.queryAll({
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :usage)',
      ExpressionAttributeNames: { '#pk': PK, '#sk': SK, '#b': 'bytes' },
      ExpressionAttributeValues: { ':pk': `T#${tenant}`, ':usage': USAGE_PREFIX },
      ProjectionExpression: '#b',
      ConsistentRead: true,
    });
    const bytes = items.reduce((sum, item) => sum + ((item.bytes as number | undefined) ?? 0), 0);
    this.usage.set(tenant, { bytes, readAt: Date.now() });
    return { bytes };
  }

  private noteUsage(tenant: string, bytes: number): void {
    const known = this.usage.get(tenant);
    if (known) known.bytes += bytes;
  }

  // ---- sessions: `T#{tenant}` / `S#{sid}`

  /**
   * The session with exact figures: its item (created_at, and the `updated_at` of reports and work) and
   * its writers (one query, dynamo/writers.ts), which are the truth of `writers`, `lines`, `bytes` and
   * the last chunk's time; the item's own counters may lag them by a follow-up in flight or pending.
   * A session whose writers exist without an item yet (its follow-up pending) is answered from them.
   */
  async getSession(tenant: string, sid: string): Promise<SessionRecord | null> {
    const [item, writers] = await Promise.all([
      this.x.get(keys.session(tenant, sid)),
      this.listWriters(tenant, sid),
    ]);
    if (!item && writers.length === 0) return null;
    const times = writers.map((w) => w.updated_at);
    const created = writers.map((w) => w.created_at);
    const stored = item ? toSession(item) : null;
    if (stored) {
      times.push(stored.updated_at);
      created.push(stored.created_at);
    }
    return {
      tenant,
      sid,
      // ISO 8601 instants of one length: their order is their text's
      created_at: created.sort()[0]!,
      updated_at: times.sort().at(-1)!,
      writers: writers.length,
      lines: writers.reduce((n, w) => n + w.lines, 0),
      bytes: writers.reduce((n, w) => n + w.length, 0),
    };
  }

  /**
   * The session items of the tenant's partition counted by a `Select: COUNT` query over the `S#` sort
   * keys (ADR 4): nothing is returned but the count. It reads the items: an eventually consistent query
   * costs 0.5 RRU per 4 KiB, about 1 RRU per 8-30 sessions (docs/deploy.md, "What a board page reads").
   * With `atMost`, each page's `Limit` stops the query once `atMost + 1` items are counted: the read is
   * bounded by `atMost`, not by the tenant.
   */
  async countSessions(tenant: string, atMost = Number.POSITIVE_INFINITY): Promise<number> {
    let count = 0;
    let start: Item | undefined;
    do {
      const left = atMost + 1 - count;
      const res = await this.x.doc.send(
        new QueryCommand({
          TableName: this.x.table,
          KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :s)',
          ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
          ExpressionAttributeValues: { ':pk': `T#${tenant}`, ':s': 'S#' },
          Select: 'COUNT',
          ExclusiveStartKey: start,
          ...(Number.isFinite(left) ? { Limit: left } : {}),
        }),
      );
      count += res.Count ?? 0;
      start = res.LastEvaluatedKey;
    } while (start && count <= atMost);
    return count;
  }

  /**
   * Newest board `updated_at` first (ties: sid descending), `limit` per page, merged from the tenant's
   * `BOARD_SHARDS` board partitions and the one from before them: each is read newest first from just
   * below the cursor's position (`gsi1sk < {updated_at}#{sid}`), a small page at a time, and a partition
   * is read further only while its next session may belong on this page. About `limit` + 9 ×
   * (`limit`/8 + 2) items are read. The cursor names the last session of the page, as SQLite's does.
   * @throws InvalidCursorError for a cursor this store did not make
   */
  async listSessions(tenant: string, limit: number, cursor: string | null): Promise<Page<SessionRecord>> {
    const items = await this.listBoard(tenant, limit, cursor);
    const page = items.slice(0, limit);
    const last = page.at(-1);
    return {
      items: page.map(toSession),
      next: items.length > limit && last ? encodeCursor(...boardPosition(last)) : null,
    };
  }

  private async listBoard(tenant: string, limit: number, cursor: string | null): Promise<Item[]> {
    const below = cursor === null ? null : boardPosition(decodeCursor(cursor));
    const first = Math.ceil((limit + 1) / BOARD_SHARDS) + 2;
    const shards = boardPartitions(tenant).map((pk) => new ShardReader(this.x, pk, below, first));
    const out: Item[] = [];
    const seen = new Set<string>();
    while (out.length <= limit) {
      await Promise.all(shards.filter((s) => s.wantsMore()).map((s) => s.read()));
      let best: ShardReader | null = null;
      for (const s of shards) {
        const head = s.head();
        if (head && (!best || String(head[GSI1_SK]) > String(best.head()![GSI1_SK]))) best = s;
      }
      if (!best) break;
      const item = best.take();
      // An item moved between partitions while they were read could show twice.
      if (seen.has(item.sid as string)) continue;
      seen.add(item.sid as string);
      out.push(item);
    }
    const now = Date.now();
    for (const item of out) this.keepListed(`${tenant}/${item.sid as string}`, item, now);
    return out;
  }

  private keepListed(id: string, item: Item, at: number): void {
    this.listed.delete(id);
    this.listed.set(id, { item, at });
    if (this.listed.size > LISTED_MAX) this.listed.delete(this.listed.keys().next().value!);
  }

  /**
   * `StateStore.boardCopies` (issue 17.6): the session items of `sids` as the board shows them (the
   * copy of the latest report, the agents, the counters). A session listed by this store within the last
   * 5 s is answered from that listing's item (the board lists, then asks: no second read); any other is
   * read by an eventually consistent GetItem (0.5 RRU under 4 KiB). Sessions without an item are left out.
   */
  async boardCopies(tenant: string, sids: readonly string[]): Promise<Map<string, BoardCopy>> {
    const now = Date.now();
    const out = new Map<string, BoardCopy>();
    await Promise.all(
      sids.map(async (sid) => {
        const kept = this.listed.get(`${tenant}/${sid}`);
        const item =
          kept && now - kept.at < LISTED_KEPT_MS
            ? kept.item
            : await this.x.get(keys.session(tenant, sid), { consistent: false });
        if (item) out.set(sid, boardCopyOf(item));
      }),
    );
    return out;
  }
}

/** A session item as the board's copy: its summary and the status version the copy was taken from. */
function boardCopyOf(item: Item): BoardCopy {
  const summary: SessionSummary = toSessionSummary(item);
  const version = item.status_version;
  return { ...summary, status_version: typeof version === 'number' ? version : null };
}

/** The board position of an item, or of a cursor's `[updated_at, sid]`: its `gsi1sk`. */
function boardPosition(of: Item | [string, string]): [string, string] {
  if (Array.isArray(of)) return of;
  const sk = String(of[GSI1_SK]);
  const at = sk.lastIndexOf('#');
  return [sk.slice(0, at), sk.slice(at + 1)];
}

/** One board partition read newest first from below a position, a page at a time (pages double). */
class ShardReader {
  private readonly buffer: Item[] = [];
  private start: Item | undefined;
  private done = false;

  constructor(
    private readonly x: DynamoPrimitives,
    private readonly pk: string,
    private readonly below: [string, string] | null,
    private pageSize: number,
  ) {}

  wantsMore(): boolean {
    return this.buffer.length === 0 && !this.done;
  }

  head(): Item | undefined {
    return this.buffer[0];
  }

  take(): Item {
    return this.buffer.shift()!;
  }

  /** Reads pages until one holds a session item or the partition ends (work items may share it). */
  async read(): Promise<void> {
    while (this.buffer.length === 0 && !this.done) {
      const res = await this.x.doc.send(
        new QueryCommand({
          TableName: this.x.table,
          IndexName: GSI1,
          KeyConditionExpression: this.below ? '#g = :g AND #gs < :below' : '#g = :g',
          FilterExpression: 'begins_with(#sk, :s)',
          ExpressionAttributeNames: {
            '#g': GSI1_PK,
            '#sk': SK,
            ...(this.below ? { '#gs': GSI1_SK } : {}),
          },
          ExpressionAttributeValues: {
            ':g': this.pk,
            ':s': 'S#',
            ...(this.below ? { ':below': `${this.below[0]}#${this.below[1]}` } : {}),
          },
          ScanIndexForward: false,
          Limit: this.pageSize,
          ExclusiveStartKey: this.start,
        }),
      );
      this.buffer.push(...(res.Items ?? []));
      this.start = res.LastEvaluatedKey;
      this.done = this.start === undefined;
      this.pageSize = Math.min(this.pageSize * 2, 1000);
    }
  }
}

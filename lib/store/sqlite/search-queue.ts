/**
 * The local indexing queue of search (issue 30 item 5, DESIGN §6d "one outbox pattern"): table
 * `search_queue` of `SqliteStateStore` (schema in sqlite/schema.ts), one row per (tenant, sid, w) with
 * the `since` of its first change not yet indexed and a `version` raised by every change. A writer advance
 * (sqlite/advance.ts) queues `(tenant, sid, w)`; a status or work write (sqlite/status-work.ts) and a
 * session summary merge that changed the title (sqlite/summary.ts) queue the session's facts
 * `(tenant, sid, '')`, each in the change's own transaction through `queueSearch`, so no accepted change
 * escapes indexing. The server drains it (lib/service/search/): `SqliteSearchQueue` is the `SearchQueue`
 * port (lib/store/search.ts) the store delegates to. A file of its own, as sqlite/outbox.ts is, so that
 * those modules depend on it and not on one another.
 */
import type { SearchQueue, SearchQueueEntry } from '../search.js';

/** The statement cache it writes through: the store's (`SqlitePrimitives.q`, `AdvancePrimitives.q`). */
export interface SearchQueueStatements {
  q(sql: string): { run(...params: unknown[]): unknown };
}

/** What the queue's methods borrow of the store (its `SqlitePrimitives`, sqlite/status-work.ts). */
interface QueuePrimitives {
  transaction<T>(fn: () => T): T;
  q(sql: string): {
    run(...params: unknown[]): unknown;
    get(...params: unknown[]): unknown;
    all(...params: unknown[]): unknown[];
  };
}

/**
 * `since` as the queue keeps it: ISO 8601 in UTC with milliseconds (`Date#toISOString`), so that the
 * oldest is the least as text whatever offset or precision the change's time was written with; a text
 * that is not a date is kept as given.
 */
function normalSince(since: string): string {
  const ms = Date.parse(since);
  return Number.isNaN(ms) ? since : new Date(ms).toISOString();
}

/**
 * Queues `entry`: a new row at version 1, or the existing row's version raised by one with the older of
 * the two `since` kept (the lag is measured from the first change not yet indexed). Inside the caller's
 * transaction: the entry goes with the change, or not at all.
 */
export function queueSearch(
  x: SearchQueueStatements,
  entry: { tenant: string; sid: string; w: string; since: string },
): void {
  x.q(
    `INSERT INTO search_queue (tenant, sid, w, since, version) VALUES (?, ?, ?, ?, 1)
       ON CONFLICT (tenant, sid, w) DO UPDATE SET since = MIN(since, excluded.since), version = version + 1`,
  ).run(entry.tenant, entry.sid, entry.w, normalSince(entry.since));
}

/** `SearchQueue` over the store's database (the store delegates to it). */
export class SqliteSearchQueue implements SearchQueue {
  constructor(private readonly x: QueuePrimitives) {}

  /**
   * Up to `max` entries, the tenants taking turns (each one's oldest first, then each one's next), oldest
   * `since` first within a turn (then by tenant, sid, w: a stable order).
   */
  async takeSearchQueue(max: number): Promise<SearchQueueEntry[]> {
    // Tenants take turns: each tenant's oldest entry, then each one's second oldest, and so on, so one
    // tenant's whole reindex (thousands of entries queued at once) never holds another's new chunks back.
    return this.x
      .q(
        `SELECT tenant, sid, w, since, version FROM (
           SELECT tenant, sid, w, since, version,
             ROW_NUMBER() OVER (PARTITION BY tenant ORDER BY since, sid, w) AS turn
           FROM search_queue)
         ORDER BY turn, since, tenant, sid, w LIMIT ?`,
      )
      .all(Math.max(0, Math.floor(max))) as SearchQueueEntry[];
  }

  /** Deletes the entry only if its version is still `entry.version` (a later change keeps it queued). */
  async doneSearchQueue(entry: SearchQueueEntry): Promise<void> {
    this.x
      .q('DELETE FROM search_queue WHERE tenant = ? AND sid = ? AND w = ? AND version = ?')
      .run(entry.tenant, entry.sid, entry.w, entry.version);
  }

  async enqueueSearch(entry: { tenant: string; sid: string; w: string; since: string }): Promise<void> {
    this.x.transaction(() => queueSearch(this.x, entry));
  }

  async searchQueueOf(tenant: string): Promise<{ entries: number; oldest: string | null }> {
    const row = this.x
      .q('SELECT COUNT(*) AS entries, MIN(since) AS oldest FROM search_queue WHERE tenant = ?')
      .get(tenant) as { entries: number; oldest: string | null };
    return { entries: row.entries, oldest: row.oldest };
  }
}

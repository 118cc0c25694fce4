/**
 * The status, work item and claimed key methods of `SqliteStateStore` (tables `status_records` (and the
 * legacy `status`), `work_items`, `claimed_keys`; the schema is the store's): whole records written in a
 * transaction on condition of their `version`, each moving the session index forward. Split from the
 * store so that each file stays readable, as the DynamoDB adapter's dynamo/status-work.ts is. Each status
 * or work write queues the session's search facts (sqlite/search-queue.ts, issue 30 item 5) with it.
 */
import type { OutboxEvent } from '../alerts.js';
import { StateConflictError } from '../errors.js';
import { statusSummaryOf } from '../session-summary.js';
import type { StatusRecord } from '../status.js';
import { decodeStatus, encodeStatus, legacyStatus } from '../status-record.js';
import type { WorkItem } from '../work.js';
import { insertOutbox } from './outbox.js';
import { queueSearch } from './search-queue.js';

type Row = Record<string, unknown>;

/** A prepared statement, as much of better-sqlite3's as these methods use (only the store imports it). */
export interface SqliteStatement {
  run(...params: unknown[]): unknown;
  get(...params: unknown[]): unknown;
  all(...params: unknown[]): unknown[];
}

/** What the methods borrow of the store: a transaction of its database and its prepared statements. */
export interface SqlitePrimitives {
  /** runs `fn` in one transaction (rolled back if it throws) and gives its value */
  transaction<T>(fn: () => T): T;
  q(sql: string): SqliteStatement;
}

/** The `StateStore` status, work and key-claim methods on SQLite. */
export class SqliteStatusWorkItems {
  constructor(private readonly x: SqlitePrimitives) {}

  /**
   * A report or a work item is activity: the session's index entry is made (the session shows on the board
   * before any segment arrives) and its `updated_at` only moves forward. Inside the caller's transaction.
   */
  private touchSession(tenant: string, sid: string, at: string): void {
    this.x
      .q(
        `INSERT INTO sessions (tenant, sid, created_at, updated_at, writers, lines, bytes) VALUES (?, ?, ?, ?, 0, 0, 0)
           ON CONFLICT (tenant, sid) DO UPDATE SET updated_at = MAX(updated_at, excluded.updated_at)`,
      )
      .run(tenant, sid, at, at);
  }

  /**
   * In one transaction: the version check, the record (a status of an earlier hansard, in table `status`,
   * goes: it is version 0 of this one), the session index with its status summary, and the change's alert
   * events (`outbox`, sqlite/alerts.ts), and the session's search facts entry.
   */
  async putStatus(s: StatusRecord, outbox?: OutboxEvent[]): Promise<void> {
    const at = s.reports.at(-1)!.reported_at;
    const sum = statusSummaryOf(s);
    this.x.transaction(() => {
      const row = this.x
        .q('SELECT version FROM status_records WHERE tenant = ? AND sid = ?')
        .get(s.tenant, s.sid) as { version: number } | undefined;
      if ((row?.version ?? 0) !== s.version - 1) {
        throw new StateConflictError(
          `the status of ${s.sid} changed since it was read (version ${row?.version ?? 0})`,
        );
      }
      this.x
        .q(
          `INSERT INTO status_records (tenant, sid, record, version) VALUES (?, ?, ?, ?)
           ON CONFLICT (tenant, sid) DO UPDATE SET record = excluded.record, version = excluded.version`,
        )
        .run(s.tenant, s.sid, encodeStatus(s), s.version);
      this.x.q('DELETE FROM status WHERE tenant = ? AND sid = ?').run(s.tenant, s.sid);
      this.touchSession(s.tenant, s.sid, at);
      this.x
        .q(
          `UPDATE sessions SET state = ?, state_since = ?, note = ?, reported_at = ?,
             first_note = COALESCE(first_note, NULLIF(?, '')) WHERE tenant = ? AND sid = ?`,
        )
        .run(sum.state, sum.state_since, sum.note, sum.reported_at, sum.note, s.tenant, s.sid);
      insertOutbox(this.x, outbox);
      queueSearch(this.x, { tenant: s.tenant, sid: s.sid, w: '', since: at });
    });
  }

  async getStatus(tenant: string, sid: string): Promise<StatusRecord | null> {
    const rec = this.x
      .q('SELECT record, version FROM status_records WHERE tenant = ? AND sid = ?')
      .get(tenant, sid) as { record: string; version: number } | undefined;
    if (rec) return decodeStatus(tenant, sid, rec.record, rec.version);
    const row = this.x.q('SELECT * FROM status WHERE tenant = ? AND sid = ?').get(tenant, sid) as
      | Row
      | undefined;
    if (!row) return null;
    return legacyStatus(tenant, sid, {
      state: row.state as string,
      note: row.note as string,
      events: JSON.parse(row.events as string) as unknown[],
      reported_by: row.reported_by as string,
      reported_at: row.reported_at as string,
    });
  }

  /**
   * In one transaction: the version check, the item, the session index, the change's alert events and
   * the session's search facts entry.
   */
  async putWork(item: WorkItem, outbox?: OutboxEvent[]): Promise<void> {
    this.x.transaction(() => {
      const row = this.x
        .q('SELECT version FROM work_items WHERE tenant = ? AND id = ?')
        .get(item.tenant, item.id) as { version: number } | undefined;
      if ((row?.version ?? 0) !== item.version - 1) {
        throw new StateConflictError(
          `work ${item.id} changed since it was read (version ${row?.version ?? 0})`,
        );
      }
      this.x
        .q(
          `INSERT INTO work_items (tenant, id, sid, item, version) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (tenant, id) DO UPDATE SET item = excluded.item, version = excluded.version`,
        )
        .run(item.tenant, item.id, item.session, JSON.stringify(item), item.version);
      this.touchSession(item.tenant, item.session, item.updated_at);
      insertOutbox(this.x, outbox);
      queueSearch(this.x, { tenant: item.tenant, sid: item.session, w: '', since: item.updated_at });
    });
  }

  async getWork(tenant: string, id: string): Promise<WorkItem | null> {
    const row = this.x.q('SELECT item FROM work_items WHERE tenant = ? AND id = ?').get(tenant, id) as
      | { item: string }
      | undefined;
    return row ? (JSON.parse(row.item) as WorkItem) : null;
  }

  async listWork(tenant: string, options: { session?: string; limit: number }): Promise<WorkItem[]> {
    const rows = (
      options.session === undefined
        ? this.x
            .q('SELECT item FROM work_items WHERE tenant = ? ORDER BY id DESC LIMIT ?')
            .all(tenant, options.limit)
        : this.x
            .q('SELECT item FROM work_items WHERE tenant = ? AND sid = ? ORDER BY id DESC LIMIT ?')
            .all(tenant, options.session, options.limit)
    ) as { item: string }[];
    return rows.map((r) => JSON.parse(r.item) as WorkItem);
  }

  async claimKey(
    tenant: string,
    scope: string,
    key: string,
    value: string,
    outbox?: OutboxEvent[],
  ): Promise<string> {
    // The primary key makes the first INSERT the claim (one change); the SELECT answers whichever won. The
    // alert events go with the claim only: a crossing claimed by another call fired there.
    return this.x.transaction(() => {
      const claimed = this.x
        .q(
          `INSERT INTO claimed_keys (tenant, scope, key, value, claimed_at) VALUES (?, ?, ?, ?, ?)
           ON CONFLICT (tenant, scope, key) DO NOTHING`,
        )
        .run(tenant, scope, key, value, new Date().toISOString()) as { changes: number };
      if (claimed.changes > 0) insertOutbox(this.x, outbox);
      const row = this.x
        .q('SELECT value FROM claimed_keys WHERE tenant = ? AND scope = ? AND key = ?')
        .get(tenant, scope, key) as { value: string };
      return row.value;
    });
  }

  async readClaim(tenant: string, scope: string, key: string): Promise<string | null> {
    const row = this.x
      .q('SELECT value FROM claimed_keys WHERE tenant = ? AND scope = ? AND key = ?')
      .get(tenant, scope, key) as { value: string } | undefined;
    return row?.value ?? null;
  }
}

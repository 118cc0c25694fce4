/**
 * The alerts methods of `SqliteStateStore` (issue 28; the port and its rules: ../alerts.ts). Three tables:
 * `alert_targets` (a target as JSON, its version), `alert_outbox` (an event as JSON, its `due_at`) and
 * `alert_deliveries` (a delivery as JSON, with the columns its queries and conditions read). An event is
 * written in the transaction of the change that fires it (`insertOutbox` of sqlite/outbox.ts, called by
 * sqlite/status-work.ts and sqlite/advance.ts); `INSERT OR IGNORE` by (tenant, id) makes a retried change
 * a no-op. A delivery finished more than 30 days ago (by the system clock: `final_at`) is pruned by a later
 * `fanOut`. A listing leaves out a row that does not parse as its record (`parsed`: JSON, then the port's
 * schema), so one damaged row never stops the others. Split from the store so that each file stays
 * readable, as sqlite/usage.ts is.
 */
import type { z } from 'zod';
import { AlertDelivery, type AlertStore, AlertTarget, type AttemptResult, OutboxEvent } from '../alerts.js';
import { LimitReachedError, StateConflictError } from '../errors.js';
import { insertOutbox } from './outbox.js';
import type { SqlitePrimitives } from './status-work.js';

/** How long a finished delivery is kept (DynamoDB: its TTL), ms: 30 days. */
export const FINISHED_KEPT_MS = 30 * 86_400_000;
/** How many expired finished deliveries one `fanOut` removes at most (bounded work per call). */
const PRUNE_BATCH = 200;

/**
 * The alert tables and their indexes (issue 28), made by the store's opening transaction, each
 * `IF NOT EXISTS`: a database from before them gets them empty. `qsid` is the delivery's sid, '' for none
 * (a tenant-wide event: a queue of its own), so that a queue is an index range. `final_at` is when a
 * delivery was finished (the prune's clock), null while pending.
 */
export const ALERT_SCHEMA = `
CREATE TABLE IF NOT EXISTS alert_targets (
  tenant TEXT NOT NULL, id TEXT NOT NULL, target TEXT NOT NULL, version INTEGER NOT NULL,
  created_at TEXT NOT NULL, PRIMARY KEY (tenant, id)
);
CREATE TABLE IF NOT EXISTS alert_outbox (
  tenant TEXT NOT NULL, id TEXT NOT NULL, due_at TEXT NOT NULL, event TEXT NOT NULL, PRIMARY KEY (tenant, id)
);
CREATE INDEX IF NOT EXISTS alert_outbox_due ON alert_outbox (due_at, tenant, id);
CREATE TABLE IF NOT EXISTS alert_deliveries (
  tenant TEXT NOT NULL, target_id TEXT NOT NULL, event_id TEXT NOT NULL, sid TEXT, qsid TEXT NOT NULL,
  ord TEXT NOT NULL, status TEXT NOT NULL, attempts INTEGER NOT NULL, next_at TEXT, claimed_until TEXT,
  final_at TEXT, delivery TEXT NOT NULL, PRIMARY KEY (tenant, target_id, event_id)
);
CREATE INDEX IF NOT EXISTS alert_deliveries_due ON alert_deliveries (next_at) WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS alert_deliveries_queue ON alert_deliveries (tenant, target_id, qsid, ord)
  WHERE status = 'pending';
CREATE INDEX IF NOT EXISTS alert_deliveries_target ON alert_deliveries (tenant, target_id, ord DESC, event_id DESC);
CREATE INDEX IF NOT EXISTS alert_deliveries_sid ON alert_deliveries (tenant, sid, ord DESC, target_id);
CREATE INDEX IF NOT EXISTS alert_deliveries_final ON alert_deliveries (final_at) WHERE final_at IS NOT NULL;
`;

/** Makes the alert tables where they are missing (inside the store's schema transaction). */
export function addAlertSchema(exec: (sql: string) => void): void {
  exec(ALERT_SCHEMA);
}

/**
 * The queries of the worker and the listings, named so that a test can ask SQLite for their plans
 * (test/store/sqlite/alerts.test.ts: each goes through its index). Parameters: `@now`, `@limit`, `@tenant`,
 * `@target`, `@sid`, `@perTarget`, `@exclude`.
 */
export const ALERT_QUERIES = {
  /**
   * the head of each queue (no pending one of a lower `ord` in its (tenant, target, sid)), due, unclaimed
   * and of a target not in `@exclude` (a JSON array of `{tenant}/{target_id}`), numbered within its target
   * earliest first so that at most `@perTarget` of one target are listed
   */
  dueDeliveries: `SELECT * FROM (
      SELECT d.*, row_number() OVER (PARTITION BY d.tenant, d.target_id ORDER BY d.next_at, d.qsid, d.ord) AS n
      FROM alert_deliveries d
      WHERE d.status = 'pending' AND d.next_at <= @now
        AND (d.claimed_until IS NULL OR d.claimed_until <= @now)
        AND d.tenant || '/' || d.target_id NOT IN (SELECT value FROM json_each(@exclude))
        AND NOT EXISTS (SELECT 1 FROM alert_deliveries e
          WHERE e.tenant = d.tenant AND e.target_id = d.target_id AND e.qsid = d.qsid
            AND e.status = 'pending' AND e.ord < d.ord))
      WHERE n <= @perTarget
      ORDER BY next_at, tenant, target_id, qsid, ord LIMIT @limit`,
  dueEvents:
    'SELECT due_at, event FROM alert_outbox WHERE due_at <= @now ORDER BY due_at, tenant, id LIMIT @limit',
  byTarget: `SELECT * FROM alert_deliveries WHERE tenant = @tenant AND target_id = @target
      ORDER BY ord DESC, event_id DESC LIMIT @limit`,
  bySid:
    'SELECT * FROM alert_deliveries WHERE tenant = @tenant AND sid = @sid ORDER BY ord DESC, target_id LIMIT @limit',
  byTargetAndSid: `SELECT * FROM alert_deliveries WHERE tenant = @tenant AND target_id = @target AND sid = @sid
      ORDER BY ord DESC, event_id DESC LIMIT @limit`,
} as const;

type Row = Record<string, unknown>;

const FINAL = new Set(['delivered', 'dead', 'skipped']);

/** The `AlertStore` methods on SQLite; each answers as `DynamoStateStore`'s does. */
export class SqliteAlerts implements AlertStore {
  constructor(private readonly x: SqlitePrimitives) {}

  /** See the port: the version checked, then (a new target with `maxTargets`) the tenant's count, then the write. */
  async putAlertTarget(target: AlertTarget, o: { maxTargets?: number } = {}): Promise<void> {
    this.x.transaction(() => {
      const row = this.x
        .q('SELECT version FROM alert_targets WHERE tenant = ? AND id = ?')
        .get(target.tenant, target.id) as { version: number } | undefined;
      if ((row?.version ?? 0) !== target.version - 1) {
        throw new StateConflictError(
          `alert target ${target.id} changed since it was read (version ${row?.version ?? 0})`,
        );
      }
      if (target.version === 1 && o.maxTargets !== undefined) {
        const { n } = this.x
          .q('SELECT count(*) AS n FROM alert_targets WHERE tenant = ?')
          .get(target.tenant) as {
          n: number;
        };
        if (n >= o.maxTargets) {
          throw new LimitReachedError(
            `the tenant has ${n} alert targets (at most ${o.maxTargets})`,
            o.maxTargets,
          );
        }
      }
      this.x
        .q(
          `INSERT INTO alert_targets (tenant, id, target, version, created_at) VALUES (?, ?, ?, ?, ?)
             ON CONFLICT (tenant, id) DO UPDATE SET target = excluded.target, version = excluded.version`,
        )
        .run(target.tenant, target.id, JSON.stringify(target), target.version, target.created_at);
    });
  }

  async getAlertTarget(tenant: string, id: string): Promise<AlertTarget | null> {
    const row = this.x.q('SELECT target FROM alert_targets WHERE tenant = ? AND id = ?').get(tenant, id) as
      | { target: string }
      | undefined;
    return row ? parsed(AlertTarget, row.target) : null;
  }

  async listAlertTargets(tenant: string): Promise<AlertTarget[]> {
    const rows = this.x
      .q('SELECT target FROM alert_targets WHERE tenant = ? ORDER BY created_at, id')
      .all(tenant) as { target: string }[];
    return rows.flatMap((r) => parsed(AlertTarget, r.target) ?? []);
  }

  async deleteAlertTarget(tenant: string, id: string): Promise<void> {
    this.x.transaction(() => {
      this.x.q('DELETE FROM alert_targets WHERE tenant = ? AND id = ?').run(tenant, id);
      this.x.q('DELETE FROM alert_deliveries WHERE tenant = ? AND target_id = ?').run(tenant, id);
    });
  }

  async putOutboxEvents(events: OutboxEvent[]): Promise<void> {
    this.x.transaction(() => insertOutbox(this.x, events));
  }

  async listDueEvents(now: string, limit: number): Promise<OutboxEvent[]> {
    const rows = this.x.q(ALERT_QUERIES.dueEvents).all({ now, limit: Math.max(0, limit) }) as Row[];
    return rows.flatMap((r) => parsedEvent(r) ?? []);
  }

  /**
   * See the port. One transaction: the event still there (else nothing), each delivery inserted unless its
   * (target, event) pair exists, the event deleted; then at most `PRUNE_BATCH` deliveries finished more
   * than 30 days ago are removed (any tenant's: this is the table's housekeeping).
   */
  async fanOut(event: OutboxEvent, deliveries: AlertDelivery[]): Promise<void> {
    this.x.transaction(() => {
      const held = this.x
        .q('SELECT 1 FROM alert_outbox WHERE tenant = ? AND id = ?')
        .get(event.tenant, event.id);
      if (!held) return;
      const insert = this.x.q(
        `INSERT OR IGNORE INTO alert_deliveries (tenant, target_id, event_id, sid, qsid, ord, status, attempts,
           next_at, claimed_until, final_at, delivery) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      );
      const now = new Date().toISOString();
      for (const d of deliveries) {
        insert.run(
          d.tenant,
          d.target_id,
          d.event_id,
          d.sid,
          d.sid ?? '',
          d.order,
          d.status,
          d.attempts,
          d.status === 'pending' ? d.next_at : null,
          d.claimed_until,
          FINAL.has(d.status) ? now : null,
          JSON.stringify(FINAL.has(d.status) ? { ...d, next_at: null } : d),
        );
      }
      this.x.q('DELETE FROM alert_outbox WHERE tenant = ? AND id = ?').run(event.tenant, event.id);
      this.x
        .q(
          `DELETE FROM alert_deliveries WHERE rowid IN (
             SELECT rowid FROM alert_deliveries WHERE final_at IS NOT NULL AND final_at < ? LIMIT ?)`,
        )
        .run(new Date(Date.now() - FINISHED_KEPT_MS).toISOString(), PRUNE_BATCH);
    });
  }

  async rescheduleEvent(tenant: string, id: string, dueAt: string): Promise<void> {
    this.x.q('UPDATE alert_outbox SET due_at = ? WHERE tenant = ? AND id = ?').run(dueAt, tenant, id);
  }

  /**
   * See the port: one query (`ALERT_QUERIES.dueDeliveries`) of the pending deliveries due and unclaimed
   * that have no pending delivery of a lower `order` in their (tenant, target, sid) queue (the queue index
   * answers that per row), of targets not excluded, numbered per target by a window so that at most
   * `perTarget` of each are listed. A row that does not parse is left out (the listing may then be short).
   */
  async listDueDeliveries(
    now: string,
    limit: number,
    o: { perTarget?: number; exclude?: readonly string[] } = {},
  ): Promise<AlertDelivery[]> {
    const rows = this.x.q(ALERT_QUERIES.dueDeliveries).all({
      now,
      limit: Math.max(0, limit),
      perTarget: Math.max(0, o.perTarget ?? limit),
      exclude: JSON.stringify(o.exclude ?? []),
    }) as Row[];
    return rows.flatMap((r) => parsed(AlertDelivery, r.delivery) ?? []);
  }

  async claimDelivery(d: AlertDelivery, now: string, until: string): Promise<boolean> {
    return this.x.transaction(() => {
      const row = this.row(d);
      if (row?.status !== 'pending' || row.attempts !== d.attempts) return false;
      if (row.claimed_until !== null && (row.claimed_until as string) > now) return false;
      const next: AlertDelivery = { ...toDelivery(row), claimed_until: until };
      this.x
        .q(
          'UPDATE alert_deliveries SET claimed_until = ?, delivery = ? WHERE tenant = ? AND target_id = ? AND event_id = ?',
        )
        .run(until, JSON.stringify(next), d.tenant, d.target_id, d.event_id);
      return true;
    });
  }

  /**
   * See the port: the outcome written and the claim released, on condition that the delivery is still
   * pending at `d.attempts`.
   * @throws StateConflictError when it is not (another worker finished it, or it is gone)
   */
  async finishAttempt(d: AlertDelivery, result: AttemptResult): Promise<void> {
    this.x.transaction(() => {
      const row = this.row(d);
      if (row?.status !== 'pending' || row.attempts !== d.attempts) {
        throw new StateConflictError(
          `delivery of ${d.event_id} to ${d.target_id} changed since it was claimed (${row ? `${row.status}, ${row.attempts} attempts` : 'gone'})`,
        );
      }
      const final = FINAL.has(result.status);
      const next: AlertDelivery = {
        ...toDelivery(row),
        ...result,
        next_at: final ? null : result.next_at,
        claimed_until: null,
      };
      this.x
        .q(
          `UPDATE alert_deliveries SET status = ?, attempts = ?, next_at = ?, claimed_until = NULL, final_at = ?,
             delivery = ? WHERE tenant = ? AND target_id = ? AND event_id = ?`,
        )
        .run(
          next.status,
          next.attempts,
          next.next_at,
          final ? new Date().toISOString() : null,
          JSON.stringify(next),
          d.tenant,
          d.target_id,
          d.event_id,
        );
    });
  }

  async listDeliveries(
    tenant: string,
    options: { target?: string; sid?: string; limit: number },
  ): Promise<AlertDelivery[]> {
    const { target, sid } = options;
    const limit = Math.max(0, options.limit);
    let rows: Row[];
    if (target !== undefined && sid !== undefined) {
      rows = this.x.q(ALERT_QUERIES.byTargetAndSid).all({ tenant, target, sid, limit }) as Row[];
    } else if (target !== undefined) {
      rows = this.x.q(ALERT_QUERIES.byTarget).all({ tenant, target, limit }) as Row[];
    } else if (sid !== undefined) {
      rows = this.x.q(ALERT_QUERIES.bySid).all({ tenant, sid, limit }) as Row[];
    } else {
      throw new Error('listDeliveries needs a target or a sid');
    }
    return rows.flatMap((r) => parsed(AlertDelivery, r.delivery) ?? []);
  }

  private row(d: AlertDelivery): Row | undefined {
    return this.x
      .q('SELECT * FROM alert_deliveries WHERE tenant = ? AND target_id = ? AND event_id = ?')
      .get(d.tenant, d.target_id, d.event_id) as Row | undefined;
  }
}

/**
 * `json` as `schema`'s record, or null when it is not JSON or not such a record (a damaged row, a hand
 * edit): the listings leave it out rather than fail for every tenant.
 */
function parsed<T>(schema: z.ZodType<T>, json: unknown): T | null {
  if (typeof json !== 'string') return null;
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return null;
  }
  const r = schema.safeParse(value);
  return r.success ? r.data : null;
}

/** An outbox row as the port's event (its `due_at` is the column's: a reschedule moves it), or null. */
function parsedEvent(row: Row): OutboxEvent | null {
  const e = parsed(OutboxEvent, row.event);
  return e && OutboxEvent.shape.due_at.safeParse(row.due_at).success
    ? { ...e, due_at: row.due_at as string }
    : null;
}

/** A row of a delivery this store wrote and holds (a claim, an attempt's outcome). */
function toDelivery(row: Row): AlertDelivery {
  return JSON.parse(row.delivery as string) as AlertDelivery;
}

/**
 * The usage methods of `SqliteStateStore` (issue 27; the port and its rules: ../usage.ts). Three tables:
 * `writer_usage` (a writer's record: `upto`, the fold state and its buckets as JSON), `session_usage` (the
 * session's counters, one column per counter) and `usage_buckets` (the tenant's counters per UTC day,
 * agent, person and model). `applyWriterUsage` checks `upto`, writes the record and adds the deltas to
 * both counter tables in ONE transaction, so here the session counters are exact too (on DynamoDB they
 * are running totals: dynamo/usage.ts). Split from the store so that each file stays readable, as
 * sqlite/writers.ts is.
 */
import { z } from 'zod';
import {
  type StoredUsageCounters,
  type UsageBucket,
  UsageBucketSchema,
  type UsageChange,
  UsageConflictError,
  type UsageStore,
  type WriterUsage,
  WriterUsageSchema,
} from '../usage.js';
import { isZeroUsage, sumUsageCounters, USAGE_COUNTERS } from '../usage-counters.js';
import type { SqlitePrimitives } from './status-work.js';

const COUNTER_DEFS = USAGE_COUNTERS.map((k) => `${k} INTEGER NOT NULL DEFAULT 0`).join(', ');
const COUNTER_LIST = USAGE_COUNTERS.join(', ');
const COUNTER_MARKS = USAGE_COUNTERS.map(() => '?').join(', ');
/** `SET` of an upsert that adds the inserted row's counters to the stored ones */
const COUNTER_ADDS = USAGE_COUNTERS.map((k) => `${k} = ${k} + excluded.${k}`).join(', ');

/**
 * The usage tables (issue 27), made by the store's opening transaction. New tables only, each
 * `IF NOT EXISTS`: opening a database from before them adds them empty (the service's recompute fills a
 * writer's record from its segment when asked; nothing is backfilled here), and opening one again changes
 * nothing.
 */
export const USAGE_SCHEMA = `
CREATE TABLE IF NOT EXISTS writer_usage (
  tenant TEXT NOT NULL, sid TEXT NOT NULL, w TEXT NOT NULL, upto INTEGER NOT NULL, state TEXT NOT NULL,
  buckets TEXT NOT NULL, updated_at TEXT NOT NULL, PRIMARY KEY (tenant, sid, w)
);
CREATE TABLE IF NOT EXISTS session_usage (
  tenant TEXT NOT NULL, sid TEXT NOT NULL, ${COUNTER_DEFS}, PRIMARY KEY (tenant, sid)
);
CREATE TABLE IF NOT EXISTS usage_buckets (
  tenant TEXT NOT NULL, day TEXT NOT NULL, agent TEXT NOT NULL, person TEXT NOT NULL, model TEXT NOT NULL,
  ${COUNTER_DEFS}, PRIMARY KEY (tenant, day, agent, person, model)
);
`;

/** Makes the usage tables where they are missing (inside the store's schema transaction). */
export function addUsageSchema(exec: (sql: string) => void): void {
  exec(USAGE_SCHEMA);
}

type Row = Record<string, unknown>;

const DeltasSchema = z.array(UsageBucketSchema);

/** The `UsageStore` methods on SQLite; each answers as `DynamoStateStore`'s does. */
export class SqliteUsage implements UsageStore {
  constructor(private readonly x: SqlitePrimitives) {}

  async getWriterUsage(tenant: string, sid: string, w: string): Promise<WriterUsage | null> {
    const row = this.x
      .q('SELECT upto, state, buckets, updated_at FROM writer_usage WHERE tenant = ? AND sid = ? AND w = ?')
      .get(tenant, sid, w) as Row | undefined;
    return row ? toWriterUsage(row) : null;
  }

  /**
   * See the port. One transaction: the `upto` check, the record, the sum of the deltas added to the
   * session's row (made at the first deltas: a writer whose chunks held no usage gives its session
   * none), and each delta added to its bucket row.
   * @throws UsageConflictError when the stored `upto` is not `expectUpto` (nothing written)
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
    this.x.transaction(() => {
      const row = this.x
        .q('SELECT upto FROM writer_usage WHERE tenant = ? AND sid = ? AND w = ?')
        .get(tenant, sid, w) as { upto: number } | undefined;
      const current = row?.upto ?? null;
      if (current !== expectUpto) throw new UsageConflictError(current);
      this.x
        .q(
          `INSERT INTO writer_usage (tenant, sid, w, upto, state, buckets, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)
             ON CONFLICT (tenant, sid, w) DO UPDATE SET upto = excluded.upto, state = excluded.state,
               buckets = excluded.buckets, updated_at = excluded.updated_at`,
        )
        .run(
          tenant,
          sid,
          w,
          next.upto,
          JSON.stringify(next.state ?? null),
          JSON.stringify(next.buckets),
          next.updated_at,
        );
      if (deltas.length === 0) return;
      const sum = sumUsageCounters(deltas.map((d) => d.counters));
      this.x
        .q(
          `INSERT INTO session_usage (tenant, sid, ${COUNTER_LIST}) VALUES (?, ?, ${COUNTER_MARKS})
             ON CONFLICT (tenant, sid) DO UPDATE SET ${COUNTER_ADDS}`,
        )
        .run(tenant, sid, ...USAGE_COUNTERS.map((k) => sum[k]));
      const bucket = this.x.q(
        `INSERT INTO usage_buckets (tenant, day, agent, person, model, ${COUNTER_LIST})
           VALUES (?, ?, ?, ?, ?, ${COUNTER_MARKS})
           ON CONFLICT (tenant, day, agent, person, model) DO UPDATE SET ${COUNTER_ADDS}`,
      );
      for (const d of deltas) {
        bucket.run(tenant, d.day, d.agent, d.person, d.model, ...USAGE_COUNTERS.map((k) => d.counters[k]));
      }
    });
  }

  async listWriterUsage(tenant: string, sid: string): Promise<Map<string, WriterUsage>> {
    const rows = this.x
      .q(
        'SELECT w, upto, state, buckets, updated_at FROM writer_usage WHERE tenant = ? AND sid = ? ORDER BY w',
      )
      .all(tenant, sid) as Row[];
    return new Map(rows.map((r) => [r.w as string, toWriterUsage(r)]));
  }

  async getSessionUsageCounters(tenant: string, sid: string): Promise<StoredUsageCounters | null> {
    const row = this.x
      .q(`SELECT ${COUNTER_LIST} FROM session_usage WHERE tenant = ? AND sid = ?`)
      .get(tenant, sid) as Row | undefined;
    return row ? toCounters(row) : null;
  }

  async getSessionUsageCountersMany(
    tenant: string,
    sids: readonly string[],
  ): Promise<Map<string, StoredUsageCounters>> {
    const out = new Map<string, StoredUsageCounters>();
    const st = this.x.q(`SELECT ${COUNTER_LIST} FROM session_usage WHERE tenant = ? AND sid = ?`);
    for (const sid of new Set(sids)) {
      const row = st.get(tenant, sid) as Row | undefined;
      if (row) out.set(sid, toCounters(row));
    }
    return out;
  }

  /** See the port; buckets whose counters are all zero (every delta retracted) are left out, as on DynamoDB. */
  async listUsageBuckets(tenant: string, fromDay: string, toDay: string): Promise<UsageBucket[]> {
    const rows = this.x
      .q(
        `SELECT day, agent, person, model, ${COUNTER_LIST} FROM usage_buckets
           WHERE tenant = ? AND day >= ? AND day <= ? ORDER BY day, agent, person, model`,
      )
      .all(tenant, fromDay, toDay) as Row[];
    return rows
      .map((r) => ({
        day: r.day as string,
        agent: r.agent as string,
        person: r.person as string,
        model: r.model as string,
        counters: toCounters(r),
      }))
      .filter((b) => !isZeroUsage(b.counters));
  }
}

function toCounters(row: Row): StoredUsageCounters {
  return Object.fromEntries(USAGE_COUNTERS.map((k) => [k, Number(row[k] ?? 0)])) as StoredUsageCounters;
}

function toWriterUsage(row: Row): WriterUsage {
  return {
    upto: row.upto as number,
    state: JSON.parse(row.state as string),
    buckets: JSON.parse(row.buckets as string),
    updated_at: row.updated_at as string,
  };
}

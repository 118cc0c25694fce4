/**
 * The work port (seed 004): work items, written under a version condition. Part of the state store
 * (lib/store/sqlite/status-work.ts, lib/store/dynamo/status-work.ts); what an item means is the
 * service's (lib/service/work/start/).
 */

/**
 * A work item (seed 004, lib/service/work/start.ts): what an actor reports it is doing, its lease and its
 * history. The store keeps it as given; it reads only the keys, `version` and `lease_expires_at`.
 */
export interface WorkItem {
  tenant: string;
  /** `wk_` + ULID */
  id: string;
  session: string;
  system: string;
  actor: string;
  subject: { kind: string; ref: string };
  mode: string;
  summary: string;
  ttl_seconds: number;
  state: 'active' | 'waiting' | 'stopped';
  outcome: 'completed' | 'paused' | null;
  waiting_on: { dependency: { kind: string; ref?: string }; reason: string; since: string } | null;
  started_at: string;
  lease_expires_at: string;
  last_heartbeat_at: string;
  last_reported: { op: string; at: string };
  /** semantic operations, oldest first */
  history: Array<Record<string, unknown> & { op: string; at: string }>;
  /**
   * the semantic operations applied with an idempotency key, the last 50: what a retry is told from. An
   * older one leaves the item as a claimed key (`claimKey`, scope `work:applied:{id}`) before the write
   * that drops it (lib/service/work/keys.ts), so the item stays bounded and no key is applied twice
   */
  applied: Array<{ key: string; op: string; hash: string; at: string }>;
  /** how many keys have left `applied` for the claimed keys (absent: none) */
  applied_archived?: number;
  /**
   * the token whose request started the item, and the first token of its chain (`TokenRecord.root`):
   * what ownership is proved by (lib/service/work/owner.ts, issue 24.3). Never answered to a client.
   * Absent in items started before it was kept.
   */
  started_by?: { token: string; root: string };
  updated_at: string;
  /** 1 when started, one more for each write: `putWork`'s condition */
  version: number;
}

/** A tenant's work items. */
export interface WorkStore {
  /**
   * Writes a work item when the stored one is at `item.version - 1` (none stored counts as 0), and moves
   * the session index's `updated_at` forward to the item's `updated_at` (creating the entry).
   * @throws StateConflictError when another write got there first (read it again and retry)
   */
  putWork(item: WorkItem): Promise<void>;
  getWork(tenant: string, id: string): Promise<WorkItem | null>;
  /** The tenant's work items (of one session when given), newest started first, at most `limit` (1..500). */
  listWork(tenant: string, options: { session?: string; limit: number }): Promise<WorkItem[]>;
}

/**
 * The work port (seed 004): work items, written under a version condition. Part of the state store
 * (lib/store/sqlite/status-work.ts, lib/store/dynamo/status-work.ts); what an item means is the
 * service's (lib/service/work/start.ts).
 */
import { z } from 'zod';
import { Count, Instant } from '../contract/ids.js';
import { WorkView } from '../contract/work.js';
import type { OutboxEvent } from './alerts.js';

/**
 * A work item (seed 004, lib/service/work/start.ts): what an actor reports it is doing, its lease and its
 * history. The store keeps it as given; it reads only the keys, `version` and `lease_expires_at`. The
 * fields the API answers are `WorkView`'s (lib/contract/work.ts) as stored: names and kinds as strings.
 */
export const WorkItem = WorkView.pick({
  id: true,
  session: true,
  system: true,
  actor: true,
  mode: true,
  summary: true,
  ttl_seconds: true,
  state: true,
  outcome: true,
  waiting_on: true,
  started_at: true,
}).extend({
  tenant: z.string(),
  subject: z.object({ kind: z.string(), ref: z.string() }),
  lease_expires_at: Instant,
  last_heartbeat_at: Instant,
  last_reported: z.object({ op: z.string(), at: Instant }),
  /** semantic operations, oldest first */
  history: z.array(z.looseObject({ op: z.string(), at: Instant })),
  /**
   * the semantic operations applied with an idempotency key, the last 50: what a retry is told from. An
   * older one leaves the item as a claimed key (`claimKey`, scope `work:applied:{id}`) before the write
   * that drops it (lib/service/work/keys.ts), so the item stays bounded and no key is applied twice
   */
  applied: z.array(z.object({ key: z.string(), op: z.string(), hash: z.string(), at: Instant })),
  /** how many keys have left `applied` for the claimed keys (absent: none) */
  applied_archived: Count.optional(),
  /**
   * the token whose request started the item, and the first token of its chain (`TokenRecord.root`):
   * what ownership is proved by (lib/service/work/owner.ts, issue 24.3). Never answered to a client.
   * Absent in items started before it was kept.
   */
  started_by: z.object({ token: z.string(), root: z.string() }).optional(),
  updated_at: Instant,
  /** 1 when started, one more for each write: `putWork`'s condition */
  version: z.int(),
});
export type WorkItem = z.infer<typeof WorkItem>;

/** A tenant's work items. */
export interface WorkStore {
  /**
   * Writes a work item when the stored one is at `item.version - 1` (none stored counts as 0), and moves
   * the session index's `updated_at` forward to the item's `updated_at` (creating the entry).
   * The alert events of the change (`outbox`: a lease watch, lib/store/alerts.ts) are written in the same
   * transaction.
   * @throws StateConflictError when another write got there first (read it again and retry)
   */
  putWork(item: WorkItem, outbox?: OutboxEvent[]): Promise<void>;
  getWork(tenant: string, id: string): Promise<WorkItem | null>;
  /** The tenant's work items (of one session when given), newest started first, at most `limit` (1..500). */
  listWork(tenant: string, options: { session?: string; limit: number }): Promise<WorkItem[]>;
}

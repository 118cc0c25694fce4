/**
 * The alerts port (issue 28, DESIGN §6d "one outbox pattern"): a tenant's targets, the outbox of events
 * and each target's deliveries. Part of the state store (lib/store/sqlite/alerts.ts,
 * lib/store/dynamo/alerts.ts).
 *
 * - An **outbox event** is written in the same transaction as the change that fires it: `putStatus`,
 *   `putWork`, `claimKey` and `advanceWriter` take the events of their change (`OutboxEvent[]`) and write
 *   them with it, or not at all. Its id is derived from the change (lib/service/alerts/events.ts), and a
 *   second write of the same id is a no-op: a retried change never fires twice.
 * - The worker (lib/service/alerts/worker.ts) takes due events (`listDueEvents`) and turns each into one
 *   **delivery** per matching target (`fanOut`, atomic with the event's removal), or sets it due later
 *   (`rescheduleEvent`: a lease watch whose lease was renewed).
 * - A delivery is sent when it is due and is the oldest unfinished one of its (target, session): in order
 *   per session. `claimDelivery` leases it to one worker for a while (two workers never send it at once,
 *   and a worker killed mid-send leaves it to the next after the lease); `finishAttempt` records the
 *   answer under the same claim.
 */
import { z } from 'zod';
import { AlertDeliveryView, AlertTargetView } from '../contract/alerts.js';
import { Count, Instant } from '../contract/ids.js';

/**
 * An event waiting in the outbox. `due_at` is when the worker looks at it: at once for most; a lease
 * watch (`watch`) at the lease's expiry, when the worker reads the lease again and fires `work.unknown`
 * only if it did expire.
 */
export const OutboxEvent = z.object({
  tenant: z.string(),
  /** msg_…: stable, derived from the change; the `webhook-id` of every delivery of it */
  id: z.string(),
  /** an `ALERT_KINDS` kind, or `alert.test` */
  kind: z.string(),
  /** the session it is about; null for tenant-wide events (quota, budget) */
  sid: z.string().nullable(),
  /** when the change happened (ISO 8601): the event's time and its order within its session */
  at: Instant,
  due_at: Instant,
  /** the event's small payload (no transcript content beyond a note) */
  data: z.record(z.string(), z.unknown()),
  /** the agent names the session's writers had, for rules with `agents` (empty: unknown) */
  agents: z.array(z.string()),
  /**
   * a watch, looked at again at `due_at` before anything is sent: a lease (`work_id`: fires `work.unknown`
   * only if the lease did expire) or a report's claims (`status_version`: fires `claim.unsupported` only if
   * the record refutes one of that report's declared claims by then)
   */
  watch: z.object({ work_id: z.string().optional(), status_version: z.int().optional() }).nullable(),
  /** only this target gets it (`alerts test`); null: every matching target */
  only_target: z.string().nullable(),
});
export type OutboxEvent = z.infer<typeof OutboxEvent>;

/** A target's signing secret as stored: sealed (lib/service/alerts/secrets.ts), never in the clear. */
export const SealedSecret = z.object({
  sealed: z.string(),
  /** null for the current secret; for the previous one, until when it still signs */
  until: Instant.nullable(),
});
export type SealedSecret = z.infer<typeof SealedSecret>;

/** An alert target and its rule: what `AlertTargetView` (lib/contract/alerts.ts) shows, and its secrets. */
export const AlertTarget = AlertTargetView.pick({
  url: true,
  format: true,
  events: true,
  agents: true,
  after_seconds: true,
  label: true,
  created_at: true,
  created_by: true,
}).extend({
  tenant: z.string(),
  id: z.string(),
  /** the current secret first, then the previous one while its grace lasts */
  secrets: z.array(SealedSecret).min(1).max(2),
  /** 1 when made, one more per write: `putAlertTarget`'s condition */
  version: z.int(),
});
export type AlertTarget = z.infer<typeof AlertTarget>;

/** A delivery of one event to one target: what `AlertDeliveryView` shows, and what the worker needs. */
export const AlertDelivery = AlertDeliveryView.pick({
  kind: true,
  sid: true,
  status: true,
  attempts: true,
  next_at: true,
  created_at: true,
  last_status: true,
  last_error: true,
  delivered_at: true,
}).extend({
  tenant: z.string(),
  target_id: z.string(),
  event_id: z.string(),
  /** the order within (target, session): the event's `at` then its id */
  order: z.string(),
  /** a worker holds it until then (null: nobody) */
  claimed_until: Instant.nullable(),
  skipped_reason: z.string().nullable(),
  /** the event as sent: kind, at, data (so a delivery is sent the same way every attempt) */
  event: z.object({ at: Instant, data: z.record(z.string(), z.unknown()) }),
  /** the rule's `after_seconds` when it was made: held-state rules check the state before sending */
  after_seconds: Count,
});
export type AlertDelivery = z.infer<typeof AlertDelivery>;

/** What one attempt ended with. */
export interface AttemptResult {
  status: AlertDelivery['status'];
  attempts: number;
  next_at: string | null;
  last_status: number | null;
  last_error: string | null;
  delivered_at: string | null;
  skipped_reason: string | null;
}

/**
 * Alert targets, the outbox and the deliveries. Every listing leaves out a stored row or item that does
 * not parse as its record (a damaged file, a hand edit): one bad row never stops the others' deliveries.
 */
export interface AlertStore {
  /**
   * Writes a target when the stored one is at `target.version - 1` (none counts as 0). A new target
   * (version 1) with `maxTargets` is written only while the tenant has fewer, checked in the same
   * transaction (a counter kept with the targets on DynamoDB), so concurrent adds never pass it.
   * @throws StateConflictError when another write got there first
   * @throws LimitReachedError when the tenant has `maxTargets` targets already
   */
  putAlertTarget(target: AlertTarget, o?: { maxTargets?: number }): Promise<void>;
  getAlertTarget(tenant: string, id: string): Promise<AlertTarget | null>;
  /** A tenant's targets, oldest first (a stored row that does not parse is left out: see below). */
  listAlertTargets(tenant: string): Promise<AlertTarget[]>;
  /** Removes a target and its pending deliveries (its past deliveries go too). Absent: no-op. */
  deleteAlertTarget(tenant: string, id: string): Promise<void>;

  /** Writes events to the outbox on their own (`alerts test`; a change's events go with the change). */
  putOutboxEvents(events: OutboxEvent[]): Promise<void>;
  /** Outbox events of any tenant with `due_at <= now`, earliest first, at most `limit`. */
  listDueEvents(now: string, limit: number): Promise<OutboxEvent[]>;
  /**
   * In one transaction: the deliveries (an existing (target, event) pair is kept as it is) and the event's
   * removal from the outbox. An event already gone is a no-op (another worker fanned it out).
   */
  fanOut(event: OutboxEvent, deliveries: AlertDelivery[]): Promise<void>;
  /** Sets an outbox event due at `dueAt` (a renewed lease's watch). Absent: no-op. */
  rescheduleEvent(tenant: string, id: string, dueAt: string): Promise<void>;

  /**
   * Pending deliveries of any tenant with `next_at <= now`, not claimed past `now`, each the oldest
   * unfinished delivery of its (target, session): at most `limit`, earliest `next_at` first, at most
   * `perTarget` of one target, none of a target in `exclude` (`{tenant}/{target_id}`: targets a worker is
   * busy with), so a target with a backlog never fills the listing and holds the others back.
   */
  listDueDeliveries(
    now: string,
    limit: number,
    o?: { perTarget?: number; exclude?: readonly string[] },
  ): Promise<AlertDelivery[]>;
  /**
   * Claims a pending delivery until `until` when it is still at `attempts` and unclaimed (or its claim
   * ended by `now`). @returns whether this call claimed it
   */
  claimDelivery(d: AlertDelivery, now: string, until: string): Promise<boolean>;
  /**
   * Records an attempt's outcome and releases the claim, on condition it is still pending at `d.attempts`.
   * @throws StateConflictError when it is not (another worker finished it after this one's claim ran out,
   *   or its target was removed meanwhile)
   */
  finishAttempt(d: AlertDelivery, result: AttemptResult): Promise<void>;
  /**
   * A tenant's deliveries, newest first: of one target, or of one session, at most `limit` (1..200).
   */
  listDeliveries(
    tenant: string,
    options: { target?: string; sid?: string; limit: number },
  ): Promise<AlertDelivery[]>;
}

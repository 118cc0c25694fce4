/**
 * The status port (seed 000): each session's reports as retention kept them, written under a version
 * condition. Part of the state store (lib/store/sqlite/status-work.ts, lib/store/dynamo/status-work.ts);
 * how a record is encoded is ./status-record.ts.
 */
import { z } from 'zod';
import { Count, Instant, SessionId } from '../contract/ids.js';
import { StatusHistoryEntry } from '../contract/status.js';
import type { OutboxEvent } from './alerts.js';

/** What the session index keeps of the latest report (`putStatus` writes it; `statusSummaryOf`). */
export const StatusSummary = z.object({
  state: z.string(),
  /** when the trailing run of reports of this state began (the latest's time when the state changed) */
  state_since: Instant,
  note: z.string(),
  reported_at: Instant,
});
export type StatusSummary = z.infer<typeof StatusSummary>;

/**
 * One status report as kept (seed 000): the API's `StatusHistoryEntry` (lib/contract/status.ts) as
 * stored, its state a string and its events as posted (checked only when read), with who reported it.
 */
export const StatusEntry = StatusHistoryEntry.pick({
  note: true,
  events_dropped: true,
  reported_at: true,
}).extend({
  state: z.string(),
  /** declared events as posted (seed 000), kept for the evidence checks; [] once retention dropped them */
  events: z.array(z.unknown()),
  /** the token id that reported it */
  reported_by: z.string(),
});
export type StatusEntry = z.infer<typeof StatusEntry>;

/**
 * A session's status: every report retention kept, oldest first (lib/service/status/retention.ts). The
 * store keeps it as given and gives it no meaning beyond `version` and the last report's time.
 */
export const StatusRecord = z.object({
  tenant: z.string(),
  sid: SessionId,
  /** oldest first; the last is the session's current status; never empty */
  reports: z.array(StatusEntry),
  /** declared events dropped by retention, over all reports (kept ones and dropped ones) */
  dropped_events: Count,
  /** whole reports dropped to keep the record within its size */
  dropped_reports: Count,
  /** 1 for the first write of the session's status, one more for each write after: `putStatus`'s condition */
  version: z.int(),
  /**
   * when the trailing run of reports of the latest state began, kept across retention (reportStatus sets
   * it); absent in records written before it: then the first of the kept trailing reports of that state
   */
  state_since: Instant.optional(),
});
export type StatusRecord = z.infer<typeof StatusRecord>;

/** Sessions' status records. */
export interface StatusStore {
  /**
   * Writes a session's status when the stored one is at `status.version - 1` (none stored counts as 0), and
   * moves the session index's `updated_at` forward to its last report's time (creating the entry), and
   * sets the index's state, state_since, note and reported_at from the record (session-summary.ts
   * `statusSummaryOf`) in the same write.
   * The alert events of the change (`outbox`, lib/store/alerts.ts) are written in the same transaction.
   * @throws StateConflictError when another write got there first (read it again and retry)
   */
  putStatus(status: StatusRecord, outbox?: OutboxEvent[]): Promise<void>;
  getStatus(tenant: string, sid: string): Promise<StatusRecord | null>;
}

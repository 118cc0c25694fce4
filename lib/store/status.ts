/**
 * The status port (seed 000): each session's reports as retention kept them, written under a version
 * condition. Part of the state store (lib/store/sqlite/status-work.ts, lib/store/dynamo/status-work.ts);
 * how a record is encoded is ./status-record.ts.
 */

/** What the session index keeps of the latest report (`putStatus` writes it; `statusSummaryOf`). */
export interface StatusSummary {
  state: string;
  /** when the trailing run of reports of this state began (the latest's time when the state changed) */
  state_since: string;
  note: string;
  reported_at: string;
}

/** One status report as kept (seed 000). */
export interface StatusEntry {
  state: string;
  note: string;
  /** declared events as posted (seed 000), kept for the evidence checks; [] once retention dropped them */
  events: unknown[];
  /** how many of this report's events retention dropped */
  events_dropped: number;
  /** the token id that reported it */
  reported_by: string;
  reported_at: string;
}

/**
 * A session's status: every report retention kept, oldest first (lib/service/status/retention.ts). The
 * store keeps it as given and gives it no meaning beyond `version` and the last report's time.
 */
export interface StatusRecord {
  tenant: string;
  sid: string;
  /** oldest first; the last is the session's current status; never empty */
  reports: StatusEntry[];
  /** declared events dropped by retention, over all reports (kept ones and dropped ones) */
  dropped_events: number;
  /** whole reports dropped to keep the record within its size */
  dropped_reports: number;
  /** 1 for the first write of the session's status, one more for each write after: `putStatus`'s condition */
  version: number;
  /**
   * when the trailing run of reports of the latest state began, kept across retention (reportStatus sets
   * it); absent in records written before it: then the first of the kept trailing reports of that state
   */
  state_since?: string;
}

/** Sessions' status records. */
export interface StatusStore {
  /**
   * Writes a session's status when the stored one is at `status.version - 1` (none stored counts as 0), and
   * moves the session index's `updated_at` forward to its last report's time (creating the entry), and
   * sets the index's state, state_since, note and reported_at from the record (session-summary.ts
   * `statusSummaryOf`) in the same write.
   * @throws StateConflictError when another write got there first (read it again and retry)
   */
  putStatus(status: StatusRecord): Promise<void>;
  getStatus(tenant: string, sid: string): Promise<StatusRecord | null>;
}

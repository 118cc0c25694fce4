/**
 * The session index port: one entry per session with its counters and the compact summary the board
 * shows (issue 14.1, 17.6), kept up to date by ingest and reports. Part of the state store
 * (lib/store/sqlite/, lib/store/dynamo/sessions.ts); how a summary is merged is ./session-summary.ts.
 */

import { z } from 'zod';
import { Count, Instant, SessionId } from '../contract/ids.js';

/** The session index entry. */
export const SessionRecord = z.object({
  tenant: z.string(),
  sid: SessionId,
  created_at: Instant,
  /** the last time anything of it was ingested or reported */
  updated_at: Instant,
  writers: Count,
  lines: Count,
  bytes: Count,
});
export type SessionRecord = z.infer<typeof SessionRecord>;

/** One person's first prompt in a session (`SessionSummary.asked`). */
export const AskedFirst = z.object({
  user_id: z.string(),
  /** the first line of the message's text, trimmed, at most 160 chars */
  text: z.string(),
  /** the message's `ts`, µs since the epoch */
  at: z.int(),
  /** the message's `id` (absent in summaries written before it was kept): corrections find it by this */
  id: z.string().optional(),
});
export type AskedFirst = z.infer<typeof AskedFirst>;

/**
 * A session index entry with the compact summary the board's overview shows (issue 14.1), kept up to date
 * as chunks are ingested (`mergeSessionSummary`) and reports are written (`putStatus`), so listing every
 * session of a tenant never reads a transcript or a status record. Sessions stored before it read as
 * null and [] until their next chunk or report.
 */
export const SessionSummary = SessionRecord.extend({
  /** the first line of the session's earliest `message` (by its ts, across writers), at most 160 chars */
  title: z.string().nullable(),
  /** the note of the first report that had one (a title for a session without messages) */
  first_note: z.string().nullable(),
  /** user_ids of `message` and `participant.join` events, in the order first seen, at most 20 */
  people: z.array(z.string()),
  /** the writers' `meta.agent`, in the order first seen, at most 20 */
  agents: z.array(z.string()),
  /**
   * what each of `people` asked first: the first line of their earliest `message` (by its ts), at most 160
   * chars, in the order of `people`; a person without a message (joined only) has no entry (issue 14.4)
   */
  asked: z.array(AskedFirst),
  /** the latest report's state, note and time; null when nothing was reported */
  state: z.string().nullable(),
  /** when the trailing run of reports of `state` began */
  state_since: Instant.nullable(),
  note: z.string().nullable(),
  reported_at: Instant.nullable(),
});
export type SessionSummary = z.infer<typeof SessionSummary>;

/**
 * A `correction` of a message's `text` (seed 001), as the summary keeps it: the corrected title text of
 * its target (null when the corrected first line is blank) and the correction's merged-order key
 * `(ts, w, seq)`, the last of which wins (lib/log/replay/corrections.ts).
 */
export const TextFix = z.object({
  /** the corrected event's id (`target_id`) */
  id: z.string(),
  text: z.string().nullable(),
  ts: z.number(),
  w: z.string(),
  seq: z.number(),
});
export type TextFix = z.infer<typeof TextFix>;

/**
 * A correction of a message's `user_id` whose message was not in the same chunk (ingest-summary.ts
 * `summarizeChunk` applies those that were): `id` is the `target_id`, placed in merged order like `TextFix`.
 */
export const UserFix = TextFix.omit({ text: true }).extend({ user_id: z.string() });
export type UserFix = z.infer<typeof UserFix>;

/** What one chunk adds to its session's summary (what ingest found while it scanned the lines). */
export const SummaryDelta = z.object({
  /** the chunk's earliest message: its title text, its `ts` in µs since the epoch and its `id` */
  title: z.object({ text: z.string(), at: z.number(), id: z.string().optional() }).nullable(),
  people: z.array(z.string()),
  agents: z.array(z.string()),
  /** each person's earliest message in the chunk (absent: none) */
  asked: z.array(AskedFirst).optional(),
  /** the chunk's corrections of a `text` field (absent: none): the title and `asked` follow them */
  fixes: z.array(TextFix).optional(),
  /** the chunk's `user_id` corrections of messages not in it (absent: none): a tracked `asked` follows them */
  users: z.array(UserFix).optional(),
});
export type SummaryDelta = z.infer<typeof SummaryDelta>;

/**
 * A session index entry as the board reads it (`StateStore.boardCopies`, issue 17.6): its summary, and
 * the `version` of the status record its report copy was taken from (null: none, or a copy from before
 * the version was kept), so that a verdict computed from that version can be reused without the record.
 */
export const BoardCopy = SessionSummary.extend({ status_version: z.int().nullable() });
export type BoardCopy = z.infer<typeof BoardCopy>;

/** A page of a listing; `next` is an opaque cursor, null on the last page. */
export interface Page<T> {
  items: T[];
  next: string | null;
}

/** The session index. */
export interface SessionIndex {
  /** Exact: `writers`, `lines`, `bytes` and `updated_at` as the writers and reports stored them. */
  getSession(tenant: string, sid: string): Promise<SessionRecord | null>;
  /**
   * Newest `updated_at` first. DynamoDB moves a session in this order at most every 5 s (issue 17.1):
   * a listed `updated_at` is at most 5 s older than the session's last chunk (`getSession`'s), and its
   * counters may lag a chunk whose count is in flight; SQLite lists them exactly.
   */
  listSessions(tenant: string, limit: number, cursor: string | null): Promise<Page<SessionRecord>>;
  /**
   * Optional (issue 17.6): what the board shows of each of `sids` from its session index entry alone,
   * the copy of its latest report and its agents (`BoardCopy`), so that a board page reads no status
   * record per session. A store without it (SQLite, whose reads are local) has the board read each
   * session's status and writers instead. Sessions with no entry are left out.
   */
  boardCopies?(tenant: string, sids: readonly string[]): Promise<Map<string, BoardCopy>>;
  /**
   * How many sessions the tenant has (the board says it, issue 8.7), counting no further than
   * `atMost + 1` (default: every one): a result above `atMost` says "more than `atMost`", so the board's
   * count reads a bounded number of items however large the tenant grows (issue 17.6). Like
   * `listSessions`, it may lag a session made a moment ago on a store whose listings are eventually
   * consistent.
   * @param atMost a whole number ≥ 0
   */
  countSessions(tenant: string, atMost?: number): Promise<number>;
  /**
   * Every session of the tenant with its summary, in no particular order: what the overview groups and
   * filters (5,000 sessions: one query on SQLite; 1 MB pages of one partition's Query on DynamoDB).
   */
  listSessionSummaries(tenant: string): Promise<SessionSummary[]>;
  /**
   * Adds what a chunk found to the session's summary (lib/store/session-summary.ts `mergeSummary`: an
   * earlier title replaces a later one; people and agents are added, up to 20 each). A session with no
   * index entry gets one, created and updated `at` (ISO 8601; default now) with no writers, lines or bytes,
   * which `advanceWriter` then counts from. Separate from `advanceWriter` on purpose (a condition in the
   * advance would fail chunks); idempotent, so ingest runs it BEFORE the advance: a failed merge fails the
   * chunk unacknowledged and unindexed, and the client's retry writes both (ADR 4).
   */
  mergeSessionSummary(tenant: string, sid: string, delta: SummaryDelta, at?: string): Promise<void>;
}

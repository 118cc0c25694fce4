/**
 * The two storage ports every deployment implements (DESIGN §1, §5): `SegmentStore` for the bytes of
 * segments, `StateStore` for small records with conditional writes. Adapters hold no business logic: the
 * rules (what ingest accepts, what a retry is) live in `lib/service`.
 */

import type { DigestIndex, DigestStore } from './digests.js';
import type { ByteRange } from './errors.js';
import type { TenantSettings, TenantSettingsChange } from './tenants.js';

/** Where one writer's segment lives. All three parts are validated ids before they reach a store. */
export interface SegmentKey {
  tenant: string;
  sid: string;
  w: string;
}

/** How a read of a segment may be stopped (`SegmentStore.readSegment`). */
export interface ReadSegmentOptions {
  /** aborted when the reader is gone (the client of a replay disconnected): the read stops and closes */
  signal?: AbortSignal | undefined;
}

/** The bytes of segments (S3: one object per chunk; filesystem: one appended file per writer). */
export interface SegmentStore {
  /**
   * Stores `bytes` as the chunk starting at byte `offset` of the segment. The caller has checked that
   * `offset` is the indexed length. Idempotent: when the same bytes are already there (a retry after a
   * crash between this write and the index update) it resolves. Bytes past `offset` left by a crashed
   * write are not part of the segment and may be replaced.
   * @throws ChunkConflictError when other bytes are already stored at `offset` and cannot be replaced
   */
  putChunk(key: SegmentKey, offset: number, bytes: Uint8Array): Promise<void>;
  /**
   * Streams bytes `[start, end)` of the segment (`end` is the indexed length; anything beyond it was never
   * acknowledged). Yields nothing for an empty range. `chunkBytes` is a hint for the size of the chunks
   * (a merge of many writers asks for small ones); an adapter may ignore it.
   *
   * Nothing is opened before the first read, and whatever is open (a file, a GET) is released as soon as
   * the stream ends, fails, is closed early by its consumer (`return()`), or `options.signal` is aborted;
   * an abort ends the stream with the signal's reason (an `AbortError`). An adapter reads at most a few
   * chunks ahead of its consumer.
   */
  readSegment(
    key: SegmentKey,
    end: number,
    start?: number,
    chunkBytes?: number,
    options?: ReadSegmentOptions,
  ): AsyncIterable<Uint8Array>;
  /**
   * The first byte range of `[0, end)` the store does not hold, or null when it holds all of it (`end` is
   * the indexed length). A range is data loss: bytes acknowledged and gone. Readers ask before they
   * stream, so a loss is answered with an error status instead of a short body (issue 8).
   */
  missingBytes(key: SegmentKey, end: number): Promise<ByteRange | null>;
  /**
   * A torn tail of `[0, end)`, asked once `missingBytes` found the bytes there: `end` is an indexed
   * length, and every chunk the service acknowledges ends with a newline, so byte `end - 1` must be one.
   * When it is not (a crash on ext4 or XFS often keeps a file's size but turns its tail into NUL bytes),
   * the range from the byte after the last newline before it to `end`: bytes that are not the ones
   * acknowledged (issue 8). Null when the byte is a newline, when `end` is 0, or when the store does not
   * hold `end` bytes (then `missingBytes` says so). A store whose chunks cannot be torn in place (S3: each
   * chunk an object written whole) answers null without reading.
   */
  tornTail(key: SegmentKey, end: number): Promise<ByteRange | null>;
}

/** The stores of a deployment (lib/deploy opens them: local.ts or aws.ts). */
export interface Stores {
  segments: SegmentStore;
  state: StateStore;
  /** the signed audit digests (issue 15): files beside the segments, or S3 objects under the session */
  digests: DigestStore;
}

/** A token as stored: never the secret, only its SHA-256 (hex). Times are ISO 8601 strings. */
export interface TokenRecord {
  id: string;
  tenant: string;
  hash: string;
  /**
   * what the token may do, as given when it was made: scope names (lib/contract/scopes.ts), which the
   * store keeps without giving them a meaning; the service decides what each grants
   */
  scopes: string[];
  /** bound to this session only, or null */
  session: string | null;
  label: string | null;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
  /**
   * the token that minted this one (`POST /v1/sessions/{sid}/tokens`), or null for a token made by an
   * admin or the operator; a token is refused while any token up its chain is revoked or expired
   */
  parent: string | null;
  /** the first token of its chain (its own id when `parent` is null): whose rate-limit allowance it uses */
  root: string;
}

/** One accepted chunk of a writer's segment: what a retry of it is answered with. */
export interface ChunkRecord {
  offset: number;
  length: number;
  sha256: string;
  /** the writer's totals after this chunk */
  lines: number;
  last_seq: number | null;
  /**
   * the writer's chained digest after this chunk (lib/audit/chain.ts `nextChain`); absent in records
   * written before chains were kept (issue 15)
   */
  chain?: string;
}

/** What is stored of a writer (DESIGN §4 `GET …/writers/{w}`). */
export interface WriterRecord {
  tenant: string;
  sid: string;
  w: string;
  length: number;
  lines: number;
  last_seq: number | null;
  ended: boolean;
  /** `meta.agent` from its writer.start, when it had one */
  agent: string | null;
  /**
   * `meta.provenance` of its writer.start as read at its first chunk (lib/log/format/provenance.ts: a kind, or
   * `unknown`); null for a writer indexed before provenance was kept (issue 24.1)
   */
  provenance: string | null;
  /**
   * the token that uploaded its first chunk, as the server knew it then (id and label): what a verdict
   * names as having put this writer on record, never read from the writer's own bytes; null for a writer
   * indexed before it was kept (issue 24.1)
   */
  token_id: string | null;
  token_label: string | null;
  /**
   * a chunk after the first came from another token than `token_id` (a session token minted from it
   * included): bytes another token appended are no record of this writer's own (issue 24.1)
   */
  mixed_tokens: boolean;
  /**
   * the chained digest of the segment's chunks of [0, length) (lib/audit/chain.ts; GENESIS_CHAIN for
   * length 0); null for a writer indexed before chains were kept, until ingest recomputes it (issue 15.1)
   */
  chain: string | null;
  created_at: string;
  updated_at: string;
}

/** The session index entry. */
export interface SessionRecord {
  tenant: string;
  sid: string;
  created_at: string;
  /** the last time anything of it was ingested or reported */
  updated_at: string;
  writers: number;
  lines: number;
  bytes: number;
}

/**
 * A session index entry with the compact summary the board's overview shows (issue 14.1), kept up to date
 * as chunks are ingested (`mergeSessionSummary`) and reports are written (`putStatus`), so listing every
 * session of a tenant never reads a transcript or a status record. Sessions stored before it read as
 * null and [] until their next chunk or report.
 */
export interface SessionSummary extends SessionRecord {
  /** the first line of the session's earliest `message` (by its ts, across writers), at most 160 chars */
  title: string | null;
  /** the note of the first report that had one (a title for a session without messages) */
  first_note: string | null;
  /** user_ids of `message` and `participant.join` events, in the order first seen, at most 20 */
  people: string[];
  /** the writers' `meta.agent`, in the order first seen, at most 20 */
  agents: string[];
  /**
   * what each of `people` asked first: the first line of their earliest `message` (by its ts), at most 160
   * chars, in the order of `people`; a person without a message (joined only) has no entry (issue 14.4)
   */
  asked: AskedFirst[];
  /** the latest report's state, note and time; null when nothing was reported */
  state: string | null;
  /** when the trailing run of reports of `state` began */
  state_since: string | null;
  note: string | null;
  reported_at: string | null;
}

/** One person's first prompt in a session (`SessionSummary.asked`). */
export interface AskedFirst {
  user_id: string;
  /** the first line of the message's text, trimmed, at most 160 chars */
  text: string;
  /** the message's `ts`, µs since the epoch */
  at: number;
  /** the message's `id` (absent in summaries written before it was kept): corrections find it by this */
  id?: string;
}

/**
 * A `correction` of a message's `text` (seed 001), as the summary keeps it: the corrected title text of
 * its target (null when the corrected first line is blank) and the correction's merged-order key
 * `(ts, w, seq)`, the last of which wins (lib/log/corrections.ts).
 */
export interface TextFix {
  /** the corrected event's id (`target_id`) */
  id: string;
  text: string | null;
  ts: number;
  w: string;
  seq: number;
}

/**
 * A correction of a message's `user_id` whose message was not in the same chunk (ingest-summary.ts
 * `summarizeChunk` applies those that were): `id` is the `target_id`, placed in merged order like `TextFix`.
 */
export interface UserFix {
  id: string;
  user_id: string;
  ts: number;
  w: string;
  seq: number;
}

/** What one chunk adds to its session's summary (what ingest found while it scanned the lines). */
export interface SummaryDelta {
  /** the chunk's earliest message: its title text, its `ts` in µs since the epoch and its `id` */
  title: { text: string; at: number; id?: string } | null;
  people: string[];
  agents: string[];
  /** each person's earliest message in the chunk (absent: none) */
  asked?: AskedFirst[];
  /** the chunk's corrections of a `text` field (absent: none): the title and `asked` follow them */
  fixes?: TextFix[];
  /** the chunk's `user_id` corrections of messages not in it (absent: none): a tracked `asked` follows them */
  users?: UserFix[];
}

/**
 * A session index entry as the board reads it (`StateStore.boardCopies`, issue 17.6): its summary, and
 * the `version` of the status record its report copy was taken from (null: none, or a copy from before
 * the version was kept), so that a verdict computed from that version can be reused without the record.
 */
export interface BoardCopy extends SessionSummary {
  status_version: number | null;
}

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

/**
 * A work item (seed 004, lib/service/work.ts): what an actor reports it is doing, its lease and its
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
   * that drops it (lib/service/work-keys.ts), so the item stays bounded and no key is applied twice
   */
  applied: Array<{ key: string; op: string; hash: string; at: string }>;
  /** how many keys have left `applied` for the claimed keys (absent: none) */
  applied_archived?: number;
  /**
   * the token whose request started the item, and the first token of its chain (`TokenRecord.root`):
   * what ownership is proved by (lib/service/work-owner.ts, issue 24.3). Never answered to a client.
   * Absent in items started before it was kept.
   */
  started_by?: { token: string; root: string };
  updated_at: string;
  /** 1 when started, one more for each write: `putWork`'s condition */
  version: number;
}

/** The writer index after a chunk is accepted. */
export interface WriterAdvance {
  length: number;
  lines: number;
  last_seq: number | null;
  ended: boolean;
  agent: string | null;
  /** set with the writer's first chunk, kept after (`WriterRecord`) */
  provenance: string | null;
  token_id: string | null;
  token_label: string | null;
  /** true once any chunk came from another token than the first's (sticky: never set back to false) */
  mixed_tokens: boolean;
  /** the record of this chunk, `chain` included */
  chunk: ChunkRecord;
  /** the writer's chained digest after this chunk (= `chunk.chain`) */
  chain: string;
  /**
   * mark the session due a digest now (`DigestIndex.listDigestsDue`): a writer's first chunk, its
   * writer.end, a chunk after its end, or the first chunk after a day without one (issue 15.2)
   */
  digest_due: boolean;
  at: string;
}

/** A tenant's stored bytes (for the storage quota, DESIGN §7). */
export interface TenantUsage {
  /** bytes of segments, every writer of every session */
  bytes: number;
}

/** A page of a listing; `next` is an opaque cursor, null on the last page. */
export interface Page<T> {
  items: T[];
  next: string | null;
}

/** Small records with conditional writes (DynamoDB on AWS, SQLite locally). */
export interface StateStore extends DigestIndex {
  /** @throws StateConflictError when the tenant exists */
  createTenant(tenant: string, at: string): Promise<void>;
  tenantExists(tenant: string): Promise<boolean>;
  /**
   * The tenant's own limits from its tenant record (./tenant-settings.ts; issue 17.1, 17.3), strongly
   * consistent; a tenant nothing was set for reads all null (the deployment's). Null when there is no
   * such tenant. Callers on a request path cache it (lib/service/tenant-limits.ts).
   * @throws Error when the record holds values `TenantSettingsSchema` refuses
   */
  getTenantSettings(tenant: string): Promise<TenantSettings | null>;
  /**
   * Applies `change` to the tenant's settings (a field given is set, null back to the deployment's; one
   * left out is kept) and stamps them `at` (ISO 8601), in one conditional write. Returns the settings
   * after it, or null when there is no such tenant (nothing is written then).
   * @throws ZodError for a change `TenantSettingsChangeSchema` refuses, before anything is written
   */
  setTenantSettings(tenant: string, change: TenantSettingsChange, at: string): Promise<TenantSettings | null>;

  /** @throws StateConflictError when a token with this hash or id exists */
  putToken(token: TokenRecord): Promise<void>;
  getTokenByHash(hash: string): Promise<TokenRecord | null>;
  listTokens(tenant: string): Promise<TokenRecord[]>;
  /** Marks a token revoked; false when the tenant has no such token. */
  revokeToken(tenant: string, id: string, at: string): Promise<boolean>;
  /** Records a use (best effort, may be coarse). */
  touchToken(hash: string, at: string): Promise<void>;
  /** The tenant's token with this id (strongly consistent), or null: how a token's chain is checked. */
  getTokenById(tenant: string, id: string): Promise<TokenRecord | null>;
  /**
   * How many tokens of the tenant `parent` minted that are not revoked and expire after `at` (ISO) or
   * never: what the cap on a token's live children counts.
   */
  countLiveChildren(tenant: string, parent: string, at: string): Promise<number>;

  /**
   * The server secret called `name`, storing `candidate` first when there is none yet. The first write
   * wins: every caller, in every process, gets the same value back (e.g. the key cursors are signed with).
   */
  serverSecret(name: string, candidate: string): Promise<string>;

  getWriter(tenant: string, sid: string, w: string): Promise<WriterRecord | null>;
  listWriters(tenant: string, sid: string): Promise<WriterRecord[]>;
  getChunk(tenant: string, sid: string, w: string, offset: number): Promise<ChunkRecord | null>;
  /**
   * A writer's chunk records with `offset >= from`, by offset, at most `limit` (1..1000) of them: what an
   * upload compares its file's bytes with (SHA-256 per chunk) before it sends more.
   */
  listChunks(tenant: string, sid: string, w: string, from: number, limit: number): Promise<ChunkRecord[]>;
  /**
   * Advances the writer index from `fromLength` (0 and absent for a new writer) and records the chunk,
   * atomically; then counts it in the session index and the tenant's usage (SQLite: in the same
   * transaction; DynamoDB: right after it, outside it, issue 17.1: the writer item is the truth and
   * `getSession` reads it, listings may lag a moment). Resolves once both are done.
   * @throws StateConflictError (with the current length) when the stored length is not `fromLength`
   */
  advanceWriter(
    tenant: string,
    sid: string,
    w: string,
    fromLength: number,
    next: WriterAdvance,
  ): Promise<void>;

  /**
   * What a tenant stores: the sum of its writers' indexed lengths, kept as a running total by
   * `advanceWriter` (so it costs one small read, not a scan). A tenant with nothing stored has 0 bytes.
   * For the soft storage quota: DynamoDB answers from a figure of this process at most 30 s old, plus
   * this process's own advances since (issue 17.1), so other processes' chunks may be missing from it.
   */
  tenantUsage(tenant: string): Promise<TenantUsage>;

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

  /**
   * Writes a session's status when the stored one is at `status.version - 1` (none stored counts as 0), and
   * moves the session index's `updated_at` forward to its last report's time (creating the entry), and
   * sets the index's state, state_since, note and reported_at from the record (session-summary.ts
   * `statusSummaryOf`) in the same write.
   * @throws StateConflictError when another write got there first (read it again and retry)
   */
  putStatus(status: StatusRecord): Promise<void>;

  /**
   * Writes a work item when the stored one is at `item.version - 1` (none stored counts as 0), and moves
   * the session index's `updated_at` forward to the item's `updated_at` (creating the entry).
   * @throws StateConflictError when another write got there first (read it again and retry)
   */
  putWork(item: WorkItem): Promise<void>;
  getWork(tenant: string, id: string): Promise<WorkItem | null>;
  /** The tenant's work items (of one session when given), newest started first, at most `limit` (1..500). */
  listWork(tenant: string, options: { session?: string; limit: number }): Promise<WorkItem[]>;
  getStatus(tenant: string, sid: string): Promise<StatusRecord | null>;

  /**
   * Claims `key` within `scope` (both free text, e.g. an `Idempotency-Key` within `work:start:{sid}`) for
   * `value`, unless it is claimed already: one conditional write, so of any number of concurrent claims
   * of one key, in any number of processes, exactly one wins and every caller is answered the same value.
   * A claim is kept at least 30 days (DynamoDB: removed by TTL after that; SQLite: kept).
   * @returns the value the key holds: `value` when this call claimed it, the first claimant's otherwise
   */
  claimKey(tenant: string, scope: string, key: string, value: string): Promise<string>;
  /**
   * The value `key` holds within `scope` (strongly consistent), or null when it is not claimed: a read
   * that claims nothing, for a claim made by another request (e.g. a work item's archived keys).
   */
  readClaim(tenant: string, scope: string, key: string): Promise<string | null>;

  close(): Promise<void>;
}

/** A conditional write lost: the record is not in the state the caller read. */
export class StateConflictError extends Error {
  override name = 'StateConflictError';
  constructor(
    message: string,
    /** for writer advances: the length actually stored */
    readonly currentLength?: number,
  ) {
    super(message);
  }
}

/** Other bytes are already stored at this offset of the segment. */
export class ChunkConflictError extends Error {
  override name = 'ChunkConflictError';
}

/** A listing cursor this store did not make. */
export class InvalidCursorError extends Error {
  override name = 'InvalidCursorError';
}

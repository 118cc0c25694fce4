/**
 * The search port (issue 30, DESIGN §6d "engines, not home-made ones"): a full-text index of a tenant's
 * sessions, kept as the segments arrive and rebuilt from them with the same result. Two adapters pass one
 * contract suite (test/store/contract/search-*.test.ts): SQLite FTS5 in the local data directory's
 * database (lib/store/sqlite/search.ts) and PostgreSQL full-text search (`tsvector`, GIN, row-level
 * security) over `pg` or the RDS Data API (lib/store/postgres/).
 *
 * What the engine is given is already decided by the service (lib/service/search/): each document's text
 * as the timeline shows it, its `terms` (lib/service/search/terms.ts: lowercase words, space-separated, so
 * both engines match the same words), and its facets. The engine matches, filters and ranks; it never
 * reads a transcript and never decides what is searchable.
 *
 * Corrections (seed 001: the last in merged order wins): a document keeps its own text and terms; a
 * correction of its `field` is stored as a `SearchFix`, and the document is found by, and shows, the
 * latest fix's value in `(at_us, w, seq)` order, whichever arrived first. Every query is filtered by tenant
 * in the engine (on PostgreSQL by row-level security as well).
 */
import { z } from 'zod';
import { SEARCH_DOC_TYPES } from '../contract/search.js';

/** Longest text a document keeps, in characters: the index holds what a reader would look for, bounded. */
export const SEARCH_TEXT_MAX = 16_384;

/**
 * A query ranks at most its newest `SEARCH_CANDIDATES` matches (issue 30, SEARCH-IDF): an engine takes
 * the documents matching the query's words, filters and exclusions newest first (SQLite: newest indexed,
 * FTS5's rowid order, read from its doclists without a sort), stops at this many, and ranks those alone,
 * each by its own terms (no statistic of other documents, so no other tenant's words move a tenant's
 * order, and a word in most documents costs this many rows, not a sort of every match). An older match
 * is not answered: a query that has more matches than this needs more words or filters (`after:`,
 * `session:`). More than the service pages through (`MAX_SEARCH_DEPTH`, lib/contract/search.ts, and the
 * one hit past a page it asks for).
 */
export const SEARCH_CANDIDATES = 2_000;

/** One searchable thing: an event of a segment, or a session's status report or work item. */
export const SearchDocSchema = z.object({
  sid: z.string(),
  /** the writer ('' for a report: status and work records are not a writer's) */
  w: z.string(),
  /** the event's seq in its segment (a report: its position among the session's reports, from 1) */
  seq: z.number().int().min(0),
  /** the event's id: what a correction targets and the timeline's anchor is made of */
  id: z.string(),
  /** the event's ts as written */
  ts: z.string(),
  /** the instant `ts` denotes, µs since the epoch (null: unreadable ts) */
  at_us: z.number().int().nullable(),
  type: z.enum(SEARCH_DOC_TYPES),
  /** which field of the event the text comes from ('text', 'input', 'value', 'note', 'summary') */
  field: z.string(),
  agent: z.string().nullable(),
  person: z.string().nullable(),
  /** the person's display name where the writer gave one */
  person_name: z.string().nullable(),
  tool: z.string().nullable(),
  /**
   * where an agent event's recorded cause is kept (`SearchCause.key`): the person of any message listed
   * under it is the event's person too (replay's recorded attribution, lib/log/replay/attribution.ts
   * bases 1 and 3). `e:<id>` for an event whose `caused_by` lists messages, `t:<turn_id>` for one whose
   * `caused_by` is null (its turn's `context_message_ids` say); null when it records no cause
   */
  cause: z.string().nullable(),
  /** the text shown (escaped, at most `SEARCH_TEXT_MAX` characters) */
  text: z.string().max(SEARCH_TEXT_MAX),
  /** `termsOf(text, tool, agent, person, person_name)`: what the engine matches */
  terms: z.string(),
});
export type SearchDoc = z.infer<typeof SearchDocSchema>;

/**
 * A stored row's document: its fields (an adapter's row carries more: effective text, facets in lower
 * case, rank) with the text and terms the hit shows. One mapping for both engines.
 */
export function storedDoc(r: Omit<SearchDoc, 'text' | 'terms'>, text: string, terms: string): SearchDoc {
  const { sid, w, seq, id, ts, at_us, type, field, agent, person, person_name, tool, cause } = r;
  return { sid, w, seq, id, ts, at_us, type, field, agent, person, person_name, tool, cause, text, terms };
}

/** A correction of a document's text field (the correction event's own document is a `SearchDoc` too). */
export const SearchFixSchema = z.object({
  sid: z.string(),
  target_id: z.string(),
  field: z.string(),
  /** the corrected value as text (the field's text form: `inputSummary` of an input) */
  text: z.string().max(SEARCH_TEXT_MAX),
  /** `termsOf(text)` and the target's facets' terms are the service's to join: these are the text's */
  terms: z.string(),
  /** the correction event's order key */
  at_us: z.number().int().nullable(),
  w: z.string(),
  seq: z.number().int(),
  /** the correction event's id */
  by: z.string(),
});
export type SearchFix = z.infer<typeof SearchFixSchema>;

/**
 * One recorded cause: message `message_id` is (one of) the cause(s) filed under `key` (a `SearchDoc.cause`):
 * an agent event's `caused_by` entries under `e:<its id>`, a `turn.start`'s `context_message_ids` under
 * `t:<turn_id>`. Kept whichever arrives first, the event or the turn's start, the message or its cause.
 */
export const SearchCauseSchema = z.object({
  sid: z.string(),
  key: z.string(),
  message_id: z.string(),
});
export type SearchCause = z.infer<typeof SearchCauseSchema>;

/** What indexing one writer's new bytes `[fromLength, toLength)` adds. */
export interface WriterBatch {
  tenant: string;
  sid: string;
  w: string;
  /** the writer's indexed length this batch starts from (`indexedLength`) */
  fromLength: number;
  /** the length indexed once it is applied: bytes up to the last complete line read */
  toLength: number;
  docs: SearchDoc[];
  fixes: SearchFix[];
  /** causes recorded by these bytes (replaced when the same sid, key and message_id come again) */
  causes: SearchCause[];
}

/** A session's facts that no segment holds: its reported state, its title, its reports' documents. */
export interface SessionFacts {
  tenant: string;
  sid: string;
  /** the session's current reported state (working, blocked, needs_review, done, unknown); null: none */
  state: string | null;
  /** the session's title (its first prompt as corrected); null: none yet */
  title: string | null;
  /** the status reports' notes and work items' summaries: they replace the session's earlier ones */
  reports: SearchDoc[];
}

/** What the engine is asked: the parsed query in the engine's terms (lib/service/search/query.ts). */
export interface EngineQuery {
  /** every entry must match: a word (one term) or a phrase (terms adjacent, in order) */
  match: Array<{ terms: string[] }>;
  /** no entry may match (`-word`, `-"a phrase"`) */
  exclude: Array<{ terms: string[] }>;
  /** each present filter must hold (values of one key: any of them; an empty list matches nothing) */
  filters: {
    agent?: string[];
    /**
     * matches `person` or `person_name` (case-insensitively), or for an agent event the person of any
     * message its `cause` key lists (`SearchCause`, same session, documents of type message)
     */
    person?: string[];
    state?: string[];
    /** lowercase; matches the tool name case-insensitively */
    tool?: string[];
    type?: Array<(typeof SEARCH_DOC_TYPES)[number]>;
    sid?: string[];
    /** `at_us >= after_us` */
    after_us?: number;
    /** `at_us < before_us` */
    before_us?: number;
  };
  limit: number;
  offset: number;
}

/** One hit as the engine answers it: the document with its effective text, and the session's facts. */
export interface EngineHit {
  doc: SearchDoc;
  /** true when a fix changed `doc.text` (the fix's text is then in `doc.text`) */
  corrected: boolean;
  title: string | null;
  state: string | null;
  /**
   * the engine's own score, higher is better (only comparable within one answer): from the document's own
   * terms alone, never from other documents (0 when the query has no words)
   */
  rank: number;
}

/** The size of a tenant's index (the benchmark reports it). */
export interface SearchIndexStats {
  docs: number;
  /**
   * the size of the tenant's index, in bytes, where the engine can say (each adapter says how it counts);
   * another tenant's writes never move it (SEARCH-STATUS-BYTES)
   */
  bytes: number | null;
}

/** A query the engine cancelled at its time limit (PostgreSQL's `statement_timeout`, SQLSTATE 57014). */
export class SearchTimeoutError extends Error {
  constructor(options?: { cause?: unknown }) {
    super('the search took longer than its time limit and was cancelled', options);
    this.name = 'SearchTimeoutError';
  }
}

/** The search engine port (see the module comment). */
export interface SearchIndex {
  /** Bytes of the writer's segment indexed so far (0: none). */
  indexedLength(tenant: string, sid: string, w: string): Promise<number>;
  /**
   * Adds `batch` in one transaction, on condition that the writer's indexed length is still
   * `batch.fromLength`; documents already there (same sid, w, seq) are replaced, so a replay of a batch
   * changes nothing. Answers false, writing nothing, when the indexed length is another.
   */
  applyWriter(batch: WriterBatch): Promise<boolean>;
  /** Replaces the session's facts and report documents (one transaction). */
  putSessionFacts(facts: SessionFacts): Promise<void>;
  /** Forgets everything of a session (before a reindex), or of the whole tenant when `sid` is null. */
  dropSession(tenant: string, sid: string | null): Promise<void>;
  /**
   * The hits of `query` in the tenant, best first (rank, then newest, then sid, w, seq); of a query with
   * words, only its newest `SEARCH_CANDIDATES` matches are ranked and answered.
   * @throws SearchTimeoutError when the engine cancelled it at the deployment's time limit
   */
  query(tenant: string, query: EngineQuery): Promise<EngineHit[]>;
  /** The tenant's document count and the index's size. */
  stats(tenant: string): Promise<SearchIndexStats>;
  close(): Promise<void>;
}

/**
 * An entry of the indexing queue (DESIGN §6d outbox): "this writer has new bytes" or "this session's
 * reports changed". Written in the same transaction as the change (the writer advance; the status or
 * work write), so no accepted chunk escapes indexing; delivered at least once, and indexing is idempotent
 * (the engine's indexed length, the facts replaced whole).
 */
export const SearchQueueEntrySchema = z.object({
  tenant: z.string(),
  sid: z.string(),
  /** a writer id, or '' for the session's facts (status, work, title) */
  w: z.string(),
  /** ISO 8601 of the first change not yet indexed (the lag is measured from it) */
  since: z.string(),
  /** grows with every change queued for the entry: `doneSearchQueue` removes the version it was given only */
  version: z.number().int().min(1),
});
export type SearchQueueEntry = z.infer<typeof SearchQueueEntrySchema>;

/** The local queue of the state store (SQLite): the server drains it (lib/service/search/drain.ts). */
export interface SearchQueue {
  /** Up to `max` entries, oldest first. */
  takeSearchQueue(max: number): Promise<SearchQueueEntry[]>;
  /**
   * Removes the entry if its version is still `entry.version`; a change queued since (a higher version)
   * keeps it, so it is indexed again: at least once.
   */
  doneSearchQueue(entry: SearchQueueEntry): Promise<void>;
  /**
   * Queues an entry by hand (a reindex; a change outside a store transaction), as a change in a store
   * transaction does: a new entry at `since`, or the existing one's version raised and its older `since` kept.
   */
  enqueueSearch(entry: { tenant: string; sid: string; w: string; since: string }): Promise<void>;
  /** The tenant's queue: how many entries wait and the oldest `since` (null when it is empty). */
  searchQueueOf(tenant: string): Promise<{ entries: number; oldest: string | null }>;
}

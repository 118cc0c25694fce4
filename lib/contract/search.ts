/**
 * Search across a tenant's sessions (issue 30): the request and answer of `GET /v1/search`, shared by the
 * server, `hansard search` and the board. The query language is docs/search.md; it is parsed on the server
 * (lib/service/search/query.ts), so a client sends the text as the person typed it.
 */
import { z } from 'zod';

/** Longest query, in characters (UTF-16 units): a query is bounded in length (issue 30 item 2). */
export const MAX_QUERY_CHARS = 512;
/** Most words and phrases in one query (each one more index lookup). */
export const MAX_QUERY_TERMS = 16;
/** Most values of one filter key (`agent:a agent:b` is either). */
export const MAX_FILTER_VALUES = 8;
/** Most hits a page answers; `limit` defaults to `DEFAULT_SEARCH_LIMIT`. */
export const MAX_SEARCH_LIMIT = 50;
export const DEFAULT_SEARCH_LIMIT = 20;
/** How deep pages go: a cursor past this many hits is refused (a search is not an export). */
export const MAX_SEARCH_DEPTH = 1000;
/** Most characters of a hit's snippet, highlights included. */
export const SNIPPET_CHARS = 200;

/**
 * What a hit is (`type:` filter): a person's message, an agent's output, an agent's action (its tool and
 * one-line input), a note, a correction's value, or a status report's note / work item's summary.
 */
export const SEARCH_DOC_TYPES = ['message', 'output', 'action', 'note', 'correction', 'report'] as const;
export type SearchDocType = (typeof SEARCH_DOC_TYPES)[number];

/** The filter keys of the query language (docs/search.md). */
export const SEARCH_FILTER_KEYS = [
  'agent',
  'person',
  'state',
  'tool',
  'type',
  'session',
  'after',
  'before',
] as const;
export type SearchFilterKey = (typeof SEARCH_FILTER_KEYS)[number];

/** `GET /v1/search`'s query string. */
export const SearchParams = z.object({
  q: z
    .string()
    .min(1, 'the query is empty: give words, "a phrase" or filters such as agent:claude-code')
    .max(MAX_QUERY_CHARS, `a query holds at most ${MAX_QUERY_CHARS} characters`),
  limit: z.coerce.number().int().min(1).max(MAX_SEARCH_LIMIT).default(DEFAULT_SEARCH_LIMIT),
  cursor: z
    .string()
    .max(200)
    .regex(/^[A-Za-z0-9_-]+$/, 'a cursor is the next_cursor of an earlier answer')
    .optional(),
});
export type SearchParams = z.infer<typeof SearchParams>;

/** A piece of a snippet: `hit` true where it matched a word or phrase of the query. */
export const SnippetPart = z.object({ text: z.string(), hit: z.boolean() });
export type SnippetPart = z.infer<typeof SnippetPart>;

/** One hit: the row of a session's timeline it points at, and why it matched. */
export const SearchHit = z.object({
  sid: z.string(),
  /** the session's title (its first prompt as corrected), when it has one */
  title: z.string().nullable(),
  /** the session's reported state when the hit was indexed (null: no report) */
  state: z.string().nullable(),
  type: z.enum(SEARCH_DOC_TYPES),
  /** the event's id (a report: the report's or work item's id) */
  id: z.string(),
  /** the writer that wrote it ('' for a status report or work item, which no writer wrote) */
  w: z.string(),
  /** the event's ts as written (RFC 3339) */
  ts: z.string(),
  agent: z.string().nullable(),
  /** the person: a message's user_id, a note's author, the person of the message an action answered */
  person: z.string().nullable(),
  tool: z.string().nullable(),
  /** the text around the match, the matched words marked; escaped for reading (no control characters) */
  snippet: z.array(SnippetPart),
  /** true when a correction changed the text found */
  corrected: z.boolean(),
  /** the board's link to the row: `/sessions/{sid}?at=<anchor>#<anchor>` */
  link: z.string(),
});
export type SearchHit = z.infer<typeof SearchHit>;

export const SearchAnswer = z.object({
  /** the query as parsed, for a client to show what was searched */
  query: z.object({
    words: z.array(z.string()),
    phrases: z.array(z.string()),
    filters: z.record(z.string(), z.array(z.string())),
  }),
  hits: z.array(SearchHit),
  /** pass as `cursor` for the next page; null when there is none */
  next_cursor: z.string().nullable(),
  /**
   * true when more hits exist past the deepest page a query may reach (`MAX_SEARCH_DEPTH`): narrow the
   * query to see them (next_cursor is then null although the list is not over)
   */
  depth_limited: z.boolean(),
  /** the session a session-bound token searches, whatever the query says; null for a tenant-wide token */
  session_only: z.string().nullable(),
  /**
   * changes of the tenant waiting to be indexed (null where the engine's queue cannot say, AWS, or for a
   * session-bound token): while it is above 0, the newest lines and a rebuild's sessions may be missing
   */
  pending: z.number().int().min(0).nullable(),
  /**
   * how far behind ingest the index may be: the oldest entry of the indexing queue not yet indexed, as
   * seconds (0 when it is empty; null when the engine cannot say)
   */
  lag_seconds: z.number().nullable(),
});
export type SearchAnswer = z.infer<typeof SearchAnswer>;

/** `POST /v1/search/reindex`'s body: one session, or every session of the tenant when `sid` is absent. */
export const ReindexRequest = z.object({ sid: z.string().optional() });
export type ReindexRequest = z.infer<typeof ReindexRequest>;

/** What a reindex queued: the index of those sessions is dropped and rebuilt from the stored segments. */
export const ReindexAnswer = z.object({
  sessions: z.number().int().min(0),
  writers: z.number().int().min(0),
  /** ISO 8601: the rebuild is done once `GET /v1/search/status` answers `queued: 0` */
  queued_at: z.string(),
});
export type ReindexAnswer = z.infer<typeof ReindexAnswer>;

/** `GET /v1/search/status`: how far indexing is behind ingest for the tenant. */
export const SearchStatus = z.object({
  /** entries waiting in the indexing queue (null: the engine's queue cannot say, AWS; a session-bound token) */
  queued: z.number().int().min(0).nullable(),
  lag_seconds: z.number().nullable(),
  /** the tenant's indexed documents and their bytes (null for a session-bound token: the tenant's size is not its to know) */
  docs: z.number().int().min(0).nullable(),
  bytes: z.number().int().min(0).nullable(),
});
export type SearchStatus = z.infer<typeof SearchStatus>;

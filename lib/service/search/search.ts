/**
 * `searchSessions` (issue 30 items 2, 3, 6): a query over the caller's tenant, ranked, each hit with its
 * snippet and the link to its timeline row. Bounded: the query's length and terms (query.ts), the page
 * (`MAX_SEARCH_LIMIT`), how deep pages go (`MAX_SEARCH_DEPTH`) and the engine's time (`SearchDeps.timeoutMs`).
 */
import { createHash } from 'node:crypto';
import {
  MAX_SEARCH_DEPTH,
  type SearchAnswer,
  type SearchHit,
  type SearchParams,
} from '../../contract/search.js';
import { type EngineHit, SearchTimeoutError } from '../../store/search.js';
import { requireScope, type ServiceContext } from '../shared/context.js';
import { AppError } from '../shared/errors.js';
import { idAnchor } from '../timeline/text.js';
import type { SearchDeps } from './deps.js';
import { parseQuery, toEngineQuery } from './query.js';
import { snippetOf } from './snippet.js';

/** The deployment's search, or 503 `search_unavailable`. */
export function searchDeps(ctx: ServiceContext): SearchDeps {
  if (!ctx.search) {
    throw new AppError('search_unavailable', 'this deployment has no search index configured');
  }
  return ctx.search;
}

/**
 * Searches the caller's tenant (a session-bound token: its own session only, whatever the query says).
 * @throws AppError `forbidden` without scope read or board; `bad_query` (400, `details.position`) for a
 *   query that does not parse (query.ts); `invalid_cursor` for a cursor of another query or past
 *   `MAX_SEARCH_DEPTH`; `search_unavailable` (503) with no index; `search_timeout` (503) when the engine
 *   cancelled the query at its time limit
 */
export async function searchSessions(ctx: ServiceContext, params: SearchParams): Promise<SearchAnswer> {
  requireScope(ctx, 'read', 'board');
  // The query's own faults first: a bad query is the caller's to fix whatever this deployment offers.
  const parsed = parseQuery(params.q);
  const offset = params.cursor === undefined ? 0 : offsetOf(params.cursor, params.q);
  const deps = searchDeps(ctx);
  const limit = Math.min(params.limit, MAX_SEARCH_DEPTH - offset);
  const query = toEngineQuery(parsed, { limit: limit + 1, offset }, ctx.now(), ctx.caller.session);
  let found: EngineHit[];
  try {
    found = limit <= 0 ? [] : await deps.index.query(ctx.tenant, query);
  } catch (err) {
    if (err instanceof SearchTimeoutError) {
      throw new AppError(
        'search_timeout',
        `the search took longer than ${deps.timeoutMs} ms and was stopped: add words or filters (session:, after:) to narrow it`,
        {},
        { cause: err },
      );
    }
    throw err;
  }
  const terms = new Set([...query.match].flatMap((m) => m.terms));
  const beyond = found.length > limit;
  const more = beyond && offset + limit < MAX_SEARCH_DEPTH;
  const bound = ctx.caller.session;
  // A session-bound token learns nothing of the tenant's activity: no queue figures.
  const queue = bound === null ? await queueFigures(ctx, deps) : { pending: null, lag: null };
  return {
    query: {
      words: parsed.words,
      phrases: parsed.phrases,
      filters: Object.fromEntries(Object.entries(parsed.filters)) as Record<string, string[]>,
    },
    hits: found.slice(0, limit).map((h) => hitOf(h, terms)),
    next_cursor: more ? cursorOf(offset + limit, params.q) : null,
    depth_limited: beyond && !more,
    session_only: bound,
    pending: queue.pending,
    lag_seconds: queue.lag,
  };
}

/**
 * The tenant's queue as an answer says it: entries waiting, and seconds since the oldest queued change
 * (0: none queued); nulls where there is no queue.
 */
export async function queueFigures(
  ctx: ServiceContext,
  deps: SearchDeps,
): Promise<{ pending: number | null; lag: number | null }> {
  if (!deps.queue) return { pending: null, lag: null };
  const { entries, oldest } = await deps.queue.searchQueueOf(ctx.tenant);
  return { pending: entries, lag: lagOf(ctx, oldest) };
}

function lagOf(ctx: ServiceContext, oldest: string | null): number {
  if (oldest === null) return 0;
  return Math.max(0, Math.round((ctx.now().getTime() - Date.parse(oldest)) / 100) / 10);
}

/** The link to a hit's row of the timeline (lib/board/timeline-links.tsx, the session page's `?at=`). */
export function hitLink(sid: string, w: string, id: string): string {
  if (w === '' && !/^d-\d+$/.test(id)) return `/sessions/${sid}#work`;
  const anchor = w === '' ? id : idAnchor(id);
  return `/sessions/${sid}?at=${encodeURIComponent(anchor)}#${anchor}`;
}

function hitOf(h: EngineHit, terms: ReadonlySet<string>): SearchHit {
  const d = h.doc;
  return {
    sid: d.sid,
    title: h.title,
    state: h.state,
    type: d.type,
    id: d.id,
    w: d.w,
    ts: d.ts,
    agent: d.agent,
    person: d.person,
    tool: d.tool,
    snippet: snippetOf(d.text, terms),
    corrected: h.corrected,
    link: hitLink(d.sid, d.w, d.id),
  };
}

/** A short digest of the query text: a cursor is good for the query it came from only. */
function queryMark(q: string): string {
  return createHash('sha256').update(q).digest('base64url').slice(0, 10);
}

function cursorOf(offset: number, q: string): string {
  return `${offset.toString(36)}_${queryMark(q)}`;
}

/** @throws AppError `invalid_cursor` for a cursor not made by `cursorOf` for this query */
function offsetOf(cursor: string, q: string): number {
  const m = /^([0-9a-z]{1,6})_([A-Za-z0-9_-]{10})$/.exec(cursor);
  const offset = m ? Number.parseInt(m[1] as string, 36) : Number.NaN;
  if (!m || m[2] !== queryMark(q) || !(offset > 0 && offset < MAX_SEARCH_DEPTH)) {
    throw new AppError(
      'invalid_cursor',
      'this cursor is not one of this query: pass the next_cursor of an answer to the same query',
    );
  }
  return offset;
}

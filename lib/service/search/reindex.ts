/**
 * Rebuilding the index from the stored segments (issue 30 item 5 `hansard search --reindex [SID]`), and
 * how far indexing is behind (`GET /v1/search/status`). A rebuild drops what the index holds of the
 * session(s) and queues every writer and the session's facts again: the drain then indexes them exactly
 * as it indexes new chunks, so the result is the one indexing as they arrived gave. Where there is no
 * local queue (AWS: the queue is the state table's stream), the sessions are indexed in the request.
 */
import type { ReindexAnswer, SearchStatus } from '../../contract/search.js';
import { isoNow, requireScope, requireSessionAccess, type ServiceContext } from '../shared/context.js';
import { notFound } from '../shared/errors.js';
import type { SearchDeps } from './deps.js';
import { indexQueued } from './indexer.js';
import { queueFigures, searchDeps } from './search.js';

/** Sessions listed per page while queueing a whole tenant. */
const PAGE = 200;

/**
 * Queues the rebuild of session `sid`, or of every session of the tenant when null.
 * @throws AppError `forbidden` without scope admin; `not_found` for a session the tenant does not have;
 *   `search_unavailable` (503) with no index
 */
export async function requestReindex(ctx: ServiceContext, sid: string | null): Promise<ReindexAnswer> {
  requireScope(ctx, 'admin');
  const deps = searchDeps(ctx);
  const at = isoNow(ctx);
  if (sid !== null) {
    requireSessionAccess(ctx, sid);
    if (!(await ctx.state.getSession(ctx.tenant, sid))) throw notFound('session');
    await deps.index.dropSession(ctx.tenant, sid);
    const writers = await rebuild(ctx, deps, sid, at);
    return { sessions: 1, writers, queued_at: at };
  }
  await deps.index.dropSession(ctx.tenant, null);
  let sessions = 0;
  let writers = 0;
  let cursor: string | null = null;
  do {
    const page = await ctx.state.listSessions(ctx.tenant, PAGE, cursor);
    for (const s of page.items) {
      sessions += 1;
      writers += await rebuild(ctx, deps, s.sid, at);
    }
    cursor = page.next;
  } while (cursor !== null);
  return { sessions, writers, queued_at: at };
}

/** Queues (or, with no queue, indexes now) the session's writers and facts; answers how many writers. */
async function rebuild(ctx: ServiceContext, deps: SearchDeps, sid: string, at: string): Promise<number> {
  const writers = await ctx.state.listWriters(ctx.tenant, sid);
  const targets = [...writers.map((w) => w.w), ''].map((w) => ({ tenant: ctx.tenant, sid, w }));
  for (const t of targets) {
    if (deps.queue) await deps.queue.enqueueSearch({ ...t, since: at });
    else await indexQueued({ segments: ctx.segments, state: ctx.state, index: deps.index, now: ctx.now }, t);
  }
  return writers.length;
}

/**
 * How far the tenant's index is behind ingest, and its size (all null for a session-bound token).
 * @throws AppError `forbidden` without scope read or board; `search_unavailable` (503) with no index
 */
export async function searchStatus(ctx: ServiceContext): Promise<SearchStatus> {
  requireScope(ctx, 'read', 'board');
  const deps = searchDeps(ctx);
  // A session-bound token learns nothing of the tenant's size or activity.
  if (ctx.caller.session !== null) return { queued: null, lag_seconds: null, docs: null, bytes: null };
  const [queue, stats] = await Promise.all([queueFigures(ctx, deps), deps.index.stats(ctx.tenant)]);
  return { queued: queue.pending, lag_seconds: queue.lag, docs: stats.docs, bytes: stats.bytes };
}

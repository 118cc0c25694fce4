import { WORK_LIST_LIMIT, type WorkList } from '../../contract/work.js';
import { requireScope, type ServiceContext } from '../shared/context.js';
import { notFound } from '../shared/errors.js';
import { workSummary } from './view.js';

/**
 * `GET /v1/work?session=&limit=` (scope `read`, `board` or `report`): the tenant's work items (one
 * session's when given; a session-bound token sees its own session's only), newest started first, at most
 * `limit` (1..500, default 100), each without its history: an item keeps up to 100 history entries (up
 * to about 250 KB of JSON), which a listing of hundreds would answer in one body of a hundred megabytes.
 * `GET /v1/work/{id}` answers one item with its history.
 */
export async function listWork({
  ctx,
  session,
  limit = WORK_LIST_LIMIT.default,
}: {
  ctx: ServiceContext;
  session?: string | null;
  limit?: number;
}): Promise<WorkList> {
  requireScope(ctx, 'read', 'board', 'report');
  const sid = ctx.caller.session ?? session ?? undefined;
  if (session && ctx.caller.session !== null && session !== ctx.caller.session) throw notFound('session');
  const n = Math.min(Math.max(1, Math.trunc(limit)), WORK_LIST_LIMIT.max);
  const items = await ctx.state.listWork(ctx.tenant, { ...(sid ? { session: sid } : {}), limit: n });
  const now = ctx.now();
  return { items: items.map((i) => workSummary(i, now)), as_of: now.toISOString() };
}

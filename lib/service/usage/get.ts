/**
 * `GET /v1/sessions/{sid}/usage[?by=…]` (issue 27 item 3): a session's token usage and list-price cost
 * from its writers' usage records (exact: the records, not the board's running counters), grouped by
 * writer, agent, person, model or day from their buckets; by turn from one read of the session's segments
 * (the buckets keep no turns), as the timeline reads it.
 */
import {
  COST_BASIS,
  foldSources,
  type GroupBy,
  PRICE_DATA,
  reportOf,
  totalOf,
} from '../../log/analyse/usage/index.js';
import { segmentSources } from '../../log/replay/replay.js';
import { requireScope, requireSessionAccess, type ServiceContext } from '../shared/context.js';
import { notFound } from '../shared/errors.js';
import { storedSegments } from '../shared/sources.js';
import { groupBuckets, groupTotals, sumBuckets } from './buckets.js';
import type { SessionUsage } from './schemas.js';
import { dayRange } from './tenant.js';

/**
 * The session's usage in the `UsageReport` shape (lib/log/analyse/usage/totals.ts), plus
 * `uncounted_writers`: writers stored before usage was counted (no record yet; recompute counts them).
 * `by: 'turn'` reads every segment (a whole-session read: the route holds a replay slot for it).
 * @throws AppError `bad_request` for `from`/`to` as `getTenantUsage` refuses them; `forbidden` without scope read or board; `not_found` when the session has no writer,
 *   is another tenant's, or another session's token asks; `data_loss` (500) for `by: 'turn'` when a
 *   segment lost acknowledged bytes
 */
export async function getSessionUsage({
  ctx,
  sid,
  by,
  from,
  to,
  signal,
}: {
  ctx: ServiceContext;
  sid: string;
  by?: GroupBy | undefined;
  /** only usage of these UTC days (ISO 8601 dates or date-times, inclusive); default all */
  from?: string | undefined;
  to?: string | undefined;
  /** the request's: a client gone away stops the segment read (`by: 'turn'`) */
  signal?: AbortSignal;
}): Promise<SessionUsage> {
  requireScope(ctx, 'read', 'board');
  requireSessionAccess(ctx, sid);
  const range = dayRange(from, to, null);
  const inRange = (day: string) => range === null || (day >= range.from && day <= range.to);
  const [writers, records] = await Promise.all([
    ctx.state.listWriters(ctx.tenant, sid),
    ctx.state.listWriterUsage(ctx.tenant, sid),
  ]);
  if (writers.length === 0) throw notFound('session');
  const uncounted = writers.filter((wr) => wr.length > 0 && !records.has(wr.w)).map((wr) => wr.w);
  const extra = uncounted.length > 0 ? { uncounted_writers: uncounted } : {};
  if (by === 'turn') {
    const segments = await storedSegments(ctx, sid);
    const { deltas } = await foldSources(segmentSources(segments, { signal }));
    return { ...reportOf(range ? deltas.filter((d) => inRange(d.day)) : deltas, 'turn'), ...extra };
  }
  const buckets = [...records].flatMap(([w, r]) =>
    r.buckets.filter((b) => inRange(b.day)).map((bucket) => ({ w, bucket })),
  );
  const report: SessionUsage = {
    total: totalOf(sumBuckets(buckets.map((b) => b.bucket))),
    by_model: groupTotals(groupBuckets(buckets, 'model')).map(({ key, ...t }) => ({ model: key, ...t })),
    price_data: PRICE_DATA,
    cost_basis: COST_BASIS,
  };
  if (by) {
    report.by = by;
    report.groups = groupTotals(groupBuckets(buckets, by));
  }
  return { ...report, ...extra };
}

/**
 * `GET /v1/usage?group_by=day|agent|person|model&from=&to=` (issue 27 item 3): a tenant's token usage and
 * list-price cost over a range of UTC days, from the buckets kept as chunks arrive (no transcript is
 * read), and its monthly budget (./budget.ts).
 */
import { COST_BASIS, PRICE_DATA, totalOf } from '../../log/analyse/usage/index.js';
import { requireScope, type ServiceContext } from '../shared/context.js';
import { AppError } from '../shared/errors.js';
import { groupBuckets, groupTotals, sumBuckets } from './buckets.js';
import { budgetOf, monthOf } from './budget.js';
import type { TenantGroupBy, TenantUsageAnswer } from './schemas.js';

/** Most days one answer covers. */
export const MAX_USAGE_DAYS = 366;

const DAY_MS = 86_400_000;

/**
 * `YYYY-MM-DD` of an ISO date or date-time (UTC), or null when it is neither: a day its month does not
 * have (2026-02-30, which `Date.parse` rolls over into March) and a day outside the years 0000-9999 once
 * taken to UTC (`0000-01-01T00:00+01:00`) are not dates.
 */
export function dayOfIso(v: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}(?:T[\d:.]+(?:Z|[+-]\d{2}:\d{2}))?$/.test(v)) return null;
  const date = Date.parse(`${v.slice(0, 10)}T00:00:00Z`);
  if (Number.isNaN(date) || new Date(date).toISOString().slice(0, 10) !== v.slice(0, 10)) return null;
  const t = Date.parse(v.length === 10 ? `${v}T00:00:00Z` : v);
  if (Number.isNaN(t)) return null;
  const day = new Date(t).toISOString().slice(0, 10);
  return /^\d{4}-\d{2}-\d{2}$/.test(day) ? day : null;
}

/**
 * The UTC days `[from, to]` asked for, each part defaulting to `dflt`'s; null when neither is given and
 * there is no default (all days).
 * @throws AppError `bad_request` for a date that is not ISO 8601, `from` after `to`, or a range over
 *   `MAX_USAGE_DAYS` days (when both ends are given or defaulted)
 */
export function dayRange(
  from: string | undefined,
  to: string | undefined,
  dflt: { from: string; to: string } | null,
): { from: string; to: string } | null {
  if (from === undefined && to === undefined && dflt === null) return null;
  const f = from === undefined ? (dflt?.from ?? '0000-01-01') : dayOfIso(from);
  const t = to === undefined ? (dflt?.to ?? '9999-12-31') : dayOfIso(to);
  if (f === null || t === null) {
    throw new AppError('bad_request', 'from and to are ISO 8601 dates (2026-12-01) or date-times (UTC)', {
      from: from ?? null,
      to: to ?? null,
    });
  }
  if (f > t) throw new AppError('bad_request', `from (${f}) is after to (${t})`, { from: f, to: t });
  if (dflt === null) return { from: f, to: t };
  const days = (Date.parse(t) - Date.parse(f)) / DAY_MS + 1;
  if (days > MAX_USAGE_DAYS) {
    throw new AppError(
      'bad_request',
      `the range covers ${days} days; ask at most ${MAX_USAGE_DAYS} at a time`,
      { from: f, to: t, max_days: MAX_USAGE_DAYS },
    );
  }
  return { from: f, to: t };
}

/**
 * The tenant's usage from `from` to `to` (UTC days, inclusive; default: this month up to today), grouped
 * by `group_by` (default day), with its budget.
 * @throws AppError `forbidden` without scope read, or for a session-bound token (it reads its own
 *   session's usage only); `bad_request` for a date that is not ISO 8601, `from` after `to`, or a range
 *   over `MAX_USAGE_DAYS` days
 */
export async function getTenantUsage({
  ctx,
  groupBy = 'day',
  from,
  to,
}: {
  ctx: ServiceContext;
  groupBy?: TenantGroupBy;
  from?: string | undefined;
  to?: string | undefined;
}): Promise<TenantUsageAnswer> {
  requireScope(ctx, 'read');
  if (ctx.caller.session !== null) {
    throw new AppError(
      'forbidden',
      "a session token reads its own session's usage only (GET /v1/sessions/{sid}/usage), not the tenant's",
      { required: ['read'], has: ctx.caller.scopes },
    );
  }
  const { first, today } = monthOf(ctx.now());
  const { from: f, to: t } = dayRange(from, to, { from: first, to: today })!;
  const [buckets, budget] = await Promise.all([ctx.state.listUsageBuckets(ctx.tenant, f, t), budgetOf(ctx)]);
  return {
    from: f,
    to: t,
    group_by: groupBy,
    total: totalOf(sumBuckets(buckets)),
    groups: groupTotals(
      groupBuckets(
        buckets.map((bucket) => ({ w: '', bucket })),
        groupBy,
      ),
    ),
    price_data: PRICE_DATA,
    cost_basis: COST_BASIS,
    budget,
  };
}

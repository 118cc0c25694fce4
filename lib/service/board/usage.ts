/**
 * What the board shows of usage and cost (issue 27 items 3–4, docs/usage.md): each row's session counters
 * and the tenant's (or a person's or agent's) totals for today and this month, with the monthly budget,
 * read from the counters kept as chunks arrive (`UsageStore`): no transcript is read to draw them.
 */
import { PRICE_DATA } from '../../log/analyse/usage/price.js';
import { addCounters, totalOf, type UsageCounters, zeroCounters } from '../../log/analyse/usage/totals.js';
import { nameForm } from '../../log/format/names.js';
import type { StoredUsageCounters } from '../../store/index.js';
import type { ServiceContext } from '../shared/context.js';
import type { BoardUsage, RowUsageSummary } from './overview-schemas.js';

/** How old a tenant's month of buckets may be when the board shows it, per process (ms). */
export const BOARD_USAGE_MAX_AGE_MS = 30_000;

/** A row's figures from its session counters; null when the session has none (no usage recorded yet). */
export function rowUsage(c: StoredUsageCounters | undefined): RowUsageSummary | null {
  if (!c) return null;
  const t = totalOf(c);
  return {
    cost_usd: t.cost_usd,
    input_tokens: t.input_tokens,
    output_tokens: t.output_tokens,
    cache_read_tokens: t.cache_read_tokens,
    cache_write_tokens: t.cache_write_tokens,
    turns: t.turns,
    unknown_turns: t.unknown_turns,
    unpriced_records: t.unpriced_records,
  };
}

/** The page's sessions' counters, by sid; an empty map when the store cannot answer (the board still shows). */
export async function rowCounters(
  ctx: ServiceContext,
  sids: readonly string[],
): Promise<Map<string, StoredUsageCounters>> {
  if (sids.length === 0) return new Map();
  return ctx.state.getSessionUsageCountersMany(ctx.tenant, sids).catch(() => new Map());
}

const cache = new WeakMap<
  object,
  Map<string, { at: number; buckets: Awaited<ReturnType<ServiceContext['state']['listUsageBuckets']>> }>
>();

/** The tenant's buckets of this month (UTC), at most `BOARD_USAGE_MAX_AGE_MS` old. */
async function monthBuckets(ctx: ServiceContext, now: Date) {
  const month = now.toISOString().slice(0, 7);
  const key = `${ctx.tenant}\u0000${month}`;
  let byTenant = cache.get(ctx.state);
  if (!byTenant) {
    byTenant = new Map();
    cache.set(ctx.state, byTenant);
  }
  const hit = byTenant.get(key);
  if (hit && now.getTime() - hit.at < BOARD_USAGE_MAX_AGE_MS && hit.at <= now.getTime()) return hit.buckets;
  const buckets = await ctx.state.listUsageBuckets(ctx.tenant, `${month}-01`, `${month}-31`);
  if (byTenant.size > 1000) byTenant.clear();
  byTenant.set(key, { at: now.getTime(), buckets });
  return buckets;
}

/**
 * Today's and this month's usage (UTC) of the tenant, or of one person or agent (`only`), and the
 * tenant's monthly budget against this month's list-price cost. Null when the store cannot answer.
 */
export async function boardUsage(
  ctx: ServiceContext,
  now: Date,
  only: { person?: string; agent?: string },
): Promise<BoardUsage | null> {
  try {
    const [buckets, settings] = await Promise.all([
      monthBuckets(ctx, now),
      ctx.state.getTenantSettings(ctx.tenant).catch(() => null),
    ]);
    const today = now.toISOString().slice(0, 10);
    const day = zeroCounters();
    const month = zeroCounters();
    const tenantMonth: UsageCounters = zeroCounters();
    const person = only.person === undefined ? undefined : nameForm(only.person);
    for (const b of buckets) {
      addCounters(tenantMonth, b.counters);
      if (person !== undefined && nameForm(b.person) !== person) continue;
      if (only.agent !== undefined && nameForm(b.agent) !== nameForm(only.agent)) continue;
      addCounters(month, b.counters);
      if (b.day === today) addCounters(day, b.counters);
    }
    const budgetUsd = settings?.monthly_budget_usd ?? null;
    const monthCost = tenantMonth.cost_micros / 1_000_000;
    return {
      today: rowUsage(day)!,
      month: rowUsage(month)!,
      month_label: now.toISOString().slice(0, 7),
      budget:
        budgetUsd === null
          ? null
          : {
              monthly_usd: budgetUsd,
              month_cost_usd: monthCost,
              percent: Math.floor((monthCost / budgetUsd) * 100),
              crossed: [80, 100].filter((p) => monthCost >= (budgetUsd * p) / 100),
              unpriced_records: tenantMonth.unpriced_records,
            },
      price_data: PRICE_DATA,
    };
  } catch {
    return null;
  }
}

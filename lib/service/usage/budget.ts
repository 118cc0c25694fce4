/**
 * Monthly budgets (issue 27 item 4): a tenant's `monthly_budget_usd` (lib/store/tenants.ts, set with
 * `hansard tenant set NAME --monthly-budget-usd N`), and the events of crossing 80 % and 100 % of it.
 *
 * The month's cost is the sum of the tenant's usage buckets from the 1st of the month (UTC), read at most
 * every 30 s per process (`Limits.tenantSettingsMaxAgeMs`, as the quota's usage figure) plus what this
 * process counted since: ingest checks it after each chunk that added cost. A crossing is recorded once
 * per month and level by `claimKey` (one conditional write: of any number of processes exactly one
 * records it) in scope `usage-budget:{YYYY-MM}`, key the level, its value the event as JSON
 * (`BudgetEvent`): the record the alerts issue delivers, and what `GET /v1/usage` shows as `crossed`.
 * DynamoDB keeps a claim 30 days at least, so an event of the 1st may be recorded again on the 31st of a
 * long month (once more, no more).
 */

import { resolveLimits } from '../../contract/limits.js';
import { MICROS_PER_USD } from '../../log/analyse/usage/index.js';
import type { StateStore } from '../../store/index.js';
import { budgetEvent } from '../alerts/crossings.js';
import type { ServiceContext } from '../shared/context.js';
import { tenantSettings } from '../tenants/limits.js';
import type { Budget } from './schemas.js';

/** The levels recorded, in percent of the budget. */
export const BUDGET_LEVELS = [80, 100] as const;

/** What a crossing records. */
export interface BudgetEvent {
  type: 'usage.budget_crossed';
  tenant: string;
  /** YYYY-MM (UTC) */
  month: string;
  level: (typeof BUDGET_LEVELS)[number];
  monthly_budget_usd: number;
  /** the month's list-price cost when it was seen crossed, micro-dollars */
  month_cost_micros: number;
  /** ISO 8601 */
  at: string;
}

/** The claim scope of a month's budget events. */
export function budgetScope(month: string): string {
  return `usage-budget:${month}`;
}

/** `YYYY-MM` and its first day `YYYY-MM-01` of `now` (UTC). */
export function monthOf(now: Date): { month: string; first: string; today: string } {
  const today = now.toISOString().slice(0, 10);
  return { month: today.slice(0, 7), first: `${today.slice(0, 7)}-01`, today };
}

/** The sum of the cost of the tenant's buckets from `first` to `today`, micro-dollars. */
export async function monthCostMicros(
  state: StateStore,
  tenant: string,
  first: string,
  today: string,
): Promise<number> {
  let n = 0;
  for (const b of await state.listUsageBuckets(tenant, first, today)) n += b.counters.cost_micros;
  return n;
}

interface MonthCost {
  month: string;
  readAt: number;
  base: Promise<number>;
  /** what this process counted since the read */
  own: number;
  /** levels recorded (by any process) this month, as far as this process knows */
  recorded: Set<number>;
}

const COSTS = new WeakMap<object, Map<string, MonthCost>>();

/**
 * Adds `micros` this process just counted for `ctx.tenant` and records a budget event for each level the
 * month's cost has now reached and no process recorded yet. Never throws: a failure here (the store
 * unreachable) leaves the event to the next chunk that adds cost; the chunk itself is counted already.
 */
export async function noteCost(ctx: ServiceContext, micros: number): Promise<void> {
  try {
    const limits = resolveLimits(ctx.limits);
    const settings = await tenantSettings(ctx.state, ctx.tenant, limits.tenantSettingsMaxAgeMs);
    const budget = settings.monthly_budget_usd;
    if (budget === undefined) return; // no budget: nothing to read
    const { month, first, today } = monthOf(ctx.now());
    let byTenant = COSTS.get(ctx.state);
    if (!byTenant) {
      byTenant = new Map();
      COSTS.set(ctx.state, byTenant);
    }
    let c = byTenant.get(ctx.tenant);
    const now = performance.now();
    if (!c || c.month !== month || now - c.readAt >= limits.tenantSettingsMaxAgeMs) {
      // The read includes what was just counted (the write is done), so `own` starts at 0.
      c = {
        month,
        readAt: now,
        base: monthCostMicros(ctx.state, ctx.tenant, first, today),
        own: 0,
        recorded: c?.month === month ? c.recorded : new Set(),
      };
      byTenant.set(ctx.tenant, c);
      c.base.catch(() => byTenant.delete(ctx.tenant));
    } else c.own += micros;
    const cost = (await c.base) + c.own;
    for (const level of BUDGET_LEVELS) {
      if (c.recorded.has(level) || cost * 100 < level * budget * MICROS_PER_USD) continue;
      const event: BudgetEvent = {
        type: 'usage.budget_crossed',
        tenant: ctx.tenant,
        month,
        level,
        monthly_budget_usd: budget,
        month_cost_micros: cost,
        at: ctx.now().toISOString(),
      };
      // The alert (issue 28 `budget.crossed`) is written with the claim, by the claim that won.
      await ctx.state.claimKey(ctx.tenant, budgetScope(month), String(level), JSON.stringify(event), [
        budgetEvent(event),
      ]);
      c.recorded.add(level);
    }
  } catch {
    // best effort, see above
  }
}

/** The budget events recorded for `month`, by level (absent: not crossed). */
export async function budgetEvents(state: StateStore, tenant: string, month: string): Promise<BudgetEvent[]> {
  const out: BudgetEvent[] = [];
  for (const level of BUDGET_LEVELS) {
    const v = await state.readClaim(tenant, budgetScope(month), String(level));
    if (v !== null) out.push(JSON.parse(v) as BudgetEvent);
  }
  return out;
}

/** The tenant's budget as `GET /v1/usage` answers it (this month, read now); null when it has none. */
export async function budgetOf(ctx: ServiceContext): Promise<Budget | null> {
  const settings = await tenantSettings(
    ctx.state,
    ctx.tenant,
    resolveLimits(ctx.limits).tenantSettingsMaxAgeMs,
  );
  const budget = settings.monthly_budget_usd;
  if (budget === undefined) return null;
  const { month, first, today } = monthOf(ctx.now());
  const cost = await monthCostMicros(ctx.state, ctx.tenant, first, today);
  const events = await budgetEvents(ctx.state, ctx.tenant, month);
  return {
    monthly_usd: budget,
    month,
    month_cost_usd: cost / MICROS_PER_USD,
    percent: Math.round((cost / MICROS_PER_USD / budget) * 1000) / 10,
    crossed: events.map((e) => e.level),
  };
}

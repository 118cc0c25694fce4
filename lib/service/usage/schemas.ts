/**
 * The answers of the usage routes (issue 27 item 3): a session's usage (`GET /v1/sessions/{sid}/usage`,
 * the `UsageReport` of lib/log/analyse/usage/totals.ts, which `hansard usage DIR --json` prints too), a
 * tenant's (`GET /v1/usage`) and a recompute's (`POST /v1/usage/recompute`). Money is in US dollars
 * derived from integer micro-dollars (`cost_micros`); `null` is unknown, never zero.
 */
import { z } from 'zod';
import { GROUP_BY, type UsageReport, type UsageTotal } from '../../log/analyse/usage/index.js';

const int = () => z.number().int();

/** A total: token counts, list-price cost and what is unknown (`UsageTotal`). */
export const UsageTotalSchema = z
  .strictObject({
    input_tokens: int().describe('every input token, cache reads and writes included (OpenAI convention)'),
    output_tokens: int().describe('output tokens, reasoning included'),
    cache_read_tokens: int().describe('the part of input_tokens read from a prompt cache'),
    cache_write_tokens: int().describe('the part of input_tokens written to a prompt cache'),
    cost_usd: z
      .number()
      .nullable()
      .describe('list-price equivalent in USD of the priced records; null when none has a list price'),
    cost_micros: int().nullable().describe('the same in integer micro-dollars'),
    reported_cost_usd: z
      .number()
      .nullable()
      .describe('what vendors reported themselves (never added to cost_usd); null when none did'),
    records: int().describe('usage records counted'),
    unpriced_records: int().describe('records without a list price (no or unknown model, unknown figures)'),
    partial_records: int().describe('records with a figure the source did not report'),
    turns: int(),
    unknown_turns: int().describe('turns no usage record landed in: the totals are a lower bound then'),
  })
  .meta({ id: 'UsageTotal' });

const ByModel = UsageTotalSchema.extend({ model: z.string() });
const Group = UsageTotalSchema.extend({ key: z.string() });

/** One session's usage (`UsageReport`), plus the writers no usage was counted for yet. */
export const SessionUsageSchema = z
  .strictObject({
    total: UsageTotalSchema,
    by_model: z.array(ByModel),
    by: z.enum(GROUP_BY).optional().describe('what `groups` are grouped by (the `by` asked for)'),
    groups: z.array(Group).optional(),
    price_data: z.string().describe('the price table and its version the costs come from'),
    cost_basis: z.string().describe('what the cost is: a list-price equivalent'),
    uncounted_writers: z
      .array(z.string())
      .optional()
      .describe(
        'writers stored before usage was counted (no usage record): not in these totals until POST /v1/usage/recompute',
      ),
  })
  .meta({ id: 'SessionUsage' });
export type SessionUsage = z.infer<typeof SessionUsageSchema>;

/** What a tenant's usage may be grouped by (its buckets keep day, agent, person and model). */
export const TENANT_GROUP_BY = ['day', 'agent', 'person', 'model'] as const;
export type TenantGroupBy = (typeof TENANT_GROUP_BY)[number];

/** The tenant's monthly budget and how much of it this month used (issue 27 item 4). */
export const BudgetSchema = z
  .strictObject({
    monthly_usd: z.number().describe("the tenant's monthly budget (hansard tenant set --monthly-budget-usd)"),
    month: z.string().describe('the month, YYYY-MM (UTC)'),
    month_cost_usd: z.number().describe("this month's list-price cost so far"),
    percent: z.number().describe('month_cost_usd of monthly_usd, in percent (one decimal)'),
    crossed: z
      .array(z.number().int())
      .describe('the levels (80, 100) crossed this month: each recorded once, as an event'),
  })
  .meta({ id: 'UsageBudget' });
export type Budget = z.infer<typeof BudgetSchema>;

/** A tenant's usage over a range of days. */
export const TenantUsageSchema = z
  .strictObject({
    from: z.string().describe('first day counted, YYYY-MM-DD (UTC)'),
    to: z.string().describe('last day counted, YYYY-MM-DD (UTC), inclusive'),
    group_by: z.enum(TENANT_GROUP_BY),
    total: UsageTotalSchema,
    groups: z.array(Group),
    price_data: z.string(),
    cost_basis: z.string(),
    budget: BudgetSchema.nullable().describe('null when the tenant has no monthly budget'),
  })
  .meta({ id: 'TenantUsage' });
export type TenantUsageAnswer = z.infer<typeof TenantUsageSchema>;

/** What a recompute did. */
export const UsageRecomputeSchema = z
  .strictObject({
    sessions: int().describe('sessions recomputed'),
    writers: int().describe('writers folded from their segments'),
    changed_writers: int().describe(
      'writers whose counters changed (rules or prices changed, or never counted)',
    ),
    changed_buckets: int().describe('buckets whose counters moved'),
    price_data: z.string(),
  })
  .meta({ id: 'UsageRecompute' });
export type UsageRecompute = z.infer<typeof UsageRecomputeSchema>;

// The lib/log types and these schemas must stay one shape (ADR 0005): a compile-time check both ways.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const totalsAgree: Same<z.infer<typeof UsageTotalSchema>, UsageTotal> = true;
const reportFits: Same<Omit<SessionUsage, 'uncounted_writers'>, UsageReport> = true;
void totalsAgree;
void reportFits;

/**
 * What the board's overview answers (issue 14.1, `getOverview` in ./overview.ts, `GET /v1/board/overview`):
 * every session of the tenant that matches the filters, urgent first, a page at a time. Groups come in
 * `OVERVIEW_GROUPS` order: blocked, needs review, working, done recently (last `DONE_RECENT_HOURS`), then
 * the rest (done earlier, no report); sessions known only from a status report (no segment yet) sit
 * apart at the end. Within the four waiting groups the oldest `state_since` comes first (the longest
 * blocked on top); the rest by latest activity first.
 */
import { z } from 'zod';
import { Count, Instant } from '../../contract/ids.js';
import { STATES } from '../../contract/status.js';
import { BoardSession } from './schemas.js';

/** The overview's groups, in the order the board shows them. */
export const OVERVIEW_GROUPS = [
  'blocked',
  'needs_review',
  'working',
  'done_recently',
  'rest',
  'no_segments',
] as const;
export type OverviewGroup = (typeof OVERVIEW_GROUPS)[number];

/** A `done` report younger than this many hours puts its session in `done_recently`. */
export const DONE_RECENT_HOURS = 24;

/** Rows per page of the overview (`?limit=` may ask 1..200). */
export const OVERVIEW_PAGE_SIZE = 50;

/** The filters, as the page's query string and `GET /v1/board/overview` take them (all optional). */
export const OverviewFilters = z
  .object({
    state: z
      .enum([...STATES, 'none'])
      .optional()
      .describe('only sessions whose latest report has this state (`none`: no report)'),
    agent: z.string().max(200).optional().describe('only sessions with a writer of this agent (exact)'),
    person: z.string().max(200).optional().describe('only sessions in which this user_id took part (exact)'),
    q: z
      .string()
      .max(200)
      .optional()
      .describe('free text, case-insensitive: in the title, note, session id, agents or people'),
  })
  .meta({ id: 'OverviewFilters' });
export type OverviewFilters = z.infer<typeof OverviewFilters>;

/** A session's, a day's or a month's usage as the board shows it (docs/usage.md). */
export const RowUsageSummary = z
  .object({
    cost_usd: z
      .number()
      .nullable()
      .describe('list price equivalent in USD (@pydantic/genai-prices); null: none of it has a list price'),
    input_tokens: z.int().describe('all input tokens, cache reads and writes included'),
    output_tokens: z.int(),
    cache_read_tokens: z.int(),
    cache_write_tokens: z.int(),
    turns: z.int(),
    unknown_turns: z.int().describe('turns no source reported usage for: the figures are a lower bound'),
    unpriced_records: z.int().describe('usage records without a list price (their tokens are counted)'),
  })
  .meta({ id: 'RowUsageSummary' });
export type RowUsageSummary = z.infer<typeof RowUsageSummary>;

/** The tenant's (or the view's person's or agent's) usage today and this month, and the budget. */
export const BoardUsage = z
  .object({
    today: RowUsageSummary.describe('today (UTC)'),
    month: RowUsageSummary.describe('this month (UTC)'),
    month_label: z.string().describe('`YYYY-MM`'),
    budget: z
      .object({
        monthly_usd: z.number(),
        month_cost_usd: z.number().describe("the tenant's list-price cost this month"),
        percent: z.int(),
        crossed: z.array(z.int()).describe('the marks (80, 100) this month has crossed'),
        unpriced_records: z
          .int()
          .describe("this month's usage records without a list price: the cost leaves them out"),
      })
      .nullable()
      .describe('the tenant’s monthly budget (`hansard tenant set --monthly-budget-usd`); null: none set'),
    price_data: z.string(),
  })
  .meta({ id: 'BoardUsage' });
export type BoardUsage = z.infer<typeof BoardUsage>;

/** One row of the overview: a board row and what the overview groups and titles it by. */
export const OverviewRow = BoardSession.extend({
  group: z.enum(OVERVIEW_GROUPS),
  title: z
    .string()
    .nullable()
    .describe(
      "the session's first prompt (first line, at most 160 characters), else the first report's note",
    ),
  people: z.array(z.string()).describe('user_ids of the people who wrote messages or joined (at most 20)'),
  asked: z
    .array(
      z.object({
        user_id: z.string(),
        text: z.string().describe("the first line of the person's earliest message, at most 160 characters"),
        ts: Instant.describe("that message's ts"),
      }),
    )
    .optional()
    .describe(
      'what each of `people` asked first (earliest message by ts), in the order of `people`; a person who ' +
        'only joined has no entry',
    ),
  state_since: Instant.nullable().describe(
    'when the session entered its latest state: the first of the trailing reports of that state',
  ),
  usage: RowUsageSummary.nullable().describe('the session’s usage kept as it arrived; null: none recorded'),
}).meta({ id: 'OverviewRow' });
export type OverviewRow = z.infer<typeof OverviewRow>;

/** `GET /v1/board/overview`. */
export const Overview = z
  .object({
    tenant: z.string(),
    generated_at: Instant,
    filters: OverviewFilters,
    total: Count.describe('how many sessions the tenant has, filters aside'),
    matched: Count.describe('how many match the filters'),
    groups: z
      .array(z.object({ group: z.enum(OVERVIEW_GROUPS), count: Count }))
      .describe('every group with its count among the matching sessions, in board order, empty ones too'),
    rows: z.array(OverviewRow).describe('this page of the matching sessions, in board order'),
    page: z.int().min(1).describe('this page, from 1'),
    pages: z.int().min(1).describe('how many pages the matching sessions fill'),
    usage: BoardUsage.nullable().describe(
      'usage and list-price cost today and this month, of the tenant or of the filtered person or agent',
    ),
    facets: z
      .object({ agents: z.array(z.string()), people: z.array(z.string()) })
      .describe('every agent and person in the tenant, sorted, for the filter menus (at most 200 each)'),
    etag: z
      .string()
      .describe(
        'a strong validator of what this page shows (generated_at aside; ages to the minute): the same value ' +
          'means nothing visible changed',
      ),
  })
  .meta({ id: 'Overview', description: 'the board, urgent first' });
export type Overview = z.infer<typeof Overview>;

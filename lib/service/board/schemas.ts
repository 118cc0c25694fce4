/**
 * What the board's verb answers (`getBoard`, DESIGN §4 `GET /v1/board`): a page of sessions with their
 * latest state. `Board` and `BoardSession` are these schemas' `z.infer`.
 */
import { z } from 'zod';
import { Count, Instant, SessionId } from '../../contract/ids.js';
import { STATES, VerdictCounts } from '../../contract/status.js';
import { WorkView } from '../../contract/work.js';

/** One row of the board. */
export const BoardSession = z
  .object({
    sid: SessionId,
    state: z.enum(STATES).nullable().describe('the latest reported state, null when no agent reported'),
    note: z.string().nullable(),
    reported_at: Instant.nullable(),
    last_activity: Instant,
    created_at: Instant,
    writers: Count,
    lines: Count,
    agents: z.array(z.string()).describe("the writers' agents"),
    work: z
      .array(WorkView.omit({ history: true }))
      .describe("the session's work items (seed 004), newest first, freshness decided now; at most 20"),
    evidence: VerdictCounts.nullable().describe(
      "the agents' declared evidence by verdict, checked against the transcript; null when no agent reported",
    ),
  })
  .meta({ id: 'BoardSession' });
export type BoardSession = z.infer<typeof BoardSession>;

/**
 * The board counts a tenant's sessions up to this many (`total`; `total_more` past it), so that the
 * count, like the page, reads a bounded number of items (issue 17.6; on DynamoDB ~125 RRU at ~1 KB a
 * session item, docs/deploy.md "What a board page reads").
 */
export const BOARD_COUNT_MAX = 1_000;

/** `GET /v1/board`. */
export const Board = z
  .object({
    tenant: z.string(),
    generated_at: Instant,
    total: Count.describe(
      `how many sessions the tenant has, on every page, counted up to ${BOARD_COUNT_MAX.toLocaleString('en-US')} (\`total_more\` says there are more)`,
    ),
    total_more: z
      .boolean()
      .describe(
        `true when the tenant has more sessions than \`total\`: the board counts at most ${BOARD_COUNT_MAX.toLocaleString('en-US')}`,
      ),
    sessions: z.array(BoardSession).describe('this page: most recent activity first, `limit` at most'),
    next: z.string().nullable().describe('the cursor of the next page (`?cursor=`), null on the last page'),
  })
  .meta({ id: 'Board', description: 'everything the board shows' });
export type Board = z.infer<typeof Board>;

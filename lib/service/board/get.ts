/**
 * The status board's data (DESIGN §4 `GET /v1/board`): the tenant's sessions, most recent activity first,
 * each with its latest reported state and note and its writers, a page at a time with how many there are
 * in all (issue 8.7: it stopped at 100 without a word). Pages come from `sessionsPage`, so the board's
 * cursors are the listing's signed ones.
 */

import type { StatusReport, VerdictCounts } from '../../contract/status.js';
import { uniqueNames } from '../../log/format/names.js';
import type { BoardCopy, WriterRecord } from '../../store/index.js';
import { type SessionView, sessionsPage } from '../sessions/replay.js';
import { requireScope, type ServiceContext } from '../shared/context.js';
import { knownVerdicts, verdicts, workRows } from './rows.js';
import { BOARD_COUNT_MAX, type Board, type BoardSession } from './schemas.js';

export { BOARD_COUNT_MAX, type Board, type BoardSession } from './schemas.js';

/**
 * A page of everything the board shows, newest activity first: `limit` sessions (1..200) after `cursor`
 * (a `next` this server gave, or null for the first page), and the tenant's total (at most
 * `BOARD_COUNT_MAX`, `total_more` past it). Scope `board` or
 * `read`. A session-bound token sees its own session only (when it exists), however many others are newer.
 * @throws AppError `invalid_cursor` (400)
 */
export async function getBoard({
  ctx,
  limit = 100,
  cursor = null,
}: {
  ctx: ServiceContext;
  limit?: number;
  cursor?: string | null;
}): Promise<Board> {
  requireScope(ctx, 'board', 'read');
  const bound = ctx.caller.session !== null;
  // The count and the page are read at once; a session made between the two may be counted or listed
  // and not both (the board says "as of").
  const [page, total] = await Promise.all([
    sessionsPage({ ctx, limit, cursor }),
    bound ? Promise.resolve(null) : ctx.state.countSessions(ctx.tenant, BOARD_COUNT_MAX),
  ]);
  // The page's copies of their reports and agents on the session entries, where the store keeps them
  // (issue 17.6, DynamoDB): then no status record is read for a session whose verdicts are known.
  const copies = ctx.state.boardCopies
    ? await ctx.state.boardCopies(
        ctx.tenant,
        page.sessions.map((s) => s.sid),
      )
    : null;
  const rows = await Promise.all(
    page.sessions.map((s) => {
      const copy = copies?.get(s.sid);
      return copy ? copiedSession(ctx, s, copy) : boardSession(ctx, s);
    }),
  );
  // Verdicts read transcripts: one session at a time, and only those whose reports or segments changed.
  const sessions: BoardSession[] = [];
  for (const { row, evidence } of rows) {
    // One session whose transcript cannot be read must not take the tenant's board down with it.
    sessions.push({ ...row, evidence: evidence ? await evidence().catch(() => null) : null });
  }
  return {
    tenant: ctx.tenant,
    generated_at: ctx.now().toISOString(),
    total: total === null ? page.sessions.length : Math.min(total, BOARD_COUNT_MAX),
    total_more: total !== null && total > BOARD_COUNT_MAX,
    sessions,
    next: page.next,
  };
}

/** A row without its verdicts, and how to get them (null: nothing reported). */
interface PendingRow {
  row: Omit<BoardSession, 'evidence'>;
  evidence: (() => Promise<VerdictCounts>) | null;
}

/**
 * A row from the session entry's copy (issue 17.6): its latest report and agents as copied there, its
 * work items (one query), and its verdicts reused when known for the copy's status version and the
 * session's bytes, else computed from the status record (one read). A session from before summaries
 * (no agents kept) has its writers read for them.
 */
async function copiedSession(ctx: ServiceContext, s: SessionView, copy: BoardCopy): Promise<PendingRow> {
  const [work, writers] = await Promise.all([
    ctx.state.listWork(ctx.tenant, { session: s.sid, limit: 20 }),
    copy.agents.length === 0 && s.writers > 0 ? ctx.state.listWriters(ctx.tenant, s.sid) : null,
  ]);
  const known =
    copy.state !== null && copy.status_version !== null
      ? knownVerdicts(ctx, s.sid, copy.status_version, s.bytes)
      : null;
  const row = {
    sid: s.sid,
    // stored as `reportStatus` parsed it
    state: copy.state as StatusReport['state'] | null,
    note: copy.note,
    reported_at: copy.reported_at,
    last_activity: s.updated_at,
    created_at: s.created_at,
    writers: s.writers,
    lines: s.lines,
    agents: writers ? agentsOf(writers) : uniqueNames(copy.agents),
    work: workRows(work, ctx.now()),
  };
  if (copy.state === null) return { row, evidence: null };
  return {
    row,
    evidence: known
      ? () => known
      : async () => {
          const status = await ctx.state.getStatus(ctx.tenant, s.sid);
          if (!status) throw new Error(`no status record of session ${s.sid}`);
          return verdicts(ctx, status, s.bytes);
        },
  };
}

/** The writers' agents, each once in NFC (lib/log/format/names.ts: `José` either way is one agent). */
function agentsOf(writers: WriterRecord[]): string[] {
  return uniqueNames(writers.map((w) => w.agent).filter((a): a is string => a !== null));
}

async function boardSession(ctx: ServiceContext, s: SessionView): Promise<PendingRow> {
  const [status, writers, work] = await Promise.all([
    ctx.state.getStatus(ctx.tenant, s.sid),
    ctx.state.listWriters(ctx.tenant, s.sid),
    ctx.state.listWork(ctx.tenant, { session: s.sid, limit: 20 }),
  ]);
  const now = ctx.now();
  const latest = status?.reports.at(-1);
  const row = {
    sid: s.sid,
    // stored as `reportStatus` parsed it
    state: (latest?.state ?? null) as StatusReport['state'] | null,
    note: latest?.note ?? null,
    reported_at: latest?.reported_at ?? null,
    last_activity: s.updated_at,
    created_at: s.created_at,
    writers: s.writers,
    lines: s.lines,
    agents: agentsOf(writers),
    work: workRows(work, now),
  };
  return { row, evidence: status ? () => verdicts(ctx, status, s.bytes) : null };
}

/**
 * The status board's data (DESIGN §4 `GET /v1/board`): the tenant's sessions, most recent activity first,
 * each with its latest reported state and note and its writers, a page at a time with how many there are
 * in all (issue 8.7: it stopped at 100 without a word). Pages come from `sessionsPage`, so the board's
 * cursors are the listing's signed ones.
 */

import type { StatusRecord } from '../store/index.js';
import { verdicts, workRows } from './board-rows.js';
import type { Board, BoardSession } from './board-schemas.js';
import { requireScope, type ServiceContext } from './context.js';
import { type SessionView, sessionsPage } from './sessions.js';
import type { StatusReport } from './status-schemas.js';

export type { Board, BoardSession } from './board-schemas.js';

/**
 * A page of everything the board shows, newest activity first: `limit` sessions (1..200) after `cursor`
 * (a `next` this server gave, or null for the first page), and the tenant's total. Scope `board` or
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
    bound ? Promise.resolve(null) : ctx.state.countSessions(ctx.tenant),
  ]);
  const rows = await Promise.all(page.sessions.map((s) => boardSession(ctx, s)));
  // Verdicts read transcripts: one session at a time, and only those whose reports or segments changed.
  const sessions: BoardSession[] = [];
  for (const { row, status, bytes } of rows) {
    // One session whose transcript cannot be read must not take the tenant's board down with it.
    const evidence = status ? await verdicts(ctx, status, bytes).catch(() => null) : null;
    sessions.push({ ...row, evidence });
  }
  return {
    tenant: ctx.tenant,
    generated_at: ctx.now().toISOString(),
    total: total ?? page.sessions.length,
    sessions,
    next: page.next,
  };
}

async function boardSession(
  ctx: ServiceContext,
  s: SessionView,
): Promise<{ row: Omit<BoardSession, 'evidence'>; status: StatusRecord | null; bytes: number }> {
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
    agents: [...new Set(writers.map((w) => w.agent).filter((a): a is string => a !== null))],
    work: workRows(work, now),
  };
  return { row, status, bytes: s.bytes };
}

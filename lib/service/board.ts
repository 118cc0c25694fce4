/**
 * The status board's data (DESIGN §4 `GET /v1/board`): the tenant's sessions, most recent activity first,
 * each with its latest reported state and note and its writers.
 */
import { requireScope, type ServiceContext } from './context.js';
import type { StatusReport } from './status-schemas.js';

export interface BoardSession {
  sid: string;
  /** the latest reported state, or null when no agent reported */
  state: StatusReport['state'] | null;
  note: string | null;
  reported_at: string | null;
  last_activity: string;
  created_at: string;
  writers: number;
  lines: number;
  agents: string[];
}

export interface Board {
  tenant: string;
  generated_at: string;
  sessions: BoardSession[];
}

/**
 * Everything the board shows, newest activity first (at most `limit` sessions). Scope `board` or `read`.
 * A session-bound token sees its own session only (when it exists), however many others are newer.
 */
export async function getBoard({
  ctx,
  limit = 100,
}: {
  ctx: ServiceContext;
  limit?: number;
}): Promise<Board> {
  requireScope(ctx, 'board', 'read');
  const bound = ctx.caller.session;
  const own = bound === null ? null : await ctx.state.getSession(ctx.tenant, bound);
  const items =
    bound === null ? (await ctx.state.listSessions(ctx.tenant, limit, null)).items : own ? [own] : [];
  const sessions = await Promise.all(
    items.map(async (s): Promise<BoardSession> => {
      const [status, writers] = await Promise.all([
        ctx.state.getStatus(ctx.tenant, s.sid),
        ctx.state.listWriters(ctx.tenant, s.sid),
      ]);
      return {
        sid: s.sid,
        // stored as `reportStatus` parsed it
        state: (status?.state ?? null) as StatusReport['state'] | null,
        note: status?.note ?? null,
        reported_at: status?.reported_at ?? null,
        last_activity: s.updated_at,
        created_at: s.created_at,
        writers: s.writers,
        lines: s.lines,
        agents: [...new Set(writers.map((w) => w.agent).filter((a): a is string => a !== null))],
      };
    }),
  );
  return { tenant: ctx.tenant, generated_at: ctx.now().toISOString(), sessions };
}

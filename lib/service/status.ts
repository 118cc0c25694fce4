/**
 * Agent status reports (seed 000): the latest report of a session, shown on the board. Reports are an
 * agent's declarations, not proof; the evidence checks against the transcript come with a later issue.
 */
import type { StatusRecord } from '../store/index.js';
import { isoNow, requireScope, requireSessionAccess, type ServiceContext } from './context.js';
import { notFound, parseInput } from './errors.js';
import { type DeclaredEvent, StatusReport, type StatusView } from './status-schemas.js';

export type { StatusView } from './status-schemas.js';

/** The store keeps a report as `reportStatus` parsed it, so its state and events are the schema's. */
async function view(ctx: ServiceContext, s: StatusRecord): Promise<StatusView> {
  const session = await ctx.state.getSession(ctx.tenant, s.sid);
  return {
    sid: s.sid,
    state: s.state as StatusReport['state'],
    note: s.note,
    events: s.events as DeclaredEvent[],
    reported_at: s.reported_at,
    writers: session?.writers ?? 0,
  };
}

/**
 * `POST /v1/sessions/{sid}/status` (scope `report`). The session need not have segments yet: the answer's
 * `writers` says how many have, so a client can warn about a mistyped session id.
 * @throws AppError `invalid_body` (400) naming each problem, with nothing stored
 */
export async function reportStatus({
  ctx,
  sid,
  input,
}: {
  ctx: ServiceContext;
  sid: string;
  input: unknown;
}): Promise<StatusView> {
  requireScope(ctx, 'report');
  requireSessionAccess(ctx, sid);
  const report = parseInput(StatusReport, input, 'the status report');
  const rec: StatusRecord = {
    tenant: ctx.tenant,
    sid,
    state: report.state,
    note: report.note,
    events: report.events,
    reported_by: ctx.caller.id,
    reported_at: isoNow(ctx),
  };
  await ctx.state.putStatus(rec);
  return view(ctx, rec);
}

/** `GET /v1/sessions/{sid}/status` (scope `read`). @throws AppError `not_found` when nothing was reported */
export async function getStatus({ ctx, sid }: { ctx: ServiceContext; sid: string }): Promise<StatusView> {
  requireScope(ctx, 'read', 'report', 'board');
  requireSessionAccess(ctx, sid);
  const s = await ctx.state.getStatus(ctx.tenant, sid);
  if (!s) throw notFound('status');
  return view(ctx, s);
}

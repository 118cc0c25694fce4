/**
 * The alert verbs of `/v1/alerts` and `hansard alerts` (issue 28 item 2, scope `admin`): add a target
 * (its URL checked, lib/service/alerts/url-guard.ts; its secret made and answered once), list, remove,
 * rotate its secret, send it a test event, and list deliveries. Each verb is one tenant's: another
 * tenant's target is `not_found`, as a target that does not exist.
 */
import { ulid } from 'ulid';
import {
  type AlertDeliveryView,
  type AlertTargetCreated,
  AlertTargetInput,
  type AlertTargetView,
  HELD_KINDS,
  MAX_TARGETS,
  TEST_KIND,
} from '../../contract/alerts.js';
import {
  type AlertDelivery,
  type AlertTarget,
  LimitReachedError,
  StateConflictError,
} from '../../store/index.js';
import { type AuditOptions, recordAudit } from '../audit-log/index.js';
import {
  type AlertServiceDeps,
  isoNow,
  requireScope,
  requireSessionAccess,
  type ServiceContext,
} from '../shared/context.js';
import { AppError, notFound, parseInput } from '../shared/errors.js';
import { eventId, outboxEvent } from './events.js';
import { DEFAULT_GRACE_SECONDS, newSecret, rotated } from './secrets.js';
import { checkTargetUrl } from './url-guard.js';

/**
 * The admin scope, on a token bound to no session: targets and deliveries are the tenant's, outside any
 * one session (as the token verbs ask, lib/service/tokens/create.ts).
 * @throws AppError `forbidden`
 */
function requireTenantAdmin(ctx: ServiceContext): void {
  requireScope(ctx, 'admin');
  if (ctx.caller.session !== null) {
    throw new AppError(
      'forbidden',
      'a session-bound token cannot administer alerts: use an unbound admin token',
      {
        required: ['admin'],
      },
    );
  }
}

/** @throws AppError `alerts_unavailable` (503) when the deployment has no sealer for targets' secrets */
function alertDeps(ctx: ServiceContext): AlertServiceDeps {
  if (!ctx.alerts) {
    throw new AppError(
      'alerts_unavailable',
      'this server was started without alerts (no sealer for targets’ secrets): start it with hansard serve',
    );
  }
  return ctx.alerts;
}

/** A target as listed: never its secret. */
export function targetView(t: AlertTarget, now: Date): AlertTargetView {
  const previous = t.secrets.find((s) => s.until !== null && Date.parse(s.until) > now.getTime());
  return {
    id: t.id,
    url: t.url,
    format: t.format,
    events: t.events,
    agents: t.agents,
    after_seconds: t.after_seconds,
    label: t.label,
    created_at: t.created_at,
    created_by: t.created_by,
    previous_secret_until: previous?.until ?? null,
  };
}

/**
 * `POST /v1/alerts`: a new target; records `alert.add` in the audit list (issue 29 item 4: its host, never
 * the whole URL, which may carry a secret path such as Slack's).
 * @throws AppError `invalid_body` (400), `invalid_target` (400: the URL,
 *   see url-guard.ts), `too_many_targets` (409, past `MAX_TARGETS`), `alerts_unavailable` (503)
 */
export async function addTarget(
  ctx: ServiceContext,
  input: unknown,
  opts: AuditOptions = {},
): Promise<AlertTargetCreated> {
  requireTenantAdmin(ctx);
  const deps = alertDeps(ctx);
  const body = parseInput(AlertTargetInput, input, 'the alert target');
  if (body.after_seconds > 0 && body.events.length > 0 && !body.events.some((k) => HELD_KINDS.includes(k))) {
    throw new AppError(
      'invalid_body',
      `after_seconds holds back only ${HELD_KINDS.join(', ')}: with events ${body.events.join(', ')} it would do nothing (leave it out, or add one of those kinds)`,
      { issues: [{ path: 'after_seconds', message: 'no held kind among the events' }] },
    );
  }
  const url = await checkTargetUrl(body.url, deps.config.allowPrivateTargets);
  const secret = newSecret();
  const target: AlertTarget = {
    tenant: ctx.tenant,
    id: `at_${ulid()}`,
    url: url.href,
    format: body.format,
    events: [...new Set(body.events)],
    agents: [...new Set(body.agents)],
    after_seconds: body.after_seconds,
    label: body.label ?? null,
    secrets: [{ sealed: await deps.sealer.seal(ctx.tenant, secret), until: null }],
    created_at: isoNow(ctx),
    created_by: ctx.caller.label ? `${ctx.caller.label} (${ctx.caller.id})` : ctx.caller.id,
    version: 1,
  };
  try {
    // The limit is checked in the write's own transaction: concurrent adds never pass it.
    await ctx.state.putAlertTarget(target, { maxTargets: MAX_TARGETS });
  } catch (err) {
    if (!(err instanceof LimitReachedError)) throw err;
    throw new AppError(
      'too_many_targets',
      `this tenant has ${err.limit} alert targets, the most it may have: remove one first (hansard alerts remove ID)`,
      { max: err.limit },
    );
  }
  await recordAudit(ctx, {
    action: 'alert.add',
    target: target.id,
    detail: `${target.format} to ${url.host}${target.label ? ` (${JSON.stringify(target.label)})` : ''}`,
    via: opts.via ?? 'api',
  });
  return { ...targetView(target, ctx.now()), secret };
}

/** `GET /v1/alerts`: the tenant's targets, oldest first. */
export async function listTargets(ctx: ServiceContext): Promise<AlertTargetView[]> {
  requireTenantAdmin(ctx);
  const now = ctx.now();
  return (await ctx.state.listAlertTargets(ctx.tenant)).map((t) => targetView(t, now));
}

/** @throws AppError `not_found` */
async function requireTarget(ctx: ServiceContext, id: string): Promise<AlertTarget> {
  const t = await ctx.state.getAlertTarget(ctx.tenant, id);
  if (!t) throw notFound('alert target');
  return t;
}

/**
 * `DELETE /v1/alerts/{id}`: removes the target and its deliveries; records `alert.remove`.
 * @throws AppError `not_found`
 */
export async function removeTarget(ctx: ServiceContext, id: string, opts: AuditOptions = {}): Promise<void> {
  requireTenantAdmin(ctx);
  const t = await requireTarget(ctx, id);
  await ctx.state.deleteAlertTarget(ctx.tenant, id);
  await recordAudit(ctx, {
    action: 'alert.remove',
    target: id,
    detail: t.label ? JSON.stringify(t.label) : null,
    via: opts.via ?? 'api',
  });
}

/**
 * `POST /v1/alerts/{id}/rotate`: a new secret, answered once; the previous one signs too for
 * `graceSeconds` (default a day, 0: at once no more). Records `alert.rotate`.
 * @throws AppError `not_found`, `conflict` (409: the target changed meanwhile), `alerts_unavailable`
 */
export async function rotateSecret(
  ctx: ServiceContext,
  id: string,
  graceSeconds: number = DEFAULT_GRACE_SECONDS,
  opts: AuditOptions = {},
): Promise<AlertTargetCreated> {
  requireTenantAdmin(ctx);
  const deps = alertDeps(ctx);
  const t = await requireTarget(ctx, id);
  const secret = newSecret();
  const next: AlertTarget = {
    ...t,
    secrets: await rotated(deps.sealer, t, secret, ctx.now(), graceSeconds),
    version: t.version + 1,
  };
  try {
    await ctx.state.putAlertTarget(next);
  } catch (err) {
    if (err instanceof StateConflictError) {
      throw new AppError('conflict', `alert target ${id} changed while its secret was rotated: try again`);
    }
    throw err;
  }
  await recordAudit(ctx, {
    action: 'alert.rotate',
    target: id,
    detail: `grace ${graceSeconds} s`,
    via: opts.via ?? 'api',
  });
  return { ...targetView(next, ctx.now()), secret };
}

/**
 * `POST /v1/alerts/{id}/test`: a test event (`alert.test`) for this target only, through the outbox like
 * any event (signed, retried); records `alert.test` (`via: 'board'` from the alerts page's button).
 * @returns its event id: `GET /v1/alerts/{id}/deliveries` shows how it went
 * @throws AppError `not_found`
 */
export async function sendTest(
  ctx: ServiceContext,
  id: string,
  opts: AuditOptions = {},
): Promise<{ event_id: string }> {
  requireTenantAdmin(ctx);
  const t = await requireTarget(ctx, id);
  const at = isoNow(ctx);
  const event = outboxEvent({
    tenant: ctx.tenant,
    id: eventId(ctx.tenant, t.id, 'test', ulid()),
    kind: TEST_KIND,
    sid: null,
    at,
    data: {
      message: 'a test event from hansard: this target receives alerts',
      requested_by: ctx.caller.label ?? ctx.caller.id,
    },
    only_target: t.id,
  });
  await ctx.state.putOutboxEvents([event]);
  await recordAudit(ctx, { action: 'alert.test', target: id, detail: event.id, via: opts.via ?? 'api' });
  return { event_id: event.id };
}

/** A delivery as the API shows it. */
export function deliveryView(d: AlertDelivery): AlertDeliveryView {
  return {
    target_id: d.target_id,
    event_id: d.event_id,
    kind: d.kind,
    sid: d.sid,
    status: d.status,
    attempts: d.attempts,
    next_at: d.status === 'pending' ? d.next_at : null,
    last_status: d.last_status,
    last_error: d.last_error,
    created_at: d.created_at,
    delivered_at: d.delivered_at,
    skipped_reason: d.skipped_reason,
  };
}

/** `GET /v1/alerts/{id}/deliveries`: a target's deliveries, newest first. @throws AppError `not_found` */
export async function targetDeliveries(
  ctx: ServiceContext,
  id: string,
  limit: number,
): Promise<AlertDeliveryView[]> {
  requireTenantAdmin(ctx);
  await requireTarget(ctx, id);
  return (await ctx.state.listDeliveries(ctx.tenant, { target: id, limit })).map(deliveryView);
}

/**
 * The alerts a session fired (its timeline, `GET /v1/sessions/{sid}/alerts`: scope `read` or `board`),
 * newest first: kind, status and time, never a target's URL (a reader is not an admin).
 */
export async function sessionAlerts(
  ctx: ServiceContext,
  sid: string,
  limit: number,
): Promise<Omit<AlertDeliveryView, 'last_error'>[]> {
  requireScope(ctx, 'read', 'board');
  requireSessionAccess(ctx, sid);
  // An unknown session is a 404, as on the other session routes (nor is another tenant's one known).
  if (!(await ctx.state.getSession(ctx.tenant, sid))) throw notFound('session');
  return (await ctx.state.listDeliveries(ctx.tenant, { sid, limit })).map((d) => {
    const { last_error: _hidden, ...rest } = deliveryView(d);
    return rest;
  });
}

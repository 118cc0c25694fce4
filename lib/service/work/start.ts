/**
 * Work leases (seed 004 "Reporting current work", issue 13, docs/work.md): `start` a work item,
 * `heartbeat` its lease (no history), `checkpoint` / `wait` / `stop` it (history), `resume` a pending
 * operation exactly, read one or list them with their freshness.
 *
 * - Ownership is proved by the request's token (lib/service/work/owner.ts, issue 24.3): the chain of the
 *   token that started the item, or an admin; the body must also name the item's session, system and
 *   actor (else 409 `work_mismatch`). A refusal (403 `not_owner`) names no owner. A session-bound token
 *   may name only its own session.
 * - Freshness is decided when read, from `lease_expires_at` (lib/service/work/view.ts):
 *   `observed` while the lease runs, `unknown` once it has expired, `stopped` after a stop. Never idle.
 * - Every write is one conditional write of the whole item (the store's version), tried again on a fresh
 *   read when another write got there first: two clients heartbeating or stopping at once lose nothing.
 * - An `Idempotency-Key` makes a semantic operation safe to send again: the same key with the same
 *   content answers the item as it is, records nothing new; with other content it is refused (409).
 *   Keys are remembered for the item's life (lib/service/work/keys.ts: the newest 50 in the item, older
 *   ones as claimed keys).
 */
import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { monotonicFactory } from 'ulid';
import {
  type Owner,
  type SemanticOp,
  WORK_LIST_LIMIT,
  WorkCheckpoint,
  WorkHeartbeat,
  type WorkList,
  WorkResume,
  WorkStart,
  WorkStop,
  type WorkView,
  WorkWait,
} from '../../contract/work.js';
import { StateConflictError, type WorkItem } from '../../store/index.js';
import { isoNow, requireScope, requireSessionAccess, type ServiceContext } from '../shared/context.js';
import { AppError, notFound, parseInput } from '../shared/errors.js';
import { summariesChanged } from '../shared/summary-cache.js';
import { requirePlainContent } from './content.js';
import { type Applied, addApplied, findApplied } from './keys.js';
import { requireOwner, startedBy } from './owner.js';
import { workSummary, workView } from './view.js';

export { freshnessOf, workSummary, workView } from './view.js';

const ulid = monotonicFactory();
/** History entries kept per item (oldest dropped first). */
const MAX_HISTORY = 100;
const CONFLICT_RETRIES = 40;

/** What a write verb answers: the item, and whether this request created it (201) or not (200). */
export interface WorkAnswer {
  view: WorkView;
  created: boolean;
}

/**
 * `POST /v1/work` (scope `report`): a new work item, its lease running `ttl_seconds` from now. With an
 * idempotency key already used for a start in this session: that item, unchanged (`created: false`).
 *
 * The key is claimed in the store for the new item's id and the start's content hash
 * (`StateStore.claimKey`, scope `work:start:{session}`) before the item is written: of any number of
 * starts sent at once under one key, one claim wins and all of them answer its item. Whoever finds the
 * claimed item not written yet (its winner still on the way, or gone) writes it under the claimed id,
 * on condition that no item has it: exactly one write lands (201); the others answer it (200).
 * @throws AppError `invalid_body` (400), `content_rule` (422), `not_found` (a bound token naming another
 *   session), `idempotency_mismatch` (409)
 */
export async function startWork({
  ctx,
  input,
  idempotencyKey,
}: {
  ctx: ServiceContext;
  input: unknown;
  idempotencyKey?: string | null;
}): Promise<WorkAnswer> {
  requireScope(ctx, 'report');
  const body = parseInput(WorkStart, input, 'the work start');
  requireSessionAccess(ctx, body.session);
  requirePlainContent([
    ['summary', body.summary],
    ['subject', body.subject.ref],
  ]);
  const hash = contentHash('start', body);
  let id = `wk_${ulid()}`;
  if (idempotencyKey) {
    const claimed = await ctx.state.claimKey(
      ctx.tenant,
      `work:start:${body.session}`,
      idempotencyKey,
      `${id} ${hash}`,
    );
    const [claimedId = '', claimedHash] = claimed.split(' ');
    if (claimedHash !== hash) {
      throw new AppError(
        'idempotency_mismatch',
        `Idempotency-Key ${JSON.stringify(idempotencyKey)} was used for another start in session ${body.session} (work ${claimedId}): a resumed start must be sent exactly as it was first sent (use a new key for a new start)`,
        { work_id: claimedId, op: 'start' },
      );
    }
    if (claimedId !== id) {
      id = claimedId;
      const done = await ctx.state.getWork(ctx.tenant, id);
      if (done) return { view: workView(done, ctx.now()), created: false };
    }
  }
  const now = isoNow(ctx);
  const item: WorkItem = {
    tenant: ctx.tenant,
    id,
    session: body.session,
    system: body.system,
    actor: body.actor,
    subject: body.subject,
    mode: body.mode,
    summary: body.summary,
    ttl_seconds: body.ttl_seconds,
    state: 'active',
    outcome: null,
    waiting_on: null,
    started_at: now,
    lease_expires_at: plusSeconds(ctx, body.ttl_seconds),
    last_heartbeat_at: now,
    last_reported: { op: 'start', at: now },
    history: [{ op: 'start', at: now, mode: body.mode, subject: body.subject, summary: body.summary }],
    applied: idempotencyKey ? [{ key: idempotencyKey, op: 'start', hash, at: now }] : [],
    started_by: startedBy(ctx.caller),
    updated_at: now,
    version: 1,
  };
  try {
    await ctx.state.putWork(item);
    // The write touched the session's last activity: the overview's shared listing is stale.
    summariesChanged(ctx.state, ctx.tenant);
  } catch (err) {
    // Another start under the same key wrote the claimed item first: answer it.
    const first = err instanceof StateConflictError ? await ctx.state.getWork(ctx.tenant, id) : null;
    if (!first) throw err;
    return { view: workView(first, ctx.now()), created: false };
  }
  return { view: workView(item, ctx.now()), created: true };
}

/**
 * `POST /v1/work/{id}/heartbeat` (scope `report`): renews the lease only (no history entry).
 * @throws AppError `not_found`, `not_owner` (403), `work_mismatch` (409), `work_stopped` (409)
 */
export async function heartbeatWork(args: {
  ctx: ServiceContext;
  id: string;
  input: unknown;
}): Promise<WorkView> {
  const body = parseInput(WorkHeartbeat, args.input, 'the heartbeat');
  return (
    await write(args.ctx, args.id, body, null, null, (item, now) => {
      const ttl = body.ttl_seconds ?? item.ttl_seconds;
      item.lease_expires_at = plusSeconds(args.ctx, ttl);
      item.last_heartbeat_at = now;
    })
  ).view;
}

/**
 * `POST /v1/work/{id}/checkpoint` (scope `report`): a change of mode, subject or summary (history); back to
 * `active` when it was waiting; the lease renewed.
 * @throws AppError as `heartbeatWork`, and `content_rule` (422), `idempotency_mismatch` (409)
 */
export async function checkpointWork(args: {
  ctx: ServiceContext;
  id: string;
  input: unknown;
  idempotencyKey?: string | null;
}): Promise<WorkView> {
  const body = parseInput(WorkCheckpoint, args.input, 'the checkpoint');
  requirePlainContent([
    ['summary', body.summary],
    ['subject', body.subject?.ref],
  ]);
  return (
    await write(args.ctx, args.id, body, 'checkpoint', args.idempotencyKey ?? null, (item, now) => {
      if (body.mode) item.mode = body.mode;
      if (body.subject) item.subject = body.subject;
      if (body.summary) item.summary = body.summary;
      item.state = 'active';
      item.waiting_on = null;
      renew(args.ctx, item, now);
      return { mode: body.mode, subject: body.subject, summary: body.summary };
    })
  ).view;
}

/**
 * `POST /v1/work/{id}/wait` (scope `report`): a typed dependency and a plain reason (history); state
 * `waiting`; the lease renewed (waiting is reported work, seed 004).
 * @throws AppError as `checkpointWork`
 */
export async function waitWork(args: {
  ctx: ServiceContext;
  id: string;
  input: unknown;
  idempotencyKey?: string | null;
}): Promise<WorkView> {
  const body = parseInput(WorkWait, args.input, 'the wait');
  requirePlainContent([
    ['reason', body.reason],
    ['dependency.ref', body.dependency.ref],
  ]);
  return (
    await write(args.ctx, args.id, body, 'wait', args.idempotencyKey ?? null, (item, now) => {
      item.state = 'waiting';
      item.waiting_on = { dependency: body.dependency, reason: body.reason, since: now };
      renew(args.ctx, item, now);
      return { dependency: body.dependency, reason: body.reason };
    })
  ).view;
}

/**
 * `POST /v1/work/{id}/stop` (scope `report`): ends the item `completed` or `paused` (history); its lease
 * ends now.
 * @throws AppError as `checkpointWork`
 */
export async function stopWork(args: {
  ctx: ServiceContext;
  id: string;
  input: unknown;
  idempotencyKey?: string | null;
}): Promise<WorkView> {
  const body = parseInput(WorkStop, args.input, 'the stop');
  requirePlainContent([['summary', body.summary]]);
  return (
    await write(args.ctx, args.id, body, 'stop', args.idempotencyKey ?? null, (item, now) => {
      item.state = 'stopped';
      item.outcome = body.outcome;
      item.waiting_on = null;
      if (body.summary) item.summary = body.summary;
      item.lease_expires_at = now;
      return { outcome: body.outcome, summary: body.summary };
    })
  ).view;
}

/**
 * `POST /v1/work/{id}/resume` (scope `report`): a pending semantic operation repeated exactly: applied
 * already with that key, the item as it is; not yet, applied now; the key with other content, refused.
 * A pending start is resumed with `POST /v1/work` and its key (the id is not known before it).
 * @throws AppError as the operation's verb; `bad_request` for a start
 */
export async function resumeWork(args: {
  ctx: ServiceContext;
  id: string;
  input: unknown;
}): Promise<WorkView> {
  const r = parseInput(WorkResume, args.input, 'the resume');
  const owner = { session: r.session, system: r.system, actor: r.actor };
  const input = { ...r.body, ...owner };
  const common = { ctx: args.ctx, id: args.id, input, idempotencyKey: r.idempotency_key };
  switch (r.op) {
    case 'checkpoint':
      return checkpointWork(common);
    case 'wait':
      return waitWork(common);
    case 'stop':
      return stopWork(common);
    default:
      throw new AppError(
        'bad_request',
        'a pending start is resumed by sending it again to POST /v1/work with its Idempotency-Key',
      );
  }
}

/** `GET /v1/work/{id}` (scope `read`, `board` or `report`). @throws AppError `not_found` */
export async function getWork({ ctx, id }: { ctx: ServiceContext; id: string }): Promise<WorkView> {
  requireScope(ctx, 'read', 'board', 'report');
  const item = await ctx.state.getWork(ctx.tenant, id);
  if (!item || (ctx.caller.session !== null && ctx.caller.session !== item.session)) throw notFound('work');
  return workView(item, ctx.now());
}

/**
 * `GET /v1/work?session=&limit=` (scope `read`, `board` or `report`): the tenant's work items (one
 * session's when given; a session-bound token sees its own session's only), newest started first, at most
 * `limit` (1..500, default 100), each without its history: an item keeps up to 100 history entries (up
 * to about 250 KB of JSON), which a listing of hundreds would answer in one body of a hundred megabytes.
 * `GET /v1/work/{id}` answers one item with its history.
 */
export async function listWork({
  ctx,
  session,
  limit = WORK_LIST_LIMIT.default,
}: {
  ctx: ServiceContext;
  session?: string | null;
  limit?: number;
}): Promise<WorkList> {
  requireScope(ctx, 'read', 'board', 'report');
  const sid = ctx.caller.session ?? session ?? undefined;
  if (session && ctx.caller.session !== null && session !== ctx.caller.session) throw notFound('session');
  const n = Math.min(Math.max(1, Math.trunc(limit)), WORK_LIST_LIMIT.max);
  const items = await ctx.state.listWork(ctx.tenant, { ...(sid ? { session: sid } : {}), limit: n });
  const now = ctx.now();
  return { items: items.map((i) => workSummary(i, now)), as_of: now.toISOString() };
}

/**
 * Reads item `id`, checks the caller owns it and it is not stopped, applies `change` (which returns the
 * history entry's fields for a semantic `op`, nothing for a heartbeat) and writes it on condition of the
 * version read; again on a fresh read when another write won.
 */
async function write(
  ctx: ServiceContext,
  id: string,
  owner: Owner,
  op: SemanticOp | null,
  key: string | null,
  change: (item: WorkItem, now: string) => Record<string, unknown> | undefined,
): Promise<WorkAnswer> {
  requireScope(ctx, 'report');
  requireSessionAccess(ctx, owner.session);
  const hash = op ? contentHash(op, owner) : '';
  for (let attempt = 0; ; attempt++) {
    const item = await ctx.state.getWork(ctx.tenant, id);
    if (!item || (ctx.caller.session !== null && ctx.caller.session !== item.session)) throw notFound('work');
    requireOwner(ctx.caller, item, owner);
    const done = key ? await findApplied(ctx.state, item, key) : null;
    if (done) {
      requireSameContent(item, done, hash);
      return { view: workView(item, ctx.now()), created: false };
    }
    if (item.state === 'stopped') {
      throw new AppError(
        'work_stopped',
        `work ${id} was stopped (${item.outcome}) at ${item.last_reported.at}: start a new work item for new work`,
        { stopped_at: item.last_reported.at, outcome: item.outcome },
      );
    }
    const now = isoNow(ctx);
    const next: WorkItem = structuredClone(item);
    const fields = change(next, now);
    if (op) {
      next.history = [...next.history, { op, at: now, ...dropUndefined(fields ?? {}) }].slice(-MAX_HISTORY);
      next.last_reported = { op, at: now };
      if (key) await addApplied(ctx.state, next, { key, op, hash, at: now });
    }
    next.updated_at = now;
    next.version = item.version + 1;
    try {
      await ctx.state.putWork(next);
      summariesChanged(ctx.state, ctx.tenant);
      return { view: workView(next, ctx.now()), created: false };
    } catch (err) {
      if (!(err instanceof StateConflictError)) throw err;
      if (attempt >= CONFLICT_RETRIES) {
        throw new AppError(
          'conflict',
          `work ${id} kept changing while this request was applied: send it again`,
        );
      }
      await sleep(Math.random() * Math.min(200, 5 * 2 ** attempt));
    }
  }
}

/** @throws AppError `idempotency_mismatch` when the key `done` records was applied with other content */
function requireSameContent(item: WorkItem, done: Applied, hash: string): void {
  if (done.hash === hash) return;
  throw new AppError(
    'idempotency_mismatch',
    `Idempotency-Key ${JSON.stringify(done.key)} was used for another ${done.op} of work ${item.id} at ${done.at}: a resumed operation must be sent exactly as it was first sent (use a new key for a new operation)`,
    { work_id: item.id, op: done.op, at: done.at },
  );
}

/** The SHA-256 of an operation's content: its name and body, keys sorted, owner included. */
function contentHash(op: string, body: object): string {
  return createHash('sha256')
    .update(JSON.stringify([op, sortKeys(body)]))
    .digest('hex');
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.keys(v)
        .sort()
        .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
        .map((k) => [k, sortKeys((v as Record<string, unknown>)[k])]),
    );
  }
  return v;
}

function dropUndefined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}

function renew(ctx: ServiceContext, item: WorkItem, now: string): void {
  item.lease_expires_at = plusSeconds(ctx, item.ttl_seconds);
  item.last_heartbeat_at = now;
}

function plusSeconds(ctx: ServiceContext, s: number): string {
  return new Date(ctx.now().getTime() + s * 1000).toISOString();
}

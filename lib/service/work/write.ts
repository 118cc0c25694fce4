/**
 * The write every work verb but start makes (lib/service/work/): read the item, check the caller owns it
 * and it is not stopped, change it, and write it on condition of the version read, again on a fresh read
 * when another write won; and the helpers start shares with it (the content hash of an idempotent
 * operation, lease renewal).
 */

import { createHash } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Owner, SemanticOp, WorkView } from '../../contract/work.js';
import { StateConflictError, type WorkItem } from '../../store/index.js';
import { leaseWatch } from '../alerts/events.js';
import { isoNow, requireScope, requireSessionAccess, type ServiceContext } from '../shared/context.js';
import { AppError, notFound } from '../shared/errors.js';
import { summariesChanged } from '../shared/summary-cache.js';
import { type Applied, addApplied, findApplied } from './keys.js';
import { requireOwner } from './owner.js';
import { workView } from './view.js';

/** History entries kept per item (oldest dropped first). */
const MAX_HISTORY = 100;

const CONFLICT_RETRIES = 40;

/** What a write verb answers: the item, and whether this request created it (201) or not (200). */
export interface WorkAnswer {
  view: WorkView;
  created: boolean;
}

/**
 * Reads item `id`, checks the caller owns it and it is not stopped, applies `change` (which returns the
 * history entry's fields for a semantic `op`, nothing for a heartbeat) and writes it on condition of the
 * version read; again on a fresh read when another write won.
 */
export async function write(
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
      // A lease renewed after it had expired is watched again (issue 28: `work.unknown` at its next expiry).
      const watch = leaseWatch(item, next, ctx.now());
      await ctx.state.putWork(next, watch ? [watch] : undefined);
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
export function contentHash(op: string, body: object): string {
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

export function renew(ctx: ServiceContext, item: WorkItem, now: string): void {
  item.lease_expires_at = plusSeconds(ctx, item.ttl_seconds);
  item.last_heartbeat_at = now;
}

export function plusSeconds(ctx: ServiceContext, s: number): string {
  return new Date(ctx.now().getTime() + s * 1000).toISOString();
}

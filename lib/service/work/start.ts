import { monotonicFactory } from 'ulid';
import { WorkStart } from '../../contract/work.js';
import { StateConflictError, type WorkItem } from '../../store/index.js';
import { leaseWatch } from '../alerts/events.js';
import { isoNow, requireScope, requireSessionAccess, type ServiceContext } from '../shared/context.js';
import { AppError, parseInput } from '../shared/errors.js';
import { summariesChanged } from '../shared/summary-cache.js';
import { requirePlainContent } from './content.js';
import { startedBy } from './owner.js';
import { workView } from './view.js';
import { contentHash, plusSeconds, type WorkAnswer } from './write.js';

const ulid = monotonicFactory();

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
    // The lease is watched from its start (issue 28): `work.unknown` if it expires un-renewed.
    const watch = leaseWatch(null, item, ctx.now());
    await ctx.state.putWork(item, watch ? [watch] : undefined);
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

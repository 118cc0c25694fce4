/**
 * `POST /v1/usage/recompute[?sid=]` (issue 27 item 5, `hansard usage --recompute`): the usage counters
 * made again from the stored segments, for when prices or counting rules changed or a writer was stored
 * before usage was counted. Each writer's segment is folded from its start up to its indexed length with
 * the same fold and the same bucket code as ingest (./project.ts, ./buckets.ts), the new buckets diffed
 * against its stored record's, and the difference applied as deltas on condition of the stored `upto`
 * (a chunk counted meanwhile: read again and redo that writer). So the session counters and tenant
 * buckets move by exactly what changed, and a recompute over unchanged rules changes nothing.
 *
 * Each writer is recomputed under ingest's lock of it in this process. Across processes (Lambda) one race
 * is left: a chunk whose count read the record before a recompute that CHANGED it (new prices or rules)
 * and wrote after it, at the same `upto`, is accepted by the condition and puts the old buckets back in
 * the record while the session and tenant counters keep the recompute's difference. The port conditions
 * on `upto` alone; a record version would close it. A second recompute after the upgrade settles it.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { newFoldState, PRICE_DATA, type UsageDelta } from '../../log/analyse/usage/index.js';
import { UsageConflictError } from '../../store/index.js';
import { withWriterLock } from '../ingest/ingest-chunk.js';
import { isoNow, requireScope, requireSessionAccess, type ServiceContext } from '../shared/context.js';
import { AppError, notFound } from '../shared/errors.js';
import { storageAppError } from '../shared/storage-faults.js';
import { diffBuckets, mergeDeltas } from './buckets.js';
import { foldStored, mixedFrom, untrustFrom } from './project.js';
import type { UsageRecompute } from './schemas.js';

/** Tries per writer when chunks keep arriving while it is folded. */
const CONFLICT_TRIES = 5;

/**
 * Recomputes the usage of session `sid`, or of every session of the tenant when none is given.
 * @throws AppError `forbidden` without scope admin; `not_found` for a `sid` with no writer; a storage
 *   fault (`storageAppError`) when a segment cannot be read or a record written; `conflict` (409) when a
 *   writer kept advancing through every try
 */
export async function recomputeUsage({
  ctx,
  sid,
}: {
  ctx: ServiceContext;
  sid?: string | undefined;
}): Promise<UsageRecompute> {
  // Another session's id first, as a missing one: a session token cannot probe which sessions exist.
  if (sid !== undefined) requireSessionAccess(ctx, sid);
  requireScope(ctx, 'admin');
  if (sid === undefined && ctx.caller.session !== null) requireSessionAccess(ctx, '');
  const sids = sid !== undefined ? [sid] : await allSessions(ctx);
  const out: UsageRecompute = {
    sessions: 0,
    writers: 0,
    changed_writers: 0,
    changed_buckets: 0,
    price_data: PRICE_DATA,
  };
  for (const s of sids) {
    const writers = await ctx.state.listWriters(ctx.tenant, s);
    if (writers.length === 0) {
      if (sid !== undefined) throw notFound('session');
      continue;
    }
    out.sessions += 1;
    for (const wr of writers) {
      out.writers += 1;
      // under ingest's lock of the writer: in this process no chunk is counted and not yet indexed meanwhile
      const moved = await withWriterLock(ctx, s, wr.w, () => recomputeWriter(ctx, s, wr.w));
      if (moved > 0) {
        out.changed_writers += 1;
        out.changed_buckets += moved;
      }
    }
  }
  return out;
}

/** Every session id of the tenant, through the listing's pages. */
async function allSessions(ctx: ServiceContext): Promise<string[]> {
  const sids: string[] = [];
  let cursor: string | null = null;
  for (;;) {
    const page = await ctx.state.listSessions(ctx.tenant, 200, cursor);
    for (const s of page.items) sids.push(s.sid);
    if (!page.next) return sids;
    cursor = page.next;
  }
}

/** Recomputes one writer; returns how many buckets moved (0: the record was right). */
async function recomputeWriter(ctx: ServiceContext, sid: string, w: string): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      const [writer, rec] = await Promise.all([
        ctx.state.getWriter(ctx.tenant, sid, w),
        ctx.state.getWriterUsage(ctx.tenant, sid, w),
      ]);
      const length = writer?.length ?? 0;
      if (rec && rec.upto > length && attempt < CONFLICT_TRIES) {
        // A chunk counted whose index advance is in flight: wait for it rather than uncount it. After
        // the last try it is uncounted (its ingest failed; the client's retry counts it again).
        await sleep(50 * attempt);
        continue;
      }
      const state = newFoldState();
      const deltas: UsageDelta[] = [];
      const key = { tenant: ctx.tenant, sid, w };
      // A writer appended to by another token counts nothing from where the record marked it; one whose
      // record has no mark (counted before marks were kept, or never) counts nothing at all.
      // A mark at or past the acknowledged length was left by a chunk never acknowledged: it does not stand.
      const marked = rec ? mixedFrom(rec.state) : null;
      const cut = marked !== null && marked < length ? marked : null;
      const from = cut ?? (writer?.mixed_tokens ? 0 : null);
      if (from === null) await foldStored(ctx, key, 0, length, state, deltas);
      else {
        await foldStored(ctx, key, 0, Math.min(from, length), state, deltas);
        untrustFrom(state, from);
        await foldStored(ctx, key, Math.min(from, length), length, state, deltas);
      }
      const fresh = mergeDeltas([], deltas).buckets;
      const diff = diffBuckets(rec?.buckets ?? [], fresh);
      if (rec && rec.upto === length && diff.length === 0) return 0;
      await ctx.state.applyWriterUsage(ctx.tenant, sid, w, rec?.upto ?? null, {
        next: { upto: length, state, buckets: fresh, updated_at: isoNow(ctx) },
        deltas: diff,
      });
      return diff.length;
    } catch (err) {
      if (err instanceof UsageConflictError && attempt < CONFLICT_TRIES) continue;
      if (err instanceof UsageConflictError) {
        throw new AppError(
          'conflict',
          `writer ${w} of session ${sid} kept receiving chunks while its usage was recomputed: run the recompute again`,
          { sid, w },
        );
      }
      throw storageAppError(err) ?? err;
    }
  }
}

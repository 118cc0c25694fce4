/**
 * Replays of any size (issue 17.2, DESIGN §6c). A streamed Lambda response is capped (200 MB, ~2 MB/s past
 * its first 6 MB, 15 minutes) and API Gateway answers anything over ~4.5 MiB with a 5xx, so a deployment
 * that sets `LargeReplays` answers a replay of a session larger than `inlineBytes` (the sum of its
 * writers' indexed lengths) with a stored copy instead: the same bytes the stream would give, merged once
 * by the same code (`replaySession` / `rawSession`) into an object of the deployment's archive, and handed
 * out as a short-lived URL. The local server sets none and streams every size.
 *
 * A stored replay is named by what it was made from (`replayArchiveKey`): the tenant, the session, the
 * variant (NDJSON, raw or text), and each writer's indexed length (and, for the text replay, the agents'
 * declared rows), so a replay of the same bytes is merged once and a session that grew gets a new one.
 * Where a request may wait (the replay function, up to `inRequestBytes`) the merge runs in it; where it may
 * not (the API: 29 s), a build of the variant is started (`ReplayBuilds`) and the answer says to come
 * back. A variant has one build at a time, whose state (building, done, failed) the builds keep: a build
 * started in the last `BUILD_CLAIM_MS` is not started twice; a live session (it grows between polls) is
 * answered with the copy its last build made when that build ended less than `FRESH_COPY_MS` ago (a
 * replay as of then), never a build per poll; a build that failed answers its error for `FAILED_MS`.
 * The builder names the copy itself from the session as it reads it: a job names no key.
 */
import { createHash } from 'node:crypto';
import canonicalizeModule from 'canonicalize';
import type { ReplayFormat } from '../../log/replay/replay.js';
import type { TokenRecord, WriterRecord } from '../../store/index.js';
import { requireScope, requireSessionAccess, type ServiceContext } from '../shared/context.js';
import { AppError, ERROR_STATUS, type ErrorCode, notFound } from '../shared/errors.js';
import type { ArchivedReplay, ReplayBuilds, ReplayJob } from '../shared/replay-ports.js';
import { rawSession, replaySession } from './replay.js';

// The package is CommonJS (`module.exports = serialize`) but its types declare an ES default export.
const canonicalize = canonicalizeModule as unknown as (input: unknown) => string | undefined;

export {
  type ArchivedReplay,
  type BuildState,
  type LargeReplays,
  type ReplayArchive,
  type ReplayBuilds,
  ReplayJob,
} from '../shared/replay-ports.js';

/** A build claimed longer ago than this is taken to have died: the next request starts another. */
export const BUILD_CLAIM_MS = 15 * 60 * 1000;
/** Seconds a client is asked to wait before it asks again for a replay being built. */
export const BUILD_RETRY_AFTER_S = 5;
/** A live session is answered with its variant's last copy while that copy's build ended this recently. */
export const FRESH_COPY_MS = 60 * 1000;
/** A build that failed answers its error to the requests of this long after it; then one is tried again. */
export const FAILED_MS = 60 * 1000;
const DEFAULT_URL_TTL_S = 900;
/** How much larger than its session a text replay is taken to be, against `inlineBytes`. */
const TEXT_GROWTH = 3;

/** How `GET …/replay` answers: stream it, hand out the stored copy, or come back later. */
export type ReplayPlan =
  | { kind: 'inline'; bytes: number }
  | { kind: 'archived'; bytes: number; replay: ArchivedReplay }
  | { kind: 'building'; bytes: number; retry_after: number };

/** The variant of a replay: its tenant, session and form (`ndjson`, `raw` or `text`). */
export function replayVariant(
  tenant: string,
  sid: string,
  q: { format: ReplayFormat; raw: boolean },
): string {
  return `${tenant}/${sid}/${q.raw ? 'raw' : q.format}`;
}

/**
 * The name of a stored replay: `{tenant}/{sid}/{variant}-{sha256}.{ndjson|txt}`, the hash over the
 * variant, each writer's id and indexed length in writer order, and for text the status record its
 * Declared rows come from (`declared`).
 */
export function replayArchiveKey(
  tenant: string,
  sid: string,
  q: { format: ReplayFormat; raw: boolean },
  writers: ReadonlyArray<Pick<WriterRecord, 'w' | 'length'>>,
  declared: unknown = null,
): string {
  const h = createHash('sha256');
  // RFC 8785: the same status record gives the same key whatever order a store gives its fields in
  h.update(canonicalize({ v: 2, format: q.raw ? 'raw' : q.format, declared }) ?? '');
  for (const wr of [...writers].sort((a, b) => (a.w < b.w ? -1 : a.w > b.w ? 1 : 0)))
    h.update(`\n${wr.w} ${wr.length}`);
  return `${replayVariant(tenant, sid, q)}-${h.digest('hex')}.${q.format === 'text' && !q.raw ? 'txt' : 'ndjson'}`;
}

/**
 * How to answer a replay of `sid` (issue 17.2): `inline` when the deployment has no `largeReplays` or the
 * session is small; else the stored copy (`archived`), merged now when this process may wait for it, or
 * `building` once a builder was started (or is running already). Scope and session binding as for
 * `replaySession`. @throws AppError `not_found`, `forbidden`; the archive's and the builder's errors
 */
export async function planReplay({
  ctx,
  sid,
  format,
  raw,
  signal,
}: {
  ctx: ServiceContext;
  sid: string;
  format: ReplayFormat;
  raw: boolean;
  signal?: AbortSignal;
}): Promise<ReplayPlan> {
  requireScope(ctx, 'read', 'board');
  requireSessionAccess(ctx, sid);
  const writers = await ctx.state.listWriters(ctx.tenant, sid);
  if (writers.length === 0) throw notFound('session');
  const bytes = writers.reduce((n, wr) => n + wr.length, 0);
  const large = ctx.largeReplays;
  // The text replay can be larger than the session (an attribution mark lists every message of a
  // window: 2.4 times the session's bytes on the 64-writer bench session), so it counts three times.
  const output = format === 'text' && !raw ? bytes * TEXT_GROWTH : bytes;
  if (!large || output <= large.inlineBytes) return { kind: 'inline', bytes };
  const ttl = large.urlTtlSeconds ?? DEFAULT_URL_TTL_S;
  const declared = format === 'text' && !raw ? await statusOf(ctx, sid) : null;
  const key = replayArchiveKey(ctx.tenant, sid, { format, raw }, writers, declared);
  const found = await large.archive.find(key, ttl);
  if (found) return { kind: 'archived', bytes, replay: found };
  const inRequest = large.inRequestBytes ?? (large.builds ? 0 : Number.POSITIVE_INFINITY);
  if (large.builds && output > inRequest) {
    const builds = large.builds;
    const now = ctx.now().getTime();
    const st = await builds.status(replayVariant(ctx.tenant, sid, { format, raw }));
    const since = (at: string) => now - Date.parse(at);
    if (st?.state === 'done' && since(st.finished_at) <= FRESH_COPY_MS) {
      // A live session: the copy of its last build, a replay as of a minute ago at most.
      const last = await large.archive.find(st.key, ttl);
      if (last) return { kind: 'archived', bytes, replay: last };
    }
    if (st?.state === 'failed' && since(st.finished_at) <= FAILED_MS) {
      // The build's own error (data_loss with its range, say), as the streamed replay would have answered.
      const code = Object.hasOwn(ERROR_STATUS, st.error.code)
        ? (st.error.code as ErrorCode)
        : 'replay_build_failed';
      throw new AppError(code, st.error.message, st.error.details);
    }
    if (!(st?.state === 'building' && since(st.started_at) <= BUILD_CLAIM_MS)) {
      await builds.start({
        tenant: ctx.tenant,
        sid,
        format,
        raw,
        caller: { id: ctx.caller.id, scopes: ctx.caller.scopes, session: ctx.caller.session },
      });
    }
    return { kind: 'building', bytes, retry_after: BUILD_RETRY_AFTER_S };
  }
  await storeReplay(ctx, { sid, format, raw, key }, signal);
  const stored = await large.archive.find(key, ttl);
  if (!stored) throw new Error(`replay ${key} was stored but cannot be found`);
  return { kind: 'archived', bytes, replay: stored };
}

/**
 * Merges the replay of `job` (as `replaySession` / `rawSession` give it, byte for byte) into the archive
 * as `job.key`: the builder's work (`buildReplay`), and the replay function's for a session over its
 * inline size. @throws AppError `not_found`; the store's and the archive's errors (nothing is left under the key)
 */
export async function storeReplay(
  ctx: ServiceContext,
  job: Pick<ReplayJob, 'sid' | 'format' | 'raw'> & { key: string },
  signal?: AbortSignal,
): Promise<void> {
  const large = ctx.largeReplays;
  if (!large) throw new Error('this deployment stores no replays (no largeReplays)');
  const body = job.raw
    ? await rawSession({ ctx, sid: job.sid, ...(signal ? { signal } : {}) })
    : await replaySession({ ctx, sid: job.sid, format: job.format, ...(signal ? { signal } : {}) });
  const type = job.format === 'text' && !job.raw ? 'text/plain; charset=utf-8' : 'application/x-ndjson';
  await large.archive.store(job.key, body, type);
}

/**
 * What the text replay's Declared rows are made from besides the transcript: the session's status record
 * as stored (one read). With the writers' lengths it names the copy, so a copy is found without checking
 * the evidence again (a check reads the whole session).
 */
async function statusOf(ctx: ServiceContext, sid: string): Promise<unknown> {
  return (await ctx.state.getStatus(ctx.tenant, sid)) ?? null;
}

/**
 * The context a builder acts in for `job`: the job's tenant, its requester's scopes and session binding
 * (the builder reads with no more than the request could), over the builder's own stores.
 */
export function jobContext(
  job: ReplayJob,
  deps: Pick<ServiceContext, 'segments' | 'state' | 'now' | 'limits' | 'largeReplays'>,
): ServiceContext {
  const caller: TokenRecord = {
    id: job.caller.id,
    tenant: job.tenant,
    hash: '',
    scopes: job.caller.scopes,
    session: job.caller.session,
    label: 'replay build',
    created_at: deps.now().toISOString(),
    expires_at: null,
    revoked_at: null,
    last_used_at: null,
    parent: null,
    root: job.caller.id,
  };
  return { ...deps, tenant: job.tenant, caller };
}

/** What a build did: stored a copy, found it stored already, or (for a marker no longer building) nothing. */
export type BuildOutcome = 'built' | 'already_stored';

/**
 * The builder's work for `job` (started at `startedAt`, issue 17.2): names the copy from the session as
 * it is now (the job's tenant, session and variant; never a key a job could name), stores it unless it is
 * there, and records the outcome with `builds.finish`: the copy, or the error, which the requests of the
 * next `FAILED_MS` are answered with. `ctx` is `jobContext(job, …)`.
 * @throws whatever the build failed with, after recording it (so the invocation fails and is retried)
 */
export async function buildReplay(
  ctx: ServiceContext,
  job: ReplayJob,
  startedAt: string,
  builds: ReplayBuilds,
): Promise<BuildOutcome> {
  const large = ctx.largeReplays;
  if (!large) throw new Error('this deployment stores no replays (no largeReplays)');
  try {
    requireScope(ctx, 'read', 'board');
    requireSessionAccess(ctx, job.sid);
    const writers = await ctx.state.listWriters(job.tenant, job.sid);
    if (writers.length === 0) throw notFound('session');
    const text = job.format === 'text' && !job.raw;
    const declared = text ? await statusOf(ctx, job.sid) : null;
    const key = replayArchiveKey(job.tenant, job.sid, job, writers, declared);
    const had = await large.archive.find(key, 60);
    if (!had) await storeReplay(ctx, { ...job, key });
    await builds.finish(job, startedAt, { key });
    return had ? 'already_stored' : 'built';
  } catch (err) {
    const e =
      err instanceof AppError
        ? { code: err.code, message: err.message, details: err.details ?? {} }
        : {
            code: 'replay_build_failed',
            message:
              'the stored replay could not be merged: ask again in a minute, or stream it from the replay URL',
            details: {},
          };
    await builds.finish(job, startedAt, { error: e });
    throw err;
  }
}

/**
 * Replays of any size (issue 17.2, DESIGN §6c). A streamed Lambda response is capped (200 MB, ~2 MB/s past
 * its first 6 MB, 15 minutes) and API Gateway answers anything over ~4.5 MiB with a 5xx, so a deployment
 * that sets `LargeReplays` answers a replay of a session larger than `inlineBytes` (the sum of its
 * writers' indexed lengths) with a stored copy instead: the same bytes the stream would give, merged once
 * by the same code (`replaySession` / `rawSession`) into an object of the deployment's archive, and handed
 * out as a short-lived URL. The local server sets none and streams every size.
 *
 * A stored replay is named by what it was made from (`replayArchiveKey`): the tenant, the session, the
 * format, and each writer's indexed length (and, for the text replay, the agents' declared rows), so a
 * replay of the same bytes is merged once and a session that grew gets a new one. Where a request may wait
 * (the replay function: 15 minutes) the merge runs in it; where it may not (the API: 29 s), a builder is
 * started (`ReplayBuilds`) and the answer says to come back; a build another request started in the last
 * `BUILD_CLAIM_MS` is not started twice.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import type { ReplayFormat } from '../log/replay.js';
import type { TokenRecord, WriterRecord } from '../store/index.js';
import { requireScope, requireSessionAccess, type ServiceContext } from './context.js';
import { declaredRows } from './declared.js';
import { notFound } from './errors.js';
import { SessionId } from './id-schemas.js';
import { rawSession, replaySession } from './sessions.js';
import { checkedStatus } from './status.js';

/** A stored replay as a client fetches it. */
export interface ArchivedReplay {
  /** a URL that GETs the replay's bytes without a token, until `expires_at` */
  url: string;
  bytes: number;
  /** ISO 8601 */
  expires_at: string;
}

/**
 * Where stored replays are kept (on AWS: S3, lib/store/s3-replay-archive.ts). Keys are `replayArchiveKey`'s;
 * an adapter may put them under a prefix of its own.
 */
export interface ReplayArchive {
  /** The stored replay `key` with a URL valid `ttlSeconds`, or null when there is none (yet). */
  find(key: string, ttlSeconds: number): Promise<ArchivedReplay | null>;
  /**
   * Stores `body` as `key`, streamed (memory stays bounded whatever its size), never replacing a stored
   * one: when `key` already exists (another build finished first) it resolves all the same. A failure
   * leaves no object under `key`. @throws the store's error
   */
  store(key: string, body: AsyncIterable<Uint8Array | string>, contentType: string): Promise<void>;
}

/**
 * What a build needs to run elsewhere (the builder function): who asked, and what. `caller` is the
 * requester's token as the builder acts for it: its id, scopes and session binding.
 */
export const ReplayJob = z.object({
  tenant: z.string().min(1),
  sid: SessionId,
  format: z.enum(['ndjson', 'text']),
  raw: z.boolean(),
  key: z.string().min(1),
  caller: z.object({ id: z.string(), scopes: z.array(z.string()), session: SessionId.nullable() }),
});
export type ReplayJob = z.infer<typeof ReplayJob>;

/**
 * Builds stored replays in the background (on AWS: a marker object whose creation S3 announces to the
 * builder function, lib/store/s3-replay-archive.ts).
 */
export interface ReplayBuilds {
  /**
   * Has `job` built unless a build of `job.key` started less than `BUILD_CLAIM_MS` ago (then nothing
   * happens: of two requests at once, one starts it). Resolves once the build is under way, not done.
   */
  start(job: ReplayJob): Promise<void>;
}

/** A deployment's large-replay settings (`ServiceDeps.largeReplays`). */
export interface LargeReplays {
  /**
   * replays of sessions of at most this many bytes (the writers' indexed lengths summed; three times that
   * for the text replay) are streamed
   */
  inlineBytes: number;
  archive: ReplayArchive;
  /**
   * larger replays of sessions of at most this many bytes (counted as for `inlineBytes`) are merged in the
   * request, when this process may wait that long (the replay function); default: none when `builds` is
   * set, every size when it is not
   */
  inRequestBytes?: number;
  /** when set, replays too large to merge in the request are built by it, the request answered at once */
  builds?: ReplayBuilds;
  /** how long a handed-out URL is valid, s (default 900) */
  urlTtlSeconds?: number;
}

/** A build claimed longer ago than this is taken to have died: the next request starts another. */
export const BUILD_CLAIM_MS = 15 * 60 * 1000;
/** Seconds a client is asked to wait before it asks again for a replay being built. */
export const BUILD_RETRY_AFTER_S = 5;
const DEFAULT_URL_TTL_S = 900;
/** How much larger than its session a text replay is taken to be, against `inlineBytes`. */
const TEXT_GROWTH = 3;

/** How `GET …/replay` answers: stream it, hand out the stored copy, or come back later. */
export type ReplayPlan =
  | { kind: 'inline'; bytes: number }
  | { kind: 'archived'; bytes: number; replay: ArchivedReplay }
  | { kind: 'building'; bytes: number; retry_after: number };

/**
 * The name of a stored replay: `{tenant}/{sid}/{sha256}.{ndjson|txt}`, the hash over the format, raw or
 * not, each writer's id and indexed length in writer order, and for text the declared rows shown in it.
 */
export function replayArchiveKey(
  tenant: string,
  sid: string,
  q: { format: ReplayFormat; raw: boolean },
  writers: ReadonlyArray<Pick<WriterRecord, 'w' | 'length'>>,
  declared: unknown = null,
): string {
  const h = createHash('sha256');
  h.update(JSON.stringify({ v: 1, format: q.format, raw: q.raw, declared }));
  for (const wr of [...writers].sort((a, b) => (a.w < b.w ? -1 : a.w > b.w ? 1 : 0)))
    h.update(`\n${wr.w} ${wr.length}`);
  return `${tenant}/${sid}/${h.digest('hex')}.${q.format === 'text' && !q.raw ? 'txt' : 'ndjson'}`;
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
  const declared = format === 'text' && !raw ? await declaredOf(ctx, sid, signal) : null;
  const key = replayArchiveKey(ctx.tenant, sid, { format, raw }, writers, declared);
  const found = await large.archive.find(key, ttl);
  if (found) return { kind: 'archived', bytes, replay: found };
  const inRequest = large.inRequestBytes ?? (large.builds ? 0 : Number.POSITIVE_INFINITY);
  if (large.builds && output > inRequest) {
    await large.builds.start({
      tenant: ctx.tenant,
      sid,
      format,
      raw,
      key,
      caller: { id: ctx.caller.id, scopes: ctx.caller.scopes, session: ctx.caller.session },
    });
    return { kind: 'building', bytes, retry_after: BUILD_RETRY_AFTER_S };
  }
  await storeReplay(ctx, { sid, format, raw, key }, signal);
  const stored = await large.archive.find(key, ttl);
  if (!stored) throw new Error(`replay ${key} was stored but cannot be found`);
  return { kind: 'archived', bytes, replay: stored };
}

/**
 * Merges the replay of `job` (as `replaySession` / `rawSession` give it, byte for byte) into the archive
 * as `job.key`: the builder function's work, and the replay function's for a session over its inline
 * size. @throws AppError `not_found`; the store's and the archive's errors (nothing is left under the key)
 */
export async function storeReplay(
  ctx: ServiceContext,
  job: Pick<ReplayJob, 'sid' | 'format' | 'raw' | 'key'>,
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

/** The declared rows the text replay of `sid` shows now (they name the stored replay too). */
async function declaredOf(ctx: ServiceContext, sid: string, signal?: AbortSignal): Promise<unknown> {
  const status = await checkedStatus(ctx, sid, signal);
  return status ? declaredRows(status) : [];
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

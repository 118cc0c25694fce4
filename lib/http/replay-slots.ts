/**
 * What a whole-session read may hold (issue 8, docs/operations.md "Replay caps and abandoned requests").
 *
 * Replay (every format, raw included), segment download, verify, inspect, attribution and the board's
 * timeline page each read every byte of a session, so:
 * - a token may run only `limits.maxConcurrentReplays` of them at once (default 4); one more is answered
 *   429 `too_many_replays` with `Retry-After`. A slot is taken before the read starts and given back when
 *   the response is over: a streamed body when its last byte is taken, it fails, or the client goes away;
 *   an answer built before it is sent (JSON, the timeline page) when it is built or abandoned. Tokens
 *   minted from another count with it, as for the rate limit.
 * - the passes no client's pace holds back (a replay's corrections pass, verify, inspect, attribution, the
 *   timeline page) run a few at a time in the whole process (`ScanGate`); the others wait their turn.
 * - each stops, closing every segment it opened, when its client goes away (`clientSignal`), and a streamed
 *   one also when its client keeps the connection but takes none of the body for `limits.streamIdleMs`
 *   (`slotBody`): a stalled reader cannot hold its slot for as long as it likes.
 * `readWholeSession` does all three for an answer built before it is sent; `slotBody` holds the slot of a
 * streamed one, whose read takes the signal and the gate itself (lib/service/sessions/replay.ts `replaySession`).
 *
 * The counts live in this process: `hansard serve` is one process, so they are exact there. On Lambda each
 * instance serves one request at a time, so neither binds; the per-token rate limit and the functions'
 * reserved concurrency bound reads there.
 */
import type { Context } from 'hono';
import { resolveLimits } from '../contract/limits.js';
import type { ServiceContext } from '../service/shared/context.js';
import { AppError } from '../service/shared/errors.js';
import type { AppEnv } from './auth.js';
import type { ReplaySlots, WholeSessionReads } from './read-slots.js';
import { toByteStream } from './stream.js';

export { ReplaySlots, type WholeSessionReads, wholeSessionReads } from './read-slots.js';

/** Seconds a client refused a slot is told to wait: long enough for a typical replay to finish. */
export const REPLAY_RETRY_AFTER_SECONDS = 5;

/**
 * Takes a replay slot for the request's token, or refuses it.
 * @returns the release function: call it once the response is over (see the module's doc)
 * @throws AppError `too_many_replays` (429, `details: {limit, retry_after_seconds}`) when the token
 *   already runs `maxConcurrentReplays` whole-session reads
 */
export function takeReplaySlot(c: Context<AppEnv>, slots: ReplaySlots): () => void {
  const ctx = c.get('ctx');
  const limit = resolveLimits(ctx.limits).maxConcurrentReplays;
  const key = ctx.caller.root;
  const release = slots.tryTake(key, limit);
  if (release) return release;
  c.header('Retry-After', String(REPLAY_RETRY_AFTER_SECONDS));
  throw new AppError(
    'too_many_replays',
    `this token already runs ${limit} replays, segment downloads, verifies, inspects or board session ` +
      `pages at once, the most it may: wait for one to finish, or try again in ${REPLAY_RETRY_AFTER_SECONDS} s`,
    { limit, retry_after_seconds: REPLAY_RETRY_AFTER_SECONDS },
  );
}

/**
 * The request's abort signal (aborted when the client goes away), with an `AbortError` as its reason:
 * node-server aborts with a string, and a string thrown through a handler never reaches the app's error
 * handler, so the request would end with no answer and no log line.
 */
export function clientSignal(c: Context<AppEnv>): AbortSignal {
  const raw = c.req.raw.signal;
  const ac = new AbortController();
  const abort = () =>
    ac.abort(new DOMException('the client went away before the answer was complete', 'AbortError'));
  if (raw.aborted) abort();
  else raw.addEventListener('abort', abort, { once: true });
  return ac.signal;
}

/** What a whole-session read of the service is given: the caller, the session, the request's signal. */
export interface WholeSessionRead {
  ctx: ServiceContext;
  sid: string;
  /** aborted when the client goes away: the read stops (AbortError) and closes every segment it opened */
  signal: AbortSignal;
}

/**
 * Runs `read` of session `sid`, a whole-session read whose answer is built before it is sent (verify,
 * inspect, attribution, the board's timeline page), holding a replay slot of the request's token and a
 * place in the scan gate, with the request's abort signal; gives both back when it settles.
 * @throws what `takeReplaySlot` (429 `too_many_replays`), the gate (the signal's reason once the client
 *   is gone) and `read` throw
 */
export async function readWholeSession<T>(
  c: Context<AppEnv>,
  sid: string,
  read: (args: WholeSessionRead) => Promise<T>,
): Promise<T> {
  const { gate, slots } = c.get('services').reads;
  const release = takeReplaySlot(c, slots);
  const signal = clientSignal(c);
  try {
    return await gate.run(() => read({ ctx: c.get('ctx'), sid, signal }), signal);
  } finally {
    release();
  }
}

/**
 * The answer of a streamed whole-session read (replay, segment download): `source` as the body, holding a
 * replay slot until the body is over (its last byte taken, an error, the client gone, or the client taking
 * none of it for `limits.streamIdleMs`, when the answer is aborted and its connection closed). A HEAD
 * request gets the headers only: it takes no slot and reads nothing (`source` is lazy and never started).
 * @param held the release of a slot the caller took already (`takeReplaySlot`) for work it did before
 *   the body (the export writes a digest first): the body holds that one instead of taking another
 * @throws AppError `too_many_replays` (see `takeReplaySlot`)
 */
export function slotBody(
  c: Context<AppEnv>,
  reads: WholeSessionReads,
  source: AsyncIterable<string | Uint8Array>,
  headers: Record<string, string>,
  held?: () => void,
): Response {
  if (c.req.method === 'HEAD') {
    held?.();
    return c.body(null, 200, headers);
  }
  const release = held ?? takeReplaySlot(c, reads.slots);
  // Given back when the body ends or is cancelled, or at once when the request is aborted (whichever is
  // first): a body the server never started to send is never cancelled either.
  const signal = c.req.raw.signal;
  const onAbort = () => release();
  signal.addEventListener('abort', onAbort, { once: true });
  const onClose = () => {
    signal.removeEventListener('abort', onAbort);
    release();
  };
  const { streamIdleMs } = resolveLimits(c.get('ctx').limits);
  const onIdle = (err: Error) => c.get('services').stalled(c, err);
  return c.body(toByteStream(source, { onClose, idleMs: streamIdleMs, onIdle }), 200, headers);
}

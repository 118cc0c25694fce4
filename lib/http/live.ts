/**
 * The board's live updates (issue 14.2), the server's side: how often a stream checks for a change, its
 * heartbeat, the cap on streams per token, and `pumpOverview`, the loop of one `GET /board/events`.
 *
 * A stream checks the overview's ETag about once a second (`checkMs`) and sends the re-rendered region
 * when it changed (at once on connect, so a reconnecting page catches up); between changes a comment
 * line every `heartbeatMs` keeps proxies from closing it and lets the server notice a client that went
 * away. When the client goes away the loop stops at once: the wait is cancelled (no timer left), and no
 * read starts after. A token may hold `maxStreams` streams at once; one more is refused (429
 * `too_many_streams`): each costs a read a second.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { SSEStreamingApi } from 'hono/streaming';

export type { LiveMode } from '../board/layout.js';

/** The live updates' timing and cap (the defaults are the issue's; tests shorten them). */
export interface LiveTiming {
  /** ms between two checks of the overview's ETag (default 1000) */
  checkMs: number;
  /** ms of silence after which a comment line is sent (default 15000) */
  heartbeatMs: number;
  /** streams a token may hold at once (default 8) */
  maxStreams: number;
  /** ms the browser waits before it reconnects a dropped stream (the SSE `retry:` field; default 2000) */
  retryMs: number;
  /**
   * ms after which the server ends a stream (default 10 min): the browser reconnects and is
   * authenticated again, so a revoked or expired token stops getting updates within this
   */
  lifetimeMs: number;
}

export const DEFAULT_LIVE_TIMING: LiveTiming = {
  checkMs: 1000,
  heartbeatMs: 15_000,
  maxStreams: 8,
  retryMs: 2000,
  lifetimeMs: 10 * 60_000,
};

/** Seconds a refused stream is told to wait. */
export const LIVE_RETRY_AFTER_SECONDS = 10;

/** What one check gives: the overview's ETag, and (when asked) its region's HTML. */
export interface Snapshot {
  etag: string;
  html: () => Promise<string>;
}

/**
 * Runs one stream until `signal` aborts (the client went away) or `timing.lifetimeMs` is over: checks `next()` every
 * `timing.checkMs`, sends `event: overview` with the region's HTML when the ETag differs from the last
 * sent (the first at once, with `retry:`), and a `: heartbeat` comment after `timing.heartbeatMs` without
 * a write. A failing check is passed to `onError` and retried at the next tick.
 */
export async function pumpOverview(
  stream: SSEStreamingApi,
  next: () => Promise<Snapshot>,
  timing: LiveTiming,
  signal: AbortSignal,
  onError: (err: unknown) => void,
): Promise<void> {
  let last: string | null = null;
  let wroteAt = Date.now();
  const endAt = Date.now() + timing.lifetimeMs;
  while (!signal.aborted && !stream.aborted && !stream.closed && Date.now() < endAt) {
    try {
      const snap = await next();
      if (signal.aborted) return;
      if (snap.etag !== last) {
        const data = await snap.html();
        if (signal.aborted) return;
        await stream.writeSSE({
          event: 'overview',
          data,
          id: snap.etag.replaceAll(/[\r\n]/g, ''),
          ...(last === null ? { retry: timing.retryMs } : {}),
        });
        last = snap.etag;
        wroteAt = Date.now();
      } else if (Date.now() - wroteAt >= timing.heartbeatMs) {
        await stream.write(': heartbeat\n\n');
        wroteAt = Date.now();
      }
    } catch (err) {
      if (signal.aborted || stream.aborted || stream.closed) return;
      onError(err);
    }
    try {
      await sleep(timing.checkMs, undefined, { signal });
    } catch {
      return; // aborted: the timer is cleared with it
    }
  }
}

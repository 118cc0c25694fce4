/**
 * Authentication (DESIGN §4): `Authorization: Bearer hns_…` for the API; for the board pages also the
 * HttpOnly, SameSite=Strict cookie set by the sign-in link or form (Jupyter-style). The cookie is honoured
 * only by board routes, so a browser never carries more than the board can do.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { getCookie } from 'hono/cookie';
import type { ServiceContext, ServiceDeps } from '../service/shared/context.js';
import { AppError } from '../service/shared/errors.js';
import { isStorageFault } from '../service/shared/storage-faults.js';
import { authenticate } from '../service/tokens/create.js';
import type { Json } from './json.js';
import type { LiveMode, LiveTiming } from './live.js';
import type { ReplaySlots, WholeSessionReads } from './read-slots.js';

export const BOARD_COOKIE = 'hansard_board';

/**
 * What `createApp` gives every request (STYLE §7: services through the context, no module state), so
 * that a route declaration's handler is a plain function of its request.
 */
export interface AppServices {
  /** the stores, the clock and the deployment's limits */
  deps: Required<ServiceDeps>;
  /** the guards of whole-session reads: a slot of the token and a place in the scan gate */
  reads: WholeSessionReads;
  /** the OpenAPI document of this app, built on first use */
  document: () => Json;
  /**
   * gives up on a streamed answer whose client took none of it for `limits.streamIdleMs`: logs it and
   * closes the request's connection where the deployment can (`AppDeps.dropConnection`). Returns whether
   * it closed the connection.
   */
  stalled: (c: Context<AppEnv>, err: Error) => boolean;
  /** how the board's pages update themselves (`AppDeps.live`) */
  live: LiveMode;
  /** the live updates' timing and cap (./live.ts) */
  liveTiming: LiveTiming;
  /** the live streams each token holds open (`GET /board/events`) */
  liveStreams: ReplaySlots;
  /** aborted when the server stops: live streams end (`AppDeps.stopping`) */
  stopping: AbortSignal;
  /** where an error that answers no request goes (a live stream's failed check) */
  log: (message: string, err?: unknown) => void;
}

export type AppEnv = { Variables: { ctx: ServiceContext; services: AppServices } };

/** The bearer token of a request, or null. */
export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return m ? m[1]! : null;
}

/**
 * Puts the caller's `ServiceContext` on the request or answers 401.
 * @param allowCookie accept the board cookie when no Authorization header is sent
 */
export function requireAuth(deps: Required<ServiceDeps>, allowCookie = false): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = c.req.header('authorization');
    const secret =
      bearerToken(header) ?? (allowCookie && !header ? (getCookie(c, BOARD_COOKIE) ?? null) : null);
    const now = deps.now();
    const caller = await authenticate(deps.state, secret, now);
    // Last-used time is coarse on purpose: at most one write per token a minute.
    if (!caller.last_used_at || now.getTime() - Date.parse(caller.last_used_at) > 60_000) {
      // Best effort: a full or read-only disk must not turn every read into an error (issue 8).
      await deps.state.touchToken(caller.hash, now.toISOString()).catch((err: unknown) => {
        if (!isStorageFault(err)) throw err;
      });
    }
    c.set('ctx', {
      tenant: caller.tenant,
      caller,
      segments: deps.segments,
      state: deps.state,
      now: deps.now,
      limits: deps.limits,
      digests: deps.digests,
      signer: deps.signer,
      audit: deps.audit,
      largeReplays: deps.largeReplays,
      alerts: deps.alerts,
      signIn: deps.signIn,
    });
    await next();
  };
}

/** The longest `next` (a path and query to return to after signing in) the board carries: longer is dropped. */
export const MAX_NEXT = 2048;

/**
 * Where sign-in sends a browser that asked for `c`'s page: `/login` for the board's first page (`/`) and
 * for anything but a GET or HEAD, else `/login?next=<path and query, URL-encoded>` so that a shared or
 * bookmarked link survives signing in (`safeNext` in ./routes/pages/sign-in.tsx checks it on the way back).
 */
export function signInLocation(c: Context<AppEnv>): string {
  const url = new URL(c.req.url);
  const back = url.pathname + url.search;
  const method = c.req.method;
  if ((method !== 'GET' && method !== 'HEAD') || back === '/' || back.length > MAX_NEXT) return '/login';
  return `/login?next=${encodeURIComponent(back)}`;
}

/**
 * The board pages' check (`auth: 'cookie'` routes): a browser signed in with a board-scoped token goes on;
 * anyone else is sent to sign in (302 to /login, with `?next=` back to this page: `signInLocation`) rather
 * than shown a JSON error.
 */
export const pageAuth: MiddlewareHandler<AppEnv> = async (c, next) => {
  try {
    await requireAuth(c.get('services').deps, true)(c, async () => {});
  } catch (err) {
    if (err instanceof AppError && err.code === 'unauthorized') return c.redirect(signInLocation(c), 302);
    throw err;
  }
  if (!c.get('ctx').caller.scopes.includes('board')) return c.redirect(signInLocation(c), 302);
  return next();
};

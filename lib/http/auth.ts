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
import type { SignedInPerson } from '../service/sign-in/deps.js';
import type { Refusal } from '../service/sign-in/roles.js';
import { openSession } from '../service/sign-in/session.js';
import { authenticate } from '../service/tokens/create.js';
import type { Json } from './json.js';
import type { LiveMode, LiveTiming } from './live.js';
import type { ReplaySlots, WholeSessionReads } from './read-slots.js';
import { refusedPage } from './refused-page.js';
import { clearSessionCookie, sessionCookie, setSessionCookie } from './session-cookie.js';

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
 *
 * With `allowCookie` and no Authorization header, a browser's session cookie (issue 29: a person signed
 * in with their organisation's provider) comes first, then the link-token cookie. A session that ended or
 * whose person is refused now is a 401 whose details say why (`session`: `ended` or the refusal, and
 * `message`), which `pageAuth` turns into a sign-in or a page that says why.
 * @param allowCookie accept the board's cookies when no Authorization header is sent
 */
export function requireAuth(deps: Required<ServiceDeps>, allowCookie = false): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const header = c.req.header('authorization');
    if (allowCookie && !header && deps.signIn && sessionCookie(c) !== undefined) {
      const s = await openSession(
        { state: deps.state, signIn: deps.signIn, now: deps.now },
        sessionCookie(c),
      );
      if (s.ok) {
        if (s.renewed) setSessionCookie(c, s.renewed, s.maxAge);
        c.set('ctx', contextOf(deps, s.caller, s.person));
        return next();
      }
      clearSessionCookie(c);
      if (s.why !== 'signed_out') {
        const { ok: _ok, ...details } = s;
        throw new AppError('unauthorized', s.message, { session: s.why, ...details });
      }
    }
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
    c.set('ctx', contextOf(deps, caller, null));
    await next();
  };
}

/** The request's `ServiceContext` for `caller` (a token, or a signed-in person's stand-in record). */
function contextOf(
  deps: Required<ServiceDeps>,
  caller: ServiceContext['caller'],
  person: SignedInPerson | null,
): ServiceContext {
  return {
    tenant: caller.tenant,
    caller,
    person,
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
    search: deps.search,
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
    if (err instanceof AppError && err.code === 'unauthorized') {
      const refused = refusalOf(err);
      if (refused) return refusedPage(c, c.get('services').deps.state, refused);
      return c.redirect(endedLocation(signInLocation(c), err), 302);
    }
    throw err;
  }
  if (!c.get('ctx').caller.scopes.includes('board')) return c.redirect(signInLocation(c), 302);
  return next();
};

/**
 * `location` (a sign-in address) saying the session ended, and for which tenant, when the 401 says a
 * person's session ended (the sign-in page then says so and keeps the tenant).
 */
function endedLocation(location: string, err: AppError): string {
  const d = err.details as { session?: unknown; tenant?: unknown };
  if (d.session !== 'ended' || typeof d.tenant !== 'string') return location;
  const url = new URL(location, 'http://board.invalid');
  url.searchParams.set('ended', '1');
  url.searchParams.set('tenant', d.tenant);
  return url.pathname + url.search;
}

/** The refusal a 401 of `requireAuth` carries (a signed-in person refused now), or null. */
function refusalOf(err: AppError): { why: Refusal; message: string; tenant: string; email: string } | null {
  const d = err.details as { session?: unknown; message?: unknown; tenant?: unknown; email?: unknown };
  if (d.session !== 'domain' && d.session !== 'removed' && d.session !== 'unmapped') return null;
  return { why: d.session, message: String(d.message), tenant: String(d.tenant), email: String(d.email) };
}

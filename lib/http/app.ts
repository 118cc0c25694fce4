/**
 * `createApp(deps)`: the one Hono application every deployment serves (DESIGN §1, §4). Local mode passes
 * the filesystem and SQLite stores; Lambda passes the AWS ones. No module state: everything comes in
 * through `deps`.
 */
import { OpenAPIHono } from '@hono/zod-openapi';
import type { MiddlewareHandler } from 'hono';
import { csrf } from 'hono/csrf';
import { HTTPException } from 'hono/http-exception';
import { secureHeaders } from 'hono/secure-headers';
import type { RateLimiter } from '../ratelimit/interface.js';
import { NoopRateLimiter } from '../ratelimit/noop.js';
import { MISSING_DIGEST_STORE, MISSING_SIGNER } from '../service/digests/deps.js';
import type { ServiceDeps } from '../service/shared/context.js';
import { AppError } from '../service/shared/errors.js';
import { type AppEnv, type AppServices, requireAuth } from './auth.js';
import { errorBody, errorResponse } from './errors.js';
import { DEFAULT_LIVE_TIMING, type LiveMode, type LiveTiming } from './live.js';
import { type Json, openApiDocument } from './openapi.js';
import { rateLimit } from './ratelimit.js';
import { ReplaySlots, wholeSessionReads } from './replay-slots.js';
import { maskingLog, requestLog } from './request-log.js';
import { type Operation, registerRoute } from './route.js';
import { API_ROUTES, META_ROUTES, PAGE_ROUTES, ROUTES } from './routes/index.js';

export interface AppDeps extends ServiceDeps {
  /** where request lines and unhandled errors go; never given a token or an event's text */
  log?: (message: string, err?: unknown) => void;
  /**
   * per-token request limit of the `/v1` API, asked after authentication (429 `rate_limited`); default
   * none (`NoopRateLimiter`): `hansard serve` passes a `MemoryRateLimiter`, Lambda a `DynamoRateLimiter`
   */
  rateLimiter?: RateLimiter;
  /** one line per request (method, path, status, duration): local servers print it to stderr */
  requestLog?: (line: string) => void;
  /**
   * closes the connection of a request (given the runtime's bindings, Hono's `c.env`) whose streamed
   * answer its client stopped taking (`limits.streamIdleMs`), returning whether it did: a runtime that
   * waits for the client to drain never sees the answer's body fail. `hansard serve` destroys
   * node-server's response; without it the failed body alone ends the answer (Lambda's `streamHandle`
   * reads it and ends the response).
   */
  dropConnection?: (env: unknown) => boolean;
  /**
   * how the board's pages update themselves (issue 14.2): `sse`, server-sent events from
   * `GET /board/events` (the default: `hansard serve` streams), or `poll`, a conditional poll of
   * `GET /board/fragment` where the runtime buffers answers (the API function behind API Gateway)
   */
  live?: LiveMode;
  /** the live updates' timing and per-token cap (default `DEFAULT_LIVE_TIMING`; tests shorten it) */
  liveTiming?: Partial<LiveTiming>;
  /**
   * aborted when the server stops (`hansard serve` on Ctrl-C): the live streams end at once instead of
   * holding the stop for its grace period; their pages show they are disconnected and reconnect
   */
  stopping?: AbortSignal;
}

/**
 * Headers of every answer of the API and the board pages, errors included (issue 8.6): nothing of a
 * tenant's is kept by a browser's or a proxy's cache (`Cache-Control: no-store`), and no answer is sniffed
 * into another type (`X-Content-Type-Options: nosniff`; the pages get it from `secureHeaders` too). Set
 * after the handler, so the answers `onError` makes carry them as well.
 */
export const privateAnswer: MiddlewareHandler = async (c, next) => {
  await next();
  c.res.headers.set('Cache-Control', 'no-store');
  c.res.headers.set('X-Content-Type-Options', 'nosniff');
};

/** Registers each of `ops` on `app`. */
function registerAll(app: OpenAPIHono<AppEnv>, ops: readonly Operation[]): void {
  for (const op of ops) registerRoute(app, op);
}

/**
 * Builds the app from the route declarations (`./routes/index.ts`): `/healthz` and the API's description,
 * `/v1/…` (bearer tokens; `GET /v1/board` also the board's cookie), and the board pages `/`, `/login`,
 * `/sessions/{sid}`, `/people/{user_id}`,
 * `/agents/{agent}`, and the live updates `/board/events`, `/board/fragment` (the board cookie); the
 * pages' scripts `/assets/{name}` (public, cached). Its OpenAPI document is generated from the same declarations.
 */
export function createApp(deps: AppDeps): OpenAPIHono<AppEnv> {
  const full = {
    segments: deps.segments,
    state: deps.state,
    now: deps.now ?? (() => new Date()),
    limits: deps.limits ?? {},
    // An app built without them (some tests) answers 503 `digests_unavailable` where a digest is needed.
    digests: deps.digests ?? MISSING_DIGEST_STORE,
    signer: deps.signer ?? MISSING_SIGNER,
    audit: deps.audit ?? {},
    largeReplays: deps.largeReplays ?? null,
    alerts: deps.alerts ?? null,
    signIn: deps.signIn ?? null,
    search: deps.search ?? null,
  };
  // Every line the app logs has its tokens masked: an error line may name a path a token was pasted into.
  const log = maskingLog(deps.log ?? ((m: string, e?: unknown) => console.error(m, e ?? '')));
  const costs = new Map(
    ROUTES.filter((op) => op.cost !== 1).map((op) => [`${op.method.toUpperCase()} ${op.honoPath}`, op.cost]),
  );
  const limited = rateLimit(deps.rateLimiter ?? new NoopRateLimiter(), log, costs);
  const app = new OpenAPIHono<AppEnv>();
  let document: Json | null = null;
  const services: AppServices = {
    deps: full,
    // Whole-session reads: per-token slots (limits.maxConcurrentReplays) and the process's scan gate.
    reads: wholeSessionReads(),
    document: () => {
      document ??= openApiDocument(app, ROUTES);
      return document;
    },
    stalled: (c, err) => {
      log(`${c.req.method} ${c.req.path}: ${err.message}`);
      return deps.dropConnection?.(c.env) ?? false;
    },
    live: deps.live ?? 'sse',
    liveTiming: { ...DEFAULT_LIVE_TIMING, ...deps.liveTiming },
    liveStreams: new ReplaySlots(),
    stopping: deps.stopping ?? new AbortController().signal,
    log,
  };

  if (deps.requestLog) app.use('*', requestLog(deps.requestLog));
  app.use('*', async (c, next) => {
    c.set('services', services);
    await next();
  });
  app.onError((err, c) => errorResponse(c, err, log));
  app.notFound((c) => c.json(errorBody('not_found', `no route for ${c.req.method} ${c.req.path}`), 404));

  // Liveness and the API's own description, without auth or private headers.
  registerAll(app, META_ROUTES);

  const v1 = new OpenAPIHono<AppEnv>();
  v1.use('/v1/*', privateAnswer);
  // The routes that also take the board's cookie, ahead of the bearer-only check of the rest.
  const cookieToo = API_ROUTES.filter((op) => op.auth === 'bearer_or_cookie');
  for (const op of cookieToo) v1.use(op.honoPath, requireAuth(full, true), limited);
  registerAll(v1, cookieToo);
  v1.use('/v1/*', requireAuth(full), limited);
  registerAll(
    v1,
    API_ROUTES.filter((op) => op.auth === 'bearer'),
  );
  app.route('/', v1);

  const pages = new OpenAPIHono<AppEnv>();
  pages.use('*', privateAnswer);
  pages.use(
    '*',
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'none'"],
        // Our own served scripts only (htmx, its SSE extension, ours: /assets/); no inline script, no eval.
        scriptSrc: ["'self'"],
        // The live updates: the SSE stream and the poll of the overview region.
        connectSrc: ["'self'"],
        styleSrc: ["'unsafe-inline'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
      referrerPolicy: 'no-referrer',
    }),
  );
  // Only the board's own forms take POSTs; a cross-site form cannot sign a browser in or out.
  pages.use('/login', ownFormsOnly('sign-in'));
  pages.use('/logout', ownFormsOnly('sign-out'));
  registerAll(pages, PAGE_ROUTES);
  app.route('/', pages);
  return app;
}

/**
 * hono's `csrf()` (a form POST passes when the browser says `Sec-Fetch-Site: same-origin` or sends an
 * `Origin` equal to this server's), with a refusal that says what was refused and why: still 403
 * `forbidden`, where hono's own answer read "the request is not valid" to a person who ran curl.
 */
function ownFormsOnly(what: 'sign-in' | 'sign-out'): MiddlewareHandler {
  const check = csrf();
  return async (c, next) => {
    try {
      // Checked apart from what follows: only csrf's own refusal is reworded, never a route's error.
      await check(c, async () => {});
    } catch (err) {
      if (!(err instanceof HTTPException) || err.status !== 403) throw err;
      const origin = new URL(c.req.url).origin;
      // Echoed back as sent, cut short: a header may be long.
      const got = c.req.header('origin')?.slice(0, 200);
      const site = c.req.header('sec-fetch-site')?.slice(0, 40);
      throw new AppError(
        'forbidden',
        `a ${what} must come from the board's own page: this ${c.req.method} ${c.req.path} came with ` +
          `${got === undefined ? 'no Origin header' : `Origin ${got}`} and ` +
          `${site === undefined ? 'no Sec-Fetch-Site header' : `Sec-Fetch-Site ${site}`}, where a browser on the board sends ` +
          `Origin ${origin} or Sec-Fetch-Site same-origin (a guard against other sites' forms). ` +
          `From curl, add -H 'Origin: ${origin}'`,
        { origin: got ?? null, sec_fetch_site: site ?? null, expected_origin: origin },
      );
    }
    await next();
  };
}

/**
 * `createApp(deps)`: the one Hono application every deployment serves (DESIGN §1, §4). Local mode passes
 * the filesystem and SQLite stores; Lambda passes the AWS ones. No module state: everything comes in
 * through `deps`.
 */
import { Hono, type MiddlewareHandler } from 'hono';
import { csrf } from 'hono/csrf';
import { secureHeaders } from 'hono/secure-headers';
import type { RateLimiter } from '../ratelimit/interface.js';
import { NoopRateLimiter } from '../ratelimit/noop.js';
import type { ServiceDeps } from '../service/context.js';
import { resolveLimits } from '../service/limits.js';
import { HANSARD_VERSION } from '../version.js';
import { type AppEnv, requireAuth } from './auth.js';
import { errorBody, errorResponse } from './errors.js';
import { rateLimit } from './ratelimit.js';
import { wholeSessionReads } from './replay-slots.js';
import { requestLog } from './request-log.js';
import { analysisRoutes } from './routes/analysis.js';
import { boardRoutes } from './routes/board.js';
import { docsRoutes } from './routes/docs.js';
import { sessionRoutes } from './routes/sessions.js';
import { boardApiRoutes, statusRoutes } from './routes/status.js';
import { tokenRoutes } from './routes/tokens.js';

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
}

/**
 * Headers of every answer of the API and the board pages, errors included (issue 8.6): nothing of a
 * tenant's is kept by a browser's or a proxy's cache (`Cache-Control: no-store`), and no answer is sniffed
 * into another type (`X-Content-Type-Options: nosniff`; the pages get it from `secureHeaders` too). Set
 * after the handler, so the answers `onError` makes carry them as well.
 */
const privateAnswer: MiddlewareHandler = async (c, next) => {
  await next();
  c.res.headers.set('Cache-Control', 'no-store');
  c.res.headers.set('X-Content-Type-Options', 'nosniff');
};

/**
 * Builds the app. Routes: `/healthz`, `/v1/…` (bearer tokens), and the board pages `/`, `/login`,
 * `/sessions/{sid}` (the board cookie).
 */
export function createApp(deps: AppDeps): Hono<AppEnv> {
  const full = {
    segments: deps.segments,
    state: deps.state,
    now: deps.now ?? (() => new Date()),
    limits: deps.limits ?? {},
  };
  const log = deps.log ?? ((m: string, e?: unknown) => console.error(m, e ?? ''));
  const limited = rateLimit(deps.rateLimiter ?? new NoopRateLimiter(), log);
  const app = new Hono<AppEnv>();

  if (deps.requestLog) app.use('*', requestLog(deps.requestLog));
  app.onError((err, c) => errorResponse(c, err, log));
  app.notFound((c) => c.json(errorBody('not_found', `no route for ${c.req.method} ${c.req.path}`), 404));

  const limits = resolveLimits(deps.limits);
  // Clients size their chunks to what this deployment takes (the CLI's upload reads it first).
  app.get('/healthz', (c) =>
    c.json({
      ok: true as const,
      version: HANSARD_VERSION,
      limits: { max_chunk_bytes: limits.maxChunkBytes, max_chunk_lines: limits.maxChunkLines },
    }),
  );

  // The API's own description, without auth: /v1/openapi.json and the reference page /v1/docs.
  app.route('/v1', docsRoutes());

  const v1 = new Hono<AppEnv>();
  v1.use('*', privateAnswer);
  v1.use('/board', requireAuth(full, true), limited);
  v1.route('/', boardApiRoutes());
  v1.use('*', requireAuth(full), limited);
  // Whole-session reads: per-token slots (limits.maxConcurrentReplays) and the process's scan gate.
  const reads = wholeSessionReads();
  v1.route('/', sessionRoutes(reads));
  v1.route('/', analysisRoutes(reads));
  v1.route('/', statusRoutes());
  v1.route('/', tokenRoutes());
  app.route('/v1', v1);

  const pages = new Hono<AppEnv>();
  pages.use('*', privateAnswer);
  pages.use(
    '*',
    secureHeaders({
      contentSecurityPolicy: {
        defaultSrc: ["'none'"],
        styleSrc: ["'unsafe-inline'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
      referrerPolicy: 'no-referrer',
    }),
  );
  // Only the board's own forms take POSTs; a cross-site form cannot sign a browser in or out.
  pages.use('/login', csrf());
  pages.use('/logout', csrf());
  pages.route('/', boardRoutes(full));
  app.route('/', pages);
  return app;
}

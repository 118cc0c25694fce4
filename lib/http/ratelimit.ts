/**
 * Per-token rate limiting (issue 5): Hono middleware that runs after authentication and asks the
 * deployment's `RateLimiter` (lib/ratelimit) about the caller's root token, held to its tenant's own
 * rate where the tenant has one (`hansard tenant set --rate-limit`, issue 17.3; 0: its tokens are not
 * limited), else to the deployment's: a session token minted from
 * another token shares that token's allowance (issue 8), so minting tokens never buys more requests, and
 * minting one costs `MINT_COST` requests' worth (what a route declares as its `cost`, ./route.ts). Over the limit the answer is
 * 429 `rate_limited` with `Retry-After` (whole seconds) and `details: {limit, window_seconds,
 * retry_after_seconds}`; the request goes no further. When the limiter itself fails (its backend is
 * unreachable) the request is let through and the failure logged: the limit protects the service, and an
 * outage of the counter must not become an outage of the API.
 */
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { type RateLimiter, RateLimiterError } from '../ratelimit/interface.js';
import { NoopRateLimiter } from '../ratelimit/noop.js';
import type { ServiceContext } from '../service/shared/context.js';
import { tenantLimits } from '../service/tenants/limits.js';
import type { AppEnv } from './auth.js';
import { errorBody } from './errors.js';

/** What minting a token (`POST /v1/tokens`, `POST /v1/sessions/{sid}/tokens`) takes of the allowance. */
export const MINT_COST = 10;

/**
 * How many requests' worth a request costs: the `cost` its route declares (`MINT_COST` for the two that
 * mint a token), else 1. The middleware runs before the route's handler, so the route is found among the
 * ones the request matched.
 */
export function requestCost(c: Context, costs: ReadonlyMap<string, number>): number {
  for (const route of matchedRoutes(c)) {
    const cost = costs.get(`${route.method} ${route.path}`);
    if (cost !== undefined) return cost;
  }
  return 1;
}

/**
 * @param log where a limiter failure is reported (never given the token)
 * @param costs the cost of each route that costs more than one request, by `METHOD /hono/:path`
 * @example v1.use('/v1/*', requireAuth(deps), rateLimit(limiter, log, costs));
 */
export function rateLimit(
  limiter: RateLimiter,
  log: (message: string, err?: unknown) => void,
  costs: ReadonlyMap<string, number> = new Map(),
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    // Nothing is limited: no tenant's settings to read either.
    if (limiter instanceof NoopRateLimiter) return next();
    const ctx = c.get('ctx');
    const caller = ctx.caller;
    const cost = requestCost(c, costs);
    const perMinute = await tenantRate(ctx, log);
    if (perMinute === 0) return next();
    let decision: Awaited<ReturnType<RateLimiter['limit']>>;
    try {
      decision = await limiter.limit(caller.root, cost, perMinute ?? undefined);
    } catch (err) {
      if (!(err instanceof RateLimiterError)) throw err;
      log('rate limiter failed, request let through', err.cause ?? err);
      return next();
    }
    if (decision.allowed) return next();
    const { limit, window_seconds, retry_after_seconds } = decision;
    return c.json(
      errorBody(
        'rate_limited',
        `this token may make ${limit} requests per ${window_seconds} s${perMinute === null ? '' : " (its tenant's own limit)"}, together with the tokens minted ` +
          `from it or from the same token${cost > 1 ? `; minting a token counts as ${cost} requests` : ''}: ` +
          `try again in ${retry_after_seconds} s`,
        { limit, window_seconds, retry_after_seconds },
      ),
      429,
      { 'Retry-After': String(retry_after_seconds) },
    );
  };
}

/**
 * The caller's tenant's own rate in requests a minute (0: none limited), or null for the deployment's
 * (lib/service/tenants/limits.ts: the tenant record, read at most every 30 s per process). When it cannot
 * be read, the deployment's, and the failure logged: as for the limiter itself, a fault of the store
 * must not become a refusal (the request's own reads fail it if the store is really down).
 */
async function tenantRate(
  ctx: ServiceContext,
  log: (message: string, err?: unknown) => void,
): Promise<number | null> {
  try {
    return (await tenantLimits(ctx)).rateLimitPerMinute;
  } catch (err) {
    log("tenant's rate limit could not be read, the deployment's applied", err);
    return null;
  }
}

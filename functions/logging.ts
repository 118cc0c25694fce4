/**
 * Structured JSON request logs for the Lambda functions, with Powertools Logger. One line per request:
 * method, route pattern (`/v1/sessions/:sid/replay`, never the path with its ids), status, duration,
 * tenant and request ids. Never a header, a query string, a token or a body: an event's text must not
 * leave the store through the logs.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import type { Context as LambdaContext } from 'aws-lambda';
import type { Context, MiddlewareHandler } from 'hono';
import { matchedRoutes } from 'hono/route';
import { type AppEnv, maskError, maskTokens } from '../lib/deploy/aws-lambda.js';
import type { LambdaConfig } from './config.js';

/** The functions' logger: JSON lines on stdout, service `hansard`, level from `LOG_LEVEL`. */
export function createLogger(config: Pick<LambdaConfig, 'LOG_LEVEL'>): Logger {
  return new Logger({ serviceName: 'hansard', logLevel: config.LOG_LEVEL });
}

/** The fields of one request line. */
export interface RequestLine {
  method: string;
  /** the matched route pattern, or `unmatched` */
  route: string;
  status: number;
  duration_ms: number;
  /** the caller's tenant once authenticated, else null */
  tenant: string | null;
  /** API Gateway's or the function URL's request id (the `apigw-requestid` a client sees) */
  request_id: string | null;
}

/**
 * Middleware that logs one `request` line per request (after the response is ready; for a streamed
 * replay that is when the headers are, not when the last byte is). The Lambda context is added to the
 * logger first, so every line of the invocation, errors included, carries `function_request_id` and
 * `cold_start`.
 */
export function requestLog(logger: Logger): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = performance.now();
    const { lambdaContext, requestId } = invocationOf(c.env);
    if (lambdaContext) logger.addContext(lambdaContext);
    try {
      await next();
    } finally {
      const line: RequestLine = {
        method: c.req.method,
        route: matchedRoute(c),
        status: c.res.status,
        duration_ms: Math.round((performance.now() - started) * 10) / 10,
        tenant: c.get('ctx')?.tenant ?? null,
        request_id: requestId,
      };
      logger.info('request', { ...line });
    }
  };
}

/**
 * The app's `log` hook (unhandled errors): the error as Powertools writes it (name, message, stack, its
 * `cause` chain and own properties), nothing of the request; every `hns_` token anywhere in it masked
 * (issue 24 item 6: a message may quote a path a token was pasted into; the trial's item 13: a wrapped
 * cause, an SDK error's `url`, an AggregateError's errors), by `maskError` on the whole error first.
 */
export function errorLog(logger: Logger): (message: string, err?: unknown) => void {
  return (message, err) => {
    const masked = maskError(err);
    if (masked instanceof Error) logger.error(maskTokens(message), masked);
    else logger.error(maskTokens(message), { error: masked ?? '' });
  };
}

/**
 * The pattern of the route the request matched, whether its handler answered or a middleware answered
 * first (auth's 401). Wildcards are middleware (`*`, `/v1/*`): when only they matched, the not-found
 * handler answered and the route is `unmatched`.
 */
function matchedRoute(c: Context<AppEnv>): string {
  const routes = matchedRoutes(c);
  for (let i = routes.length - 1; i >= 0; i--) {
    const path = routes[i]!.path;
    if (!path.endsWith('*')) return path;
  }
  return 'unmatched';
}

/**
 * The Lambda context and the front door's request id, from what hono's adapters put in `c.env`:
 * `handle` gives `{ event, requestContext, lambdaContext }`, `streamHandle` `{ event, requestContext,
 * context }`. Outside Lambda (tests calling `app.request()`) there are none.
 */
function invocationOf(env: unknown): { lambdaContext: LambdaContext | null; requestId: string | null } {
  if (typeof env !== 'object' || env === null) return { lambdaContext: null, requestId: null };
  const e = env as { lambdaContext?: unknown; context?: unknown; requestContext?: { requestId?: unknown } };
  const ctx = e.lambdaContext ?? e.context;
  const lambdaContext =
    typeof ctx === 'object' && ctx !== null && 'awsRequestId' in ctx ? (ctx as LambdaContext) : null;
  const rid = e.requestContext?.requestId;
  return { lambdaContext, requestId: typeof rid === 'string' ? rid : null };
}

/**
 * The app a Lambda function serves: the same `createApp` as every deployment (lib/http), with the AWS
 * stores (S3 segments, DynamoDB state) and the request log in front. Both entry points build it; tests
 * build it directly and call `app.request()`, with clients pointed at emulators.
 *
 * The replay function is reachable through a public function URL with no authorizer and no API Gateway
 * throttle, so it serves only what it exists for, streamed reads of a session (`GET` replay and raw
 * segment download) and `/healthz`; anything else answers 404 before authentication. The app itself
 * checks the bearer token on those routes, as it does behind API Gateway.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { Hono } from 'hono';
import { createApp } from '../lib/http/app.js';
import type { AppEnv } from '../lib/http/auth.js';
import { errorBody } from '../lib/http/errors.js';
import { openAwsRateLimiter, openAwsStores } from '../lib/store/aws.js';
import { onlyMethods, REPLAY_STATE_METHODS, type Serves } from './access.js';
import type { AwsClients } from './clients.js';
import type { LambdaConfig } from './config.js';
import { errorLog, requestLog } from './logging.js';

export type { Serves } from './access.js';

export interface LambdaAppOptions {
  config: LambdaConfig;
  clients: AwsClients;
  logger: Logger;
  serves: Serves;
  /** the clock; tests fix it */
  now?: () => Date;
}

/** What a handler factory (functions/api.ts, functions/replay.ts) lets a test replace. */
export interface HandlerOverrides {
  clients?: AwsClients;
  logger?: Logger;
  now?: () => Date;
}

/** `GET`/`HEAD` paths the replay function answers (DESIGN §4). */
const REPLAY_ROUTES = [
  /^\/healthz$/,
  /^\/v1\/sessions\/[^/]+\/replay$/,
  /^\/v1\/sessions\/[^/]+\/writers\/[^/]+\/segment$/,
];

/** The app of one function, stores built over the given clients. */
export function createLambdaApp(o: LambdaAppOptions): Hono<AppEnv> {
  const stores = openAwsStores({
    s3: o.clients.s3,
    bucket: o.config.BUCKET_NAME,
    dynamo: o.clients.dynamodb,
    table: o.config.TABLE_NAME,
  });
  const { segments } = stores;
  // The replay function's role allows only what its routes call (functions/access.ts).
  const state = o.serves === 'replay' ? onlyMethods(stores.state, REPLAY_STATE_METHODS) : stores.state;
  const app = new Hono<AppEnv>();
  app.use('*', requestLog(o.logger));
  if (o.serves === 'replay') {
    app.use('*', async (c, next) => {
      const method = c.req.method;
      if ((method === 'GET' || method === 'HEAD') && REPLAY_ROUTES.some((r) => r.test(c.req.path))) {
        return next();
      }
      return c.json(
        errorBody(
          'not_found',
          'this URL serves only GET /v1/sessions/{sid}/replay and GET /v1/sessions/{sid}/writers/{w}/segment; use the API URL for everything else',
        ),
        404,
      );
    });
  }
  // Per-token limits (issue 5): a DynamoDB counter per token and window; the HTTP API's stage throttle
  // is the coarse outer limit (docs/adr/0003-rate-limits.md).
  const rateLimiter = openAwsRateLimiter({
    dynamo: o.clients.dynamodb,
    table: o.config.TABLE_NAME,
    ...(o.config.RATE_LIMIT_PER_MINUTE !== undefined ? { perMinute: o.config.RATE_LIMIT_PER_MINUTE } : {}),
    ...(o.now ? { now: () => o.now!().getTime() } : {}),
  });
  app.route(
    '/',
    createApp({
      segments,
      state,
      log: errorLog(o.logger),
      rateLimiter,
      limits: {
        maxChunkBytes: o.config.MAX_CHUNK_BYTES,
        ...(o.config.TENANT_QUOTA_BYTES !== undefined
          ? { tenantQuotaBytes: o.config.TENANT_QUOTA_BYTES }
          : {}),
      },
      ...(o.now ? { now: o.now } : {}),
    }),
  );
  return app;
}

/**
 * The app a Lambda function serves: the same `createApp` as every deployment, wired with the AWS stores
 * (S3 segments, DynamoDB state) and rate limiter in lib/deploy/aws.ts, with the request log in front. Both entry points build it; tests
 * build it directly and call `app.request()`, with clients pointed at emulators.
 *
 * The replay function is reachable through a public function URL with no authorizer and no API Gateway
 * throttle, so it serves only what it exists for, streamed reads of a session (`GET` replay, raw
 * segment download and the audit bundle up to a stored digest) and `/healthz`; anything else answers 404 before authentication. The app itself
 * checks the bearer token on those routes, as it does behind API Gateway.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { Hono } from 'hono';
import {
  type AppEnv,
  awsAlertService,
  awsSignInService,
  createAwsApp,
  errorBody,
  health,
  openKmsPublicKeys,
  openKmsSigner,
  privateAnswer,
  ROUTES,
  requireOriginSecret,
  type StateStore,
} from '../lib/deploy/aws.js';
import { awsSearchService, dataApiClient, dataApiRunner, type SqlRunner } from '../lib/deploy/aws-search.js';
import { onlyMethods, REPLAY_STATE_METHODS, type Serves } from './access.js';
import type { AwsClients } from './clients.js';
import { type LambdaConfig, searchTargetOf } from './config.js';
import { errorLog, requestLog } from './logging.js';

export type { Serves } from './access.js';

export interface LambdaAppOptions {
  config: LambdaConfig;
  clients: AwsClients;
  logger: Logger;
  serves: Serves;
  /** the clock; tests fix it */
  now?: () => Date;
  /** tests: the search index's runner (`pg` on a local PostgreSQL) instead of the Data API's */
  searchRunner?: SqlRunner;
}

/** What a handler factory (functions/api.ts, functions/replay.ts) lets a test replace. */
export interface HandlerOverrides {
  clients?: AwsClients;
  logger?: Logger;
  now?: () => Date;
}

/** The largest session the API streams: its answers fail past ~4.5 MiB (API Gateway, Lambda's 6 MB). */
const API_INLINE_BYTES = 3 * 1024 * 1024;
/** The largest session the replay function streams: a streamed answer is cut at 200 MB. */
const REPLAY_FUNCTION_INLINE_BYTES = 150 * 1000 * 1000;
/**
 * The largest session the replay function merges into a stored copy while its request waits: about a
 * minute of merging at the ~30 MB/s of its 0.6 vCPU, well inside its 5-minute timeout.
 */
const REPLAY_FUNCTION_IN_REQUEST_BYTES = 2 * 1000 * 1000 * 1000;
/** What one replay response of the replay function reads ahead (Limits.replayReadBytes): see REPLAY_READ_BYTES. */
const REPLAY_FUNCTION_READ_BYTES = 16 * 1024 * 1024;
/** The reads the replay function exists for: the routes whose declarations say their answer streams. */
const STREAMED = ROUTES.filter((op) => op.streamed);

/** The streamed routes, named in the replay function's 404 ("GET a, GET b and GET c"). */
const SERVED = new Intl.ListFormat('en', { style: 'long', type: 'conjunction' })
  .format(STREAMED.map((op) => `GET ${op.path}`))
  .replace(', and ', ' and ');

/** `GET`/`HEAD` paths the replay function answers (DESIGN §4): the streamed routes, and liveness. */
const REPLAY_ROUTES = [health, ...STREAMED].map((op) => {
  const path = op.path.replaceAll(/[.*+?^$()|[\]\\]/g, '\\$&').replaceAll(/\{[^}]+\}/g, '[^/]+');
  return new RegExp(`^${path}$`);
});

/** The app of one function, stores built over the given clients. */
export function createLambdaApp(o: LambdaAppOptions): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  app.use('*', requestLog(o.logger));
  if (o.serves === 'replay') {
    // Its own refusals (the edge's 403, the route filter's 404) are API answers too: no-store, nosniff.
    app.use('*', privateAnswer);
    // Behind the edge, only what CloudFront forwards (with its origin secret) reaches the routes.
    if (o.config.EDGE_ORIGIN_SECRET !== undefined)
      app.use('*', requireOriginSecret(o.config.EDGE_ORIGIN_SECRET));
    app.use('*', async (c, next) => {
      const method = c.req.method;
      if ((method === 'GET' || method === 'HEAD') && REPLAY_ROUTES.some((r) => r.test(c.req.path))) {
        return next();
      }
      return c.json(
        errorBody('not_found', `this URL serves only ${SERVED}; use the API URL for everything else`),
        404,
      );
    });
  }
  app.route(
    '/',
    createAwsApp({
      clients: o.clients,
      bucket: o.config.BUCKET_NAME,
      table: o.config.TABLE_NAME,
      rateLimitPerMinute: o.config.RATE_LIMIT_PER_MINUTE,
      limits: {
        maxChunkBytes: o.config.MAX_CHUNK_BYTES,
        ...(o.config.TENANT_QUOTA_BYTES !== undefined
          ? { tenantQuotaBytes: o.config.TENANT_QUOTA_BYTES }
          : {}),
        // The replay function serves one response per instance from S3: large blocks, fewer GETs.
        ...(o.config.REPLAY_READ_BYTES !== undefined || o.serves === 'replay'
          ? { replayReadBytes: o.config.REPLAY_READ_BYTES ?? REPLAY_FUNCTION_READ_BYTES }
          : {}),
      },
      log: errorLog(o.logger),
      now: o.now,
      // Replays too large to stream here are answered with a stored copy (issue 17.2): the replay function
      // merges one of up to 2 GB in the request (its 5 minutes), the builder function anything larger and
      // everything the API is asked for (29 s).
      largeReplays: {
        inlineBytes:
          o.config.INLINE_REPLAY_BYTES ??
          (o.serves === 'replay' ? REPLAY_FUNCTION_INLINE_BYTES : API_INLINE_BYTES),
        ...(o.serves === 'replay' ? { inRequestBytes: REPLAY_FUNCTION_IN_REQUEST_BYTES } : {}),
        builds: true,
      },
      // The API signs digests (an export's, POST …/digests) and serves GET /v1/keys (issue 15.2); the
      // replay URL signs nothing: its exports bundle stored digests with the keys' public halves.
      ...(o.serves === 'all' ? digestSigning(o) : publicKeys(o)),
      // The API makes alert targets and seals their secrets (issue 28; kms:Encrypt only): with the key.
      ...(o.serves === 'all' && o.config.ALERT_KMS_KEY_ID && o.clients.kms
        ? {
            alerts: awsAlertService({
              kms: o.clients.kms,
              keyId: o.config.ALERT_KMS_KEY_ID,
              boardOrigin: o.config.BOARD_ORIGIN,
            }),
          }
        : {}),
      // The API signs people in (issue 29): it seals and opens the OIDC client secrets and cookie keys
      // with their own key (kms:Encrypt and kms:Decrypt, purpose sign-in-secret alone: infra/sign-in.ts).
      ...(o.serves === 'all' && o.config.SIGN_IN_KMS_KEY_ID && o.clients.kms
        ? {
            signIn: awsSignInService({
              kms: o.clients.kms,
              keyId: o.config.SIGN_IN_KMS_KEY_ID,
              publicOrigin: o.config.BOARD_ORIGIN,
              allowPrivateIssuers: o.config.SIGN_IN_ALLOW_PRIVATE_ISSUERS === '1',
            }),
          }
        : {}),
      // The API answers GET /v1/search from the index on Aurora, through the Data API (issue 30; its role
      // holds SEARCH_DATA_API_ACTIONS on the cluster alone, infra/search.ts), as the app role of the one
      // secret it has. It never migrates: until the indexing function has, search answers 503.
      ...(o.serves === 'all' ? searchOf(o) : {}),
      // The replay function's role allows only what its routes call (functions/access.ts).
      ...(o.serves === 'replay'
        ? { wrapState: (state: StateStore) => onlyMethods(state, REPLAY_STATE_METHODS) }
        : {}),
    }),
  );
  return app;
}

/** The API function's search deps, from the `SEARCH_*` variables (none when unset). */
function searchOf(o: LambdaAppOptions) {
  const target = searchTargetOf(o.config);
  const runner = o.searchRunner ?? (target && dataApiRunner(dataApiClient(o.config.AWS_REGION), target));
  return runner ? { search: awsSearchService({ runner }) } : {};
}

/** The replay function's public keys (no signing), from `SIGNING_KEY_ARN` (none when unset). */
function publicKeys(o: LambdaAppOptions) {
  const { SIGNING_KEY_ARN: keyArn, RETIRED_SIGNING_KEYS: retired } = o.config;
  return keyArn && o.clients.kms
    ? { signer: openKmsPublicKeys({ kms: o.clients.kms, keyArn, retired }) }
    : {};
}

/** The API function's signer and cadence, from `SIGNING_KEY_ARN` (none when unset). */
function digestSigning(o: LambdaAppOptions) {
  const {
    SIGNING_KEY_ARN: keyArn,
    RETIRED_SIGNING_KEYS: retired,
    DIGEST_INTERVAL_SECONDS: interval,
  } = o.config;
  return {
    ...(keyArn && o.clients.kms ? { signer: openKmsSigner({ kms: o.clients.kms, keyArn, retired }) } : {}),
    ...(interval !== undefined ? { audit: { intervalSeconds: interval } } : {}),
  };
}

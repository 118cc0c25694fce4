/**
 * The AWS deployment's wiring (DESIGN §1, §2 `lib/deploy`), in one place: the SDK clients, the S3
 * segment store and the DynamoDB state store over them, the per-token rate limiter on the state table,
 * and `createApp`. The Lambda entry points (functions/) add what is the function's: its configuration,
 * its request log, which routes it serves. The operator's tooling (`hansard tenant create --table`, through
 * ./tenant-admin.ts) opens the state table here too.
 *
 * Only lib/deploy/tenant-admin.ts (`hansard tenant`) and functions/ import this module (test/architecture/import-graph.test.ts); nothing
 * here loads SQLite (test/infra/bundle-contents.test.ts).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { KMSClient } from '@aws-sdk/client-kms';
import type { Hono } from 'hono';
import type { DigestSigner } from '../audit/signer.js';
import type { Limits } from '../contract/limits.js';
import { createApp } from '../http/app.js';
import type { AppEnv } from '../http/auth.js';
import { DynamoRateLimiter } from '../ratelimit/dynamo.js';
import type { RateLimitConfigInput, RateLimiter } from '../ratelimit/interface.js';
import { NoopRateLimiter } from '../ratelimit/noop.js';
import { DEFAULT_ALERT_CONFIG } from '../service/alerts/deps.js';
import type { SearchDeps } from '../service/search/deps.js';
import {
  BUILD_CLAIM_MS,
  buildReplay,
  jobContext,
  type LargeReplays,
  ReplayJob,
} from '../service/sessions/large-replay.js';
import type { AuditConfig } from '../service/shared/audit-config.js';
import type { AlertServiceDeps } from '../service/shared/context.js';
import { DEFAULT_SIGN_IN_CONFIG, type SignInServiceDeps } from '../service/sign-in/deps.js';
import { DynamoStateStore } from '../store/dynamo/state-store.js';
import type { StateStore } from '../store/index.js';
import { S3ReplayArchive, S3ReplayBuilds } from '../store/s3/replay-archive.js';
import { KmsSecretSealer, SIGN_IN_SECRET_PURPOSE, sealOnly } from './aws-sealer.js';
import { type AwsClients, openAwsStores } from './aws-stores.js';

// The app's pieces the API and replay functions (functions/app.ts) put around it: functions/ reach the
// app through lib/deploy only (test/architecture/rules.ts).
export { privateAnswer } from '../http/app.js';
export type { AppEnv } from '../http/auth.js';
export { errorBody } from '../http/errors.js';
export { requireOriginSecret } from '../http/origin-secret.js';
export { health, ROUTES } from '../http/routes/index.js';
export type { StateStore } from '../store/index.js';
export {
  type AwsClientOptions,
  type AwsClients,
  type AwsDigestOptions,
  type AwsStoresOptions,
  awsDigestDeps,
  createAwsClients,
  type KmsSigningOptions,
  openAwsStores,
  openKmsPublicKeys,
  openKmsSigner,
} from './aws-stores.js';

/** The per-token rate limit of an AWS deployment: counters in the state table (issue 5, ADR 0003). */
export interface AwsRateLimiterOptions {
  /** the client of the state table (left open) */
  dynamo: DynamoDBClient;
  table: string;
  /** requests per minute per token (default 600); 0 turns the limit off */
  perMinute?: number | undefined;
  /** the whole config instead of `perMinute` (e.g. another window) */
  config?: RateLimitConfigInput;
  /** the clock in ms; tests fix it */
  now?: () => number;
}

/**
 * The limiter of an AWS deployment: a `DynamoRateLimiter` over the state table, or a `NoopRateLimiter`
 * when `perMinute` is 0. API Gateway's stage throttling stays the coarse outer limit in front of it.
 */
export function openAwsRateLimiter(o: AwsRateLimiterOptions): RateLimiter {
  if (o.perMinute === 0) return new NoopRateLimiter();
  return new DynamoRateLimiter({
    client: o.dynamo,
    tableName: o.table,
    config: o.config ?? (o.perMinute === undefined ? {} : { limit: o.perMinute, window_seconds: 60 }),
    ...(o.now ? { now: o.now } : {}),
  });
}

export interface AwsAppOptions {
  clients: AwsClients;
  /** the segment bucket */
  bucket: string;
  /** the state table */
  table: string;
  /** requests per minute per token (default 600); 0 turns the limit off */
  rateLimitPerMinute?: number | undefined;
  /** what the deployment changes of `DEFAULT_LIMITS` (on Lambda at least `maxChunkBytes`) */
  limits?: Partial<Limits> | undefined;
  /** where unhandled errors go (with the error) */
  log: (message: string, err?: unknown) => void;
  /** the clock; tests fix it (the rate limiter's windows follow it) */
  now?: (() => Date) | undefined;
  /**
   * wraps the state store before the app gets it: the replay function passes one that answers only the
   * methods its IAM role allows (functions/access.ts)
   */
  wrapState?: ((state: StateStore) => StateStore) | undefined;
  /** the digest signer (`openKmsSigner`); without it a digest (an export) answers 503 `digests_unavailable` */
  signer?: DigestSigner | undefined;
  /** the digest cadence (`DIGEST_INTERVAL_SECONDS`) */
  audit?: Partial<AuditConfig> | undefined;
  /**
   * replays of sessions over `inlineBytes` answered with a copy stored under `replays/` of the bucket
   * (issue 17.2): merged in the request, or with `builds: true` by the builder function (the API, which
   * may not wait); none: every replay streams
   */
  largeReplays?: { inlineBytes: number; inRequestBytes?: number; builds: boolean } | undefined;
  /** alert targets' sealer and rules (issue 28, `awsAlertService`); none: `/v1/alerts` answers 503 */
  alerts?: AlertServiceDeps | undefined;
  /** team sign-in's sealer and settings (issue 29, `awsSignInService`); none: OIDC sign-in answers 503 */
  signIn?: SignInServiceDeps | undefined;
  /** the search index over the Data API (issue 30, ./aws-search.ts `awsSearchService`); none: 503 */
  search?: SearchDeps | undefined;
}

/**
 * The API's alert deps (issue 28): targets' secrets sealed with the KMS key `keyId` under the tenant's
 * encryption context, never opened here (`sealOnly`: the API's role has kms:Encrypt alone; the delivery
 * function opens them, lib/deploy/aws-alerts.ts). Private target addresses stay refused.
 */
export function awsAlertService(o: {
  kms: KMSClient;
  keyId: string;
  boardOrigin?: string | null | undefined;
}): AlertServiceDeps {
  return {
    sealer: sealOnly(new KmsSecretSealer({ client: o.kms, keyId: o.keyId })),
    config: { ...DEFAULT_ALERT_CONFIG, boardOrigin: o.boardOrigin ?? null },
  };
}

/**
 * The API's sign-in deps (issue 29): the tenants' OIDC client secrets and the board's cookie keys sealed
 * and opened with the KMS key `keyId` (`SIGN_IN_KMS_KEY_ID`, infra/sign-in.ts) under the encryption
 * context `{tenant, purpose: 'sign-in-secret'}`: unlike the alerts' sealer this one opens too (at every
 * sign-in, and the cookie keys once per container), which the API's role allows for that purpose alone.
 * `publicOrigin` is the board's (`BOARD_ORIGIN`: the stack sets its `boardOrigin` or the API's URL), so
 * the redirect URI registered at a provider is `{publicOrigin}/login/oidc/callback`.
 */
export function awsSignInService(o: {
  kms: KMSClient;
  keyId: string;
  publicOrigin?: string | null | undefined;
  /** let issuers be private or loopback addresses: the emulator tests' provider on loopback only */
  allowPrivateIssuers?: boolean | undefined;
}): SignInServiceDeps {
  return {
    sealer: new KmsSecretSealer({ client: o.kms, keyId: o.keyId, purpose: SIGN_IN_SECRET_PURPOSE }),
    config: {
      ...DEFAULT_SIGN_IN_CONFIG,
      publicOrigin: o.publicOrigin ?? null,
      // A tenant's admin may not point the API at the VPC, the metadata service or the Lambda sandbox.
      allowPrivateIssuers: o.allowPrivateIssuers ?? false,
    },
  };
}

/** The large-replay deps of `createAwsApp` / the builder function over the segments bucket (issue 17.2). */
export function awsLargeReplays(o: {
  clients: AwsClients;
  bucket: string;
  inlineBytes: number;
  inRequestBytes?: number | undefined;
  builds: boolean;
  now?: (() => Date) | undefined;
}): LargeReplays {
  const now = o.now ? { now: o.now } : {};
  return {
    inlineBytes: o.inlineBytes,
    ...(o.inRequestBytes !== undefined ? { inRequestBytes: o.inRequestBytes } : {}),
    archive: new S3ReplayArchive({ client: o.clients.s3, bucket: o.bucket, ...now }),
    ...(o.builds
      ? {
          builds: new S3ReplayBuilds({
            client: o.clients.s3,
            bucket: o.bucket,
            staleAfterMs: BUILD_CLAIM_MS,
            ...now,
          }),
        }
      : {}),
  };
}

/** `createApp` over the AWS stores and the DynamoDB rate limiter, on the given clients. */
export function createAwsApp(o: AwsAppOptions): Hono<AppEnv> {
  const stores = openAwsStores({
    s3: o.clients.s3,
    bucket: o.bucket,
    dynamo: o.clients.dynamodb,
    table: o.table,
  });
  const now = o.now;
  return createApp({
    segments: stores.segments,
    state: o.wrapState ? o.wrapState(stores.state) : stores.state,
    digests: stores.digests,
    ...(o.signer ? { signer: o.signer } : {}),
    ...(o.audit ? { audit: o.audit } : {}),
    ...(o.alerts ? { alerts: o.alerts } : {}),
    ...(o.signIn ? { signIn: o.signIn } : {}),
    ...(o.search ? { search: o.search } : {}),
    log: o.log,
    // Per-token limits (issue 5): a DynamoDB counter per token and window (docs/adr/0003-rate-limits.md).
    rateLimiter: openAwsRateLimiter({
      dynamo: o.clients.dynamodb,
      table: o.table,
      perMinute: o.rateLimitPerMinute,
      ...(now ? { now: () => now().getTime() } : {}),
    }),
    ...(o.limits ? { limits: o.limits } : {}),
    ...(now ? { now } : {}),
    ...(o.largeReplays
      ? { largeReplays: awsLargeReplays({ clients: o.clients, bucket: o.bucket, ...o.largeReplays, now }) }
      : {}),
    // API Gateway buffers a Lambda's answer: the board's pages poll GET /board/fragment (304 when unchanged)
    // instead of holding a stream that would never flush (issue 14.2).
    live: 'poll',
  });
}

/** What the builder function did with one marker (`awsReplayBuilder`). */
export type ReplayBuildOutcome = 'built' | 'already_stored' | 'not_building' | 'not_a_job';

/**
 * The builder function's work (functions/replay-build.ts, issue 17.2): for a build marker EventBridge
 * announced (`replays/<tenant>/<sid>/<variant>.building`), reads it and, when it is building, merges its
 * job's replay into a copy named from the session as it is now (`buildReplay`), with the job's tenant and
 * its requester's scopes, and records the outcome on the marker. A marker that is done or failed (its own
 * update is announced too), gone, or not its job's own is left alone.
 * @throws the stores' errors (recorded on the marker first; the invocation fails and Lambda tries again)
 */
export function awsReplayBuilder(o: {
  clients: AwsClients;
  bucket: string;
  table: string;
  limits?: Partial<Limits> | undefined;
  now?: (() => Date) | undefined;
  wrapState?: ((state: StateStore) => StateStore) | undefined;
}): (markerKey: string) => Promise<ReplayBuildOutcome> {
  const stores = openAwsStores({
    s3: o.clients.s3,
    bucket: o.bucket,
    dynamo: o.clients.dynamodb,
    table: o.table,
  });
  const now = o.now ?? (() => new Date());
  const largeReplays = awsLargeReplays({
    clients: o.clients,
    bucket: o.bucket,
    inlineBytes: 0,
    builds: false,
    now,
  });
  const builds = new S3ReplayBuilds({
    client: o.clients.s3,
    bucket: o.bucket,
    staleAfterMs: BUILD_CLAIM_MS,
    now,
  });
  const state = o.wrapState ? o.wrapState(stores.state) : stores.state;
  return async (markerKey) => {
    const read = await builds.read(markerKey);
    if (!read) return 'not_a_job';
    // its own update announced (done), or a failure recorded (the requests of the next minute get the
    // error; a later one starts a new build): nothing to do, and a Lambda retry ends here
    if (read.marker.state === 'done') return 'already_stored';
    if (read.marker.state !== 'building') return 'not_building';
    const job = ReplayJob.safeParse(read.marker.job);
    if (!job.success) return 'not_a_job';
    const ctx = jobContext(job.data, {
      segments: stores.segments,
      state,
      now,
      ...(o.limits ? { limits: o.limits } : {}),
      largeReplays,
    });
    return buildReplay(ctx, job.data, read.marker.started_at, builds);
  };
}

/** Where the operator's tooling finds a state table (`hansard tenant create --table`). */
export interface DynamoTableOptions {
  table: string;
  /** default: the SDK's (AWS_REGION, the profile) */
  region?: string | undefined;
  /** e.g. DynamoDB Local's `http://127.0.0.1:8000` */
  endpoint?: string | undefined;
}

/**
 * A `DynamoStateStore` with its own client and the caller's credentials (the SDK's default provider
 * chain); `close()` destroys the client.
 */
export function openDynamoStateStore(o: DynamoTableOptions): StateStore {
  return new DynamoStateStore({
    tableName: o.table,
    clientConfig: {
      ...(o.region ? { region: o.region } : {}),
      ...(o.endpoint ? { endpoint: o.endpoint } : {}),
    },
  });
}

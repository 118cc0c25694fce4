/**
 * The Lambda functions' environment (STYLE §10: zod at the Lambda edge). Parsed once, at cold start, by
 * each entry point; a bad environment fails the function's init with a message that names every bad key
 * (never its value), so a misconfigured deployment is visible in the first log line rather than as a
 * confusing error on the first request.
 *
 * Set by the stack (`infra/lambda.ts`): `BUCKET_NAME`, `TABLE_NAME`, `LOG_LEVEL`. Set by Lambda itself:
 * `AWS_REGION`. Optional limits (issue 5), which `createAwsApp` (lib/deploy/aws.ts) applies:
 * `RATE_LIMIT_PER_MINUTE` (per token, default 600, 0 off) and `TENANT_QUOTA_BYTES` (default 10 GiB). For
 * tests against local emulators only: `S3_ENDPOINT`, `DYNAMODB_ENDPOINT`. The signed digests (issue 15.2):
 * `SIGNING_KEY_ARN`, `RETIRED_SIGNING_KEYS`, `DIGEST_INTERVAL_SECONDS`; `KMS_ENDPOINT` for tests. Behind
 * the edge (the replay function only): `EDGE_ORIGIN_SECRET`, `EDGE_ORIGIN_SECRET_VERSION`. Alerts (issue
 * 28): `ALERT_KMS_KEY_ID` (the API and delivery functions), `BOARD_ORIGIN` (the delivery function, and the
 * API's sign-in origin). Team sign-in (issue 29): `SIGN_IN_KMS_KEY_ID` (the API function). Search (issue
 * 30): `SEARCH_CLUSTER_ARN`, `SEARCH_SECRET_ARN` (the app role's), `SEARCH_DATABASE` (the API and
 * indexing functions), `SEARCH_OWNER_SECRET_ARN` (the master user's: the indexing function only, which
 * migrates) (`searchTargetOf`).
 */
import { z } from 'zod';
import { MIN_ORIGIN_SECRET_LENGTH, ORIGIN_SECRET_HEADER } from '../lib/deploy/aws-lambda.js';

/** The header that carries EDGE_ORIGIN_SECRET from CloudFront (for infra/edge.ts, which may not import lib/http). */
export { ORIGIN_SECRET_HEADER };

/** Powertools Logger's levels (`@aws-lambda-powertools/logger` `LogLevel`). */
export const LOG_LEVELS = ['TRACE', 'DEBUG', 'INFO', 'WARN', 'ERROR', 'CRITICAL', 'SILENT'] as const;

/** An unset or empty variable reads as absent (Lambda cannot unset a variable, only empty it). */
const present = (v: unknown) => (v === '' ? undefined : v);

/** A symmetric KMS key's id, ARN or alias (the sealers' keys), or absent. */
const kmsKeyId = z.preprocess(
  present,
  z
    .string()
    .regex(
      /^(arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(key|alias)\/[A-Za-z0-9/_-]+|alias\/[A-Za-z0-9/_-]+|[0-9a-f-]{36})$/,
      {
        error: 'expected a KMS key id, key ARN or alias such as arn:aws:kms:us-east-1:111122223333:key/…',
      },
    )
    .optional(),
);

/** A Secrets Manager secret's ARN, or absent. */
const secretArn = z.preprocess(
  present,
  z
    .string()
    .regex(/^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:[A-Za-z0-9/_+=.@-]+$/, {
      error:
        'expected a Secrets Manager secret ARN such as arn:aws:secretsmanager:us-east-1:111122223333:secret:…',
    })
    .optional(),
);

const endpoint = z.preprocess(
  present,
  z.url({ protocol: /^https?$/, error: 'expected an http(s) URL such as http://127.0.0.1:4569' }).optional(),
);

export const LambdaConfig = z.object({
  /** the segment bucket (DESIGN §5 S3 keys) */
  BUCKET_NAME: z.preprocess(
    present,
    z.string({ error: 'required' }).regex(/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, {
      error: 'expected an S3 bucket name (3-63 of a-z 0-9 . -)',
    }),
  ),
  /** the state table (DESIGN §5 DynamoDB keys) */
  TABLE_NAME: z.preprocess(
    present,
    z.string({ error: 'required' }).regex(/^[A-Za-z0-9_.-]{3,255}$/, {
      error: 'expected a DynamoDB table name (3-255 of A-Z a-z 0-9 _ . -)',
    }),
  ),
  /** set by the Lambda runtime */
  AWS_REGION: z.preprocess(
    present,
    z
      .string({ error: 'required' })
      .regex(/^[a-z]{2}(-[a-z]+)+-\d+$/, { error: 'expected an AWS region such as us-east-1' }),
  ),
  LOG_LEVEL: z.preprocess(
    (v) => (typeof v === 'string' && v !== '' ? v.toUpperCase() : undefined),
    z.enum(LOG_LEVELS, { error: `expected one of ${LOG_LEVELS.join(', ')}` }).default('INFO'),
  ),
  /** requests per minute per token (lib/ratelimit, docs/adr/0003-rate-limits.md); unset: 600, 0: off */
  RATE_LIMIT_PER_MINUTE: z.preprocess(
    present,
    z
      .string()
      .regex(/^\d{1,7}$/, { error: 'expected a whole number of requests per minute (0 turns the limit off)' })
      .transform(Number)
      .optional(),
  ),
  /** each tenant's storage quota in bytes (DESIGN §7); unset: 10 GiB */
  TENANT_QUOTA_BYTES: z.preprocess(
    present,
    z
      .string()
      .regex(/^[1-9]\d{0,15}$/, { error: 'expected a positive whole number of bytes' })
      .transform(Number)
      .optional(),
  ),
  // API Gateway hands a binary body to Lambda base64-encoded, and Lambda takes 6 MB: 4 MiB is the most a
  // chunk can be here (docs/deploy.md). Clients read it from GET /healthz.
  MAX_CHUNK_BYTES: z.preprocess(
    present,
    z
      .string()
      .regex(/^[1-9]\d{0,7}$/, { error: 'expected a positive whole number of bytes' })
      .transform(Number)
      .pipe(z.number().max(5 * 1024 * 1024, { error: 'at most 5 MiB (5242880)' }))
      .default(4 * 1024 * 1024),
  ),
  /**
   * sessions (their writers' stored bytes; three times that for the text replay) replayed as a stream; a
   * larger one is answered with a copy stored under replays/ of the bucket (issue 17.2). Unset: 3 MiB on
   * the API function (API Gateway fails an answer over ~4.5 MiB), 150 MB on the replay function (a
   * streamed answer is cut at 200 MB)
   */
  INLINE_REPLAY_BYTES: z.preprocess(
    present,
    z
      .string()
      .regex(/^[1-9]\d{0,11}$/, { error: 'expected a positive whole number of bytes' })
      .transform(Number)
      .optional(),
  ),
  /**
   * bytes one replay response reads ahead of its client, spread over the writers (Limits.replayReadBytes,
   * issue 16.4); unset: 16 MiB on the replay function (one response per instance, each block a ranged GET
   * of S3), 256 KiB on the API function
   */
  REPLAY_READ_BYTES: z.preprocess(
    present,
    z
      .string()
      .regex(/^[1-9]\d{0,9}$/, { error: 'expected a positive whole number of bytes' })
      .transform(Number)
      .pipe(z.number().max(256 * 1024 * 1024, { error: 'at most 256 MiB (268435456)' }))
      .optional(),
  ),
  /**
   * the secret CloudFront adds as `x-hansard-origin-secret` when the replay URL is behind the edge (the
   * stack's `edge` option, a Secrets Manager value): set, the replay function refuses any request without
   * it (lib/http/origin-secret.ts). At least 32 characters
   */
  EDGE_ORIGIN_SECRET: z.preprocess(
    present,
    z
      .string()
      .min(MIN_ORIGIN_SECRET_LENGTH, { error: `at least ${MIN_ORIGIN_SECRET_LENGTH} characters` })
      .optional(),
  ),
  /** the label of EDGE_ORIGIN_SECRET's value (`hansard:edgeSecretVersion`): read by nobody, it is there so
   * that a new label updates the function and CloudFormation resolves the secret again */
  EDGE_ORIGIN_SECRET_VERSION: z.preprocess(present, z.string().max(64).optional()),
  /**
   * the KMS key (ARN) that signs the session digests (issue 15.2; spec ECC_NIST_EDWARDS25519). Unset: this
   * function signs nothing (a digest or an export answers 503 `digests_unavailable`)
   */
  SIGNING_KEY_ARN: z.preprocess(
    present,
    z
      .string()
      .regex(/^arn:aws[a-z-]*:kms:[a-z0-9-]+:\d{12}:(key|alias)\/[A-Za-z0-9/_-]+$/, {
        error: 'expected a KMS key ARN such as arn:aws:kms:us-east-1:111122223333:key/…',
      })
      .optional(),
  ),
  /**
   * the keys SIGNING_KEY_ARN replaced, still served at GET /v1/keys: a JSON array of
   * `{"key": ARN, "retired_at": ISO}` (docs/deploy.md "Rotating the signing key")
   */
  RETIRED_SIGNING_KEYS: z.preprocess(
    present,
    z
      .string()
      .transform((text, ctx) => {
        try {
          return JSON.parse(text) as unknown;
        } catch {
          ctx.addIssue({ code: 'custom', message: 'expected a JSON array of {"key", "retired_at"}' });
          return z.NEVER;
        }
      })
      .pipe(
        z.array(
          z.object({ key: z.string().startsWith('arn:'), retired_at: z.iso.datetime({ offset: false }) }),
          { error: 'expected a JSON array of {"key": ARN, "retired_at": ISO}' },
        ),
      )
      .optional(),
  ),
  /** the digest cadence's base interval in seconds (lib/service/shared/audit-config.ts); unset: 300 */
  DIGEST_INTERVAL_SECONDS: z.preprocess(
    present,
    z
      .string()
      .regex(/^[1-9]\d{0,5}$/, { error: 'expected a whole number of seconds (1 to 999999)' })
      .transform(Number)
      .optional(),
  ),
  /**
   * the symmetric KMS key (id, ARN or alias) that seals alert targets' signing secrets (issue 28 item 6,
   * lib/deploy/aws-sealer.ts): the API function seals with it (kms:Encrypt), the delivery function opens
   * (kms:Decrypt), both under the encryption context `{tenant, purpose: 'alert-target-secret'}`
   */
  ALERT_KMS_KEY_ID: kmsKeyId,
  /**
   * the symmetric KMS key (id, ARN or alias) that seals sign-in's secrets (issue 29: the tenants' OIDC
   * client secrets, the board's cookie keys; lib/deploy/aws-sealer.ts): the API function seals and opens
   * with it (kms:Encrypt, kms:Decrypt) under the encryption context `{tenant, purpose: 'sign-in-secret'}`.
   * Unset: OIDC sign-in answers 503 and link tokens still work.
   */
  SIGN_IN_KMS_KEY_ID: kmsKeyId,
  /**
   * the board's origin (`https://board.example.com`): the links in alert events, and sign-in's redirect
   * URI `{origin}/login/oidc/callback` (issue 29); unset: relative links, and the origin a request came to
   */
  BOARD_ORIGIN: z.preprocess(
    present,
    z
      .url({ protocol: /^https?$/, error: 'expected an http(s) origin such as https://board.example.com' })
      .refine((u) => new URL(u).pathname === '/' && !/[?#]/.test(u), {
        error: 'expected an origin alone (scheme, host, port), no path or query',
      })
      .transform((u) => new URL(u).origin)
      .optional(),
  ),
  /**
   * the search index's Aurora cluster (issue 30 item 4, infra/search.ts): its ARN, which the RDS Data API
   * is called with (`rds-data:*` granted on it alone). Unset: `/v1/search` answers 503 and the indexing
   * function refuses to start. Set with SEARCH_SECRET_ARN and SEARCH_DATABASE, or not at all
   */
  SEARCH_CLUSTER_ARN: z.preprocess(
    present,
    z
      .string()
      .regex(/^arn:aws[a-z-]*:rds:[a-z0-9-]+:\d{12}:cluster:[a-z][a-z0-9-]{0,62}$/, {
        error:
          'expected an Aurora cluster ARN such as arn:aws:rds:us-east-1:111122223333:cluster:hansard-search',
      })
      .optional(),
  ),
  /**
   * the Secrets Manager secret (ARN) of the app role's login, which the Data API reads for the caller: the
   * role every search and index write runs as (it owns nothing; row-level security holds it)
   */
  SEARCH_SECRET_ARN: secretArn,
  /**
   * the secret (ARN) of the cluster's master user, the tables' owner: the indexing function's alone, which
   * makes the app role and migrates the schema as it (lib/deploy/aws-search.ts `migrateAsOwner`). Only
   * with the other search variables
   */
  SEARCH_OWNER_SECRET_ARN: secretArn,
  /** the database of the search index in the cluster (a PostgreSQL identifier) */
  SEARCH_DATABASE: z.preprocess(
    present,
    z
      .string()
      .regex(/^[a-z_][a-z0-9_]{0,62}$/, { error: 'expected a PostgreSQL database name (a-z 0-9 _, ≤ 63)' })
      .optional(),
  ),
  /** tests only: a local S3 emulator (path-style addressing is used with it) */
  S3_ENDPOINT: endpoint,
  /** tests only: DynamoDB Local */
  DYNAMODB_ENDPOINT: endpoint,
  /** tests only: a KMS stand-in */
  KMS_ENDPOINT: endpoint,
  /**
   * tests only: `1` lets sign-in issuers be loopback or private addresses (the emulator tests' provider
   * on loopback); never set in a deployment (the stack does not)
   */
  SIGN_IN_ALLOW_PRIVATE_ISSUERS: z.preprocess(present, z.literal('1').optional()),
});
export type LambdaConfig = z.infer<typeof LambdaConfig>;

/** The environment is not one the functions can run with; `keys` names every bad variable. */
export class ConfigError extends Error {
  override name = 'ConfigError';
  constructor(
    message: string,
    readonly keys: string[],
  ) {
    super(message);
  }
}

/**
 * Reads the functions' configuration from an environment (normally `process.env`).
 * @throws ConfigError naming each missing or malformed variable, e.g.
 *   `invalid Lambda environment: BUCKET_NAME (required); LOG_LEVEL (expected one of TRACE, …)`
 * @example
 * const config = parseConfig(process.env); // at module scope: once per cold start
 */
export function parseConfig(env: Record<string, string | undefined>): LambdaConfig {
  const result = LambdaConfig.safeParse(env);
  if (result.success) return result.data;
  const problems = new Map<string, string>();
  for (const issue of result.error.issues) {
    const key = String(issue.path[0] ?? '(environment)');
    if (!problems.has(key)) problems.set(key, issue.message);
  }
  const keys = [...problems.keys()];
  const list = [...problems].map(([key, why]) => `${key} (${why})`).join('; ');
  throw new ConfigError(`invalid Lambda environment: ${list}`, keys);
}

/** The search index's cluster as the RDS Data API is called with it (issue 30, lib/deploy/aws-search.ts). */
export interface SearchTarget {
  resourceArn: string;
  /** the app role's secret */
  secretArn: string;
  database: string;
  /** the master user's secret (the tables' owner): the indexing function's only; null elsewhere */
  ownerSecretArn: string | null;
}

/** The search variables, which are set together or not at all. */
const SEARCH_KEYS = ['SEARCH_CLUSTER_ARN', 'SEARCH_SECRET_ARN', 'SEARCH_DATABASE'] as const;

/**
 * The search index's cluster from `config`, or null when none of its variables is set (no search here).
 * @throws ConfigError naming the missing ones when only some are set (or the owner's secret alone): half
 *   a configuration is a mistake of the deployment, not a deployment without search
 */
export function searchTargetOf(config: LambdaConfig): SearchTarget | null {
  const missing = SEARCH_KEYS.filter((k) => config[k] === undefined);
  if (missing.length === SEARCH_KEYS.length) {
    if (config.SEARCH_OWNER_SECRET_ARN === undefined) return null;
    throw new ConfigError(
      `invalid Lambda environment: SEARCH_OWNER_SECRET_ARN (only with ${SEARCH_KEYS.join(', ')})`,
      ['SEARCH_OWNER_SECRET_ARN'],
    );
  }
  if (missing.length > 0) {
    throw new ConfigError(
      `invalid Lambda environment: ${missing.map((k) => `${k} (required with ${SEARCH_KEYS.filter((x) => !missing.includes(x)).join(', ')})`).join('; ')}`,
      [...missing],
    );
  }
  return {
    resourceArn: config.SEARCH_CLUSTER_ARN!,
    secretArn: config.SEARCH_SECRET_ARN!,
    database: config.SEARCH_DATABASE!,
    ownerSecretArn: config.SEARCH_OWNER_SECRET_ARN ?? null,
  };
}

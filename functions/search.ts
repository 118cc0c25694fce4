/**
 * Lambda entry of the indexing function (issue 30 item 5, infra/search.ts): the state table's stream,
 * filtered to writer items and to the status, work and session items that carry a session's facts, is
 * the durable queue that feeds it; each batch is drained into the search index (`searchStreamDrainer`,
 * lib/deploy/aws-search.ts: each entry once, `indexQueued`, failures named in `batchItemFailures`).
 *
 * Two database roles (lib/deploy/aws-search.ts): it indexes as the app role (`SEARCH_SECRET_ARN`), and
 * once per container, before its first use of the index, it makes that role a login with the password of
 * the app secret (read here with GetSecretValue) and migrates the schema, as the cluster's master user
 * (`SEARCH_OWNER_SECRET_ARN`), the only function that has that secret.
 *
 * Outside any VPC: the index is reached through the RDS Data API (HTTPS, IAM), the stores through their
 * own endpoints. Its state store answers only `SEARCH_STATE_METHODS` (its IAM role), so a call the indexer
 * adds fails in the tests too. An entry that fails is logged with its tenant, session and writer (never
 * text of the session) and retried by Lambda from its record; a run that cannot index anything (the
 * cluster unreachable) thus fails its whole batch, which Lambda retries, halving it, then describes in the
 * dead-letter queue, whose alarm tells the operator (docs/deploy.md: reindex the sessions it names).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { GetSecretValueCommand, SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { maskTokens } from '../lib/deploy/aws-lambda.js';
import {
  type AppLogin,
  appLoginOf,
  dataApiClient,
  dataApiRunner,
  migrateAsOwner,
  type SearchDrainResult,
  type SqlRunner,
  searchStreamDrainer,
} from '../lib/deploy/aws-search.js';
import { sdkTimeoutOptions } from '../lib/deploy/aws-stores.js';
import { type AwsClients, createClients } from './clients.js';
import { ConfigError, parseConfig, searchTargetOf } from './config.js';
import { createLogger } from './logging.js';
import { onlyMethods, SEARCH_STATE_METHODS } from './state-methods.js';

export interface SearchHandlerOverrides {
  clients?: AwsClients;
  logger?: Logger;
  now?: () => Date;
  /** tests: the index's runner as the app role (`pg` against a local PostgreSQL) instead of the Data API's */
  runner?: SqlRunner;
  /** tests: the owner's runner, which migrates (`pg`), instead of the Data API's with the master secret */
  ownerRunner?: SqlRunner;
  /** tests: the app role's login instead of the app secret's value */
  appLogin?: () => Promise<AppLogin>;
}

/** The search variables the indexing function needs, named when one is missing. */
const INDEXER_KEYS = [
  'SEARCH_CLUSTER_ARN',
  'SEARCH_SECRET_ARN',
  'SEARCH_DATABASE',
  'SEARCH_OWNER_SECRET_ARN',
];

/** Reads the app role's login from its secret (GetSecretValue, granted on that secret: infra/search.ts). */
function secretLogin(region: string, secretId: string): () => Promise<AppLogin> {
  return async () => {
    const client = new SecretsManagerClient({
      region,
      ...sdkTimeoutOptions({
        connectionTimeoutMs: 2_000,
        requestTimeoutMs: 5_000,
        socketTimeoutMs: 5_000,
        maxAttempts: 3,
      }),
    });
    try {
      return appLoginOf(await client.send(new GetSecretValueCommand({ SecretId: secretId })));
    } finally {
      client.destroy();
    }
  };
}

/** What a run answers Lambda (`batchItemFailures`), with what it did (for tests and the log). */
export type SearchAnswer = DynamoDBBatchResponse & { result: SearchDrainResult };

/**
 * The indexing function's handler for an environment.
 * @throws ConfigError naming the bad keys, or the search variables (the owner's secret too) when they are
 *   unset (the function exists only to index: without a cluster it must not start and drop the stream's
 *   records)
 */
export function createSearchHandler(
  env: Record<string, string | undefined>,
  o: SearchHandlerOverrides = {},
): (event: DynamoDBStreamEvent | { Records?: unknown }) => Promise<SearchAnswer> {
  const config = parseConfig(env);
  const target = searchTargetOf(config);
  const tested = o.runner && o.ownerRunner && o.appLogin;
  if (!tested && !target?.ownerSecretArn) {
    const missing = INDEXER_KEYS.filter((k) => config[k as keyof typeof config] === undefined);
    throw new ConfigError(
      `invalid Lambda environment: ${missing.join(', ')} (required by the indexing function)`,
      missing,
    );
  }
  const logger = o.logger ?? createLogger(config);
  const data = target && dataApiClient(config.AWS_REGION);
  const runner = o.runner ?? dataApiRunner(data!, target!);
  const ownerRunner =
    o.ownerRunner ?? dataApiRunner(data!, { ...target!, secretArn: target!.ownerSecretArn! });
  const appLogin = o.appLogin ?? secretLogin(config.AWS_REGION, target!.secretArn);
  const drain = searchStreamDrainer({
    clients: o.clients ?? createClients(config),
    bucket: config.BUCKET_NAME,
    table: config.TABLE_NAME,
    runner,
    migrate: migrateAsOwner(ownerRunner, appLogin),
    now: o.now,
    // Its role allows only what the indexer calls (functions/access.ts): a new call fails in tests too.
    wrapState: (state) =>
      onlyMethods(state, SEARCH_STATE_METHODS, { fn: 'indexing function', list: 'SEARCH_STATE_METHODS' }),
  });
  return async (event) => {
    const records = Array.isArray(event.Records) ? (event.Records as unknown[]) : [];
    const started = Date.now();
    const { answer, result } = await drain(records, (entry, err) => {
      const e = err instanceof Error ? err : new Error(String(err));
      logger.error('search: indexing an entry failed', {
        tenant: entry.tenant,
        sid: entry.sid,
        w: entry.w,
        error: { name: e.name, message: maskTokens(e.message) },
      });
    });
    logger.info('search', { ms: Date.now() - started, ...result });
    return { ...answer, result };
  };
}

export const handler = createSearchHandler(process.env);

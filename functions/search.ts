/**
 * Lambda entry of the indexing function (issue 30 item 5, infra/search.ts): the state table's stream,
 * filtered to writer items and to the status, work and session items that carry a session's facts, is
 * the durable queue that feeds it; each batch is drained into the search index (`searchStreamDrainer`,
 * lib/deploy/aws-search.ts: each entry once, `indexQueued`, failures named in `batchItemFailures`).
 *
 * Outside any VPC: the index is reached through the RDS Data API (HTTPS, IAM), the stores through their
 * own endpoints. Its state store answers only `SEARCH_STATE_METHODS` (its IAM role), so a call the indexer
 * adds fails in the tests too. An entry that fails is logged with its tenant, session and writer (never
 * text of the session) and retried by Lambda from its record; a run that cannot index anything (the
 * cluster unreachable) thus fails its whole batch, which Lambda retries, halving it, then describes in the
 * dead-letter queue, whose alarm tells the operator (docs/deploy.md: reindex the sessions it names).
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBBatchResponse, DynamoDBStreamEvent } from 'aws-lambda';
import { maskTokens } from '../lib/deploy/aws-lambda.js';
import {
  dataApiClient,
  dataApiRunner,
  type SearchDrainResult,
  type SqlRunner,
  searchStreamDrainer,
} from '../lib/deploy/aws-search.js';
import { type AwsClients, createClients } from './clients.js';
import { ConfigError, parseConfig, searchTargetOf } from './config.js';
import { createLogger } from './logging.js';
import { onlyMethods, SEARCH_STATE_METHODS } from './state-methods.js';

export interface SearchHandlerOverrides {
  clients?: AwsClients;
  logger?: Logger;
  now?: () => Date;
  /** tests: the index's runner (`pg` against a local PostgreSQL) instead of the Data API's */
  runner?: SqlRunner;
}

/** What a run answers Lambda (`batchItemFailures`), with what it did (for tests and the log). */
export type SearchAnswer = DynamoDBBatchResponse & { result: SearchDrainResult };

/**
 * The indexing function's handler for an environment.
 * @throws ConfigError naming the bad keys, or the search variables when they are unset (the function
 *   exists only to index: without a cluster it must not start and drop the stream's records)
 */
export function createSearchHandler(
  env: Record<string, string | undefined>,
  o: SearchHandlerOverrides = {},
): (event: DynamoDBStreamEvent | { Records?: unknown }) => Promise<SearchAnswer> {
  const config = parseConfig(env);
  const target = searchTargetOf(config);
  if (!target && !o.runner) {
    throw new ConfigError(
      'invalid Lambda environment: SEARCH_CLUSTER_ARN, SEARCH_SECRET_ARN, SEARCH_DATABASE (required by the indexing function)',
      ['SEARCH_CLUSTER_ARN', 'SEARCH_SECRET_ARN', 'SEARCH_DATABASE'],
    );
  }
  const logger = o.logger ?? createLogger(config);
  const runner = o.runner ?? dataApiRunner(dataApiClient(config.AWS_REGION), target!);
  const drain = searchStreamDrainer({
    clients: o.clients ?? createClients(config),
    bucket: config.BUCKET_NAME,
    table: config.TABLE_NAME,
    runner,
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

/**
 * What each Lambda function sends to the state table (issue 8.9), from the declarations of the modules
 * it runs (lib/store/dynamo/access.ts): `infra/lambda.ts` grants a function's role exactly this, and
 * test/infra/stack.test.ts checks the template against the modules each bundle holds.
 *
 * The API function serves every route, so it may call every state store method. The replay function
 * serves only streamed reads (functions/app.ts), so its role holds only what those call; its app gets a
 * state store that refuses every other method (`onlyMethods`), so that a new call on its routes fails in
 * every test of the replay function instead of being denied by IAM on AWS alone. Both limit requests per
 * token, so both write the rate limiter's counters.
 */
import {
  accessOf,
  type DynamoAccess,
  OPERATOR_STATE_METHODS,
  RATE_LIMITER_ACCESS,
  STATE_STORE_ACCESS,
  type StateMethod,
} from '../lib/deploy/aws-access.js';
import {
  ALERTS_STATE_METHODS,
  COMPACT_STATE_METHODS,
  DIGEST_STATE_METHODS,
  SEARCH_STATE_METHODS,
} from './state-methods.js';

/**
 * The encryption context's `purpose` of the alerts' secrets and of sign-in's, which the roles' KMS grants
 * require (infra/alerts.ts, infra/sign-in.ts).
 */
export { ALERT_SECRET_PURPOSE, SIGN_IN_SECRET_PURPOSE } from '../lib/deploy/aws-sealer.js';
export {
  ALERTS_STATE_METHODS,
  COMPACT_STATE_METHODS,
  DIGEST_STATE_METHODS,
  onlyMethods,
  SEARCH_STATE_METHODS,
} from './state-methods.js';

/** Which routes a function serves: everything (the API) or streamed reads only (the replay URL). */
export type Serves = 'all' | 'replay';

/**
 * The state store methods the replay function's routes call: authentication (the token, the tokens that
 * minted it, its last use), the reads of a replay and a raw segment download, the session's status
 * (the text replay's Declared rows) and its digest head (an export bundles stored digests).
 */
export const REPLAY_STATE_METHODS = [
  'getTokenByHash',
  'getTokenById',
  'touchToken',
  // the rate limit applied is the token's tenant's own when it has one (issue 17.3)
  'getTenantSettings',
  'getSession',
  'listWriters',
  'getWriter',
  // the text replay shows the agents' status reports as Declared rows (docs/status.md)
  'getStatus',
  // the export up to a stored digest (lib/service/digests/export-head.ts): the session's digest head
  'getDigestHead',
] as const satisfies readonly StateMethod[];

/**
 * The state store methods the replay builder calls (functions/replay-build.ts, issue 17.2): a session's
 * writers and the text replay's status, read as the request that asked for the build would.
 */
export const REPLAY_BUILD_STATE_METHODS = [
  'getSession',
  'listWriters',
  'getWriter',
  'getStatus',
] as const satisfies readonly StateMethod[];

/**
 * What the replay function may ask of the digest signing key: the public keys its export bundles
 * (`KmsSigner.publicKeys`: GetPublicKey, DescribeKey), never `kms:Sign` (its URL is public; the API signs).
 */
export const REPLAY_SIGNING_ACTIONS = ['kms:DescribeKey', 'kms:GetPublicKey'] as const;

/** Every kind of request the digest function sends to the state table (no rate limiter: no requests). */
export function digestDynamoAccess(): DynamoAccess[] {
  return accessOf(DIGEST_STATE_METHODS);
}

/** Every kind of request the replay builder sends to the state table (no rate limiter: no requests). */
export function replayBuildDynamoAccess(): DynamoAccess[] {
  return accessOf(REPLAY_BUILD_STATE_METHODS);
}

/** Every kind of request the compactor sends to the state table (no rate limiter: no requests). */
export function compactDynamoAccess(): DynamoAccess[] {
  return accessOf(COMPACT_STATE_METHODS);
}

/** Every kind of request the delivery function sends to the state table (issue 28; no rate limiter). */
export function alertsDynamoAccess(): DynamoAccess[] {
  return accessOf(ALERTS_STATE_METHODS);
}

/** Every kind of request the indexing function sends to the state table (issue 30; reads, no limiter). */
export function searchDynamoAccess(): DynamoAccess[] {
  return accessOf(SEARCH_STATE_METHODS);
}

/**
 * The RDS Data API actions the search index's runner sends (lib/store/postgres/data-api-runner.ts: a
 * transaction is BeginTransaction, ExecuteStatement per statement, then CommitTransaction or
 * RollbackTransaction; the schema's DDL is ExecuteStatement outside one). The API and indexing functions
 * are granted exactly these, on the search cluster alone (infra/search.ts); test/infra/search-stack.test.ts
 * checks the list against the commands the runner's source sends. No BatchExecuteStatement: it sends none.
 */
export const SEARCH_DATA_API_ACTIONS = [
  'rds-data:BeginTransaction',
  'rds-data:CommitTransaction',
  'rds-data:ExecuteStatement',
  'rds-data:RollbackTransaction',
] as const;

/**
 * What the search functions ask of their database secrets: the Data API reads a secret with the caller's
 * own permissions, and the indexing function reads the app role's password itself (functions/search.ts:
 * GetSecretValue, test/infra/search-stack.test.ts checks its source). Granted on the app role's secret to
 * the API function, on it and the master user's to the indexer (infra/search.ts).
 */
export const SEARCH_SECRET_ACTIONS = ['secretsmanager:GetSecretValue'] as const;

/**
 * The state store methods a function calls: the replay function's list, or every method but the
 * operator's (`OPERATOR_STATE_METHODS`: a tenant's limits are set with the operator's credentials).
 */
export function stateMethodsOf(serves: Serves): readonly StateMethod[] {
  if (serves === 'replay') return REPLAY_STATE_METHODS;
  return (Object.keys(STATE_STORE_ACCESS) as StateMethod[]).filter(
    (m) => !OPERATOR_STATE_METHODS.includes(m),
  );
}

/** Every kind of request a function sends to the state table: its store methods' and the limiter's. */
export function dynamoAccessOf(serves: Serves): DynamoAccess[] {
  return accessOf(stateMethodsOf(serves), RATE_LIMITER_ACCESS);
}

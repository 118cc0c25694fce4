/**
 * What the AWS modules send to the state table, as declared beside them: the DynamoDB state store's
 * methods (lib/store/dynamo/access.ts) and the rate limiter's counters (lib/ratelimit/dynamo.ts).
 * functions/access.ts derives each function's IAM grants from these, and infra/ grants them; functions/
 * read them through lib/deploy only (test/architecture/rules.ts).
 */
export { RATE_LIMITER_ACCESS } from '../ratelimit/dynamo.js';
export {
  accessOf,
  type DynamoAccess,
  OPERATOR_STATE_METHODS,
  STATE_STORE_ACCESS,
  type StateMethod,
} from '../store/dynamo/access.js';

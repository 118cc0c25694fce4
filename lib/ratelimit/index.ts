/**
 * `lib/ratelimit`: the `RateLimiter` capability (interface, no-op, in-process). The DynamoDB backend is
 * `./dynamo.js`, not re-exported here, so that loading this index never loads the AWS SDK (as `lib/store`).
 */
export * from './interface.js';
export * from './memory.js';
export * from './noop.js';

/**
 * What every Lambda entry point (functions/) shares of the app beyond its wiring: the request log's
 * masking of tokens, the origin secret's header and shortest length (functions/config.ts), and the
 * types a function's state store and request are written in. functions/ reach the app through
 * lib/deploy only (test/architecture/rules.ts); each function's wiring is ./aws.ts (API, replay),
 * ./aws-stores.ts (digests) or ./aws-compaction.ts (compactor), and this module loads none of it, so
 * the digest function and the compactor bundle no app and no limiter (test/infra/bundle-contents.test.ts).
 */
export type { AppEnv } from '../http/auth.js';
export { MIN_ORIGIN_SECRET_LENGTH, ORIGIN_SECRET_HEADER } from '../http/origin-secret.js';
export { maskError, maskTokens } from '../http/request-log.js';
export type { StateStore } from '../store/index.js';

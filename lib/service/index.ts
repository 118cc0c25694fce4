/**
 * `lib/service`: hansard's use cases, framework-free and tenant-scoped (STYLE §1). Each verb takes
 * `{ ctx, … }` and throws `AppError`; routes, the CLI and Lambda handlers only validate, call and map.
 */

export * from '../contract/scopes.js';
export * from '../contract/status.js';
export * from './analysis/verify.js';
export * from './board/get.js';
export * from './ingest/ingest-chunk.js';
export * from './sessions/replay.js';
export * from './shared/context.js';
export * from './shared/errors.js';
export * from './status/get.js';
export * from './tenants/bootstrap.js';
export * from './tokens/create.js';

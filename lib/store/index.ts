/**
 * `lib/store`: one port per entity (DESIGN §1, §2), the store's errors, and the key rules every adapter
 * shares. Ports only: the adapters (lib/store/{fs,sqlite,s3,dynamo}/) are imported by the deployments'
 * wiring in lib/deploy, so that code depending on the ports loads neither SQLite nor the AWS SDK
 * (test/architecture/import-graph.test.ts).
 */
export * from './alerts.js';
export * from './digests.js';
export * from './errors.js';
export * from './idempotency.js';
export * from './keys.js';
export * from './segment-objects.js';
export * from './segments.js';
export * from './sessions.js';
export * from './sign-in.js';
export * from './status.js';
export * from './stores.js';
export * from './tenants.js';
export * from './tokens.js';
export * from './usage.js';
export * from './work.js';
export * from './writers.js';

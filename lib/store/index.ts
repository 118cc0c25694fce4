/**
 * `lib/store`: the `SegmentStore` and `StateStore` ports (DESIGN §1), their errors, and the key rules
 * every adapter shares. Ports only: the adapters (`fs/segment-store.ts`, `sqlite/state-store.ts`,
 * `s3/segment-store.ts`, `dynamo/state-store.ts`) are imported by the deployments' wiring in lib/deploy,
 * so that code depending on the ports loads neither SQLite nor the AWS SDK
 * (test/architecture/import-graph.test.ts).
 */
export * from './digests.js';
export * from './keys.js';
export * from './ports.js';
export * from './segment-objects.js';
export * from './errors.js';
export * from './tenants.js';

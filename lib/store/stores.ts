/**
 * The stores of a deployment (lib/deploy opens them: local.ts or aws.ts): the segments, the state store
 * and the digests. `StateStore`, what one state adapter (SQLite locally, DynamoDB on AWS) implements, is
 * the union of the entity ports: code that needs one entity depends on that port alone.
 */
import type { AlertStore } from './alerts.js';
import type { DigestIndex, DigestStore } from './digests.js';
import type { IdempotencyStore } from './idempotency.js';
import type { SegmentStore } from './segments.js';
import type { SessionIndex } from './sessions.js';
import type { SignInStore } from './sign-in.js';
import type { StatusStore } from './status.js';
import type { TenantStore } from './tenants.js';
import type { ServerSecrets, TokenStore } from './tokens.js';
import type { UsageStore } from './usage.js';
import type { WorkStore } from './work.js';
import type { WriterStore } from './writers.js';

/** The stores of a deployment (lib/deploy opens them: local.ts or aws.ts). */
export interface Stores {
  segments: SegmentStore;
  state: StateStore;
  /** the signed audit digests (issue 15): files beside the segments, or S3 objects under the session */
  digests: DigestStore;
}

/**
 * Small records with conditional writes (DynamoDB on AWS, SQLite locally): every entity port of the state
 * store, and `close`.
 */
export interface StateStore
  extends TenantStore,
    TokenStore,
    ServerSecrets,
    WriterStore,
    SessionIndex,
    StatusStore,
    WorkStore,
    IdempotencyStore,
    DigestIndex,
    UsageStore,
    AlertStore,
    SignInStore {
  close(): Promise<void>;
}

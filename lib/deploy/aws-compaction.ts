/**
 * The compactor's wiring on AWS (issue 17.2, functions/compact.ts): the S3 side of compaction
 * (`S3SegmentCompactor`) and the DynamoDB state store, over the caller's clients, running
 * `compactSession` (lib/service/ingest/compaction.ts) for one session at a time. No app, routes or limiter, so
 * the compactor's bundle holds none (as aws-stores.ts is for the digester).
 */
import { type CompactionDeps, compactSession, type WriterCompaction } from '../service/ingest/compaction.js';
import { DynamoStateStore } from '../store/dynamo/state-store.js';
import type { StateStore } from '../store/index.js';
import { S3SegmentCompactor } from '../store/s3/compaction.js';
import type { AwsClients } from './aws-stores.js';

export type { WriterCompaction } from '../service/ingest/compaction.js';
// the compactor's event names a session by its key, checked before anything is read (functions/compact.ts)
export { assertSessionKey } from '../store/keys.js';

export interface AwsCompactorOptions {
  clients: AwsClients;
  bucket: string;
  table: string;
  now?: (() => Date) | undefined;
  /** the state store as the function may use it (functions/access.ts `COMPACT_STATE_METHODS`) */
  wrapState?: ((state: StateStore) => StateStore) | undefined;
  /** keys per ListObjectsV2 page (tests lower it) */
  listPageSize?: number;
  settledAfterMs?: number;
  limits?: CompactionDeps['limits'];
}

/** `compactSession` over the AWS stores: `(tenant, sid, deadline?) => what became of each writer`. */
export function awsCompactor(
  o: AwsCompactorOptions,
): (tenant: string, sid: string, deadline?: number) => Promise<WriterCompaction[]> {
  const state0 = new DynamoStateStore({ tableName: o.table, client: o.clients.dynamodb });
  const state = o.wrapState ? o.wrapState(state0) : state0;
  const store = new S3SegmentCompactor({
    client: o.clients.s3,
    bucket: o.bucket,
    ...(o.listPageSize !== undefined ? { listPageSize: o.listPageSize } : {}),
  });
  const now = o.now ?? (() => new Date());
  return (tenant, sid, deadline) =>
    compactSession(
      {
        state,
        store,
        now,
        ...(deadline !== undefined ? { deadline } : {}),
        ...(o.settledAfterMs !== undefined ? { settledAfterMs: o.settledAfterMs } : {}),
        ...(o.limits ? { limits: o.limits } : {}),
      },
      tenant,
      sid,
    );
}

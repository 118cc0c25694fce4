/**
 * Every entity port's contract (./index.ts) on `DynamoStateStore`, on the run's shared DynamoDB Local
 * (harness/dynamodb-local.ts): each case on a new table of its own. Listings may lag a session's last
 * advance by up to 5 s (issue 17.1). What only the DynamoDB adapter has (its item layout, TTL, retries)
 * is in test/store/dynamo/state-store.test.ts and digest-index.test.ts.
 *
 * Where DynamoDB Local differs from AWS: its GSIs are updated synchronously (AWS: eventually consistent,
 * so listings right after a write would need polling there); it runs transactions one at a time, so the
 * concurrent cases reach the condition checks but never a `TransactionConflict` cancellation.
 */
import { afterAll, beforeAll, describe } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../../harness/dynamodb-local.js';
import { DynamoStateStore } from '../../../lib/store/dynamo/state-store.js';
import { runStateStoreContracts } from './index.js';

describe('on DynamoDB Local', () => {
  let local: DynamoLocal;
  beforeAll(async () => {
    local = await startDynamoLocal();
  });
  afterAll(async () => {
    await local?.stop();
  });

  runStateStoreContracts({
    name: 'DynamoStateStore',
    newStore: async () => new DynamoStateStore({ tableName: await local.freshTable(), client: local.client }),
    listingLagMs: 5_000,
  });
});

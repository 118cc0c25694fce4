/**
 * `useServer` (test/support/server.ts) with its state on DynamoDB Local and its segments in files: the
 * AWS deployment's state store behind a real server on loopback. Starts DynamoDB Local and a fresh table
 * before the server opens its stores, and stops it after the file.
 */
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../harness/dynamodb-local.js';
import type { Scope } from '../../lib/contract/scopes.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import { FsDigestStore } from '../../lib/store/fs/digest-store.js';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';
import { useServer } from './server.js';

export function useDynamoServer<K extends string>(tokens: Record<K, Scope[]>) {
  let dynamo: DynamoLocal | undefined;
  let table = '';
  // Registered before useServer's own beforeAll, so the table exists when the server opens its stores.
  beforeAll(async () => {
    dynamo = await startDynamoLocal();
    table = await dynamo.freshTable();
  }, 60_000);
  afterAll(async () => {
    await dynamo?.stop();
  });
  return useServer({
    tokens,
    stores: (dataDir) => {
      mkdirSync(dataDir, { recursive: true });
      return {
        segments: new FsSegmentStore(dataDir),
        state: new DynamoStateStore({ tableName: table, client: dynamo!.client }),
        digests: new FsDigestStore(dataDir),
      };
    },
  });
}

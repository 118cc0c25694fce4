/**
 * Every entity port's contract (./index.ts) on `SqliteStateStore`: each case on a new database file of
 * its own in a temp folder. What only the SQLite adapter has (migrations of older databases) is in
 * test/store/dynamo/state-store.test.ts and digest-index.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';
import { runStateStoreContracts } from './index.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-state-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

runStateStoreContracts({
  name: 'SqliteStateStore',
  newStore: async () => new SqliteStateStore(join(mkdtempSync(join(tmp, 'sqlite-')), 'state.sqlite')),
});

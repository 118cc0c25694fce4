/**
 * `lib/store`: the `SegmentStore` and `StateStore` ports (DESIGN §1) and their local adapters
 * (filesystem segments, SQLite state). The AWS adapters are in `./aws.js` (and their own modules), not
 * re-exported here: the CLI loads this index on every command, and the AWS SDK costs ~130 ms to load.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FsSegmentStore } from './fs-segment-store.js';
import type { SegmentStore, StateStore } from './ports.js';
import { SqliteStateStore } from './sqlite-state-store.js';

export * from './fs-segment-store.js';
export * from './keys.js';
export * from './ports.js';
export * from './sqlite-state-store.js';
export * from './storage-errors.js';

/** Both stores of a deployment. */
export interface Stores {
  segments: SegmentStore;
  state: StateStore;
}

/** The local (embedded) stores in a data directory: `tenants/…` segments and `state.sqlite`. */
export function openLocalStores(dataDir: string): Stores {
  mkdirSync(dataDir, { recursive: true });
  return {
    segments: new FsSegmentStore(dataDir),
    state: new SqliteStateStore(join(dataDir, 'state.sqlite')),
  };
}

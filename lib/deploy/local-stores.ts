/**
 * The local deployment's stores alone: the filesystem segment store and the SQLite state store in a data
 * directory. `hansard tenant create --data` opens them through this module, so it loads no Hono app, no
 * routes and no node-server (lib/deploy/local.ts, which re-exports `openLocalStores`, loads all of them).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FsDigestStore } from '../store/fs/digest-store.js';
import { FsSegmentStore } from '../store/fs/segment-store.js';
import type { Stores } from '../store/index.js';
import { SqliteStateStore } from '../store/sqlite/state-store.js';

/**
 * The local (embedded) stores in a data directory (created if missing): segments and the audit digests
 * under `tenants/…` (DESIGN §5, §6b) and the state in `state.sqlite`. The caller closes `state` when done.
 * @throws the filesystem's error when the directory cannot be made; better-sqlite3's when the database
 *   cannot be opened (e.g. SQLITE_CANTOPEN, SQLITE_NOTADB)
 */
export function openLocalStores(dataDir: string): Stores {
  mkdirSync(dataDir, { recursive: true });
  return {
    segments: new FsSegmentStore(dataDir),
    state: new SqliteStateStore(join(dataDir, 'state.sqlite')),
    digests: new FsDigestStore(dataDir),
  };
}

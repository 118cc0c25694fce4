/**
 * A real test server over local stores (files, SQLite) whose session summary merge fails with a full disk
 * while the suite says so: the set-up of the summary-fault attack suites (test/attack/board-summary-lost,
 * board-summary-resume). The server logs the refusals those suites expect (`summary_not_updated`,
 * `insufficient_storage`); one `board` token.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { FsDigestStore } from '../../lib/store/fs/digest-store.js';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';
import type { SummaryDelta } from '../../lib/store/index.js';
import { SqliteStateStore } from '../../lib/store/sqlite/state-store.js';
import { type SuiteServer, useServer } from './server.js';

/**
 * The suite's server; each summary merge first asks `fails()`, and when it answers true throws SQLite's
 * `SQLITE_FULL` instead of merging.
 */
export function useSummaryFaultServer(fails: () => boolean): SuiteServer<'local', 'board'> {
  class FaultySummaryStore extends SqliteStateStore {
    override async mergeSessionSummary(
      tenant: string,
      sid: string,
      delta: SummaryDelta,
      at?: string,
    ): Promise<void> {
      if (fails())
        throw Object.assign(new Error('SQLITE_FULL: database or disk is full'), { code: 'SQLITE_FULL' });
      return super.mergeSessionSummary(tenant, sid, delta, at);
    }
  }
  return useServer({
    tokens: { board: ['board'] },
    mayLog: /summary_not_updated|insufficient_storage/,
    stores: (dataDir) => {
      mkdirSync(dataDir, { recursive: true });
      return {
        segments: new FsSegmentStore(dataDir),
        state: new FaultySummaryStore(join(dataDir, 'state.sqlite')),
        digests: new FsDigestStore(dataDir),
      };
    },
  });
}

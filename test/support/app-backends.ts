/**
 * `createApp` over files and each state store a deployment uses, for suites that run the same API cases
 * on SQLite and on DynamoDB Local: `useAppBackends(prefix)` starts DynamoDB Local for the file, and
 * `open(name, now?)` gives tenant `acme`'s admin token, the first app's state store, and two apps (on
 * DynamoDB two over one table, as two Lambda instances; on SQLite the same app twice). Everything is
 * closed and removed after the file.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../harness/dynamodb-local.js';
import { createApp } from '../../lib/http/app.js';
import { ensureTenant } from '../../lib/service/tenants/bootstrap.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';
import type { StateStore } from '../../lib/store/index.js';
import { SqliteStateStore } from '../../lib/store/sqlite/state-store.js';

export type App = ReturnType<typeof createApp>;

/** The state stores a suite runs on, by name. */
export const BACKENDS = ['SQLite', 'DynamoDB'] as const;

/** What `open` gives: the tenant's admin token, the first app's state store and the two apps. */
export interface OpenedApps {
  token: string;
  state: StateStore;
  apps: [App, App];
}

export function useAppBackends(prefix: string): {
  open(name: (typeof BACKENDS)[number], now?: () => Date): Promise<OpenedApps>;
} {
  const tmp = mkdtempSync(join(tmpdir(), prefix));
  let dynamo: DynamoLocal | undefined;
  const closers: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    dynamo = await startDynamoLocal();
  }, 60_000);
  afterAll(async () => {
    for (const close of closers) await close();
    await dynamo?.stop();
    rmSync(tmp, { recursive: true, force: true });
  });
  return {
    async open(name, now) {
      let state: () => StateStore;
      if (name === 'SQLite') {
        const file = join(mkdtempSync(join(tmp, 'sqlite-')), 'state.sqlite');
        state = () => new SqliteStateStore(file);
      } else {
        const table = await dynamo!.freshTable();
        state = () => new DynamoStateStore({ tableName: table, client: dynamo!.client });
      }
      const dir = mkdtempSync(join(tmp, 'segments-'));
      const openOne = () => {
        const s = state();
        closers.push(() => s.close());
        const app = createApp({
          segments: new FsSegmentStore(dir),
          state: s,
          log: () => {},
          ...(now ? { now } : {}),
        });
        return { s, app };
      };
      const first = openOne();
      const token = (await ensureTenant(first.s, 'acme', new Date()))!.token;
      return { token, state: first.s, apps: [first.app, name === 'DynamoDB' ? openOne().app : first.app] };
    },
  };
}

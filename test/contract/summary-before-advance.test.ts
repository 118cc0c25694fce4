/**
 * The summary merged before the writer index advances (ADR 4, lib/service/ingest/ingest-chunk.ts `appendChunk`), on
 * both adapters (SQLite on a temp file, DynamoDB Local): `mergeSessionSummary` for a session with no index
 * entry makes one (no writers, lines or bytes; created `at`), and the `advanceWriter` that follows counts
 * its first writer, lines and bytes from there and keeps its `created_at` and summary.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../harness/dynamodb-local.js';
import { newId } from '../../lib/log/format/ids.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import type { StateStore } from '../../lib/store/index.js';
import { SqliteStateStore } from '../../lib/store/sqlite/state-store.js';
import { advanceOf, at } from '../store/contract/records.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-summary-first-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function contract(name: string, newStore: () => Promise<StateStore>): void {
  describe(`${name}: a summary merged before the session's first advance`, () => {
    it('makes the session entry, which the advance then counts from', async () => {
      const s = await newStore();
      const sid = newId('s');
      const w = newId('w');
      await s.mergeSessionSummary(
        'acme',
        sid,
        { title: { text: 'Fix the login loop', at: 1 }, people: ['alice'], agents: ['coder'] },
        at(1),
      );
      expect(await s.getSession('acme', sid)).toMatchObject({
        created_at: at(1),
        writers: 0,
        lines: 0,
        bytes: 0,
      });
      // the same merge again (a retry after a failed advance) changes nothing
      await s.mergeSessionSummary(
        'acme',
        sid,
        { title: { text: 'Fix the login loop', at: 1 }, people: ['alice'], agents: ['coder'] },
        at(2),
      );
      await s.advanceWriter('acme', sid, w, 0, advanceOf(0, 120, { lines: 3, when: 3 }));
      await s.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 30, { lines: 1, when: 4 }));
      expect(await s.getSession('acme', sid)).toMatchObject({
        created_at: at(1),
        updated_at: at(4),
        writers: 2,
        lines: 4,
        bytes: 150,
      });
      const row = (await s.listSessionSummaries('acme')).find((r) => r.sid === sid);
      expect(row).toMatchObject({ title: 'Fix the login loop', people: ['alice'], agents: ['coder'] });
      expect(await s.tenantUsage('acme')).toEqual({ bytes: 150 });
      await s.close();
    });

    it('leaves an entry that exists alone but its summary', async () => {
      const s = await newStore();
      const sid = newId('s');
      await s.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 50, { lines: 2, when: 1 }));
      await s.mergeSessionSummary('acme', sid, { title: null, people: ['bob'], agents: [] }, at(9));
      expect(await s.getSession('acme', sid)).toMatchObject({
        created_at: at(1),
        updated_at: at(1),
        writers: 1,
        lines: 2,
        bytes: 50,
      });
      await s.close();
    });
  });
}

contract(
  'SqliteStateStore',
  async () => new SqliteStateStore(join(mkdtempSync(join(tmp, 'sqlite-')), 'state.sqlite')),
);

describe('on DynamoDB Local', () => {
  let local: DynamoLocal;
  beforeAll(async () => {
    local = await startDynamoLocal();
  });
  afterAll(async () => {
    await local?.stop();
  });
  contract(
    'DynamoStateStore',
    async () => new DynamoStateStore({ tableName: await local.freshTable(), client: local.client }),
  );
});

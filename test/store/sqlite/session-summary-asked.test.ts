/**
 * The SQLite store's `asked` column (issue 14.4, each person's first prompt) on a database made before it:
 * opening it adds the column, every session reads `asked: []` with the rest of its summary kept, and it
 * takes first prompts from the next chunk on.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';
import { advanceOf, at } from '../contract/records.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-asked-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('SqliteStateStore, a database from before `asked`', () => {
  it('gains the column, keeps its summaries, and takes first prompts', async () => {
    const path = join(tmp, 'state.sqlite');
    const sid = newId('s');
    const store = new SqliteStateStore(path);
    await store.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 1 }));
    await store.mergeSessionSummary('acme', sid, {
      title: { text: 'restart payments', at: 5 },
      people: ['priya'],
      agents: ['claude-code'],
    });
    await store.putStatus({
      tenant: 'acme',
      sid,
      reports: [
        {
          state: 'blocked',
          note: 'waiting',
          events: [],
          events_dropped: 0,
          reported_by: 'tok_R',
          reported_at: at(10),
        },
      ],
      state_since: at(3),
      dropped_events: 0,
      dropped_reports: 0,
      version: 1,
    });
    await store.close();
    const raw = new Database(path);
    raw.exec('ALTER TABLE sessions DROP COLUMN asked');
    raw.close();

    const reopened = new SqliteStateStore(path);
    const got = (await reopened.listSessionSummaries('acme'))[0]!;
    expect(got).toMatchObject({
      title: 'restart payments',
      people: ['priya'],
      agents: ['claude-code'],
      asked: [],
      state: 'blocked',
      state_since: at(3),
      note: 'waiting',
    });
    await reopened.mergeSessionSummary('acme', sid, {
      title: null,
      people: ['priya'],
      agents: [],
      asked: [{ user_id: 'priya', text: 'restart payments', at: 5 }],
    });
    await reopened.close();
    const again = new SqliteStateStore(path);
    expect((await again.listSessionSummaries('acme'))[0]!.asked).toEqual([
      { user_id: 'priya', text: 'restart payments', at: 5 },
    ]);
    await again.close();
  });
});

/**
 * The SQLite listing's cache of merged summary columns (lib/store/sqlite/summary.ts `listSummaries`): a
 * row's title, people, agents and asked are read again only when its `summary_rev` moved, so a merge by
 * another process (another store on the same file) shows in the next listing, and a status report (not a
 * merge) shows too, since the status columns are read every time.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';
import { advanceOf, at } from '../contract/records.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-summary-cache-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('SqliteStateStore listing with the merged-columns cache', () => {
  it("shows another store's merges and reports on the same file", async () => {
    const path = join(tmp, 'state.sqlite');
    const reader = new SqliteStateStore(path);
    const writer = new SqliteStateStore(path);
    const sid = newId('s');
    await writer.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 1 }));
    await writer.mergeSessionSummary('acme', sid, {
      title: { text: 'first', at: 5 },
      people: ['priya'],
      agents: [],
    });
    const one = await reader.listSessionSummaries('acme');
    expect(one[0]).toMatchObject({ title: 'first', people: ['priya'] });
    await writer.mergeSessionSummary('acme', sid, {
      title: { text: 'earlier', at: 1 },
      people: ['sam'],
      agents: ['coder'],
      asked: [{ user_id: 'sam', text: 'earlier', at: 1 }],
    });
    await writer.putStatus({
      tenant: 'acme',
      sid,
      reports: [
        {
          state: 'blocked',
          note: 'stuck',
          events: [],
          events_dropped: 0,
          reported_by: 'tok_R',
          reported_at: at(3),
        },
      ],
      dropped_events: 0,
      dropped_reports: 0,
      version: 1,
    });
    const two = await reader.listSessionSummaries('acme');
    expect(two[0]).toMatchObject({
      title: 'earlier',
      people: ['priya', 'sam'],
      agents: ['coder'],
      asked: [{ user_id: 'sam', text: 'earlier', at: 1 }],
      state: 'blocked',
      note: 'stuck',
    });
    // the names listings share cannot be changed by a reader
    expect(() => (two[0]!.people as string[]).push('eve')).toThrow();
    expect((await reader.listSessionSummaries('acme'))[0]!.people).toEqual(['priya', 'sam']);
  });
});

/**
 * The SQLite store's session summary on a database made before it (issue 14.1): opening it adds the
 * columns, fills the states of the sessions it has reports for (current records and the one-report table
 * of an earlier hansard), and reads the rest as null and []; opening it again changes nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';
import { advanceOf, at } from '../contract/records.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-summary-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const SUMMARY_COLUMNS = [
  'title',
  'title_at',
  'first_note',
  'people',
  'agents',
  'state',
  'state_since',
  'note',
  'reported_at',
];

describe('SqliteStateStore, a database from before session summaries', () => {
  it('gains the columns, the states of its reported sessions, and keeps working', async () => {
    const path = join(mkdtempSync(join(tmp, 'sqlite-')), 'state.sqlite');
    const [reported, legacy, quiet] = [newId('s'), newId('s'), newId('s')];
    const store = new SqliteStateStore(path);
    for (const [i, sid] of [reported, legacy, quiet].entries()) {
      await store.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: i }));
    }
    const entry = (state: string, note: string, when: number) => ({
      state,
      note,
      events: [],
      events_dropped: 0,
      reported_by: 'tok_R',
      reported_at: at(when),
    });
    await store.putStatus({
      tenant: 'acme',
      sid: reported,
      reports: [
        entry('working', 'started', 10),
        entry('blocked', 'waiting', 11),
        entry('blocked', 'still', 12),
      ],
      dropped_events: 0,
      dropped_reports: 0,
      version: 1,
    });
    await store.close();
    // What an earlier hansard made: no summary columns, and a status in the one-report table.
    const raw = new Database(path);
    for (const c of SUMMARY_COLUMNS) raw.exec(`ALTER TABLE sessions DROP COLUMN ${c}`);
    raw
      .prepare(
        'INSERT INTO status (tenant, sid, state, note, events, reported_by, reported_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run('acme', legacy, 'needs_review', 'please look', '[]', 'tok_OLD', at(20));
    raw.close();

    const reopened = new SqliteStateStore(path);
    const bySid = new Map((await reopened.listSessionSummaries('acme')).map((s) => [s.sid, s]));
    expect(bySid.get(reported)).toMatchObject({
      state: 'blocked',
      state_since: at(11),
      note: 'still',
      reported_at: at(12),
      first_note: 'started',
      title: null,
      people: [],
    });
    expect(bySid.get(legacy)).toMatchObject({
      state: 'needs_review',
      state_since: at(20),
      note: 'please look',
      first_note: 'please look',
    });
    expect(bySid.get(quiet)).toMatchObject({
      state: null,
      state_since: null,
      title: null,
      people: [],
      agents: [],
    });
    // and it takes summaries from now on
    await reopened.mergeSessionSummary('acme', quiet, {
      title: { text: 'hello', at: 1 },
      people: ['ana'],
      agents: [],
    });
    await reopened.close();
    const again = new SqliteStateStore(path);
    expect((await again.listSessionSummaries('acme')).find((s) => s.sid === quiet)).toMatchObject({
      title: 'hello',
      people: ['ana'],
    });
    expect((await again.getSession('acme', quiet))?.writers).toBe(1);
    await again.close();
  });
});

/**
 * What only the SQLite adapter's usage tables have (issue 27; the contract for both is
 * test/store/contract/usage.contract.ts): a database from before them opens with them made empty, its
 * other records untouched, and opening it again changes nothing.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { COUNTER_KEYS } from '../../../lib/log/analyse/usage/index.js';
import type { StoredUsageCounters } from '../../../lib/store/index.js';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';
import { advanceOf } from '../contract/records.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-usage-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const USAGE_TABLES = ['writer_usage', 'session_usage', 'usage_buckets'];
const tables = (path: string) => {
  const raw = new Database(path, { readonly: true });
  const names = (
    raw.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as Array<{
      name: string;
    }>
  ).map((r) => r.name);
  raw.close();
  return names;
};

describe('SqliteStateStore usage tables', () => {
  it('adds them empty to a database from before them, once', async () => {
    const path = join(mkdtempSync(join(tmp, 'sqlite-')), 'state.sqlite');
    const store = new SqliteStateStore(path);
    await store.advanceWriter('acme', 's_old', 'w_old', 0, advanceOf(0, 40, { lines: 3, when: 1 }));
    await store.close();
    const raw = new Database(path);
    for (const t of USAGE_TABLES) raw.exec(`DROP TABLE ${t}`);
    raw.close();
    expect(tables(path).filter((t) => USAGE_TABLES.includes(t))).toEqual([]);

    const reopened = new SqliteStateStore(path);
    expect(
      tables(path)
        .filter((t) => USAGE_TABLES.includes(t))
        .sort(),
    ).toEqual([...USAGE_TABLES].sort());
    expect(await reopened.getWriterUsage('acme', 's_old', 'w_old')).toBeNull();
    expect(await reopened.getSession('acme', 's_old')).toMatchObject({ writers: 1, lines: 3, bytes: 40 });
    const counters = Object.fromEntries(
      COUNTER_KEYS.map((k, i) => [k, i + 1]),
    ) as unknown as StoredUsageCounters;
    const b = {
      day: '2026-12-07',
      agent: 'claude-code',
      person: 'priya',
      model: 'claude-sonnet-4-5',
      counters,
    };
    await reopened.applyWriterUsage('acme', 's_old', 'w_old', null, {
      next: { upto: 40, state: { v: 1 }, buckets: [b], updated_at: '2026-12-07T10:00:00.000Z' },
      deltas: [b],
    });
    await reopened.close();

    // opened again: the tables and their rows as they were
    const again = new SqliteStateStore(path);
    expect((await again.getWriterUsage('acme', 's_old', 'w_old'))?.upto).toBe(40);
    expect(await again.getSessionUsageCounters('acme', 's_old')).toEqual(counters);
    expect(await again.listUsageBuckets('acme', '2026-12-07', '2026-12-07')).toEqual([b]);
    await again.close();
  });
});

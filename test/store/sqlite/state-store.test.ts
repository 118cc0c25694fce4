/**
 * What the SQLite state adapter has of its own, beside the entity contracts both adapters run
 * (test/store/contract/, run by test/store/contract/{sqlite,dynamo}.test.ts): databases made by an older
 * hansard (before usage totals, report history, token chains), opened and migrated once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';
import { advanceOf, at, tokenRecord } from '../contract/records.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-state-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('SqliteStateStore', () => {
  it('starts the usage totals of a database made before them from what its sessions hold', async () => {
    const path = join(mkdtempSync(join(tmp, 'sqlite-')), 'state.sqlite');
    const store = new SqliteStateStore(path);
    await store.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 120, { lines: 1, when: 1 }));
    await store.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 30, { lines: 1, when: 2 }));
    await store.advanceWriter('globex', newId('s'), newId('w'), 0, advanceOf(0, 5, { lines: 1, when: 3 }));
    await store.close();
    const raw = new Database(path);
    raw.exec('DROP TABLE tenant_usage');
    raw.close();
    const reopened = new SqliteStateStore(path);
    expect(await reopened.tenantUsage('acme')).toEqual({ bytes: 150 });
    expect(await reopened.tenantUsage('globex')).toEqual({ bytes: 5 });
    await reopened.close();
  });
});

describe('SqliteStateStore, a database from before report history', () => {
  it('reads its status as one report at version 0, and the next report replaces it', async () => {
    const path = join(mkdtempSync(join(tmp, 'sqlite-')), 'state.sqlite');
    const store = new SqliteStateStore(path);
    const sid = newId('s');
    // What an older hansard wrote: the latest report alone, in table `status`.
    (store as unknown as { db: Database.Database }).db
      .prepare(
        'INSERT INTO status (tenant, sid, state, note, events, reported_by, reported_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
      )
      .run('acme', sid, 'blocked', 'waiting', '[{"kind":"plan","evidence":[]}]', 'tok_OLD', at(1));
    const old = await store.getStatus('acme', sid);
    expect(old).toEqual({
      tenant: 'acme',
      sid,
      reports: [
        {
          state: 'blocked',
          note: 'waiting',
          events: [{ kind: 'plan', evidence: [] }],
          events_dropped: 0,
          reported_by: 'tok_OLD',
          reported_at: at(1),
        },
      ],
      dropped_events: 0,
      dropped_reports: 0,
      version: 0,
    });
    const next = {
      ...old!,
      reports: [...old!.reports, { ...old!.reports[0]!, state: 'done', reported_at: at(2) }],
      version: 1,
    };
    await store.putStatus(next);
    expect(await store.getStatus('acme', sid)).toEqual(next);
    await store.close();
  });
});

describe('SqliteStateStore, a database from before token chains', () => {
  it('reads its tokens as roots (no parent, their own root) and then stores and counts children', async () => {
    const path = join(mkdtempSync(join(tmp, 'sqlite-')), 'state.sqlite');
    const store = new SqliteStateStore(path);
    const old = tokenRecord('acme', { scopes: ['admin'], label: 'from before' });
    await store.putToken(old);
    await store.close();
    // What an older hansard made: the tokens table without the chain columns or their index.
    const raw = new Database(path);
    raw.exec(
      'DROP INDEX tokens_parent; ALTER TABLE tokens DROP COLUMN parent; ALTER TABLE tokens DROP COLUMN root',
    );
    expect(raw.pragma('table_info(tokens)')).not.toContainEqual(expect.objectContaining({ name: 'parent' }));
    raw.close();
    const reopened = new SqliteStateStore(path);
    expect(await reopened.getTokenByHash(old.hash)).toEqual({ ...old, parent: null, root: old.id });
    const child = tokenRecord('acme', {
      parent: old.id,
      root: old.id,
      expires_at: '2026-02-01T00:00:00.000Z',
    });
    await reopened.putToken(child);
    expect(await reopened.getTokenById('acme', child.id)).toEqual(child);
    expect(await reopened.countLiveChildren('acme', old.id, '2026-01-15T00:00:00.000Z')).toBe(1);
    await reopened.close();
    // Opening it again migrates nothing twice.
    const again = new SqliteStateStore(path);
    expect(await again.listTokens('acme')).toHaveLength(2);
    await again.close();
  });
});

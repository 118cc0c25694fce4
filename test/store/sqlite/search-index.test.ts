/**
 * What only the SQLite engine of search has (lib/store/sqlite/search.ts; the contract both engines pass
 * is test/store/contract/search.contract.ts): its tables in the state store's file, kept when the file is
 * opened again; its size from `dbstat`; its refusal of a batch holding another session's documents,
 * fixes or causes.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';
import { tmpDirs } from '../../support/tmp.js';
import { batch, doc, fix, found, query, sortedKeys } from '../contract/search-records.js';

const dirs = tmpDirs('hansard-search-index-');

describe('SqliteSearchIndex', () => {
  it('keeps the index in the state file: opened again, it answers as before and goes on', async () => {
    const path = join(dirs.make(), 'state.sqlite');
    const [sid, w, wc] = [newId('s'), newId('w'), newId('w')];
    const d = doc(sid, w, 1, 'deploy the parser to staging');
    const first = new SqliteStateStore(path);
    await first.searchIndex().applyWriter(batch('acme', sid, w, 0, 100, [d]));
    await first
      .searchIndex()
      .putSessionFacts({ tenant: 'acme', sid, state: 'working', title: 'Parser', reports: [] });
    const before = await first.searchIndex().query('acme', query(['parser']));
    await first.close();

    const again = new SqliteStateStore(path);
    try {
      const index = again.searchIndex();
      expect(await index.query('acme', query(['parser']))).toEqual(before);
      expect(await index.indexedLength('acme', sid, w)).toBe(100);
      await index.applyWriter(
        batch(
          'acme',
          sid,
          wc,
          0,
          50,
          [],
          [fix(d, 'deploy the parser to production', { w: wc, seq: 1, when: 9 })],
        ),
      );
      expect(await found(index, 'acme', query(['production'], { filters: { state: ['working'] } }))).toEqual(
        sortedKeys(d),
      );
      const stats = await index.stats('acme');
      expect(stats.docs).toBe(1);
      // dbstat is in better-sqlite3's build: the size is the index's pages, at least one of each table
      expect(stats.bytes).toBeGreaterThanOrEqual(4096 * 5);
    } finally {
      await again.close();
    }
  });

  it("refuses a batch holding another session's or writer's document, or another session's fix or cause, writing nothing", async () => {
    const store = new SqliteStateStore(join(dirs.make(), 'state.sqlite'));
    try {
      const index = store.searchIndex();
      const [sid, other, w] = [newId('s'), newId('s'), newId('w')];
      const mine = doc(sid, w, 1, 'mine words');
      for (const stray of [doc(other, w, 2, 'stray words'), doc(sid, newId('w'), 2, 'stray words')]) {
        await expect(index.applyWriter(batch('acme', sid, w, 0, 100, [mine, stray]))).rejects.toThrow(
          /holds a document/,
        );
      }
      const foreignFix = { ...fix(mine, 'fixed words', { w, seq: 3, when: 5 }), sid: other };
      await expect(index.applyWriter(batch('acme', sid, w, 0, 100, [mine], [foreignFix]))).rejects.toThrow(
        /holds a document, fix or cause/,
      );
      const foreignCause = { sid: other, key: 't:t_1', message_id: mine.id };
      await expect(
        index.applyWriter(batch('acme', sid, w, 0, 100, [mine], [], [foreignCause])),
      ).rejects.toThrow(/holds a document, fix or cause/);
      expect(await index.indexedLength('acme', sid, w)).toBe(0);
      expect(await found(index, 'acme', query(['words']))).toEqual([]);
      // and a report of facts must be the session's, of no writer
      await expect(
        index.putSessionFacts({
          tenant: 'acme',
          sid,
          state: null,
          title: null,
          reports: [doc(sid, w, 1, 'a report', { type: 'report' })],
        }),
      ).rejects.toThrow(/report document/);
    } finally {
      await store.close();
    }
  });
});

describe('selectOf plans', () => {
  it('reads the full-text match first, whatever filters come with it (never MATCH row by row)', async () => {
    const { selectOf } = await import('../../../lib/store/sqlite/search-sql.js');
    const store = new SqliteStateStore(join(dirs.make(), 'state.sqlite'));
    try {
      store.searchIndex();
      const db = (store as unknown as { db: { prepare(s: string): { all(...p: unknown[]): unknown[] } } }).db;
      for (const filters of [
        { after_us: 1 },
        { before_us: 2 ** 52 },
        { agent: ['codex'], before_us: 2 ** 52 },
        { type: ['action' as const], tool: ['bash'] },
      ]) {
        const sel = selectOf('acme', {
          match: [{ terms: ['list'] }],
          exclude: [],
          filters,
          limit: 21,
          offset: 0,
        });
        const plan = db.prepare(`EXPLAIN QUERY PLAN ${sel!.sql}`).all(...sel!.params) as { detail: string }[];
        expect(plan[0]?.detail, JSON.stringify(filters)).toMatch(/^SCAN search_fts VIRTUAL TABLE/);
      }
    } finally {
      await store.close();
    }
  });
});

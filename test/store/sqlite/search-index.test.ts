/**
 * What only the SQLite engine of search has (lib/store/sqlite/search.ts; the contract both engines pass
 * is test/store/contract/search.contract.ts): its tables in the state store's file, kept when the file is
 * opened again; its size from `dbstat`; its refusal of a batch holding another session's documents,
 * fixes or causes.
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import { termsColumn } from '../../../lib/service/search/terms.js';
import { SEARCH_CANDIDATES } from '../../../lib/store/search.js';
import { ROW_BYTES } from '../../../lib/store/sqlite/search.js';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';
import { tmpDirs } from '../../support/tmp.js';
import { batch, doc, fix, found, keyOf, keysOf, query, sortedKeys } from '../contract/search-records.js';

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
      // the tenant's own row: its text, terms and facets, the fix's text and terms, and ROW_BYTES
      const utf8 = (s: string) => Buffer.byteLength(s);
      const fixed = 'deploy the parser to production';
      expect(stats.bytes).toBe(
        utf8(d.text) + utf8(d.terms) + 0 + utf8(fixed) + utf8(termsColumn(fixed)) + ROW_BYTES,
      );
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

describe('ranking (SEARCH-IDF)', () => {
  it('ranks a hit by its own terms alone: neither another tenant nor its own other documents move it', async () => {
    const store = new SqliteStateStore(join(dirs.make(), 'state.sqlite'));
    try {
      const index = store.searchIndex();
      const [sid, w] = [newId('s'), newId('w')];
      const x = doc(sid, w, 1, 'alpha alpha qxzv', { when: 1 });
      const y = doc(sid, w, 2, 'alpha qxzv qxzv', { when: 2 });
      const z = doc(sid, w, 3, 'qxzv once among other words here', { when: 3 });
      await index.applyWriter(batch('acme', sid, w, 0, 100, [x, y, z]));
      const before = await index.query('acme', query(['alpha', 'qxzv']));
      expect(keysOf(before)).toEqual([keyOf(y), keyOf(x)]);
      const single = await index.query('acme', query(['qxzv']));
      // another tenant full of one word, and more of the tenant's own documents with it
      const [gs, gw] = [newId('s'), newId('w')];
      const theirs = Array.from({ length: 60 }, (_, i) => doc(gs, gw, i + 1, `qxzv qxzv ${i}`, { when: 9 }));
      await index.applyWriter(batch('globex', gs, gw, 0, 100, theirs));
      const [s2, w2] = [newId('s'), newId('w')];
      const more = Array.from({ length: 20 }, (_, i) => doc(s2, w2, i + 1, `qxzv beta ${i}`, { when: 0 }));
      await index.applyWriter(batch('acme', s2, w2, 0, 100, more));
      expect(await index.query('acme', query(['alpha', 'qxzv']))).toEqual(before);
      const again = await index.query('acme', query(['qxzv']));
      for (const h of single) {
        expect(again.find((a) => keyOf(a.doc) === keyOf(h.doc))?.rank, keyOf(h.doc)).toBe(h.rank);
      }
    } finally {
      await store.close();
    }
  });

  it(`answers only the newest ${SEARCH_CANDIDATES} matches indexed, ranked among themselves`, async () => {
    const store = new SqliteStateStore(join(dirs.make(), 'state.sqlite'));
    try {
      const index = store.searchIndex();
      const [sid, w] = [newId('s'), newId('w')];
      // the first indexed would rank first (the word three times in four terms), but is the oldest match
      const docs = Array.from({ length: SEARCH_CANDIDATES + 1 }, (_, i) =>
        doc(sid, w, i + 1, i === 0 ? 'needle needle needle best' : `needle number ${i}`, { when: i }),
      );
      await index.applyWriter(batch('acme', sid, w, 0, 100, docs));
      const pages: string[] = [];
      for (let offset = 0; offset < SEARCH_CANDIDATES + 500; offset += 1000) {
        pages.push(...keysOf(await index.query('acme', query(['needle'], { limit: 1000, offset }))));
      }
      expect(pages).toHaveLength(SEARCH_CANDIDATES);
      expect(pages).not.toContain(keyOf(docs[0]!));
      // the others rank equal (same length, the word once): newest first
      expect(pages.slice(0, 2)).toEqual([
        keyOf(docs[SEARCH_CANDIDATES]!),
        keyOf(docs[SEARCH_CANDIDATES - 1]!),
      ]);
      // a filter that leaves it among the newest matches answers it, first
      const narrow = await index.query(
        'acme',
        query(['needle'], { filters: { before_us: docs[5]!.at_us! } }),
      );
      expect(keysOf(narrow)[0]).toBe(keyOf(docs[0]!));
      // filters alone are not capped: newest first over every document
      const listed = await index.query('acme', query([], { limit: 10, offset: SEARCH_CANDIDATES - 5 }));
      expect(keysOf(listed).at(-1)).toBe(keyOf(docs[0]!));
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
        // newest first from FTS5's doclists (rowid order), stopped by the LIMIT: never a sort of the matches
        expect(plan.map((p) => p.detail).join(' | '), JSON.stringify(filters)).not.toMatch(/TEMP B-TREE/);
      }
      // the page's rows by their rid, never the tenant's rows by `search_docs_newest` (which the planner
      // took for 21 rids or more with the tenant indexable)
      const { rowsOf } = await import('../../../lib/store/sqlite/search-sql.js');
      const rids = Array.from({ length: 50 }, (_, i) => i + 1);
      const rows = db.prepare(`EXPLAIN QUERY PLAN ${rowsOf(50)}`).all(...rids, 'acme') as {
        detail: string;
      }[];
      expect(rows[0]?.detail).toMatch(/^SEARCH d USING INTEGER PRIMARY KEY \(rowid=\?\)/);
    } finally {
      await store.close();
    }
  });
});

/**
 * The search engine contract (./search.contract.ts) on SQLite FTS5: each case on a new state store file
 * (`state.sqlite`, as in a data directory) in a temp folder, through the store's `searchIndex()`, so the
 * index lives in the state store's own database as it does in local mode.
 */
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';
import { tmpDirs } from '../../support/tmp.js';
import { runSearchContract } from './search.contract.js';

const dirs = tmpDirs('hansard-search-');

/**
 * What a case left: an FTS5 index that agrees with itself, one entry per document, and in its `body`
 * column exactly the effective terms of the rows (a contentless index removes what it is told to: a
 * removal with other values than were indexed would leave words behind that no integrity-check sees).
 */
function expectIndexOfRows(raw: Database.Database): void {
  raw.exec("INSERT INTO search_fts (search_fts, rank) VALUES ('integrity-check', 0)");
  const count = (sql: string) => (raw.prepare(sql).get() as { n: number }).n;
  expect(count('SELECT COUNT(*) AS n FROM search_fts')).toBe(count('SELECT COUNT(*) AS n FROM search_docs'));
  raw.exec('CREATE VIRTUAL TABLE temp.search_vocab USING fts5vocab(main, search_fts, col)');
  const indexed = new Map<string, string>();
  for (const r of raw.prepare("SELECT term, doc, cnt FROM search_vocab WHERE col = 'body'").all() as Array<{
    term: string;
    doc: number;
    cnt: number;
  }>) {
    indexed.set(r.term, `${r.doc}/${r.cnt}`);
  }
  const docs = new Map<string, Set<number>>();
  const counts = new Map<string, number>();
  const rows = raw.prepare('SELECT rid, COALESCE(fix_terms, terms) AS body FROM search_docs').all() as Array<{
    rid: number;
    body: string;
  }>;
  for (const { rid, body } of rows) {
    for (const t of body.split(' ').filter(Boolean)) {
      docs.set(t, (docs.get(t) ?? new Set()).add(rid));
      counts.set(t, (counts.get(t) ?? 0) + 1);
    }
  }
  const expected = new Map([...counts].map(([t, n]) => [t, `${docs.get(t)!.size}/${n}`]));
  expect(Object.fromEntries([...indexed].sort())).toEqual(Object.fromEntries([...expected].sort()));
}

runSearchContract('SQLite FTS5', async () => {
  const path = join(dirs.make(), 'state.sqlite');
  const store = new SqliteStateStore(path);
  return {
    index: store.searchIndex(),
    cleanup: async () => {
      await store.close();
      const raw = new Database(path);
      try {
        expectIndexOfRows(raw);
      } finally {
        raw.close();
      }
    },
  };
});

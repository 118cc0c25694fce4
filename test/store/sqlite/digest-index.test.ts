/**
 * What the SQLite adapter's digest index has of its own (the contract both adapters run is
 * test/store/contract/digests.contract.ts): a database made before digests opens and reads its chains as
 * null, and the due sessions are found through the partial index, not a scan.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';
import { advanceOf, at, headOf } from '../contract/records.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-digest-index-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const sqlitePath = () => join(mkdtempSync(join(tmp, 'sqlite-')), 'state.sqlite');

describe('SqliteStateStore, a database from before digests', () => {
  it('opens, reads chain null (writers) and absent (chunks), and then keeps chains, heads and marks', async () => {
    const path = sqlitePath();
    const sid = newId('s');
    const w = newId('w');
    const first = new SqliteStateStore(path);
    await first.advanceWriter('acme', sid, w, 0, advanceOf(0, 10, { lines: 1, when: 1 }));
    await first.close();
    // What an older hansard made: no chain or due columns, no digest heads, no due index.
    const raw = new Database(path);
    raw.exec(`DROP INDEX sessions_digest_due; DROP TABLE digest_heads;
      ALTER TABLE writers DROP COLUMN chain; ALTER TABLE chunks DROP COLUMN chain;
      ALTER TABLE sessions DROP COLUMN digest_due`);
    const columns = (t: string) =>
      (raw.pragma(`table_info(${t})`) as Array<{ name: string }>).map((c) => c.name);
    expect(columns('writers')).not.toContain('chain');
    raw.close();

    const store = new SqliteStateStore(path);
    const writer = await store.getWriter('acme', sid, w);
    expect(writer).toMatchObject({ length: 10, chain: null });
    const chunk = await store.getChunk('acme', sid, w, 0);
    expect(chunk).not.toBeNull();
    expect(chunk).not.toHaveProperty('chain');
    expect(await store.listChunks('acme', sid, w, 0, 10)).toEqual([chunk]);
    expect(await store.listDigestsDue(at(1000), 10)).toEqual([]);
    expect(await store.getDigestHead('acme', sid)).toBeNull();
    const next = advanceOf(10, 5, { lines: 2, when: 2, digest_due: true });
    await store.advanceWriter('acme', sid, w, 10, next);
    expect((await store.getWriter('acme', sid, w))?.chain).toBe(next.chain);
    expect(await store.listDigestsDue(at(1000), 10)).toEqual([{ tenant: 'acme', sid, due_at: at(2) }]);
    const head = headOf(1, 3);
    await store.putDigestHead('acme', sid, null, head, null, 15);
    expect(await store.getDigestHead('acme', sid)).toEqual(head);
    await store.close();
    // Opening it again migrates nothing twice.
    const again = new SqliteStateStore(path);
    expect((await again.getWriter('acme', sid, w))?.chain).toBe(next.chain);
    await again.close();
  });

  it('finds the due sessions through the partial index, not a scan of the sessions', async () => {
    const store = new SqliteStateStore(sqlitePath());
    const db = (store as unknown as { db: Database.Database }).db;
    const plan = db
      .prepare(
        `EXPLAIN QUERY PLAN SELECT tenant, sid, digest_due AS due_at FROM sessions WHERE digest_due <= ?
           ORDER BY digest_due, tenant, sid LIMIT ?`,
      )
      .all(at(1), 10) as Array<{ detail: string }>;
    expect(plan.map((p) => p.detail).join('\n')).toMatch(/USING (COVERING )?INDEX sessions_digest_due/);
    await store.close();
  });
});

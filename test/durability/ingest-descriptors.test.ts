/**
 * What local ingest keeps open (issue 16.3): the SQLite store syncs its WAL through one descriptor kept
 * between batches (lib/store/sqlite/advance.ts), opened afresh when the WAL file is replaced, closed with
 * the store; and a large chunk, read from node-server's request into one buffer (lib/http/node-body.ts)
 * and scanned (lib/service/ingest/lines.ts), is recorded with the SHA-256 of its bytes. Real files,
 * descriptors counted in /proc/self/fd.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { SqliteStateStore } from '../../lib/store/sqlite/state-store.js';
import { plainAdvance as advance } from '../support/advances.js';
import { useServer } from '../support/server.js';
import { postChunk } from '../support/stored.js';
import { chunkedSegment } from './segment-chunks.js';

const root = mkdtempSync(join(tmpdir(), 'hansard-descriptors-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Descriptors of this process open on `path`. */
function openOn(path: string): number {
  let n = 0;
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      if (readlinkSync(`/proc/self/fd/${fd}`) === path) n++;
    } catch {
      // closed while listed
    }
  }
  return n;
}

describe('the WAL is synced through one kept descriptor', () => {
  it('one more descriptor on the WAL than SQLite’s own, whatever the batches; none after close', async () => {
    const file = join(root, 'state.sqlite');
    const wal = `${file}-wal`;
    const store = new SqliteStateStore(file);
    const sqliteOwn = openOn(wal);
    const w = newId('w');
    for (let k = 0; k < 5; k++) {
      await store.advanceWriter('acme', newId('s'), w, 0, advance(0, 10));
      expect(openOn(wal)).toBe(sqliteOwn + 1);
    }
    expect(store.advanceStats.walSyncs).toBeGreaterThanOrEqual(5);
    // A checkpoint that truncates the WAL keeps its file: still the same descriptor.
    (store as unknown as { db: { pragma(s: string): unknown } }).db.pragma('wal_checkpoint(TRUNCATE)');
    await store.advanceWriter('acme', newId('s'), w, 0, advance(0, 10));
    expect(openOn(wal)).toBe(sqliteOwn + 1);
    await store.close();
    expect(openOn(wal)).toBe(0);
  });
});

const srv = useServer({ tenants: ['acme'] });

describe('a large chunk', () => {
  it('is recorded with the SHA-256 of its bytes, as a small one is', async () => {
    // ~600 KiB of messages in one chunk: many pieces of the socket's, every line a summary type (parsed).
    const seg = chunkedSegment(srv.workDir, 600 * 1024, 5 * 1024 * 1024);
    const big = seg.bytes;
    expect(big.length).toBeGreaterThan(256 * 1024);
    const a = await postChunk(srv, srv.admin, seg.sid, seg.w, 0, big);
    expect(a.status, a.text).toBe(201);
    const store = srv.stores.state;
    const chunk = await store.getChunk('acme', seg.sid, seg.w, 0);
    expect(chunk?.sha256).toBe(createHash('sha256').update(big).digest('hex'));
    // The same bytes again: a retry, answered 200 by comparing that hash.
    expect((await postChunk(srv, srv.admin, seg.sid, seg.w, 0, big)).status).toBe(200);
  });
});

/**
 * Group commit of the writer index (issue 16.3, lib/store/sqlite/advance.ts): advances that arrive while a
 * commit is in flight share one SQLite transaction and one fsync of the WAL; each keeps its own
 * conditional check (a savepoint), so a conflict fails only its own request; nothing is answered before
 * the commit and the WAL's fsync. Real SQLite files, the real app on loopback, and a real `hansard serve`
 * killed with SIGKILL right after its 201s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ServeProcess, startServeProcess } from '../../harness/serve-process.js';
import { newId } from '../../lib/log/index.js';
import { StateConflictError } from '../../lib/store/index.js';
import { SqliteStateStore } from '../../lib/store/sqlite/state-store.js';
import { plainAdvance as advance } from '../support/advances.js';
import { useServer } from '../support/server.js';
import { postChunk as postStoredChunk } from '../support/stored.js';
import { type ChunkedSegment, call, chunkedSegment, postChunk } from './segment-chunks.js';

const root = mkdtempSync(join(tmpdir(), 'hansard-group-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe('the SQLite store commits concurrent advances together', () => {
  it('one transaction for advances of the same moment; a conflicting one fails alone, the others are stored', async () => {
    const file = join(root, 'state.sqlite');
    const store = new SqliteStateStore(file);
    const [a, b, c] = [newId('s'), newId('s'), newId('s')];
    const w = newId('w');
    const before = store.advanceStats;
    // Started in the same turn: one batch. The second advance of `a` from 0 finds it at 10 (the first's
    // savepoint was released into the same transaction) and must fail, alone.
    const outcomes = await Promise.allSettled([
      store.advanceWriter('acme', a, w, 0, advance(0, 10)),
      store.advanceWriter('acme', a, w, 0, advance(0, 20)),
      store.advanceWriter('acme', b, w, 0, advance(0, 30)),
      store.advanceWriter('acme', c, w, 5, advance(5, 40)),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['fulfilled', 'rejected', 'fulfilled', 'rejected']);
    const conflict = (outcomes[1] as PromiseRejectedResult).reason as StateConflictError;
    expect(conflict).toBeInstanceOf(StateConflictError);
    expect(conflict.currentLength).toBe(10);
    expect((outcomes[3] as PromiseRejectedResult).reason).toBeInstanceOf(StateConflictError);
    const after = store.advanceStats;
    expect(after.batches - before.batches).toBe(1);
    expect(after.items - before.items).toBe(4);
    expect(after.walSyncs - before.walSyncs).toBe(1);
    await store.close();

    // What was answered is in the file: a fresh store on it reads it back, and the failed ones left nothing.
    const again = new SqliteStateStore(file);
    expect((await again.getWriter('acme', a, w))?.length).toBe(10);
    expect((await again.getWriter('acme', b, w))?.length).toBe(30);
    expect(await again.getWriter('acme', c, w)).toBeNull();
    expect((await again.tenantUsage('acme')).bytes).toBe(40);
    await again.close();
  });
});

describe('chunks from concurrent clients over HTTP', () => {
  const srv = useServer({ tenants: ['acme'] });

  it('30 first chunks sent at once are committed in fewer transactions than chunks, each 201 after a WAL sync', async () => {
    const state = srv.stores.state as SqliteStateStore;
    const segs = Array.from({ length: 30 }, (_, i) => chunkedSegment(join(srv.workDir, `c${i}`), 2048, 4096));
    const before = state.advanceStats;
    const answers = await Promise.all(
      segs.map((seg) => postStoredChunk(srv, srv.admin, seg.sid, seg.w, 0, seg.chunks[0]!)),
    );
    expect(answers.map((a) => a.status)).toEqual(segs.map(() => 201));
    const after = state.advanceStats;
    expect(after.items - before.items).toBe(30);
    expect(after.batches - before.batches).toBeLessThan(30);
    expect(after.largest).toBeGreaterThan(1);
    expect(after.walSyncs - before.walSyncs).toBeGreaterThanOrEqual(1);
    expect(after.walSyncs - before.walSyncs).toBeLessThanOrEqual(after.batches - before.batches);
    for (const seg of segs) {
      expect((await state.getWriter('acme', seg.sid, seg.w))?.length).toBe(seg.chunks[0]!.length);
    }
  });
});

describe('a 201 means on disk, batched or not', () => {
  const servers: ServeProcess[] = [];
  afterAll(async () => {
    for (const s of servers) await s.close();
  });

  it('SIGKILL right after the 201s of 24 concurrent clients: after a restart every acknowledged chunk is there', async () => {
    const data = join(root, 'killed');
    const first = await startServeProcess({ dataDir: data });
    servers.push(first);
    const segs = Array.from({ length: 24 }, (_, i) => chunkedSegment(join(root, `k${i}`), 40 * 1024, 2048));
    const acked = new Map<ChunkedSegment, number>();
    let total = 0;
    let stop = false;
    // Each client sends its chunks one after another; the server is killed once 150 were acknowledged,
    // while the others are in flight.
    const killed = new Promise<void>((resolve) => {
      const clients = segs.map(async (seg) => {
        let offset = 0;
        for (const chunk of seg.chunks) {
          if (stop) return;
          let a: Awaited<ReturnType<typeof postChunk>>;
          try {
            a = await postChunk(first.url, first.admin, seg, offset, chunk);
          } catch {
            return; // the server is gone
          }
          if (a.status !== 201) return;
          offset += chunk.length;
          acked.set(seg, offset);
          if (++total === 150 && !stop) {
            stop = true;
            first.signal('SIGKILL');
            resolve();
          }
        }
      });
      void Promise.all(clients).then(() => resolve());
    });
    await killed;
    expect(await first.exited).toBeNull();
    expect(total).toBeGreaterThanOrEqual(150);

    const second = await startServeProcess({ dataDir: data });
    servers.push(second);
    for (const [seg, length] of acked) {
      const writer = await call(second.url, second.admin, 'GET', `/v1/sessions/${seg.sid}/writers/${seg.w}`);
      expect(writer.status).toBe(200);
      expect(writer.json.length as number).toBeGreaterThanOrEqual(length);
      const bytes = await call(
        second.url,
        second.admin,
        'GET',
        `/v1/sessions/${seg.sid}/writers/${seg.w}/segment`,
      );
      expect(bytes.bytes.subarray(0, length).equals(seg.bytes.subarray(0, length))).toBe(true);
    }
  }, 120_000);
});

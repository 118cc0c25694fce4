/**
 * The local indexing queue of search on `SqliteStateStore` (issue 30 item 5, lib/store/sqlite/search-queue.ts):
 * an entry queued in the same transaction as each writer advance `(tenant, sid, w)` and each status
 * write, work write and summary merge that changed the title `(tenant, sid, '')`; a change that fails
 * queues nothing; an entry keeps its oldest `since` and raises its version, and is removed only at the
 * version it was taken with; the queue is in the database file, so it outlives the process.
 */
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import { StateConflictError } from '../../../lib/store/index.js';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';
import { tmpDirs } from '../../support/tmp.js';
import { advanceOf, at, statusOf, workOf } from '../contract/records.js';

const dirs = tmpDirs('hansard-search-queue-');
const open: SqliteStateStore[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
});

function newStore(path = join(dirs.make(), 'state.sqlite')): { store: SqliteStateStore; path: string } {
  const store = new SqliteStateStore(path);
  open.push(store);
  return { store, path };
}

describe('SqliteStateStore search queue', () => {
  it("queues a writer's entry with each advance, its first time kept and its version raised", async () => {
    const { store } = newStore();
    const [sid, w] = [newId('s'), newId('w')];
    expect(await store.takeSearchQueue(10)).toEqual([]);
    await store.advanceWriter('acme', sid, w, 0, advanceOf(0, 100, { lines: 2, when: 5 }));
    expect(await store.takeSearchQueue(10)).toEqual([{ tenant: 'acme', sid, w, since: at(5), version: 1 }]);
    await store.advanceWriter('acme', sid, w, 100, advanceOf(100, 50, { lines: 3, when: 9 }));
    expect(await store.takeSearchQueue(10)).toEqual([{ tenant: 'acme', sid, w, since: at(5), version: 2 }]);
    expect(await store.searchQueueOf('acme')).toEqual({ entries: 1, oldest: at(5) });
  });

  it('queues nothing for an advance that fails, in a batch with one that succeeds', async () => {
    const { store } = newStore();
    const [sid, ok, stale] = [newId('s'), newId('w'), newId('w')];
    const tries = await Promise.allSettled([
      store.advanceWriter('acme', sid, ok, 0, advanceOf(0, 10, { lines: 1, when: 1 })),
      store.advanceWriter('acme', sid, stale, 40, advanceOf(40, 10, { lines: 1, when: 1 })),
    ]);
    expect(tries.map((t) => t.status)).toEqual(['fulfilled', 'rejected']);
    expect((tries[1] as PromiseRejectedResult).reason).toBeInstanceOf(StateConflictError);
    expect((await store.takeSearchQueue(10)).map((e) => e.w)).toEqual([ok]);
  });

  it("queues the session's facts entry with status and work writes and summary merges that change", async () => {
    const { store } = newStore();
    const sid = newId('s');
    const facts = async () => (await store.takeSearchQueue(10)).filter((e) => e.sid === sid && e.w === '');
    await store.putStatus(statusOf('acme', sid, 3));
    expect(await facts()).toEqual([{ tenant: 'acme', sid, w: '', since: at(3), version: 1 }]);
    await store.putWork(workOf('acme', sid, 7));
    expect(await facts()).toEqual([{ tenant: 'acme', sid, w: '', since: at(3), version: 2 }]);
    await store.mergeSessionSummary(
      'acme',
      sid,
      { title: { text: 'Billing', at: 1 }, people: [], agents: [] },
      at(8),
    );
    expect((await facts())[0]?.version).toBe(3);
    // a merge that changes nothing, or not the title, queues nothing
    await store.mergeSessionSummary('acme', sid, { title: null, people: [], agents: [] }, at(9));
    await store.mergeSessionSummary(
      'acme',
      sid,
      { title: null, people: ['priya'], agents: ['codex'] },
      at(10),
    );
    expect((await store.listSessionSummaries('acme'))[0]).toMatchObject({
      people: ['priya'],
      agents: ['codex'],
    });
    expect((await facts())[0]?.version).toBe(3);
    // an earlier message is the new title
    await store.mergeSessionSummary(
      'acme',
      sid,
      { title: { text: 'Before', at: 0 }, people: [], agents: [] },
      at(11),
    );
    expect((await facts())[0]?.version).toBe(4);
    // a write refused on its version queues nothing
    await expect(store.putStatus(statusOf('acme', sid, 12, 1))).rejects.toBeInstanceOf(StateConflictError);
    await expect(store.putWork(workOf('acme', sid, 12, 5))).rejects.toBeInstanceOf(StateConflictError);
    expect(await facts()).toEqual([{ tenant: 'acme', sid, w: '', since: at(3), version: 4 }]);
  });

  it('removes an entry only at the version it was taken with', async () => {
    const { store } = newStore();
    const [sid, w] = [newId('s'), newId('w')];
    await store.advanceWriter('acme', sid, w, 0, advanceOf(0, 10, { lines: 1, when: 1 }));
    const [taken] = await store.takeSearchQueue(1);
    // a change while it was being indexed
    await store.advanceWriter('acme', sid, w, 10, advanceOf(10, 10, { lines: 2, when: 2 }));
    await store.doneSearchQueue(taken!);
    const [again] = await store.takeSearchQueue(1);
    expect(again).toEqual({ tenant: 'acme', sid, w, since: at(1), version: 2 });
    await store.doneSearchQueue(again!);
    expect(await store.takeSearchQueue(10)).toEqual([]);
    expect(await store.searchQueueOf('acme')).toEqual({ entries: 0, oldest: null });
    // done twice, or for an entry gone, is nothing
    await store.doneSearchQueue(again!);
    expect(await store.takeSearchQueue(10)).toEqual([]);
  });

  it('keeps the oldest since, gives entries oldest first, and counts them per tenant', async () => {
    const { store } = newStore();
    const [s1, s2] = [newId('s'), newId('s')];
    await store.enqueueSearch({ tenant: 'acme', sid: s1, w: '', since: at(20) });
    await store.enqueueSearch({ tenant: 'acme', sid: s1, w: '', since: at(10) });
    await store.enqueueSearch({ tenant: 'acme', sid: s1, w: '', since: at(30) });
    // another offset and precision than the others: compared as the instant it is
    await store.enqueueSearch({ tenant: 'globex', sid: s2, w: 'w_x', since: '2026-01-01T01:00:15.5+01:00' });
    await store.enqueueSearch({ tenant: 'acme', sid: s2, w: 'w_y', since: at(12) });
    // Tenants take turns: acme's oldest, globex's oldest, then acme's next.
    expect(await store.takeSearchQueue(10)).toEqual([
      { tenant: 'acme', sid: s1, w: '', since: at(10), version: 3 },
      { tenant: 'globex', sid: s2, w: 'w_x', since: '2026-01-01T00:00:15.500Z', version: 1 },
      { tenant: 'acme', sid: s2, w: 'w_y', since: at(12), version: 1 },
    ]);
    expect(await store.takeSearchQueue(2)).toHaveLength(2);
    expect(await store.searchQueueOf('acme')).toEqual({ entries: 2, oldest: at(10) });
    expect(await store.searchQueueOf('globex')).toEqual({ entries: 1, oldest: '2026-01-01T00:00:15.500Z' });
    expect(await store.searchQueueOf('initech')).toEqual({ entries: 0, oldest: null });
  });

  it("lets tenants take turns: one tenant's reindex of many sessions holds no other's new chunk back", async () => {
    const { store } = newStore();
    for (let i = 0; i < 200; i++) {
      await store.enqueueSearch({ tenant: 'acme', sid: newId('s'), w: '', since: at(1) });
    }
    const sid = newId('s');
    await store.enqueueSearch({ tenant: 'globex', sid, w: 'w_new', since: at(50) });
    const first = await store.takeSearchQueue(3);
    expect(first.map((e) => e.tenant)).toEqual(['acme', 'globex', 'acme']);
    expect(first[1]).toMatchObject({ sid, w: 'w_new' });
  });

  it('keeps the queue in the database file: it is there when the file is opened again', async () => {
    const { store, path } = newStore();
    const [sid, w] = [newId('s'), newId('w')];
    await store.advanceWriter('acme', sid, w, 0, advanceOf(0, 10, { lines: 1, when: 4 }));
    await store.putStatus(statusOf('acme', sid, 6));
    const before = await store.takeSearchQueue(10);
    expect(before).toHaveLength(2);
    await store.close();
    open.splice(open.indexOf(store), 1);
    const { store: reopened } = newStore(path);
    expect(await reopened.takeSearchQueue(10)).toEqual(before);
    // and the index beside it in the same file
    const index = reopened.searchIndex();
    expect(await index.indexedLength('acme', sid, w)).toBe(0);
  });
});

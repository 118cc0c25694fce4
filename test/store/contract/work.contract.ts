/**
 * The work contract (lib/store/work.ts `WorkStore`, seed 004): work items kept as given, written under a
 * version condition, listed per tenant or session newest started first. Run on every adapter
 * (./suite.ts).
 */
import { describe, expect } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import { StateConflictError, type WorkItem, type WorkStore } from '../../../lib/store/index.js';
import { at, workOf } from './records.js';
import { type ContractOptions, runContract } from './suite.js';

export function runWorkContract(opts: ContractOptions<WorkStore>): void {
  runContract('work', opts, (contract) => {
    describe('work items', () => {
      contract(
        'stores a work item as given, replaces it version by version, refuses a stale version',
        async (s) => {
          const item = workOf('acme', newId('s'), 1);
          expect(await s.getWork('acme', item.id)).toBeNull();
          await expect(s.putWork({ ...item, version: 2 })).rejects.toBeInstanceOf(StateConflictError);
          await s.putWork(item);
          expect(await s.getWork('acme', item.id)).toEqual(item);
          await expect(s.putWork(item)).rejects.toBeInstanceOf(StateConflictError);
          const next: WorkItem = { ...item, state: 'stopped', outcome: 'completed', version: 2 };
          await s.putWork(next);
          expect(await s.getWork('acme', item.id)).toEqual(next);
          expect(await s.getWork('globex', item.id)).toBeNull();
        },
      );

      contract('of two writes from the same version, exactly one lands', async (s) => {
        const item = workOf('acme', newId('s'), 1);
        await s.putWork(item);
        const a = { ...item, summary: 'a', version: 2 };
        const b = { ...item, summary: 'b', version: 2 };
        const settled = await Promise.allSettled([s.putWork(a), s.putWork(b)]);
        expect(settled.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect((settled.find((r) => r.status === 'rejected') as PromiseRejectedResult).reason).toBeInstanceOf(
          StateConflictError,
        );
        expect((await s.getWork('acme', item.id))!.summary).toBe(
          settled[0]!.status === 'fulfilled' ? 'a' : 'b',
        );
      });

      contract("lists a tenant's or a session's items, newest started first, at most `limit`", async (s) => {
        const [sa, sb] = [newId('s'), newId('s')];
        const items = [
          workOf('acme', sa, 1),
          workOf('acme', sb, 2),
          workOf('acme', sa, 3),
          workOf('globex', sa, 4),
        ];
        for (const i of items) await s.putWork(i);
        const ids = (l: WorkItem[]) => l.map((i) => i.id);
        expect(ids(await s.listWork('acme', { session: sa, limit: 10 }))).toEqual([
          items[2]!.id,
          items[0]!.id,
        ]);
        expect(ids(await s.listWork('acme', { limit: 10 }))).toEqual([
          items[2]!.id,
          items[1]!.id,
          items[0]!.id,
        ]);
        expect(ids(await s.listWork('acme', { limit: 2 }))).toEqual([items[2]!.id, items[1]!.id]);
        expect(await s.listWork('globex', { session: sb, limit: 10 })).toEqual([]);
        // An update keeps its place and shows its new content.
        await s.putWork({ ...items[0]!, mode: 'testing', version: 2 });
        expect((await s.listWork('acme', { session: sa, limit: 10 }))[1]!.mode).toBe('testing');
      });

      contract('lists items past one 1 MB read: six of about 250 KB each, all of them', async (s) => {
        const sid = newId('s');
        const heavy = (i: WorkItem): WorkItem => ({
          ...i,
          history: Array.from({ length: 100 }, (_, k) => ({
            op: 'checkpoint',
            at: at(k),
            summary: 'x'.repeat(2400),
          })),
        });
        const items = [1, 2, 3, 4, 5, 6].map((w) => heavy(workOf('acme', sid, w)));
        for (const i of items) await s.putWork(i);
        const newest = items.map((i) => i.id).reverse();
        expect((await s.listWork('acme', { limit: 10 })).map((i) => i.id)).toEqual(newest);
        expect((await s.listWork('acme', { session: sid, limit: 10 })).map((i) => i.id)).toEqual(newest);
        expect((await s.listWork('acme', { session: sid, limit: 5 })).map((i) => i.id)).toEqual(
          newest.slice(0, 5),
        );
      });
    });
  });
}

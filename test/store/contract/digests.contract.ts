/**
 * The digest index contract (issue 15, `DigestIndex` in lib/store/digests.ts, and the chains of
 * `WriterRecord` / `ChunkRecord`): one suite SQLite and DynamoDB both run (./suite.ts), and
 * test/infra/dynamo-access.test.ts runs again to record what the DynamoDB adapter sends. Times come from
 * `at(i)` (2026-01-01 plus i seconds), so due marks compare as the digester's `now` would.
 */
import { expect } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import { type DigestIndex, StateConflictError, type WriterStore } from '../../../lib/store/index.js';
import { advanceOf, at, headOf } from './records.js';
import { type ContractOptions, runContract } from './suite.js';

export function runDigestIndexContract(opts: ContractOptions<DigestIndex & WriterStore>): void {
  runContract('digest index', opts, (contract) => {
    /** the case's store */
    let store: DigestIndex & WriterStore;
    /** A case of this suite, its store in `store`. */
    const it = (title: string, fn: () => Promise<void>) =>
      contract(title, async (s) => {
        store = s;
        await fn();
      });

    /** Advances a new writer of `sid` by `bytes` at `at(when)`; returns the advance. */
    const advance = async (tenant: string, sid: string, when: number, digest_due: boolean, bytes = 10) => {
      const w = newId('w');
      const a = advanceOf(0, bytes, { lines: 1, when, digest_due });
      await store.advanceWriter(tenant, sid, w, 0, a);
      return { w, a };
    };

    it('keeps the chain of each advance on the writer and its chunk record', async () => {
      const sid = newId('s');
      const w = newId('w');
      const first = advanceOf(0, 10, { lines: 1, when: 1 });
      const second = advanceOf(10, 5, { lines: 2, when: 2 });
      await store.advanceWriter('acme', sid, w, 0, first);
      expect((await store.getWriter('acme', sid, w))?.chain).toBe(first.chain);
      await store.advanceWriter('acme', sid, w, 10, second);
      expect((await store.getWriter('acme', sid, w))?.chain).toBe(second.chain);
      expect((await store.listWriters('acme', sid)).map((r) => r.chain)).toEqual([second.chain]);
      expect((await store.getChunk('acme', sid, w, 0))?.chain).toBe(first.chain);
      expect((await store.getChunk('acme', sid, w, 10))?.chain).toBe(second.chain);
      expect((await store.listChunks('acme', sid, w, 0, 10)).map((c) => c.chain)).toEqual([
        first.chain,
        second.chain,
      ]);
    });

    it('marks a session due at the advance time only when digest_due is true', async () => {
      const quiet = newId('s');
      const due = newId('s');
      await advance('acme', quiet, 1, false);
      expect(await store.listDigestsDue(at(1000), 10)).toEqual([]);
      await advance('acme', due, 5, true);
      expect(await store.listDigestsDue(at(1000), 10)).toEqual([{ tenant: 'acme', sid: due, due_at: at(5) }]);
      // a later ordinary chunk leaves the mark as it is
      const w = newId('w');
      await store.advanceWriter('acme', due, w, 0, advanceOf(0, 3, { lines: 1, when: 6 }));
      expect(await store.listDigestsDue(at(1000), 10)).toEqual([{ tenant: 'acme', sid: due, due_at: at(5) }]);
      // a mark at or before `now` only
      expect(await store.listDigestsDue(at(4), 10)).toEqual([]);
      expect(await store.listDigestsDue(at(5), 10)).toHaveLength(1);
    });

    it('lists due sessions of every tenant, earliest first (ties by tenant, then sid), at most limit', async () => {
      const s = Array.from({ length: 5 }, () => newId('s')).sort();
      await advance('globex', s[0]!, 30, true);
      await advance('acme', s[1]!, 10, true);
      await advance('initech', s[2]!, 20, true);
      await advance('acme', s[3]!, 20, true);
      await advance('acme', s[4]!, 40, true);
      const all = await store.listDigestsDue(at(35), 10);
      expect(all).toEqual([
        { tenant: 'acme', sid: s[1], due_at: at(10) },
        { tenant: 'acme', sid: s[3], due_at: at(20) },
        { tenant: 'initech', sid: s[2], due_at: at(20) },
        { tenant: 'globex', sid: s[0], due_at: at(30) },
      ]);
      expect(await store.listDigestsDue(at(35), 2)).toEqual(all.slice(0, 2));
      expect(await store.listDigestsDue(at(35), 0)).toEqual([]);
    });

    it('stores a head conditionally on the stored seq: none first, then each seq after the last', async () => {
      const sid = newId('s');
      await advance('acme', sid, 1, true);
      expect(await store.getDigestHead('acme', sid)).toBeNull();
      const h1 = headOf(1, 2);
      await store.putDigestHead('acme', sid, null, h1, at(100), 10);
      expect(await store.getDigestHead('acme', sid)).toEqual(h1);
      expect(await store.getDigestHead('globex', sid)).toBeNull();
      await expect(store.putDigestHead('acme', sid, null, headOf(1, 3), null, 10)).rejects.toBeInstanceOf(
        StateConflictError,
      );
      await expect(store.putDigestHead('acme', sid, 2, headOf(3, 3), null, 10)).rejects.toBeInstanceOf(
        StateConflictError,
      );
      const h2 = headOf(2, 4, { closed: true, unchanged: 3, changed_at: at(2) });
      await store.putDigestHead('acme', sid, 1, h2, null, 10);
      expect(await store.getDigestHead('acme', sid)).toEqual(h2);
    });

    it('lets exactly one of two heads written at once from the same seq win', async () => {
      const sid = newId('s');
      await advance('acme', sid, 1, true);
      await store.putDigestHead('acme', sid, null, headOf(1, 2), at(50), 10);
      const a = headOf(2, 3, { signature: 'by-a' });
      const b = headOf(2, 3, { signature: 'by-b' });
      const settled = await Promise.allSettled([
        store.putDigestHead('acme', sid, 1, a, at(60), 10),
        store.putDigestHead('acme', sid, 1, b, at(60), 10),
      ]);
      expect(settled.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
      const lost = settled.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(lost.reason).toBeInstanceOf(StateConflictError);
      const winner = settled[0]!.status === 'fulfilled' ? a : b;
      expect(await store.getDigestHead('acme', sid)).toEqual(winner);
    });

    it("sets the due mark from the head: next_due, none when closed, the head's time when bytes moved", async () => {
      const sid = newId('s');
      const { a } = await advance('acme', sid, 1, true, 10);
      expect(await store.listDigestsDue(at(1000), 10)).toEqual([{ tenant: 'acme', sid, due_at: at(1) }]);
      // next_due: the mark moves to it
      await store.putDigestHead('acme', sid, null, headOf(1, 2), at(100), a.length);
      expect(await store.listDigestsDue(at(99), 10)).toEqual([]);
      expect(await store.listDigestsDue(at(1000), 10)).toEqual([{ tenant: 'acme', sid, due_at: at(100) }]);
      // closed (next_due null) with the bytes unchanged: no mark
      await store.putDigestHead('acme', sid, 1, headOf(2, 3, { closed: true }), null, a.length);
      expect(await store.listDigestsDue(at(1000), 10)).toEqual([]);
      // a chunk came while digest 3 was written: the mark is the head's time, closed or not
      await store.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 7, { lines: 1, when: 4 }));
      await store.putDigestHead('acme', sid, 2, headOf(3, 5, { closed: true }), null, a.length);
      expect(await store.listDigestsDue(at(1000), 10)).toEqual([{ tenant: 'acme', sid, due_at: at(5) }]);
      await store.putDigestHead('acme', sid, 3, headOf(4, 6), at(500), a.length);
      expect(await store.listDigestsDue(at(1000), 10)).toEqual([{ tenant: 'acme', sid, due_at: at(6) }]);
      // the bytes caught up: next_due again
      await store.putDigestHead('acme', sid, 4, headOf(5, 7), at(500), a.length + 7);
      expect(await store.listDigestsDue(at(1000), 10)).toEqual([{ tenant: 'acme', sid, due_at: at(500) }]);
      // a refused head changes no mark
      await expect(
        store.putDigestHead('acme', sid, 4, headOf(5, 8, { closed: true }), null, a.length + 7),
      ).rejects.toBeInstanceOf(StateConflictError);
      expect(await store.listDigestsDue(at(1000), 10)).toEqual([{ tenant: 'acme', sid, due_at: at(500) }]);
    });

    it('marks a closed session due again when a chunk with digest_due comes', async () => {
      const sid = newId('s');
      await advance('acme', sid, 1, true, 10);
      await store.putDigestHead('acme', sid, null, headOf(1, 2, { closed: true }), null, 10);
      expect(await store.listDigestsDue(at(1000), 10)).toEqual([]);
      await advance('acme', sid, 9, true);
      expect(await store.listDigestsDue(at(1000), 10)).toEqual([{ tenant: 'acme', sid, due_at: at(9) }]);
    });
  });
}

/**
 * The writers and chunks contract (lib/store/writers.ts `WriterStore`, DESIGN §4, §5): a writer's index
 * advanced chunk by chunk from the length it was read at, exactly one of concurrent advances winning,
 * and the chunk records a retry is answered with. Run on every adapter (./suite.ts).
 */
import { describe, expect } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import {
  type SessionIndex,
  StateConflictError,
  type WriterAdvance,
  type WriterStore,
} from '../../../lib/store/index.js';
import { advanceOf, at } from './records.js';
import { type ContractOptions, runContract } from './suite.js';

export function runWritersContract(opts: ContractOptions<WriterStore & SessionIndex>): void {
  runContract('writers and chunks', opts, (contract) => {
    describe('writers', () => {
      contract('advances a new writer from 0 and answers getWriter and getChunk', async (s) => {
        const sid = newId('s');
        const w = newId('w');
        const a = advanceOf(0, 120, {
          lines: 3,
          when: 1,
          agent: 'claude-code',
          provenance: 'hook',
          token_id: 'tok_1',
          token_label: 'priya laptop',
        });
        await s.advanceWriter('acme', sid, w, 0, a);
        expect(await s.getWriter('acme', sid, w)).toEqual({
          tenant: 'acme',
          sid,
          w,
          length: 120,
          lines: 3,
          last_seq: 3,
          ended: false,
          agent: 'claude-code',
          provenance: 'hook',
          token_id: 'tok_1',
          token_label: 'priya laptop',
          mixed_tokens: false,
          chain: a.chain,
          created_at: at(1),
          updated_at: at(1),
        });
        expect(await s.getChunk('acme', sid, w, 0)).toEqual(a.chunk);
        expect(await s.getChunk('acme', sid, w, 120)).toBeNull();
        expect(await s.getWriter('acme', sid, newId('w'))).toBeNull();
      });

      contract(
        'advances from the stored length: totals replaced, first agent, provenance, token and created_at kept',
        async (s) => {
          const sid = newId('s');
          const w = newId('w');
          const first = advanceOf(0, 100, {
            lines: 2,
            when: 1,
            agent: null,
            last_seq: null,
            provenance: 'declared',
            token_id: 'tok_first',
            token_label: null,
          });
          // another token's chunk marks the writer mixed, for good
          const second = advanceOf(100, 50, { lines: 4, when: 2, agent: 'late-agent', mixed_tokens: true });
          const third = advanceOf(150, 10, {
            lines: 5,
            when: 3,
            agent: 'other',
            ended: true,
            last_seq: null,
            // a later chunk (another token, another claim) never changes who put the writer on record
            provenance: 'hook',
            token_id: 'tok_later',
            token_label: 'later',
            mixed_tokens: false,
          });
          await s.advanceWriter('acme', sid, w, 0, first);
          expect((await s.getWriter('acme', sid, w))?.last_seq).toBeNull();
          await s.advanceWriter('acme', sid, w, 100, second);
          await s.advanceWriter('acme', sid, w, 150, third);
          expect(await s.getWriter('acme', sid, w)).toEqual({
            tenant: 'acme',
            sid,
            w,
            length: 160,
            lines: 5,
            last_seq: null,
            ended: true,
            agent: 'late-agent',
            provenance: 'declared',
            token_id: 'tok_first',
            token_label: null,
            mixed_tokens: true,
            chain: third.chain,
            created_at: at(1),
            updated_at: at(3),
          });
          expect(await s.getChunk('acme', sid, w, 0)).toEqual(first.chunk);
          expect(await s.getChunk('acme', sid, w, 100)).toEqual(second.chunk);
          expect(await s.getChunk('acme', sid, w, 150)).toEqual(third.chunk);
        },
      );

      contract(
        "lists a writer's chunks by offset from a given offset, at most `limit`, no other writer's",
        async (s) => {
          const sid = newId('s');
          // Two writers whose ids sort next to each other: the listing must not run into the other's chunks.
          const [w, v] = [newId('w'), newId('w')].sort();
          const chunks: WriterAdvance[] = [];
          let from = 0;
          // 12 chunks, offsets past 9 and 99 (the sort key pads offsets: 10 after 9, 100 after 99).
          for (let i = 0; i < 12; i++) {
            const a = advanceOf(from, i < 5 ? 3 : 40, { lines: i + 1, when: i + 1 });
            await s.advanceWriter('acme', sid, w!, from, a);
            chunks.push(a);
            from = a.length;
          }
          await s.advanceWriter('acme', sid, v!, 0, advanceOf(0, 10, { lines: 1, when: 20 }));
          expect(await s.listChunks('acme', sid, w!, 0, 1000)).toEqual(chunks.map((c) => c.chunk));
          expect(await s.listChunks('acme', sid, w!, 0, 3)).toEqual(chunks.slice(0, 3).map((c) => c.chunk));
          const mid = chunks[6]!.chunk.offset;
          expect(await s.listChunks('acme', sid, w!, mid, 2)).toEqual(chunks.slice(6, 8).map((c) => c.chunk));
          // From an offset inside a chunk: the chunks that start after it.
          expect(await s.listChunks('acme', sid, w!, mid + 1, 1)).toEqual([chunks[7]!.chunk]);
          expect(await s.listChunks('acme', sid, w!, from, 10)).toEqual([]);
          expect(await s.listChunks('acme', sid, v!, 0, 10)).toHaveLength(1);
          expect(await s.listChunks('globex', sid, w!, 0, 10)).toEqual([]);
        },
      );

      contract(
        'refuses an advance from a wrong length with StateConflictError and the stored length',
        async (s) => {
          const sid = newId('s');
          const w = newId('w');
          await s.advanceWriter('acme', sid, w, 0, advanceOf(0, 100, { lines: 2, when: 1 }));
          const before = await s.getWriter('acme', sid, w);
          for (const from of [0, 40, 160]) {
            const err = await s
              .advanceWriter('acme', sid, w, from, advanceOf(from, 10, { lines: 3, when: 2 }))
              .then(
                () => null,
                (e: unknown) => e,
              );
            expect(err).toBeInstanceOf(StateConflictError);
            expect((err as StateConflictError).currentLength).toBe(100);
          }
          const fresh = newId('w');
          const err = await s
            .advanceWriter('acme', sid, fresh, 100, advanceOf(100, 10, { lines: 1, when: 2 }))
            .then(
              () => null,
              (e: unknown) => e,
            );
          expect(err).toBeInstanceOf(StateConflictError);
          expect((err as StateConflictError).currentLength).toBe(0);
          expect(await s.getWriter('acme', sid, w)).toEqual(before);
          expect(await s.getWriter('acme', sid, fresh)).toBeNull();
          expect(await s.getChunk('acme', sid, w, 40)).toBeNull();
          expect(await s.getSession('acme', sid)).toMatchObject({ writers: 1, lines: 2, bytes: 100 });
        },
      );

      contract('lists the writers of a session sorted by w, and no chunk records', async (s) => {
        const sid = newId('s');
        const ws = [newId('w'), newId('w'), newId('w')];
        // created out of order, each with several chunks
        for (const w of [ws[2]!, ws[0]!, ws[1]!]) {
          await s.advanceWriter('acme', sid, w, 0, advanceOf(0, 10, { lines: 1, when: 1 }));
          await s.advanceWriter('acme', sid, w, 10, advanceOf(10, 10, { lines: 2, when: 2 }));
          await s.advanceWriter('acme', sid, w, 20, advanceOf(20, 10, { lines: 3, when: 3 }));
        }
        await s.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 5, { lines: 1, when: 4 }));
        const listed = await s.listWriters('acme', sid);
        expect(listed.map((r) => r.w)).toEqual([...ws].sort());
        expect(listed.every((r) => r.length === 30 && r.lines === 3 && r.sid === sid)).toBe(true);
        expect(await s.listWriters('acme', newId('s'))).toEqual([]);
      });

      // Issue 4: "concurrent ingest loses nothing and duplicates nothing".
      contract('of two concurrent advances from the same length exactly one wins', async (s) => {
        const sid = newId('s');
        const w = newId('w');
        const race = async (from: number, when: number, lines: number) => {
          const a = advanceOf(from, 30, { lines: lines + 1, when });
          const b = advanceOf(from, 70, { lines: lines + 2, when });
          const settled = await Promise.allSettled([
            s.advanceWriter('acme', sid, w, from, a),
            s.advanceWriter('acme', sid, w, from, b),
          ]);
          const won = settled.filter((r) => r.status === 'fulfilled');
          const lost = settled.filter((r) => r.status === 'rejected');
          expect(won).toHaveLength(1);
          expect(lost).toHaveLength(1);
          const winner = settled[0]!.status === 'fulfilled' ? a : b;
          const reason = (lost[0] as PromiseRejectedResult).reason as unknown;
          expect(reason).toBeInstanceOf(StateConflictError);
          expect((reason as StateConflictError).currentLength).toBe(winner.length);
          expect(await s.getWriter('acme', sid, w)).toMatchObject({
            length: winner.length,
            lines: winner.lines,
          });
          expect(await s.getChunk('acme', sid, w, from)).toEqual(winner.chunk);
          return winner;
        };
        const first = await race(0, 1, 0);
        const second = await race(first.length, 2, first.lines);
        expect(await s.getSession('acme', sid)).toMatchObject({
          writers: 1,
          lines: second.lines,
          bytes: second.length,
        });
      });

      contract(
        'counts concurrent first advances of different writers of one session once each',
        async (s) => {
          const sid = newId('s');
          const ws = [newId('w'), newId('w'), newId('w'), newId('w')];
          await Promise.all(
            ws.map((w, i) =>
              s.advanceWriter('acme', sid, w, 0, advanceOf(0, 10 * (i + 1), { lines: i + 1, when: 1 })),
            ),
          );
          expect(await s.getSession('acme', sid)).toMatchObject({ writers: 4, lines: 10, bytes: 100 });
          expect((await s.listWriters('acme', sid)).map((r) => r.length)).toHaveLength(4);
        },
      );
    });
  });
}

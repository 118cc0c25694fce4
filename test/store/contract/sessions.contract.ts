/**
 * The session index contract (lib/store/sessions.ts `SessionIndex`): one entry per session with its
 * counters, listed newest first with a cursor, counted, kept apart per tenant; and its summaries
 * (./session-summaries.contract.ts). Run on every adapter (./suite.ts).
 */
import { describe, expect } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import {
  InvalidCursorError,
  type Page,
  type SessionIndex,
  type SessionRecord,
  type StatusStore,
  type TenantStore,
  type WriterStore,
} from '../../../lib/store/index.js';
import { advanceOf, at, statusOf } from './records.js';
import { sessionSummaryCases } from './session-summaries.contract.js';
import { type ContractOptions, runContract } from './suite.js';

export function runSessionIndexContract(
  opts: ContractOptions<SessionIndex & WriterStore & StatusStore & TenantStore>,
): void {
  runContract('session index', opts, (contract) => {
    describe('sessions', () => {
      contract('keeps the session index: writers, lines, bytes, first and last activity', async (s) => {
        const sid = newId('s');
        const [w1, w2] = [newId('w'), newId('w')];
        expect(await s.getSession('acme', sid)).toBeNull();
        await s.advanceWriter('acme', sid, w1, 0, advanceOf(0, 100, { lines: 3, when: 1 }));
        await s.advanceWriter('acme', sid, w1, 100, advanceOf(100, 50, { lines: 5, when: 2 }));
        await s.advanceWriter('acme', sid, w2, 0, advanceOf(0, 40, { lines: 2, when: 3 }));
        expect(await s.getSession('acme', sid)).toEqual({
          tenant: 'acme',
          sid,
          created_at: at(1),
          updated_at: at(3),
          writers: 2,
          lines: 7,
          bytes: 190,
        });
      });

      contract('lists sessions newest first, paging with limit and cursor', async (s) => {
        const sids = [0, 1, 2, 3, 4].map(() => newId('s'));
        for (const [i, sid] of sids.entries()) {
          await s.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 10 + i }));
        }
        const newestFirst = [...sids].reverse();
        const pages: Page<SessionRecord>[] = [];
        let cursor: string | null = null;
        do {
          const page: Page<SessionRecord> = await s.listSessions('acme', 2, cursor);
          pages.push(page);
          cursor = page.next;
        } while (cursor !== null && pages.length < 10);
        expect(pages.map((p) => p.items.map((r) => r.sid))).toEqual([
          newestFirst.slice(0, 2),
          newestFirst.slice(2, 4),
          newestFirst.slice(4),
        ]);
        expect(pages[2]!.next).toBeNull();
        // A page that ends exactly at the last session has no next page.
        const all = await s.listSessions('acme', 5, null);
        expect(all.items.map((r) => r.sid)).toEqual(newestFirst);
        expect(all.next).toBeNull();
        expect(all.items[0]).toEqual(await s.getSession('acme', sids[4]!));
        // New activity moves a session to the front.
        await s.advanceWriter('acme', sids[0]!, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 99 }));
        const front = await s.listSessions('acme', 1, null);
        expect(front.items.map((r) => r.sid)).toEqual([sids[0]]);
        expect(front.next).not.toBeNull();
      });

      contract('orders sessions active at the same time by sid, descending', async (s) => {
        const sids = [newId('s'), newId('s'), newId('s')];
        for (const sid of [sids[1]!, sids[0]!, sids[2]!]) {
          await s.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 7 }));
        }
        const first = await s.listSessions('acme', 2, null);
        const rest = await s.listSessions('acme', 2, first.next);
        expect([...first.items, ...rest.items].map((r) => r.sid)).toEqual([...sids].reverse());
        expect(rest.next).toBeNull();
      });

      // Issue 17.1: DynamoDB moves a session on the board at most every 5 s; what that leaves exact.
      contract(
        'lists a session at its last advance or at most listingLagMs before it, and getSession exactly',
        async (s) => {
          const lag = opts.listingLagMs ?? 0;
          const sid = newId('s');
          const [w, v] = [newId('w'), newId('w')];
          await s.advanceWriter('acme', sid, w, 0, advanceOf(0, 10, { lines: 1, when: 1 }));
          await s.advanceWriter('acme', sid, w, 10, advanceOf(10, 10, { lines: 2, when: 2 }));
          await s.advanceWriter('acme', sid, v, 0, advanceOf(0, 5, { lines: 1, when: 3 }));
          const exact = { writers: 2, lines: 3, bytes: 25, created_at: at(1) };
          expect(await s.getSession('acme', sid)).toMatchObject({ ...exact, updated_at: at(3) });
          const within = async (last: number) => {
            const [listed] = (await s.listSessions('acme', 1, null)).items;
            expect(listed).toMatchObject({ sid, ...exact });
            expect(listed!.updated_at <= at(last)).toBe(true);
            expect(Date.parse(listed!.updated_at)).toBeGreaterThanOrEqual(Date.parse(at(last)) - lag);
            if (lag === 0) expect(listed!.updated_at).toBe(at(last));
          };
          await within(3);
          // past the interval since the last move: the session moves
          await s.advanceWriter('acme', sid, v, 5, advanceOf(5, 5, { lines: 2, when: 9 }));
          exact.lines = 4;
          exact.bytes = 30;
          await within(9);
          expect((await s.getSession('acme', sid))?.updated_at).toBe(at(9));
          // a report moves it at once, on both
          await s.putStatus(statusOf('acme', sid, 10));
          expect((await s.listSessions('acme', 1, null)).items[0]?.updated_at).toBe(at(10));
        },
      );

      // Issue 17.6: the board's copy of the latest report on the session entry.
      contract(
        "gives the board each session's report copy and agents (boardCopies), when it has it",
        async (s) => {
          if (!s.boardCopies) return;
          const [a, b] = [newId('s'), newId('s')];
          await s.advanceWriter('acme', a, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 1 }));
          await s.putStatus(statusOf('acme', a, 2));
          await s.putStatus({ ...statusOf('acme', a, 3), version: 2 });
          await s.advanceWriter('acme', b, newId('w'), 0, advanceOf(0, 7, { lines: 2, when: 4 }));
          for (const listed of [false, true]) {
            if (listed) await s.listSessions('acme', 10, null);
            const copies = await s.boardCopies('acme', [a, b, newId('s')]);
            expect([...copies.keys()].sort()).toEqual([a, b].sort());
            expect(copies.get(a)).toMatchObject({
              sid: a,
              state: 'working',
              note: statusOf('acme', a, 3).reports[0]!.note,
              reported_at: at(3),
              status_version: 2,
              writers: 1,
              lines: 1,
            });
            expect(copies.get(b)).toMatchObject({ state: null, status_version: null, writers: 1, lines: 2 });
          }
          expect(await s.boardCopies('globex', [a])).toEqual(new Map());
        },
      );

      contract('refuses a cursor it did not make with InvalidCursorError', async (s) => {
        const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
        for (const cursor of ['garbage!', 'bm90IGpzb24', b64({ a: 1 }), b64([1, 2]), b64(['x'])]) {
          await expect(s.listSessions('acme', 10, cursor)).rejects.toBeInstanceOf(InvalidCursorError);
        }
      });

      // Issue 8.7: the board says how many sessions there are.
      contract('counts a tenant’s sessions, each once, made by advances or status reports', async (s) => {
        expect(await s.countSessions('acme')).toBe(0);
        const sids = [newId('s'), newId('s'), newId('s')];
        await s.advanceWriter('acme', sids[0]!, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 1 }));
        await s.advanceWriter('acme', sids[0]!, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 2 }));
        await s.putStatus(statusOf('acme', sids[0]!, 3));
        await s.putStatus(statusOf('acme', sids[1]!, 4));
        await s.advanceWriter('acme', sids[2]!, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 5 }));
        await s.putStatus(statusOf('globex', newId('s'), 6));
        expect(await s.countSessions('acme')).toBe(3);
        expect(await s.countSessions('globex')).toBe(1);
        expect(await s.countSessions('initech')).toBe(0);
        // as many as paging through the listing gives
        for (let i = 0; i < 30; i++) await s.putStatus(statusOf('acme', newId('s'), 10 + i));
        let listed = 0;
        let cursor: string | null = null;
        do {
          const page: Page<SessionRecord> = await s.listSessions('acme', 7, cursor);
          listed += page.items.length;
          cursor = page.next;
        } while (cursor !== null);
        expect(await s.countSessions('acme')).toBe(33);
        expect(listed).toBe(33);
        // Counting stops past `atMost` (issue 17.6): atMost + 1 says "more", a smaller count is exact.
        for (const [atMost, counted] of [
          [0, 1],
          [1, 2],
          [10, 11],
          [32, 33],
          [33, 33],
          [1000, 33],
        ] as const) {
          expect(await s.countSessions('acme', atMost), `atMost ${atMost}`).toBe(counted);
        }
        expect(await s.countSessions('initech', 0)).toBe(0);
        expect(await s.countSessions('globex', 0)).toBe(1);
      });

      contract('keeps tenants apart: sessions, writers, chunks and status', async (s) => {
        const sid = newId('s');
        const w = newId('w');
        await s.advanceWriter('acme', sid, w, 0, advanceOf(0, 10, { lines: 1, when: 1 }));
        await s.putStatus(statusOf('acme', sid, 2));
        expect(await s.getSession('globex', sid)).toBeNull();
        expect(await s.listSessions('globex', 10, null)).toEqual({ items: [], next: null });
        expect(await s.getWriter('globex', sid, w)).toBeNull();
        expect(await s.listWriters('globex', sid)).toEqual([]);
        expect(await s.getChunk('globex', sid, w, 0)).toBeNull();
        expect(await s.getStatus('globex', sid)).toBeNull();
        // The same ids in another tenant start from nothing.
        await s.advanceWriter('globex', sid, w, 0, advanceOf(0, 7, { lines: 1, when: 3 }));
        expect((await s.getWriter('acme', sid, w))?.length).toBe(10);
        expect((await s.getSession('globex', sid))?.bytes).toBe(7);
      });
    });

    // The summary merged before the writer index advances (ADR 4, lib/service/ingest/ingest-chunk.ts
    // `appendChunk`): `mergeSessionSummary` for a session with no index entry makes one (no writers, lines
    // or bytes; created `at`), and the `advanceWriter` that follows counts from there and keeps its
    // `created_at` and summary.
    describe("a summary merged before the session's first advance", () => {
      contract('makes the session entry, which the advance then counts from', async (s) => {
        const sid = newId('s');
        const w = newId('w');
        await s.mergeSessionSummary(
          'acme',
          sid,
          { title: { text: 'Fix the login loop', at: 1 }, people: ['alice'], agents: ['coder'] },
          at(1),
        );
        expect(await s.getSession('acme', sid)).toMatchObject({
          created_at: at(1),
          writers: 0,
          lines: 0,
          bytes: 0,
        });
        // the same merge again (a retry after a failed advance) changes nothing
        await s.mergeSessionSummary(
          'acme',
          sid,
          { title: { text: 'Fix the login loop', at: 1 }, people: ['alice'], agents: ['coder'] },
          at(2),
        );
        await s.advanceWriter('acme', sid, w, 0, advanceOf(0, 120, { lines: 3, when: 3 }));
        await s.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 30, { lines: 1, when: 4 }));
        expect(await s.getSession('acme', sid)).toMatchObject({
          created_at: at(1),
          updated_at: at(4),
          writers: 2,
          lines: 4,
          bytes: 150,
        });
        const row = (await s.listSessionSummaries('acme')).find((r) => r.sid === sid);
        expect(row).toMatchObject({ title: 'Fix the login loop', people: ['alice'], agents: ['coder'] });
        expect(await s.tenantUsage('acme')).toEqual({ bytes: 150 });
      });

      contract('leaves an entry that exists alone but its summary', async (s) => {
        const sid = newId('s');
        await s.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 50, { lines: 2, when: 1 }));
        await s.mergeSessionSummary('acme', sid, { title: null, people: ['bob'], agents: [] }, at(9));
        expect(await s.getSession('acme', sid)).toMatchObject({
          created_at: at(1),
          updated_at: at(1),
          writers: 1,
          lines: 2,
          bytes: 50,
        });
      });
    });

    sessionSummaryCases(contract);
  });
}

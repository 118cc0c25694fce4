/**
 * The status contract (lib/store/status.ts `StatusStore`, seed 000): a session's reports kept as given,
 * written under a version condition, each write moving the session index forward. Run on every adapter
 * (./suite.ts).
 */
import { describe, expect } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import {
  type SessionIndex,
  StateConflictError,
  type StatusRecord,
  type StatusStore,
  type WriterStore,
} from '../../../lib/store/index.js';
import { advanceOf, at, statusOf } from './records.js';
import { type ContractOptions, runContract } from './suite.js';

export function runStatusContract(opts: ContractOptions<StatusStore & SessionIndex & WriterStore>): void {
  runContract('status', opts, (contract) => {
    describe('status', () => {
      contract(
        'stores a status with its reports and counters as given, and replaces it version by version',
        async (s) => {
          const sid = newId('s');
          expect(await s.getStatus('acme', sid)).toBeNull();
          const first = statusOf('acme', sid, 1);
          await s.putStatus(first);
          expect(await s.getStatus('acme', sid)).toEqual(first);
          const second: StatusRecord = {
            ...statusOf('acme', sid, 2, 2),
            reports: [
              ...first.reports,
              { ...statusOf('acme', sid, 2).reports[0]!, state: 'done', events_dropped: 3 },
            ],
            dropped_events: 3,
            dropped_reports: 1,
          };
          await s.putStatus(second);
          expect(await s.getStatus('acme', sid)).toEqual(second);
        },
      );

      contract('refuses a status whose version does not follow the stored one', async (s) => {
        const sid = newId('s');
        await expect(s.putStatus(statusOf('acme', sid, 1, 2))).rejects.toBeInstanceOf(StateConflictError);
        expect(await s.getStatus('acme', sid)).toBeNull();
        await s.putStatus(statusOf('acme', sid, 1));
        // Another writer read version 0 too: its write is refused, the stored one stays.
        await expect(s.putStatus(statusOf('acme', sid, 2))).rejects.toBeInstanceOf(StateConflictError);
        await expect(s.putStatus(statusOf('acme', sid, 3, 3))).rejects.toBeInstanceOf(StateConflictError);
        expect(await s.getStatus('acme', sid)).toEqual(statusOf('acme', sid, 1));
      });

      contract('of two writes from the same version, exactly one lands', async (s) => {
        const sid = newId('s');
        await s.putStatus(statusOf('acme', sid, 1));
        const a = { ...statusOf('acme', sid, 2, 2), dropped_events: 10 };
        const b = { ...statusOf('acme', sid, 3, 2), dropped_events: 20 };
        const settled = await Promise.allSettled([s.putStatus(a), s.putStatus(b)]);
        expect(settled.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        const lost = settled.find((r) => r.status === 'rejected') as PromiseRejectedResult;
        expect(lost.reason).toBeInstanceOf(StateConflictError);
        expect(await s.getStatus('acme', sid)).toEqual(settled[0]!.status === 'fulfilled' ? a : b);
      });

      contract('a report creates the session index entry; its updated_at only moves forward', async (s) => {
        const sid = newId('s');
        await s.putStatus(statusOf('acme', sid, 10));
        const entry = {
          tenant: 'acme',
          sid,
          created_at: at(10),
          updated_at: at(10),
          writers: 0,
          lines: 0,
          bytes: 0,
        };
        expect(await s.getSession('acme', sid)).toEqual(entry);
        expect((await s.listSessions('acme', 10, null)).items).toEqual([entry]);
        // A status whose last report is older is stored, but the session keeps its later activity time.
        const older = statusOf('acme', sid, 5, 2);
        await s.putStatus(older);
        expect(await s.getStatus('acme', sid)).toEqual(older);
        expect(await s.getSession('acme', sid)).toEqual(entry);
        await s.putStatus(statusOf('acme', sid, 20, 3));
        expect((await s.getSession('acme', sid))?.updated_at).toBe(at(20));
        await s.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 30 }));
        expect(await s.getSession('acme', sid)).toEqual({
          ...entry,
          updated_at: at(30),
          writers: 1,
          lines: 1,
          bytes: 10,
        });
      });
    });
  });
}

/**
 * A status report's time (lib/service/status/get.ts `reportStatus`): taken after the read of each try, so a
 * report that lost a race and is stored after another never carries an earlier `reported_at`, and the
 * session's `state_since` never runs backwards.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import type { ServiceContext } from '../../../lib/service/shared/context.js';
import { reportStatus } from '../../../lib/service/status/get.js';
import { FsSegmentStore } from '../../../lib/store/fs/segment-store.js';
import { StateConflictError, type StatusRecord } from '../../../lib/store/index.js';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';
import { tokenRecord } from '../../store/contract/records.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-report-time-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('two racing status reports', () => {
  it('store the loser after the winner with a later time', async () => {
    const state = new SqliteStateStore(join(tmp, 'state.sqlite'));
    let tick = 0;
    const ctx: ServiceContext = {
      tenant: 'acme',
      caller: tokenRecord('acme', { scopes: ['report'] }),
      segments: new FsSegmentStore(join(tmp, 'segments')),
      state,
      now: () => new Date(Date.UTC(2026, 11, 1) + ++tick * 1000),
    };
    const sid = newId('s');
    // The first try of report A: report B lands meanwhile, so A's write loses and A tries again.
    const put = state.putStatus.bind(state);
    let raced = false;
    state.putStatus = async (rec: StatusRecord) => {
      if (!raced && rec.reports.at(-1)!.state === 'blocked') {
        raced = true;
        await reportStatus({ ctx, sid, input: { state: 'working', note: 'B' } });
        throw new StateConflictError('raced');
      }
      return put(rec);
    };
    await reportStatus({ ctx, sid, input: { state: 'blocked', note: 'A' } });
    const stored = (await state.getStatus('acme', sid))!;
    expect(stored.reports.map((r) => r.note)).toEqual(['B', 'A']);
    const [b, a] = stored.reports.map((r) => r.reported_at);
    expect(a! > b!, `${a} after ${b}`).toBe(true);
    expect(stored.state_since).toBe(a);
    const summary = (await state.listSessionSummaries('acme')).find((s) => s.sid === sid)!;
    expect(summary.state_since).toBe(a);
  });
});

/**
 * The overview over 5,000 sessions on a real SQLite file (issue 14.1 "5,000 sessions stay fast"): the
 * answer is checked (counts, order, a filtered page), and the time of a listing and of whole overviews is
 * printed for the record (no timing assertion: a loaded machine must not fail the suite).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import { getOverview } from '../../../lib/service/board/overview.js';
import type { ServiceContext } from '../../../lib/service/shared/context.js';
import { FsSegmentStore } from '../../../lib/store/fs/segment-store.js';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';
import { advanceOf, at, tokenRecord } from '../../store/contract/records.js';

const SESSIONS = 5000;
const STATES = ['working', 'blocked', 'needs_review', 'done'];
const tmp = mkdtempSync(join(tmpdir(), 'hansard-overview-5000-'));
let state: SqliteStateStore;
let ctx: ServiceContext;

beforeAll(async () => {
  state = new SqliteStateStore(join(tmp, 'state.sqlite'));
  for (let i = 0; i < SESSIONS; i++) {
    const sid = newId('s');
    await state.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 500, { lines: 5, when: i }));
    await state.mergeSessionSummary('acme', sid, {
      title: { text: `prompt number ${i}: fix the thing in module ${i % 97}`, at: i },
      people: [`user-${i % 40}`, `user-${(i * 7) % 40}`],
      agents: [`agent-${i % 6}`],
    });
    // two sessions in three report
    if (i % 3 !== 0) {
      await state.putStatus({
        tenant: 'acme',
        sid,
        reports: [
          {
            state: STATES[i % 4]!,
            note: `note ${i}`,
            events: [],
            events_dropped: 0,
            reported_by: 'tok_R',
            reported_at: at(i + 1),
          },
        ],
        dropped_events: 0,
        dropped_reports: 0,
        version: 1,
      });
    }
  }
  ctx = {
    tenant: 'acme',
    caller: tokenRecord('acme', { scopes: ['board'] }),
    segments: new FsSegmentStore(join(tmp, 'segments')),
    state,
    now: () => new Date(Date.parse(at(SESSIONS + 60))),
  };
}, 120_000);

afterAll(async () => {
  await state.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** The median of `runs` timings of `fn`, in ms. */
async function median(runs: number, fn: () => Promise<unknown>): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    await fn();
    times.push(performance.now() - t);
  }
  times.sort((a, b) => a - b);
  return Math.round(times[Math.floor(runs / 2)]! * 10) / 10;
}

describe(`the overview of ${SESSIONS} sessions on SQLite`, () => {
  it('answers every group and a filtered page right, and prints how long it takes', async () => {
    const o = await getOverview({ ctx, maxAgeMs: 0 });
    expect(o.total).toBe(SESSIONS);
    expect(o.matched).toBe(SESSIONS);
    expect(o.rows).toHaveLength(50);
    expect(o.pages).toBe(100);
    expect(o.rows[0]!.group).toBe('blocked');
    expect(o.groups.reduce((n, g) => n + g.count, 0)).toBe(SESSIONS);
    expect(o.facets.agents).toHaveLength(6);
    expect(o.facets.people).toHaveLength(40);
    const filtered = await getOverview({ ctx, filters: { person: 'user-3', q: 'MODULE 1' }, maxAgeMs: 0 });
    expect(filtered.rows.every((r) => r.people.includes('user-3') && /module 1/i.test(r.title!))).toBe(true);

    const listing = await median(15, () => state.listSessionSummaries('acme'));
    const cold = await median(15, () => getOverview({ ctx, maxAgeMs: 0 }));
    const filteredMs = await median(15, () =>
      getOverview({ ctx, filters: { state: 'blocked', q: 'fix' }, page: 3, maxAgeMs: 0 }),
    );
    const shared = await median(15, () => getOverview({ ctx }));
    console.log(
      `overview of ${SESSIONS} sessions on SQLite (median of 15): listSessionSummaries ${listing} ms, ` +
        `getOverview page 1 ${cold} ms, filtered page 3 ${filteredMs} ms, with the shared listing ${shared} ms`,
    );
  }, 120_000);
});

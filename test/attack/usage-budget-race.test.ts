/**
 * Attack on the monthly budget's crossings (issue 27 item 4, docs/usage.md "Reading them": "Crossing a
 * mark is recorded once per month and level, when the chunk that crosses it is counted"): many sessions
 * uploaded at once, a line per chunk, each adding cost, with the server's month cost kept as it runs (the
 * default 30 s between reads: what it counted since is added in memory). Over real HTTP on loopback with
 * the real SQLite store; the sessions and their hand-computed costs are test/support/usage-sessions.ts.
 * Each level must be recorded exactly once, and `GET /v1/usage`'s budget must show the month's true cost.
 */
import { describe, expect, it } from 'vitest';
import { budgetScope, monthOf } from '../../lib/service/usage/budget.js';
import { request } from '../support/http.js';
import type { LocalSegment } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { postChunk } from '../support/stored.js';
import { CLAUDE, claudeSession } from '../support/usage-sessions.js';

const srv = useServer({ tenants: ['budgeted'] });

async function uploadLines(seg: LocalSegment): Promise<void> {
  let offset = 0;
  for (const line of seg.lines) {
    const a = await postChunk(srv, srv.admin, seg.sid, seg.w, offset, line);
    expect(a.status, a.text).toBe(201);
    offset += line.length;
  }
}

describe('budget crossings under concurrent uploads', () => {
  it('eight sessions at once past 80 % and 100 %: one event per level, the month cost exact', async () => {
    // 8 × 11,820 µ$ = 94,560 µ$; a budget of $0.05: 80 % at 40,000, 100 % at 50,000
    await srv.stores.state.setTenantSettings(
      'budgeted',
      { monthly_budget_usd: 0.05 },
      new Date().toISOString(),
    );
    const month = monthOf(new Date()).month;
    const segs = Array.from({ length: 8 }, () => claudeSession(srv.workDir));
    await Promise.all(segs.map(uploadLines));
    const a = await request(srv, 'GET', '/v1/usage', { token: srv.admin });
    expect(a.status, a.text).toBe(200);
    expect(a.json.budget).toMatchObject({
      monthly_usd: 0.05,
      month,
      month_cost_usd: (8 * CLAUDE.cost_micros) / 1e6,
      crossed: [80, 100],
    });
    const e80 = JSON.parse((await srv.stores.state.readClaim('budgeted', budgetScope(month), '80'))!);
    const e100 = JSON.parse((await srv.stores.state.readClaim('budgeted', budgetScope(month), '100'))!);
    expect(e80).toMatchObject({ type: 'usage.budget_crossed', level: 80 });
    expect(e100).toMatchObject({ type: 'usage.budget_crossed', level: 100 });
    // recorded when the month's cost had reached the level, and never with more than was counted
    expect(e80.month_cost_micros).toBeGreaterThanOrEqual(40_000);
    expect(e100.month_cost_micros).toBeGreaterThanOrEqual(50_000);
    for (const e of [e80, e100]) expect(e.month_cost_micros).toBeLessThanOrEqual(8 * CLAUDE.cost_micros);
  });
});

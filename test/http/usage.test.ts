/**
 * Token usage and cost kept as chunks arrive (issue 27 items 3-5; lib/service/usage/), over real HTTP on
 * loopback with the real SQLite store: a Claude Code-shaped session (a streamed message written three
 * times with a growing output count, as the capture hook records it) and a Codex-shaped one (running
 * totals repeated without advancing: copies), uploaded a line per chunk, answer a hand-computed table;
 * a retried chunk counts nothing; a chunk whose counting fails is 503 and its retry counts once; the
 * tenant's usage by day, model and person; a session token reads its own session only; the budget's
 * crossings; recompute gives what arrival gave; `hansard usage --json` on a directory and on a session id.
 * The sessions and their hand-computed tables: test/support/usage-sessions.ts.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PRICE_DATA } from '../../lib/log/analyse/usage/index.js';
import { newId } from '../../lib/log/index.js';
import { budgetScope, monthOf } from '../../lib/service/usage/budget.js';
import { FsDigestStore } from '../../lib/store/fs/digest-store.js';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';
import type { UsageChange, WriterAdvance, WriterUsage } from '../../lib/store/index.js';
import { SqliteStateStore } from '../../lib/store/sqlite/state-store.js';
import { runHansard } from '../support/cli.js';
import { expectError, request } from '../support/http.js';
import type { LocalSegment } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { postChunk } from '../support/stored.js';
import { CLAUDE, CODEX, claudeSession, codexSession, TODAY } from '../support/usage-sessions.js';

/** What the suite's store does wrong, when told to. */
const faults = {
  /** the next applyWriterUsage calls fail (a store fault) */
  usageFails: 0,
  /** the next advanceWriter calls fail with a full disk, after the chunk was counted */
  advanceFails: 0,
  /** counting is off: the store answers as one written before usage was counted */
  noUsage: false,
  /** usage calls made */
  reads: 0,
  writes: 0,
  /** segment reads (a gap the server did not remember, a turn grouping, a recompute) */
  segmentReads: 0,
};

class CountingSegments extends FsSegmentStore {
  override readSegment(...args: Parameters<FsSegmentStore['readSegment']>) {
    faults.segmentReads += 1;
    return super.readSegment(...args);
  }
}

class FaultyStore extends SqliteStateStore {
  override async getWriterUsage(tenant: string, sid: string, w: string): Promise<WriterUsage | null> {
    faults.reads += 1;
    if (faults.noUsage) return null;
    return super.getWriterUsage(tenant, sid, w);
  }
  override async applyWriterUsage(
    tenant: string,
    sid: string,
    w: string,
    expectUpto: number | null,
    change: UsageChange,
  ): Promise<void> {
    faults.writes += 1;
    if (faults.noUsage) return;
    if (faults.usageFails > 0) {
      faults.usageFails -= 1;
      throw new Error('the usage table is unreachable (injected)');
    }
    return super.applyWriterUsage(tenant, sid, w, expectUpto, change);
  }
  override async advanceWriter(
    tenant: string,
    sid: string,
    w: string,
    expectLength: number,
    next: WriterAdvance,
  ): Promise<void> {
    if (faults.advanceFails > 0) {
      faults.advanceFails -= 1;
      throw Object.assign(new Error('SQLITE_FULL: database or disk is full'), { code: 'SQLITE_FULL' });
    }
    return super.advanceWriter(tenant, sid, w, expectLength, next);
  }
}

const srv = useServer({
  tenants: ['local', 'budgeted'],
  tokens: { reader: ['read'], board: ['board'] },
  // the tenant's budget is read at every chunk here (30 s in a server)
  deps: { limits: { tenantSettingsMaxAgeMs: 0 } },
  mayLog: /injected|SQLITE_FULL|summary_not_updated|insufficient_storage/,
  stores: (dataDir) => {
    mkdirSync(dataDir, { recursive: true });
    return {
      segments: new CountingSegments(dataDir),
      state: new FaultyStore(join(dataDir, 'state.sqlite')),
      digests: new FsDigestStore(dataDir),
    };
  },
});

/** Uploads a segment a line per chunk (as the capture shipper does), each answered 201. */
async function uploadLines(seg: LocalSegment, token: string): Promise<void> {
  let offset = 0;
  for (const line of seg.lines) {
    const a = await postChunk(srv, token, seg.sid, seg.w, offset, line);
    expect(a.status, a.text).toBe(201);
    offset += line.length;
  }
}

const usageOf = async (sid: string, token = srv.admin, q = '') => {
  const a = await request(srv, 'GET', `/v1/sessions/${sid}/usage${q}`, { token });
  expect(a.status, a.text).toBe(200);
  return a.json;
};

describe('usage kept as chunks arrive', () => {
  let claude: LocalSegment;
  let codex: LocalSegment;

  it('a Claude Code session: the streamed message once with its last figures, the unknown turn said', async () => {
    claude = claudeSession(srv.workDir);
    faults.reads = 0;
    faults.writes = 0;
    faults.segmentReads = 0;
    await uploadLines(claude, srv.admin);
    const r = await usageOf(claude.sid);
    expect(r.total).toEqual(CLAUDE);
    expect(r.by_model).toEqual([{ model: 'claude-sonnet-4-5', ...CLAUDE, turns: 0, unknown_turns: 0 }]);
    expect(r.price_data).toBe(PRICE_DATA);
    expect(r.cost_basis).toMatch(/^list price equivalent/);
    expect(r.uncounted_writers).toBeUndefined();
    // 15 lines: the tool call, its result, the output and writer.end touch no usage record (4 chunks);
    // each of the other 11 reads the record once and writes it once.
    expect(claude.lines.length).toBe(15);
    expect([faults.reads, faults.writes]).toEqual([11, 11]);
    // the skipped chunks were remembered: no byte of the segment was read back
    expect(faults.segmentReads).toBe(0);
  });

  it('groups a session by person, turn, day and writer', async () => {
    const byPerson = await usageOf(claude.sid, srv.admin, '?by=person');
    expect(byPerson.groups).toEqual([
      { key: 'priya', ...CLAUDE, turns: 1, unknown_turns: 0 },
      {
        key: 'sam',
        ...CLAUDE,
        input_tokens: 0,
        output_tokens: 0,
        cache_read_tokens: 0,
        cache_write_tokens: 0,
        cost_micros: null, // no record priced: unknown, not $0
        cost_usd: null,
        records: 0,
        turns: 1,
        unknown_turns: 1,
      },
    ]);
    const byTurn = await usageOf(claude.sid, srv.admin, '?by=turn');
    expect(byTurn.total).toEqual(CLAUDE);
    expect(
      byTurn.groups.map((g: { cost_micros: number | null; unknown_turns: number }) => [
        g.cost_micros,
        g.unknown_turns,
      ]),
    ).toEqual([
      [11_820, 0],
      [null, 1],
    ]);
    const byDay = await usageOf(claude.sid, srv.admin, '?by=day');
    expect(byDay.groups).toEqual([{ key: TODAY, ...CLAUDE }]);
    const byWriter = await usageOf(claude.sid, srv.tokens.board, '?by=writer'); // the board's scope reads it too
    expect(byWriter.groups).toEqual([{ key: claude.w, ...CLAUDE }]);
    // a range of days: today's is all of it, another day's nothing (no turn, no record: a known $0)
    expect((await usageOf(claude.sid, srv.admin, `?from=${TODAY}&to=${TODAY}`)).total).toEqual(CLAUDE);
    const before = await usageOf(claude.sid, srv.admin, '?from=2020-01-01&to=2020-01-31&by=turn');
    expect(before.total).toMatchObject({ records: 0, turns: 0, cost_usd: 0 });
    const bad = await request(srv, 'GET', `/v1/sessions/${claude.sid}/usage?from=yesterday`, {
      token: srv.admin,
    });
    expectError(srv, bad, 400, 'bad_request');
  });

  it('a parameter of the other usage route is refused, not ignored (by here, group_by there)', async () => {
    const a = await request(srv, 'GET', `/v1/sessions/${claude.sid}/usage?group_by=model`, {
      token: srv.admin,
    });
    expect(a.status, a.text).toBe(400);
    expect(a.json.error.code).toBe('bad_request');
    expect(a.text).toContain('group_by');
    const b = await request(srv, 'GET', '/v1/usage?by=model', { token: srv.tokens.reader });
    expect(b.status, b.text).toBe(400);
    expect(b.text).toContain('by');
  });

  it('a Codex session: running totals, copies skipped', async () => {
    codex = codexSession(srv.workDir);
    await uploadLines(codex, srv.admin);
    const r = await usageOf(codex.sid);
    expect(r.total).toEqual(CODEX);
    expect(r.by_model).toEqual([{ model: 'gpt-5', ...CODEX, turns: 0, unknown_turns: 0 }]);
  });

  it('the tenant by model, person and day', async () => {
    const q = `from=${TODAY}&to=${TODAY}`;
    const get = async (g: string) => {
      const a = await request(srv, 'GET', `/v1/usage?group_by=${g}&${q}`, { token: srv.tokens.reader });
      expect(a.status, a.text).toBe(200);
      return a.json;
    };
    const byModel = await get('model');
    // 11,820 + 3,075 = 14,895 µ$; 4 turns, 1 unknown
    expect(byModel.total).toMatchObject({ cost_micros: 14_895, records: 4, turns: 4, unknown_turns: 1 });
    expect(byModel.groups.map((g: { key: string; cost_micros: number }) => [g.key, g.cost_micros])).toEqual([
      ['claude-sonnet-4-5', 11_820],
      ['gpt-5', 3_075],
    ]);
    const byPerson = await get('person');
    expect(
      byPerson.groups.map((g: { key: string; cost_micros: number | null }) => [g.key, g.cost_micros]),
    ).toEqual([
      ['priya', 14_895],
      ['sam', null],
    ]);
    const byDay = await get('day');
    expect(byDay).toMatchObject({
      from: TODAY,
      to: TODAY,
      group_by: 'day',
      budget: null,
      price_data: PRICE_DATA,
    });
    expect(byDay.groups).toEqual([{ key: TODAY, ...byModel.total }]);
    const byAgent = await get('agent');
    expect(byAgent.groups.map((g: { key: string }) => g.key)).toEqual(['claude-code', 'codex']);
    // a range past a year is refused
    const far = await request(srv, 'GET', '/v1/usage?from=2020-01-01&to=2026-01-01', { token: srv.admin });
    expectError(srv, far, 400, 'bad_request');
  });

  it('a retried chunk counts nothing, and a chunk counted whose index did not advance is counted once', async () => {
    const before = await usageOf(claude.sid);
    // the same chunk again: 200, the answer of the stored one
    const noteLine = claude.lines.findIndex((l) => l.includes('msg_B'));
    const offset = claude.lines.slice(0, noteLine).reduce((n, l) => n + l.length, 0);
    const again = await postChunk(srv, srv.admin, claude.sid, claude.w, offset, claude.lines[noteLine]!);
    expect(again.status, again.text).toBe(200);
    expect(await usageOf(claude.sid)).toEqual(before);

    // counted, then the index fails to advance (full disk): 507, nothing indexed; the retry counts nothing more
    const seg = claudeSession(srv.workDir);
    const head = seg.lines.slice(0, 3); // writer.start, priya's prompt, the turn
    let off = 0;
    for (const l of head) {
      expect((await postChunk(srv, srv.admin, seg.sid, seg.w, off, l)).status).toBe(201);
      off += l.length;
    }
    const rest = Buffer.concat(seg.lines.slice(3));
    faults.advanceFails = 1;
    expectError(srv, await postChunk(srv, srv.admin, seg.sid, seg.w, off, rest), 507, 'insufficient_storage');
    const writer = await request(srv, 'GET', `/v1/sessions/${seg.sid}/writers/${seg.w}`, {
      token: srv.admin,
    });
    expect(writer.json.length).toBe(off);
    const retried = await postChunk(srv, srv.admin, seg.sid, seg.w, off, rest);
    expect(retried.status, retried.text).toBe(201);
    expect((await usageOf(seg.sid)).total).toEqual(CLAUDE);
  });

  it('a skipped chunk whose index did not advance, retried: remembered once, nothing read back', async () => {
    const seg = claudeSession(srv.workDir);
    // the tool result: the second of two skipped chunks in a row
    const result = seg.lines.findIndex((l) => l.includes('"type":"agent.action_result"'));
    expect(seg.lines[result - 1]!.includes('"type":"agent.action"')).toBe(true);
    let off = 0;
    faults.segmentReads = 0;
    for (const [i, l] of seg.lines.entries()) {
      if (i === result) {
        faults.advanceFails = 1;
        expectError(
          srv,
          await postChunk(srv, srv.admin, seg.sid, seg.w, off, l),
          507,
          'insufficient_storage',
        );
      }
      expect((await postChunk(srv, srv.admin, seg.sid, seg.w, off, l)).status).toBe(201);
      off += l.length;
    }
    expect((await usageOf(seg.sid)).total).toEqual(CLAUDE);
    expect(faults.segmentReads).toBe(0);
  });

  it('a chunk whose counting fails is 503 with nothing indexed, and its retry counts it once', async () => {
    const seg = claudeSession(srv.workDir);
    const first = seg.lines[0]!;
    expect((await postChunk(srv, srv.admin, seg.sid, seg.w, 0, first)).status).toBe(201);
    const rest = Buffer.concat(seg.lines.slice(1));
    faults.usageFails = 1;
    const failed = await postChunk(srv, srv.admin, seg.sid, seg.w, first.length, rest);
    const err = expectError(srv, failed, 503, 'summary_not_updated');
    expect(err.details).toEqual({ expected_offset: first.length });
    expect(err.message).toMatch(/usage counters/);
    const writer = await request(srv, 'GET', `/v1/sessions/${seg.sid}/writers/${seg.w}`, {
      token: srv.admin,
    });
    expect(writer.json.length).toBe(first.length);
    const retried = await postChunk(srv, srv.admin, seg.sid, seg.w, first.length, rest);
    expect(retried.status, retried.text).toBe(201);
    expect((await usageOf(seg.sid)).total).toEqual(CLAUDE);
  });

  it("a session token reads its own session's usage only, and not the tenant's", async () => {
    const minted = await request(srv, 'POST', `/v1/sessions/${claude.sid}/tokens`, {
      token: srv.admin,
      json: { scopes: ['read'] },
    });
    expect(minted.status, minted.text).toBe(201);
    const bound = minted.json.token as string;
    expect((await usageOf(claude.sid, bound)).total).toEqual(CLAUDE);
    const other = await request(srv, 'GET', `/v1/sessions/${codex.sid}/usage`, { token: bound });
    const missing = await request(srv, 'GET', `/v1/sessions/${newId('s')}/usage`, { token: bound });
    expectError(srv, other, 404, 'not_found');
    expect(other.text).toBe(missing.text);
    expectError(srv, await request(srv, 'GET', '/v1/usage', { token: bound }), 403, 'forbidden');
    // another tenant's admin sees nothing of it
    const foreign = await request(srv, 'GET', `/v1/sessions/${claude.sid}/usage`, {
      token: srv.tenants.budgeted.admin,
    });
    expect(foreign.text).toBe(missing.text);
  });

  it('recompute from the segments changes nothing that arrival counted, and counts what it did not', async () => {
    const range = `from=${TODAY}&to=${TODAY}&group_by=model`;
    const tenantBefore = (await request(srv, 'GET', `/v1/usage?${range}`, { token: srv.admin })).json;
    const sessionBefore = await usageOf(claude.sid, srv.admin, '?by=person');
    const all = await request(srv, 'POST', '/v1/usage/recompute', { token: srv.admin });
    expect(all.status, all.text).toBe(200);
    expect(all.json).toMatchObject({ sessions: 5, writers: 5, changed_writers: 0, changed_buckets: 0 });
    expect(await usageOf(claude.sid, srv.admin, '?by=person')).toEqual(sessionBefore);
    expect((await request(srv, 'GET', `/v1/usage?${range}`, { token: srv.admin })).json).toEqual(
      tenantBefore,
    );

    // a session stored by a server that did not count: uncounted until recomputed, then the table
    faults.noUsage = true;
    const old = codexSession(srv.workDir);
    await uploadLines(old, srv.admin);
    faults.noUsage = false;
    const pending = await usageOf(old.sid);
    expect(pending.uncounted_writers).toEqual([old.w]);
    expect(pending.total.records).toBe(0);
    const one = await request(srv, 'POST', `/v1/usage/recompute?sid=${old.sid}`, { token: srv.admin });
    expect(one.json).toMatchObject({ sessions: 1, writers: 1, changed_writers: 1 });
    const after = await usageOf(old.sid);
    expect(after.total).toEqual(CODEX);
    expect(after.uncounted_writers).toBeUndefined();
    const tenantAfter = (await request(srv, 'GET', `/v1/usage?${range}`, { token: srv.admin })).json;
    expect(tenantAfter.total.cost_micros).toBe(tenantBefore.total.cost_micros + CODEX.cost_micros);
    // and a later chunk of a counted writer goes on from the recomputed state
    expect((await request(srv, 'POST', '/v1/usage/recompute', { token: srv.tokens.reader })).status).toBe(
      403,
    );
  });
});

describe('monthly budget', () => {
  it('crossing 80 % and then 100 % is recorded once each and shown', async () => {
    const t = srv.tenants.budgeted;
    // $0.013: the Claude session (11,820 µ$) is 90.9 %, the Codex one takes it to 14,895 µ$, 114.6 %
    await srv.stores.state.setTenantSettings(t.name, { monthly_budget_usd: 0.013 }, new Date().toISOString());
    const month = monthOf(new Date()).month;
    await uploadLines(claudeSession(srv.workDir), t.admin);
    let a = await request(srv, 'GET', '/v1/usage', { token: t.admin });
    expect(a.json.budget).toEqual({
      monthly_usd: 0.013,
      month,
      month_cost_usd: 0.01182,
      percent: 90.9,
      crossed: [80],
    });
    await uploadLines(codexSession(srv.workDir), t.admin);
    await uploadLines(codexSession(srv.workDir), t.admin); // past 100 % again: no second event
    a = await request(srv, 'GET', '/v1/usage', { token: t.admin });
    expect(a.json.budget).toMatchObject({ month_cost_usd: 0.01797, percent: 138.2, crossed: [80, 100] });
    const e80 = JSON.parse((await srv.stores.state.readClaim(t.name, budgetScope(month), '80'))!);
    const e100 = JSON.parse((await srv.stores.state.readClaim(t.name, budgetScope(month), '100'))!);
    expect(e80).toMatchObject({ type: 'usage.budget_crossed', level: 80, month_cost_micros: 11_820 });
    // crossed at the Codex session's first record: 11,820 + 1,525 = 13,345 µ$
    expect(e100).toMatchObject({ level: 100, month_cost_micros: 13_345, monthly_budget_usd: 0.013 });
    // the local tenant has no budget
    expect((await request(srv, 'GET', '/v1/usage', { token: srv.admin })).json.budget).toBeNull();
  });
});

describe('hansard usage', () => {
  it('--json of a directory and of a session id give the same report, the hand-computed one', async () => {
    const seg = claudeSession(srv.workDir);
    await uploadLines(seg, srv.admin);
    const env = { HANSARD_URL: srv.url, HANSARD_TOKEN: srv.tokens.reader };
    const local = await runHansard(['usage', seg.dir, '--json'], { cwd: srv.workDir, env: {} });
    expect(local.code, local.err).toBe(0);
    const remote = await runHansard(['usage', seg.sid, '--json'], { cwd: srv.workDir, env });
    expect(remote.code, remote.err).toBe(0);
    const dir = JSON.parse(local.out);
    expect(dir.total).toEqual(CLAUDE);
    expect(JSON.parse(remote.out)).toEqual(dir);
    const byPerson = await runHansard(['usage', seg.dir, '--by', 'person', '--json'], {
      cwd: srv.workDir,
      env: {},
    });
    expect(JSON.parse(byPerson.out).groups.map((g: { key: string }) => g.key)).toEqual(['priya', 'sam']);
  });

  it('prints a table with the cost, its basis, the price data and the unknown turns', async () => {
    const seg = claudeSession(srv.workDir);
    const r = await runHansard(['usage', seg.dir], { cwd: srv.workDir, env: {} });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^model\s+input\s+output\s+cache read\s+cache write\s+cost\n/);
    expect(r.out).toMatch(/\ntotal\s+12,030\s+312\s+11,000\s+1,000\s+\$0\.0118\n/);
    expect(r.out).toMatch(/\nclaude-sonnet-4-5\s+12,030\s+312\s+11,000\s+1,000\s+\$0\.0118\n/);
    expect(r.out).toContain(
      `cost: list price equivalent (API prices; subscriptions are billed otherwise); prices: ${PRICE_DATA}`,
    );
    expect(r.out).toContain('1 of 2 turns reported no usage: totals are a lower bound');
    const people = await runHansard(['usage', seg.dir, '--by', 'person'], { cwd: srv.workDir, env: {} });
    expect(people.out).toMatch(/\npriya\s+12,030\s+312\s+11,000\s+1,000\s+\$0\.0118\s+1\n/);
    // sam's turn reported nothing: unknown tokens and cost, never 0 and $0
    expect(people.out).toMatch(/\nsam\s+\?\s+\?\s+\?\s+\?\s+unknown\s+1 \(1 unknown\)\n/);
    const tenant = await runHansard(['usage', '--by', 'model', '--from', TODAY, '--to', TODAY], {
      cwd: srv.workDir,
      env: { HANSARD_URL: srv.url, HANSARD_TOKEN: srv.tokens.reader },
    });
    expect(tenant.code, tenant.err).toBe(0);
    expect(tenant.out).toMatch(/\ngpt-5\s+[\d,]+\s+[\d,]+\s+[\d,]+\s+0\s+\$0\.0\d{3}\n/);
    const bad = await runHansard(['usage', '--by', 'turn'], { cwd: srv.workDir, env: {} });
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/groups by day, agent, person, model/);
  });
});

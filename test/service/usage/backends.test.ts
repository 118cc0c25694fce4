/**
 * Usage kept on arrival equals usage recomputed from the segments, on SQLite and on DynamoDB Local (issue
 * 27 item 5): the hand-computed sessions of test/support/usage-sessions.ts uploaded a line per chunk
 * through two apps over one store (on DynamoDB two Lambda-like instances, each with its own memory of
 * skipped chunks, so a chunk after one the other app skipped reads those bytes back), then the session
 * and tenant answers compared before and after `POST /v1/usage/recompute`. And the tenant's monthly
 * budget setting is kept by both stores.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StateStore } from '../../../lib/store/index.js';
import { type App, BACKENDS, useAppBackends } from '../../support/app-backends.js';
import type { LocalSegment } from '../../support/segments.js';
import { CLAUDE, CODEX, claudeSession, codexSession, TODAY } from '../../support/usage-sessions.js';

const backends = useAppBackends('hansard-usage-');
const work = mkdtempSync(join(tmpdir(), 'hansard-usage-sessions-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

describe.each(BACKENDS)('usage on %s', (name) => {
  let apps: [App, App];
  let token: string;
  let state: StateStore;
  beforeAll(async () => {
    ({ apps, token, state } = await backends.open(name));
  }, 60_000);

  const call = async (
    app: App,
    method: string,
    path: string,
    body?: Uint8Array,
    // biome-ignore lint/suspicious/noExplicitAny: answers are read field by field
  ): Promise<{ status: number; json: any }> => {
    const res = await app.request(path, {
      method,
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
      ...(body ? { body } : {}),
    });
    return { status: res.status, json: await res.json() };
  };

  /** A line per chunk, the apps taking turns. */
  async function upload(seg: LocalSegment): Promise<void> {
    let offset = 0;
    for (const [i, line] of seg.lines.entries()) {
      const path = `/v1/sessions/${seg.sid}/writers/${seg.w}/chunks?offset=${offset}`;
      const a = await call(apps[(i % 2) as 0 | 1], 'POST', path, line);
      expect(a.status, JSON.stringify(a.json)).toBe(201);
      offset += line.length;
    }
  }

  it('the session answers equal the hand-computed tables, and recompute changes nothing', async () => {
    const claude = claudeSession(work);
    const codex = codexSession(work);
    await upload(claude);
    await upload(codex);
    const session = async (sid: string) =>
      (await call(apps[0], 'GET', `/v1/sessions/${sid}/usage?by=person`)).json;
    const tenant = async () =>
      (await call(apps[1], 'GET', `/v1/usage?group_by=model&from=${TODAY}&to=${TODAY}`)).json;
    const before = {
      claude: await session(claude.sid),
      codex: await session(codex.sid),
      tenant: await tenant(),
    };
    expect(before.claude.total).toEqual(CLAUDE);
    expect(before.codex.total).toEqual(CODEX);
    expect(before.tenant.total.cost_micros).toBe(CLAUDE.cost_micros + CODEX.cost_micros);
    expect(before.tenant.groups.map((g: { key: string }) => g.key)).toEqual(['claude-sonnet-4-5', 'gpt-5']);
    // the board's running counters agree with the records
    const counters = await state.getSessionUsageCounters('acme', claude.sid);
    expect(counters).toMatchObject({ cost_micros: CLAUDE.cost_micros, turns: 2, unknown_turns: 1 });

    const done = await call(apps[0], 'POST', '/v1/usage/recompute');
    expect(done.status, JSON.stringify(done.json)).toBe(200);
    expect(done.json).toMatchObject({ sessions: 2, writers: 2, changed_writers: 0, changed_buckets: 0 });
    expect({
      claude: await session(claude.sid),
      codex: await session(codex.sid),
      tenant: await tenant(),
    }).toEqual(before);
  });

  it('counts a session once while recomputes of it run beside its upload, on the other app', async () => {
    const seg = claudeSession(work);
    let uploading = true;
    let recomputes = 0;
    const beside = (async () => {
      // the session exists once its first chunk is in
      while (uploading) {
        // a turn of the event loop each time: on SQLite the 404 of a session not there yet needs no I/O
        await sleep(2);
        const r = await call(apps[1], 'POST', `/v1/usage/recompute?sid=${seg.sid}`);
        if (r.status === 200) recomputes += 1;
        else expect(r.status, JSON.stringify(r.json)).toBe(404);
      }
    })();
    try {
      await upload(seg);
    } finally {
      uploading = false;
      await beside;
    }
    expect(recomputes).toBeGreaterThan(0);
    const r = await call(apps[0], 'GET', `/v1/sessions/${seg.sid}/usage`);
    expect(r.json.total).toEqual(CLAUDE);
    const again = await call(apps[0], 'POST', `/v1/usage/recompute?sid=${seg.sid}`);
    expect(again.json).toMatchObject({ changed_writers: 0 });
  });

  it('keeps the monthly budget setting, and removes it', async () => {
    const at = new Date().toISOString();
    expect(await state.setTenantSettings('acme', { monthly_budget_usd: 250.5 }, at)).toMatchObject({
      monthly_budget_usd: 250.5,
    });
    expect((await state.getTenantSettings('acme'))?.monthly_budget_usd).toBe(250.5);
    const cleared = await state.setTenantSettings('acme', { monthly_budget_usd: null }, at);
    expect(cleared).not.toHaveProperty('monthly_budget_usd');
  });
});

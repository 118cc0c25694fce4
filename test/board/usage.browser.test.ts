/**
 * Cost on the board (issue 27 item 3–4, docs/usage.md) in Debian's Chromium, real HTTP on loopback, the
 * local stores, counters kept as the chunks arrived: each session row's list-price cost and tokens, with
 * its unknown turns; the tenant's today and this month, and the monthly budget past 100 %; a person's and
 * an agent's page showing only theirs; each turn's cost on the timeline, and "usage unknown" where no
 * source reported any. The figures are hand-computed from genai-prices 0.1.8's list prices.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { browsers } from '../support/browser.js';
import { type BoardFixture, startBoard } from './overview-fixture.js';

declare const document: {
  documentElement: { scrollWidth: number; clientWidth: number };
};

let f: BoardFixture;
let claudeSid = '';
let codexSid = '';
const open = browsers();

const claudeUsage = (output: number) => ({
  import_kind: 'token_usage',
  usage_source: 'claude_message',
  message_id: 'msg_01',
  model: 'claude-sonnet-4-5',
  usage: {
    input_tokens: 1000,
    cache_read_input_tokens: 4000,
    cache_creation_input_tokens: 0,
    output_tokens: output,
  },
});
const codexTotal = (input: number, cached: number, output: number) => ({
  import_kind: 'token_usage',
  usage_source: 'codex_total',
  model: 'gpt-5',
  thread_token_usage: { input_tokens: input, cached_input_tokens: cached, output_tokens: output },
});

async function upload(s: { sid: string; w: string; path: string }): Promise<void> {
  const res = await fetch(`${f.base}/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=0`, {
    method: 'POST',
    headers: { authorization: `Bearer ${f.admin}`, 'content-type': 'application/x-ndjson' },
    body: readFileSync(s.path),
  });
  expect(res.status).toBe(201);
}

async function boardPage(path = '/', width = 1280): Promise<Page> {
  const ctx = await open.fresh({ width, height: 900 });
  await ctx.addCookies([{ name: 'hansard_board', value: f.board, url: f.base }]);
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  await page.goto(`${f.base}${path}`);
  return page;
}

beforeAll(async () => {
  f = await startBoard();
  // priya's Claude Code session: a streamed message (output 10, then 200: counted once, 200), then a
  // turn with no usage. claude-sonnet-4-5: (5000 − 4000) × $3/M + 4000 × $0.30/M + 200 × $15/M
  // = 3,000 + 1,200 + 3,000 = 7,200 µ$ = $0.0072.
  const a = openSession(join(f.tmp, 'sessions'), { agent: 'claude-code' });
  const m1 = a.message({ user_id: 'priya', text: 'fix the parser' });
  const t1 = a.turnStart({ context_message_ids: [m1.id] });
  a.note({ author: 'claude-code', text: 'usage' }, { extra: claudeUsage(10) });
  a.note({ author: 'claude-code', text: 'usage' }, { extra: claudeUsage(200) });
  a.turnEnd({ turn_id: t1.turn_id, status: 'completed' });
  const m2 = a.message({ user_id: 'priya', text: 'thanks' });
  const t2 = a.turnStart({ context_message_ids: [m2.id] });
  a.turnEnd({ turn_id: t2.turn_id, status: 'completed' });
  a.end();
  claudeSid = a.sid;
  await upload(a);
  // ana's Codex session: running totals 1000 (800 cached), a copy, then 3000 (1800 cached) and 300 out.
  // gpt-5: (3000 − 1800) × $1.25/M + 1800 × $0.125/M + 300 × $10/M = 1,500 + 225 + 3,000 = 4,725 µ$.
  const b = openSession(join(f.tmp, 'sessions'), { agent: 'codex' });
  const m3 = b.message({ user_id: 'ana', text: 'bump the dependencies' });
  const t3 = b.turnStart({ context_message_ids: [m3.id] });
  b.note({ author: 'codex', text: 'usage' }, { extra: codexTotal(1000, 800, 0) });
  b.note({ author: 'codex', text: 'usage' }, { extra: codexTotal(1000, 800, 0) });
  b.note({ author: 'codex', text: 'usage' }, { extra: codexTotal(3000, 1800, 300) });
  b.turnEnd({ turn_id: t3.turn_id, status: 'completed' });
  b.end();
  codexSid = b.sid;
  await upload(b);
  // A budget of a cent: this month's 11,925 µ$ is 119 % of it.
  await f.stores.state.setTenantSettings('local', { monthly_budget_usd: 0.01 }, new Date().toISOString());
}, 60_000);

afterAll(async () => {
  await open.closeAll();
  await f?.close();
});

describe('cost on the board', () => {
  it('each row shows its list-price cost, tokens and unknown turns', async () => {
    const page = await boardPage();
    const claude = page.locator(`tr[data-sid="${claudeSid}"] td.cost`);
    await expect(claude.textContent()).resolves.toMatch(
      /\$0\.0072[\s\S]*5\.0k in · 200 out[\s\S]*1 of 2 turns unknown/,
    );
    const codex = page.locator(`tr[data-sid="${codexSid}"] td.cost`);
    await expect(codex.textContent()).resolves.toMatch(/\$0\.0047[\s\S]*3\.0k in · 300 out/);
    expect(await codex.textContent()).not.toMatch(/unknown/);
  });

  it('the tenant’s today and month, and the budget past 100 %', async () => {
    const page = await boardPage();
    const band = page.locator('section.usage-band');
    await expect(band.locator('[data-usage="today"]').textContent()).resolves.toMatch(/Today: \$0\.0119/);
    await expect(band.locator('[data-usage="month"]').textContent()).resolves.toMatch(
      /This month: \$0\.0119 .* 1 turn unknown/,
    );
    await expect(band.locator('[data-budget]').textContent()).resolves.toMatch(
      /\$0\.0119 of \$0\.0100 \(119 %\) — over budget/,
    );
    await expect(band.textContent()).resolves.toContain('@pydantic/genai-prices 0.1.8');
  });

  it('a person’s and an agent’s pages show only theirs', async () => {
    const priya = await boardPage('/people/priya');
    await expect(priya.locator('[data-usage="today"]').textContent()).resolves.toMatch(
      /Today \(this person\): \$0\.0072/,
    );
    const codex = await boardPage('/agents/codex');
    await expect(codex.locator('[data-usage="today"]').textContent()).resolves.toMatch(
      /Today \(this agent\): \$0\.0047/,
    );
  });

  it('the timeline shows each turn’s cost, and unknown where none was reported', async () => {
    const page = await boardPage(`/sessions/${claudeSid}`);
    // a turn's heading says its usage where the turn ends (a note between splits it into a continued box)
    const headings = (await page.locator('details.turn-box > summary').allTextContents()).filter((h) =>
      h.includes('ended completed'),
    );
    expect(headings, JSON.stringify(headings)).toHaveLength(2);
    expect(headings[0]).toMatch(/5\.0k in \(4\.0k cached\) · 200 out · \$0\.0072/);
    expect(headings[1]).toMatch(/usage unknown/);
  });

  it('nothing scrolls sideways on a phone', async () => {
    const page = await boardPage('/', 390);
    const { scrollWidth, clientWidth } = await page.evaluate(() => ({
      scrollWidth: document.documentElement.scrollWidth,
      clientWidth: document.documentElement.clientWidth,
    }));
    expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
  });
});

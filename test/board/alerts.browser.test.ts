/**
 * Alerts on the board (issue 28 item 5) in Debian's Chromium, real HTTP on loopback, the local stores (a
 * real SQLite file) and the alert worker driven pass by pass on a controllable clock, sending to two real
 * receivers on loopback (test/support/webhook-receiver.ts): one answering 204, one answering 500. The
 * alerts page shows each target (its URL masked after its first path word), its deliveries with their
 * statuses, attempts, last answer and next try, and its dead letters in red; "Send a test" queues a test
 * that the next pass delivers; a board viewer without the admin scope gets a page naming the command that
 * makes the token to ask for; a session's page lists the alerts it fired, without any target's URL; axe-core
 * finds no serious or critical violation, and nothing scrolls sideways at 390 px.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSecretSealer } from '../../lib/deploy/local-sealer.js';
import { newId } from '../../lib/log/index.js';
import { DEFAULT_ALERT_CONFIG } from '../../lib/service/alerts/deps.js';
import { AlertWorker } from '../../lib/service/alerts/worker.js';
import { mintToken } from '../../lib/service/index.js';
import { browsers } from '../support/browser.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';
import { type BoardFixture, startBoard } from './overview-fixture.js';

declare const document: { documentElement: { scrollWidth: number; clientWidth: number } };
declare function getComputedStyle(el: unknown): { color: string };
declare const axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: Violation[] }> };
interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** The clock of the server and the worker: real time plus what a test moved it on. */
let ahead = 0;
const now = () => new Date(Date.now() + ahead);
const sealer = new LocalSecretSealer(mkdtempSync(join(tmpdir(), 'hansard-alert-key-')));
// Retried for ten minutes (not a day), so that moving the clock eleven minutes makes a dead letter.
const config = { ...DEFAULT_ALERT_CONFIG, allowPrivateTargets: true, timeoutMs: 1_500, retryForMs: 600_000 };

let f: BoardFixture;
let boardAdmin = '';
let ok: WebhookReceiver;
let down: WebhookReceiver;
let worker: AlertWorker;
const targets = { team: '', flaky: '' };
const sids = { first: '', second: '', quiet: '', reportOnly: '' };
const open = browsers();

async function addTarget(json: Record<string, unknown>, rx: WebhookReceiver): Promise<string> {
  const res = await fetch(`${f.base}/v1/alerts`, {
    method: 'POST',
    headers: { authorization: `Bearer ${f.admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url: rx.url, ...json }),
  });
  const body = (await res.json()) as { id: string; secret: string };
  expect(res.status, JSON.stringify(body)).toBe(201);
  rx.secrets.push(body.secret);
  return body.id;
}

/** Passes of the worker until nothing is due (or 10 passes). */
async function drain(): Promise<void> {
  for (let k = 0; k < 10; k++) {
    const s = await worker.drainOnce();
    if (s.events === 0 && s.deliveries === 0) return;
  }
}

async function boardPage(path: string, token = boardAdmin, width = 1280): Promise<Page> {
  const ctx = await open.fresh({ width, height: 900 });
  await ctx.addCookies([{ name: 'hansard_board', value: token, url: f.base }]);
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  await page.goto(`${f.base}${path}`);
  return page;
}

beforeAll(async () => {
  f = await startBoard({ now, alerts: { sealer, config } });
  boardAdmin = (await mintToken(f.stores.state, 'local', { scopes: ['board', 'admin'] }, new Date())).token;
  ok = await startWebhookReceiver('/hook');
  // a Slack-like URL: its path after /services is a credential the board must not show
  down = await startWebhookReceiver('/services/T0001/B0002/s3cr3tPathToken');
  down.mode = 'fail';
  worker = new AlertWorker({ state: f.stores.state, segments: f.stores.segments, sealer, now, config });
  targets.team = await addTarget({ label: 'team channel', events: ['session.blocked'] }, ok);
  targets.flaky = await addTarget({ label: 'flaky receiver', agents: ['claude-code'] }, down);

  // The first session is blocked: the team channel gets it; the flaky receiver answers 500 until the
  // ten minutes are over, and its delivery goes to the dead letter.
  sids.first = await f.record('claude-code', 'priya', 'fix the parser');
  await f.report(sids.first, 'working', 'on it');
  await f.report(sids.first, 'blocked', 'waiting on CI');
  await drain();
  ahead += 11 * 60_000;
  await drain();
  // The second, blocked later: delivered to the team, pending (tried once, a next try) at the flaky one.
  // a session an agent reported on before anything of it was uploaded: only the team channel's rule
  // (no agents named) matches it
  sids.reportOnly = newId('s');
  await f.report(sids.reportOnly, 'blocked', 'stuck before the first upload');
  sids.second = await f.record('claude-code', 'ana', 'bump the dependencies');
  await f.report(sids.second, 'working', 'on it');
  await f.report(sids.second, 'blocked', 'needs a review of the lockfile');
  await drain();
  sids.quiet = await f.record('codex', 'ana', 'nothing to see');
}, 60_000);

afterAll(async () => {
  await open.closeAll();
  await ok?.close();
  await down?.close();
  await f?.close();
});

describe('the alerts page', () => {
  it('shows each target, its URL masked, and its deliveries with statuses, attempts and next try', async () => {
    const page = await boardPage('/alerts');
    const team = page.locator(`section[data-target="${targets.team}"]`);
    await expect(team.locator('h2').textContent()).resolves.toMatch(/team channel\s+no dead letters/);
    await expect(team.locator('code[data-url]').textContent()).resolves.toBe(ok.url);
    await expect(team.locator('dl').textContent()).resolves.toMatch(/Eventssession\.blocked.*Agentsany/);
    const teamRows = team.locator('table.deliveries tbody tr');
    await expect(teamRows.count()).resolves.toBe(3);
    for (const sid of [sids.first, sids.second, sids.reportOnly]) {
      const row = team.locator(`tbody tr:has(a[href="/sessions/${sid}"])`);
      await expect(row.getAttribute('data-status')).resolves.toBe('delivered');
      await expect(row.locator('.pill').textContent()).resolves.toBe('delivered');
      await expect(row.locator('td[data-label="Attempts"]').textContent()).resolves.toBe('1');
      await expect(row.locator('td[data-label="Last answer"]').textContent()).resolves.toBe('HTTP 204');
      await expect(row.locator('td[data-when] time').getAttribute('datetime')).resolves.toMatch(/^\d{4}-/);
    }

    const flaky = page.locator(`section[data-target="${targets.flaky}"]`);
    const port = new URL(down.url).port;
    await expect(flaky.locator('code[data-url]').textContent()).resolves.toBe(
      `http://127.0.0.1:${port}/services/…`,
    );
    expect(await page.content()).not.toContain('s3cr3tPathToken');
    // the dead letter counted, in red
    const dead = flaky.locator('.dead-count');
    await expect(dead.textContent()).resolves.toBe('1 dead letter');
    const colour = await dead.evaluate((el) => getComputedStyle(el).color);
    expect(colour).toBe('rgb(185, 28, 28)');
    const deadRow = flaky.locator(`tbody tr:has(a[href="/sessions/${sids.first}"])`);
    await expect(deadRow.locator('.pill').textContent()).resolves.toBe('dead letter');
    await expect(deadRow.locator('td[data-label="Last answer"]').textContent()).resolves.toMatch(/^HTTP 500/);
    expect(Number(await deadRow.locator('td[data-label="Attempts"]').textContent())).toBeGreaterThan(1);
    const pending = flaky.locator(`tbody tr:has(a[href="/sessions/${sids.second}"])`);
    await expect(pending.getAttribute('data-status')).resolves.toBe('pending');
    await expect(pending.locator('td[data-label="Attempts"]').textContent()).resolves.toBe('1');
    await expect(pending.locator('td[data-label="Last answer"]').textContent()).resolves.toMatch(
      /^HTTP 500: receiver down for a test$/,
    );
    // the next try: 15 to 30 s after the failed attempt (the first retry's wait, with jitter)
    const next = pending.locator('td[data-when] time');
    await expect(next.textContent()).resolves.toMatch(/^in \d+ s$/);
    const at = Date.parse((await next.getAttribute('datetime'))!);
    expect(at - now().getTime()).toBeGreaterThan(0);
    expect(at - now().getTime()).toBeLessThanOrEqual(30_000);
  });

  it('"Send a test" queues a test, says so, and the next pass delivers it', async () => {
    const page = await boardPage('/alerts');
    const team = page.locator(`section[data-target="${targets.team}"]`);
    await Promise.all([
      page.waitForURL(/\/alerts\?sent=/),
      team.locator('button', { hasText: 'Send a test' }).click(),
    ]);
    await expect(page.locator('p.flash').textContent()).resolves.toMatch(
      /A test event was queued for team channel/,
    );
    const before = ok.received.length;
    await drain();
    expect(ok.received.length).toBe(before + 1);
    const got = ok.received.at(-1)!;
    expect(got.error).toBeNull();
    expect((got.payload as { type: string }).type).toBe('alert.test');
    await page.reload();
    const row = page.locator(`section[data-target="${targets.team}"] tbody tr[data-event="${got.id}"]`);
    await expect(row.getAttribute('data-status')).resolves.toBe('delivered');
    await expect(row.locator('td[data-label="Event"] code').textContent()).resolves.toBe('alert.test');
    await expect(row.locator('td[data-label="Session"]').textContent()).resolves.toBe('tenant-wide');
    // the flaky target was not sent the test
    expect(down.received.some((r) => r.id === got.id)).toBe(false);
  });

  it('a board viewer without the admin scope gets a page naming the token to ask for, and no admin links', async () => {
    const page = await boardPage('/alerts', f.board);
    const res = await page.reload();
    expect(res?.status()).toBe(403);
    const text = (await page.locator('main').textContent()) ?? '';
    expect(text).toContain('hansard token create --scopes board,admin');
    expect(text).toMatch(/has board\b/);
    expect(await page.content()).not.toContain(targets.team);
    // the header links the admin pages for admins only (issue 29 item 4)
    await expect(page.locator('header nav a[href="/alerts"]').count()).resolves.toBe(0);
    await expect(page.locator('header').textContent()).resolves.toContain('Signed in with a link token');
  });
});

describe('a session page', () => {
  it('lists the alerts the session fired, without any target URL, to a board viewer', async () => {
    const page = await boardPage(`/sessions/${sids.first}`, f.board);
    const part = page.locator('details.side-part:has(#side-alerts)');
    const items = part.locator('ul.session-alerts li');
    await expect(items.count()).resolves.toBe(2);
    const texts = (await items.allTextContents()).sort();
    expect(texts[0]).toMatch(/^session\.blocked\s+dead letter\s+\d+ min ago$/);
    expect(texts[1]).toMatch(/^session\.blocked\s+delivered\s+\d+ min ago$/);
    const html = await page.content();
    for (const rx of [ok, down]) expect(html).not.toContain(new URL(rx.url).host);
    expect(html).not.toContain(targets.team);
  });

  it('lists them on the page of a session that has a status report and no upload yet', async () => {
    const page = await boardPage(`/sessions/${sids.reportOnly}`, f.board);
    await expect(page.locator('main').textContent()).resolves.toContain('nothing of it was uploaded');
    const items = page.locator('ul.session-alerts li');
    await expect(items.count()).resolves.toBe(1);
    await expect(items.first().textContent()).resolves.toMatch(/^session\.blocked\s+delivered\s+just now$/);
  });

  it('has no Alerts part when the session fired none', async () => {
    const page = await boardPage(`/sessions/${sids.quiet}`, f.board);
    await expect(page.locator('#side-status').count()).resolves.toBe(1);
    await expect(page.locator('#side-alerts').count()).resolves.toBe(0);
  });
});

describe('accessibility and narrow screens', () => {
  for (const [path, label] of [
    ['/alerts', 'the alerts page'],
    ['/sessions/FIRST', 'a session page with alerts'],
  ] as const) {
    for (const scheme of ['light', 'dark'] as const) {
      for (const width of [1280, 390]) {
        it(`${label}: no serious or critical axe-core violation, no sideways scroll (${scheme}, ${width} px)`, async () => {
          const page = await boardPage(path.replace('FIRST', sids.first), boardAdmin, width);
          await page.emulateMedia({ colorScheme: scheme });
          await page.evaluate(AXE);
          const { violations } = await page.evaluate(() =>
            axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }),
          );
          const bad = violations
            .filter((v) => v.impact === 'serious' || v.impact === 'critical')
            .map(
              (v) =>
                `${v.id} (${v.impact}): ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`,
            );
          expect(bad).toEqual([]);
          const { scrollWidth, clientWidth } = await page.evaluate(() => ({
            scrollWidth: document.documentElement.scrollWidth,
            clientWidth: document.documentElement.clientWidth,
          }));
          expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
        });
      }
    }
  }
});

/**
 * The board in a real browser: Debian's Chromium driven by playwright-core against the app served on
 * loopback with the local stores. Sign-in by link and by form, the cookie's flags, the board and a
 * session's timeline, sign-out, and a token without the board scope; a board link opened from another
 * site (served as `localhost`, another site than `127.0.0.1`) asks to confirm instead of signing in
 * (issue 8.6). Needs /usr/bin/chromium (`pretest` installs it: scripts/ensure-chromium.mjs).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ServerType, serve } from '@hono/node-server';
import type { BrowserContext } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalStores } from '../../lib/deploy/local.js';
import { createApp } from '../../lib/http/app.js';
import { openSession } from '../../lib/log/index.js';
import { ensureTenant, mintToken } from '../../lib/service/index.js';
import type { Stores } from '../../lib/store/index.js';
import { browsers } from '../support/browser.js';

const SCREENSHOT = fileURLToPath(new URL('../../.test-results/board.png', import.meta.url));
const MESSAGE = 'restart the payments worker';
const OUTPUT = 'The payments worker restarted cleanly.';
const NOTE = 'waiting for review';

let tmp: string;
let stores: Stores;
let server: ServerType;
let base: string;
/** another site, linking to the board link: `http://localhost:<port>` */
let elsewhere: Server;
let elsewhereBase: string;
let sid: string;
let boardToken: string;
let ingestToken: string;
const open = browsers();

/** A new browser context with its own empty storage (no cookies), closed in afterAll. */
function freshContext(): Promise<BrowserContext> {
  return open.fresh({ width: 1100, height: 700 });
}

async function api(method: string, path: string, token: string, body: Uint8Array | string, type: string) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': type },
    body,
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res;
}

beforeAll(async () => {
  tmp = mkdtempSync(join(tmpdir(), 'hansard-browser-'));
  stores = openLocalStores(join(tmp, 'data'));
  const now = new Date();
  const admin = await ensureTenant(stores.state, 'local', now);
  if (!admin) throw new Error('tenant local already existed');
  boardToken = (await mintToken(stores.state, 'local', { scopes: ['board'] }, now)).token;
  ingestToken = (await mintToken(stores.state, 'local', { scopes: ['ingest'] }, now)).token;
  const reportToken = (await mintToken(stores.state, 'local', { scopes: ['report'] }, now)).token;

  const app = createApp({ ...stores, log: () => {} });
  server = await new Promise<ServerType>((resolve) => {
    const s = serve({ fetch: app.fetch, hostname: '127.0.0.1', port: 0 }, () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // Another site: a page that loads the board link as an image and links to it.
  elsewhere = createServer((_req, res) => {
    const link = `${base}/?token=${boardToken}`;
    res.writeHead(200, { 'content-type': 'text/html' });
    res.end(`<!doctype html><img id="pixel" src="${link}"><a id="go" href="${link}">see the board</a>`);
  });
  await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
  elsewhereBase = `http://localhost:${(elsewhere.address() as AddressInfo).port}`;

  // A recorded session, uploaded as one chunk, and an agent's status report for it.
  const s = openSession(join(tmp, 'sessions'), { agent: 'test-agent', host: 'test-host' });
  sid = s.sid;
  const m = s.message({ user_id: 'priya', text: MESSAGE });
  const t = s.turnStart({ context_message_ids: [m.id] });
  s.output({ turn_id: t.id, text: OUTPUT });
  s.turnEnd({ turn_id: t.id, status: 'completed' });
  s.end();
  await api(
    'POST',
    `/v1/sessions/${sid}/writers/${s.w}/chunks?offset=0`,
    admin.token,
    readFileSync(s.path),
    'application/x-ndjson',
  );
  await api(
    'POST',
    `/v1/sessions/${sid}/status`,
    reportToken,
    JSON.stringify({ state: 'blocked', note: NOTE }),
    'application/json',
  );
}, 60_000);

afterAll(async () => {
  await open.closeAll();
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  await new Promise<void>((resolve) => (elsewhere ? elsewhere.close(() => resolve()) : resolve()));
  await stores?.state.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe('the board in Chromium', () => {
  let signedIn: BrowserContext;

  it('signs in with the board link, drops the token from the address, and shows the session', async () => {
    signedIn = await freshContext();
    const page = signedIn.pages()[0] ?? (await signedIn.newPage());
    await page.goto(`${base}/?token=${boardToken}`);
    expect(page.url()).toBe(`${base}/`);

    const cookies = await signedIn.cookies(base);
    const cookie = cookies.find((c) => c.name === 'hansard_board');
    expect(cookie).toBeDefined();
    expect(cookie!.httpOnly).toBe(true);
    expect(cookie!.sameSite).toBe('Strict');
    expect(cookie!.path).toBe('/');

    const row = page.locator(`tr[data-sid="${sid}"]`);
    await expect(row.getByRole('link', { name: sid }).textContent()).resolves.toContain(sid);
    // a blocked row's badge is the state; since when is beside the reason (issue 14.1)
    expect(await row.locator('.state').textContent()).toBe('blocked');
    expect(await row.textContent()).toContain('Blocked since');
    expect(await row.textContent()).toContain(NOTE);
    expect(await row.textContent()).toContain('test-agent');

    mkdirSync(dirname(SCREENSHOT), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
  });

  it('asks to confirm a board link followed from another site, and its button signs in', async () => {
    const ctx = await freshContext();
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    // The image's request is made (its answer, an HTML page, is blocked as an image); `goto` waits for it.
    const pixel = page.waitForRequest((r) => r.url().startsWith(`${base}/?token=`));
    await page.goto(`${elsewhereBase}/`);
    await pixel;
    const signedIn = async () => (await ctx.cookies(base)).some((c) => c.name === 'hansard_board');
    expect(await signedIn()).toBe(false);

    await page.click('a#go');
    await page.waitForLoadState();
    expect(page.url()).toBe(`${base}/?token=${boardToken}`);
    expect(await page.textContent('body')).toContain(
      'This link signs this browser in to the board of tenant local',
    );
    expect(await signedIn()).toBe(false);

    await page.getByRole('button', { name: 'Sign in to local' }).click();
    await page.waitForURL(`${base}/`);
    expect(await signedIn()).toBe(true);
    expect(await page.locator(`tr[data-sid="${sid}"]`).count()).toBe(1);
  });

  it('opens the session timeline from the board', async () => {
    const page = signedIn.pages()[0]!;
    await page.getByRole('link', { name: sid }).click();
    await page.waitForURL(`${base}/sessions/${sid}`);
    const timeline = await page.locator('ol.tl').first().textContent();
    expect(timeline).toContain(MESSAGE);
    expect(timeline).toContain(OUTPUT);
    expect(await page.locator('.state').first().textContent()).toBe('blocked');
    expect(await page.textContent('body')).toContain(NOTE);
    await page.screenshot({ path: SCREENSHOT.replace('board.png', 'session.png'), fullPage: true });
  });

  it('sends a browser without the cookie to sign in, refuses a wrong token, and signs in with the right one', async () => {
    const ctx = await freshContext();
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    await page.goto(`${base}/`);
    expect(page.url()).toBe(`${base}/login`);

    await page.fill('input[name="token"]', `hns_${'x'.repeat(43)}`);
    await page.click('button[type="submit"]');
    await page.waitForLoadState();
    expect(await page.locator('.error').textContent()).toContain('not valid');
    expect((await ctx.cookies(base)).some((c) => c.name === 'hansard_board')).toBe(false);

    await page.fill('input[name="token"]', boardToken);
    await page.click('button[type="submit"]');
    await page.waitForURL(`${base}/`);
    expect(await page.locator(`tr[data-sid="${sid}"]`).count()).toBe(1);
  });

  it('signs out back to sign-in, after which the board redirects again', async () => {
    const page = signedIn.pages()[0]!;
    await page.goto(`${base}/`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    // the sign-in page says the browser was signed out (issue 29)
    await page.waitForURL(`${base}/login?signed_out=1`);
    expect((await signedIn.cookies(base)).some((c) => c.name === 'hansard_board')).toBe(false);
    await page.goto(`${base}/`);
    expect(page.url()).toBe(`${base}/login`);
    // a page other than `/` is carried to sign-in as `next` (lib/http/auth.ts signInLocation)
    await page.goto(`${base}/sessions/${sid}`);
    expect(page.url()).toBe(`${base}/login?next=${encodeURIComponent(`/sessions/${sid}`)}`);
  });

  it('refuses a token without the board scope on the sign-in form', async () => {
    const ctx = await freshContext();
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    await page.goto(`${base}/login`);
    await page.fill('input[name="token"]', ingestToken);
    await page.click('button[type="submit"]');
    await page.waitForLoadState();
    expect(await page.locator('.error').textContent()).toContain('needs the board scope');
    expect((await ctx.cookies(base)).some((c) => c.name === 'hansard_board')).toBe(false);
    await page.goto(`${base}/`);
    expect(page.url()).toBe(`${base}/login`);
  });
});

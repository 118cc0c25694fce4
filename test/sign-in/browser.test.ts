/**
 * Team sign-in in a real browser (issue 29 "Done when"): Debian's Chromium (playwright-core) against the
 * app on loopback and a real OpenID provider (`oidc-provider`, test/support/oidc-provider.ts). A person
 * signs in from the board's sign-in page through the provider's login form; the header names them and
 * their role; a member sees no admin pages; a refused person gets the page that says why; the session is
 * renewed while used, survives a key rotation and ends when idle; signing out goes through the provider's
 * logout; another site's form cannot sign anyone out; a tampered cookie signs nobody in; a flow finished at
 * another tenant's provider signs nobody in. axe-core finds no serious violation on the signed-in and
 * refused pages. The app's clock is ours (`skew`).
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LocalSecretSealer, SIGN_IN_SEALING } from '../../lib/deploy/local-sealer.js';
import { SESSION_COOKIE } from '../../lib/service/sign-in/cookie.js';
import { DEFAULT_SIGN_IN_CONFIG } from '../../lib/service/sign-in/deps.js';
import { forgetProviders } from '../../lib/service/sign-in/provider.js';
import { browsers } from '../support/browser.js';
import { type OidcProvider, startOidcProvider } from '../support/oidc-provider.js';
import { useServer } from '../support/server.js';

declare const axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: Violation[] }> };
declare const document: unknown;
interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const sealer = new LocalSecretSealer(
  mkdtempSync(join(tmpdir(), 'hansard-sign-in-browser-')),
  SIGN_IN_SEALING,
);
let skew = 0;
const HOUR = 3_600_000;
const srv = useServer({
  tenants: ['acme', 'globex'],
  deps: { signIn: { sealer, config: DEFAULT_SIGN_IN_CONFIG }, now: () => new Date(Date.now() + skew) },
});
const open = browsers();

let p1: OidcProvider;
let p2: OidcProvider;
/** Another site: a page whose form posts to the board's /logout (on `localhost`, another site than 127.0.0.1). */
let evil: Server;
let evilUrl = '';
const ACCOUNTS = [
  { sub: 'u-lead', email: 'lead@acme.test', name: 'Lee Lead', groups: ['eng-leads'] },
  { sub: 'u-dev', email: 'dev@acme.test', name: 'Dee Dev', groups: ['eng'] },
  { sub: 'u-out', email: 'out@acme.test', name: 'Otto Out', groups: ['sales'] },
];

beforeAll(async () => {
  p1 = await startOidcProvider({ accounts: ACCOUNTS, autoConfirmLogout: false });
  p2 = await startOidcProvider({ accounts: ACCOUNTS });
  const redirect = `${srv.url}/login/oidc/callback`;
  const logout = `${srv.url}/login?signed_out=1`;
  await p1.setClient({
    client_id: 'acme',
    client_secret: 'p1-secret',
    redirect_uris: [redirect],
    post_logout_redirect_uris: [logout],
  });
  await p2.setClient({
    client_id: 'globex',
    client_secret: 'p2-secret',
    redirect_uris: [redirect],
    post_logout_redirect_uris: [logout],
  });
  evil = createServer((_req, res) => {
    res.setHeader('content-type', 'text/html');
    res.end(
      `<!doctype html><form id="f" method="post" action="${srv.url}/logout"><input name="csrf" value="guess"></form>` +
        '<script>document.getElementById("f").submit()</script>',
    );
  });
  await new Promise<void>((r) => evil.listen(0, 'localhost', r));
  evilUrl = `http://localhost:${(evil.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await open.closeAll();
  await p1?.stop();
  await p2?.stop();
  await new Promise((r) => evil?.close(r));
});

beforeEach(async () => {
  skew = 0;
  forgetProviders();
  for (const [tenant, p, id, secret] of [
    ['acme', p1, 'acme', 'p1-secret'],
    ['globex', p2, 'globex', 'p2-secret'],
  ] as const) {
    await srv.stores.state.putOidcSettings({
      tenant,
      issuer: p.issuer,
      client_id: id,
      client_secret_sealed: await sealer.seal(tenant, secret),
      allowed_domains: ['acme.test'],
      groups_claim: 'groups',
      role_map: { 'eng-leads': 'admin', eng: 'member' },
      default_role: null,
      updated_at: new Date().toISOString(),
      updated_by: 'token:test',
      generation: 'g1',
    });
  }
});

/** Signs `email` in to `tenant` from the board's sign-in page, as a person would. */
async function signIn(page: Page, email: string, tenant = 'acme') {
  await page.goto(`${srv.url}/login`);
  await page.fill('form.oidc input[name="tenant"]', tenant);
  await page.click('form.oidc button[type="submit"]');
  await page.fill('#email', email);
  await page.click('#sign-in');
  await page.waitForLoadState('load');
}

async function sessionCookie(page: Page) {
  return (await page.context().cookies(srv.url)).find((c) => c.name === SESSION_COOKIE);
}

async function seriousViolations(page: Page): Promise<string[]> {
  await page.evaluate(AXE);
  const { violations } = await page.evaluate(() =>
    axe.run(document, { runOnly: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] }),
  );
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

describe('signing in with the organisation’s provider', () => {
  it('signs an admin in: the header names them and their role, and links the admin pages', async () => {
    const page = await (await open.fresh()).newPage();
    await signIn(page, 'lead@acme.test');
    expect(new URL(page.url()).pathname).toBe('/');
    await expect(page.textContent('.who-am-i')).resolves.toMatch(/Signed in as\s+Lee Lead\s+\(admin\)/);
    expect(await page.locator('nav.board-nav a').allTextContents()).toEqual(['Alerts', 'Audit', 'Tokens']);
    const cookie = await sessionCookie(page);
    expect(cookie?.httpOnly).toBe(true);
    expect(cookie?.sameSite).toBe('Lax');
    expect(await seriousViolations(page)).toEqual([]);
    await page.goto(`${srv.url}/audit`);
    expect(await page.textContent('body')).not.toMatch(/sign in/i);
  });

  it('gives a member the board without the admin pages', async () => {
    const page = await (await open.fresh()).newPage();
    await signIn(page, 'dev@acme.test');
    await expect(page.textContent('.who-am-i')).resolves.toMatch(/\(member\)/);
    expect(await page.locator('nav.board-nav').count()).toBe(0);
    const res = await page.goto(`${srv.url}/tokens`);
    expect(res?.status()).toBe(403);
  });

  it('refuses a person no group maps, with a page that says why and whom to ask', async () => {
    const page = await (await open.fresh()).newPage();
    await signIn(page, 'out@acme.test');
    const text = (await page.textContent('main')) ?? '';
    expect(text).toMatch(/out@acme\.test/);
    expect(text).toMatch(/none of their groups is mapped/);
    expect(text).toMatch(/eng-leads/);
    expect(await sessionCookie(page)).toBeUndefined();
    expect(await seriousViolations(page)).toEqual([]);
  });

  it("a flow finished at another tenant's provider signs nobody in", async () => {
    const page = await (await open.fresh()).newPage();
    // acme's flow begins (its flow cookie is set), but the browser is sent to globex's provider
    const toP1 = await page.request.get(`${srv.url}/login/oidc?tenant=acme`, {
      maxRedirects: 0,
      headers: { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' },
    });
    const url = new URL(toP1.headers().location!);
    const toP2 = new URL(`${p2.issuer}/auth`);
    for (const [k, v] of url.searchParams) toP2.searchParams.set(k, v);
    toP2.searchParams.set('client_id', 'globex');
    await page.goto(toP2.href);
    await page.fill('#email', 'dev@acme.test');
    await page.click('#sign-in');
    await page.waitForLoadState('load');
    expect(new URL(page.url()).pathname).toBe('/login/oidc/callback');
    expect(await page.textContent('main')).toMatch(/did not|failed/i);
    expect(await sessionCookie(page)).toBeUndefined();
  });
});

describe('a signed-in browser', () => {
  it('is renewed while used, survives a key rotation, and is signed out when idle', async () => {
    const page = await (await open.fresh()).newPage();
    // shortly before the app's day (its cookie key period) ends
    const day = 86_400_000;
    const toBoundary = day - (Date.now() % day);
    skew = toBoundary - 30 * 60_000;
    await signIn(page, 'dev@acme.test');
    const first = (await sessionCookie(page))!.value;
    skew = toBoundary + 60_000;
    await page.goto(`${srv.url}/`);
    await expect(page.textContent('.who-am-i')).resolves.toMatch(/Dee Dev/);
    const renewed = (await sessionCookie(page))!.value;
    expect(renewed).not.toBe(first);
    const kid = (v: string) => Number(JSON.parse(Buffer.from(v.split('.')[0]!, 'base64url').toString()).kid);
    expect(kid(renewed)).toBe(kid(first) + 1);
    // 4 hours without a request: signed out, sent to sign in
    skew = toBoundary + 60_000 + 4 * HOUR + 60_000;
    await page.goto(`${srv.url}/`);
    expect(new URL(page.url()).pathname).toBe('/login');
  });

  it('treats a tampered cookie as no sign-in', async () => {
    const ctx = await open.fresh();
    const page = await ctx.newPage();
    await signIn(page, 'dev@acme.test');
    const c = (await sessionCookie(page))!;
    const parts = c.value.split('.');
    const ct = Buffer.from(parts[3]!, 'base64url');
    ct[ct.length - 1] = ct[ct.length - 1]! ^ 0x20;
    parts[3] = ct.toString('base64url');
    await ctx.addCookies([{ ...c, value: parts.join('.') }]);
    await page.goto(`${srv.url}/`);
    expect(new URL(page.url()).pathname).toBe('/login');
  });

  it("cannot be signed out by another site's form, nor by a form without the token", async () => {
    const page = await (await open.fresh()).newPage();
    await signIn(page, 'dev@acme.test');
    const before = (await sessionCookie(page))!.value;
    const attack = await page.context().newPage();
    const answer = attack.waitForResponse((r) => r.url() === `${srv.url}/logout`);
    await attack.goto(evilUrl);
    expect((await answer).status()).toBe(403);
    // a same-origin post without the form token: refused too
    const bare = await page.evaluate(async () => {
      const r = await fetch('/logout', { method: 'POST', body: new URLSearchParams({ csrf: 'guess' }) });
      return r.status;
    });
    expect(bare).toBe(403);
    await page.goto(`${srv.url}/`);
    await expect(page.textContent('.who-am-i')).resolves.toMatch(/Dee Dev/);
    expect((await sessionCookie(page))?.value).toBe(before);
  });

  it("signs out through the provider's logout, and the old cookie opens nothing after", async () => {
    const ctx = await open.fresh();
    const page = await ctx.newPage();
    await signIn(page, 'dev@acme.test');
    const copy = (await sessionCookie(page))!;
    await page.click('form.sign-out button');
    // the provider asks to confirm its own sign-out
    await page.click('#sign-out');
    await page.waitForLoadState('load');
    expect(page.url()).toBe(`${srv.url}/login?signed_out=1`);
    expect(await sessionCookie(page)).toBeUndefined();
    await ctx.addCookies([copy]);
    await page.goto(`${srv.url}/`);
    expect(new URL(page.url()).pathname).toBe('/login');
  });
});

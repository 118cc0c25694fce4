/**
 * Who is signed in, and the admin pages, in Debian's Chromium (issue 29 item 4): real HTTP on loopback,
 * the local stores (a real SQLite file) and a real OpenID provider on loopback (oidc-provider,
 * test/support/oidc-provider.ts) for the person's sign-in.
 *
 * A browser signed in with a link token says so in the header, and its "Sign out" signs it out (the
 * sign-in page then says so); the same form posted without its form token is refused (403) and the
 * browser stays signed in. A person signed in through their organisation is named with their role, their
 * "Mine" link opens their sessions (one linked id; a list for several; the command to ask for with none).
 * An admin's header links the alerts, audit and tokens pages, which a board viewer is refused; revoking a
 * token on the tokens page revokes it (the API then refuses it) and the audit list names the token that
 * did it, from the board. axe-core finds no serious or critical violation on the sign-in, audit and
 * tokens pages and on an admin page's refusal, light and dark, and nothing scrolls sideways at 390 px;
 * the audit list keeps each action's name on one line (`oidc.set`, never `oidc.se` over `t`) beside long
 * details, at 1280, 720 and 390 px.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { ulid } from 'ulid';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalSecretSealer, SIGN_IN_SEALING } from '../../lib/deploy/local-sealer.js';
import { mintToken } from '../../lib/service/index.js';
import { DEFAULT_SIGN_IN_CONFIG } from '../../lib/service/sign-in/deps.js';
import { browsers } from '../support/browser.js';
import { type OidcProvider, startOidcProvider } from '../support/oidc-provider.js';
import { type BoardFixture, startBoard } from './overview-fixture.js';

declare const document: {
  documentElement: { scrollWidth: number; clientWidth: number };
  querySelector(s: string): { remove(): void } | null;
};
declare const axe: { run(ctx: unknown, opts: unknown): Promise<{ violations: Violation[] }> };
interface Violation {
  id: string;
  impact: string | null;
  help: string;
  nodes: { target: string[] }[];
}
const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

const sealer = new LocalSecretSealer(mkdtempSync(join(tmpdir(), 'hansard-sign-in-ui-')), SIGN_IN_SEALING);
const ACCOUNTS = [
  { sub: 'u-lead', email: 'lead@acme.test', name: 'Lee Lead', groups: ['eng-leads'] },
  { sub: 'u-dev', email: 'dev@acme.test', name: 'Dee Dev', groups: ['eng'] },
  { sub: 'u-new', email: 'new@acme.test', groups: ['eng'] },
];

let f: BoardFixture;
let op: OidcProvider;
let boardAdmin = '';
let boardAdminId = '';
const sids = { dev: '', devCi: '', lead: '', other: '' };
const open = browsers();

/** A fresh browser signed in with `token` as the link does, on `path`. */
async function withToken(token: string, path: string, width = 1280): Promise<Page> {
  const ctx = await open.fresh({ width, height: 900 });
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  await page.goto(`${f.base}/?token=${token}`);
  await page.goto(`${f.base}${path}`);
  return page;
}

/**
 * A fresh browser signed in as `email` through the provider's login form, started as the sign-in page's
 * organisation form starts it (`GET /login/oidc?tenant=`; the form itself: its own test below).
 */
async function asPerson(email: string, width = 1280): Promise<Page> {
  const ctx = await open.fresh({ width, height: 900 });
  const page = ctx.pages()[0] ?? (await ctx.newPage());
  await page.goto(`${f.base}/login/oidc?tenant=local`);
  await providerLogin(page, email);
  return page;
}

/** Signs in at the provider's login page as `email`, back to the board's first page. */
async function providerLogin(page: Page, email: string): Promise<void> {
  await page.waitForURL((u) => u.href.startsWith(op.issuer));
  await page.locator('#email').fill(email);
  await Promise.all([page.waitForURL(`${f.base}/`), page.locator('#sign-in').click()]);
}

const boardCookie = async (ctx: BrowserContext) =>
  (await ctx.cookies(f.base)).some((c) => c.name === 'hansard_board');

beforeAll(async () => {
  f = await startBoard({ signIn: { sealer, config: DEFAULT_SIGN_IN_CONFIG } });
  const m = await mintToken(
    f.stores.state,
    'local',
    { scopes: ['board', 'admin'], label: 'ui admin' },
    new Date(),
  );
  boardAdmin = m.token;
  boardAdminId = m.record.id;
  // the provider's sign-out confirmation submits itself: a sign-out comes back to the board at once
  op = await startOidcProvider({ accounts: ACCOUNTS, autoConfirmLogout: true });
  await op.setClient({
    client_id: 'local-board',
    client_secret: 'local-secret',
    redirect_uris: [`${f.base}/login/oidc/callback`],
    post_logout_redirect_uris: [`${f.base}/login?signed_out=1`],
  });
  await f.stores.state.putOidcSettings({
    tenant: 'local',
    issuer: op.issuer,
    client_id: 'local-board',
    client_secret_sealed: await sealer.seal('local', 'local-secret'),
    allowed_domains: ['acme.test'],
    groups_claim: 'groups',
    role_map: { 'eng-leads': 'admin', eng: 'member' },
    default_role: null,
    updated_at: new Date().toISOString(),
    updated_by: 'token:test',
    generation: 'g1',
  });
  // Audit entries as an admin's settings and people changes write them: long details beside short names.
  const at = new Date();
  for (const [action, target, detail] of [
    [
      'oidc.set',
      '',
      `issuer ${op.issuer}/tenants/0f3c2a1e-5b7d-4c1a-9e8f-1234567890ab/v2.0, client local-board, domains acme.test, role map eng-leads=admin eng=member, groups claim groups`,
    ],
    ['person.set', 'a.very.long.address.of.someone@engineering.acme.test', 'role admin, linked lee, dee-ci'],
  ] as const) {
    await f.stores.state.appendAudit({
      tenant: 'local',
      id: `au_${ulid(at.getTime())}`,
      at: at.toISOString(),
      actor: { kind: 'person', email: 'lead@acme.test' },
      action,
      target,
      detail,
      via: 'api',
      expires_at: new Date(at.getTime() + 400 * 86_400_000).toISOString(),
    });
  }
  sids.dev = await f.record('claude-code', 'dee', 'fix the flaky test');
  sids.devCi = await f.record('codex', 'dee-ci', 'nightly build');
  sids.lead = await f.record('claude-code', 'lee', 'review the release notes');
  sids.other = await f.record('claude-code', 'priya', 'someone else entirely');
  // Dee is linked to two person ids, Lee to one, the newcomer to none.
  for (const [email, ids] of [
    ['dev@acme.test', ['dee', 'dee-ci']],
    ['lead@acme.test', ['lee']],
  ] as const) {
    const res = await fetch(`${f.base}/v1/people/${encodeURIComponent(email)}`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${f.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ link: ids }),
    });
    expect(res.status, await res.text()).toBeLessThan(300);
  }
}, 60_000);

afterAll(async () => {
  await open.closeAll();
  await op?.stop();
  await f?.close();
});

describe('a browser signed in with a link token', () => {
  it('says so in the header, and "Sign out" signs it out', async () => {
    const page = await withToken(f.board, '/');
    await expect(page.locator('header .who-am-i').textContent()).resolves.toBe('Signed in with a link token');
    const csrf = await page.locator('header form[action="/logout"] input[name="csrf"]').getAttribute('value');
    expect(csrf).toMatch(/^[\w-]{43}$/);
    // a board viewer is no admin: no links to the admin pages
    await expect(page.locator('header nav[aria-label="admin pages"]').count()).resolves.toBe(0);
    expect(await boardCookie(page.context())).toBe(true);
    await Promise.all([page.waitForURL(/\/login/), page.getByRole('button', { name: 'Sign out' }).click()]);
    await expect(page.locator('main').textContent()).resolves.toContain('You are signed out.');
    expect(await boardCookie(page.context())).toBe(false);
    const back = await page.goto(`${f.base}/`);
    expect(new URL(back!.url()).pathname).toBe('/login');
  });

  it('is refused (403) a sign-out form without its form token, and stays signed in', async () => {
    const page = await withToken(f.board, '/');
    await page.evaluate(() =>
      document.querySelector('header form[action="/logout"] input[name="csrf"]')?.remove(),
    );
    const [res] = await Promise.all([
      page.waitForResponse((r) => r.url().endsWith('/logout')),
      page.getByRole('button', { name: 'Sign out' }).click(),
    ]);
    expect(res.status()).toBe(403);
    expect(await boardCookie(page.context())).toBe(true);
    const again = await page.goto(`${f.base}/`);
    expect(again!.status()).toBe(200);
    await expect(page.locator('header .who-am-i').textContent()).resolves.toBe('Signed in with a link token');
  });
});

describe('a person signed in through their organisation', () => {
  it('is named with their role, and their "Mine" link opens their sessions', async () => {
    const page = await asPerson('lead@acme.test');
    await expect(page.locator('header .who-am-i').textContent()).resolves.toBe(
      'Signed in as Lee Lead (admin)',
    );
    await expect(page.locator('header .who-am-i strong').getAttribute('title')).resolves.toBe(
      'lead@acme.test',
    );
    // an admin: the admin pages are linked
    await expect(page.locator('header nav[aria-label="admin pages"] a').allTextContents()).resolves.toEqual([
      'Alerts',
      'Audit',
      'Tokens',
    ]);
    await Promise.all([page.waitForURL(`${f.base}/people/lee`), page.locator('header a.mine').click()]);
    const main = (await page.locator('#overview').textContent()) ?? '';
    expect(main).toContain('review the release notes');
    expect(main).not.toContain('someone else entirely');
    // the person's form token signs them out: the board takes the form and ends the session (where the
    // browser goes next is the provider's logout: see the next case)
    const isLogout = (r: { url(): string }) => r.url() === `${f.base}/logout`;
    await Promise.all([
      Promise.race([
        page.waitForEvent('requestfinished', isLogout),
        page.waitForEvent('requestfailed', isLogout),
      ]),
      page.getByRole('button', { name: 'Sign out' }).click(),
    ]);
    // another tab of the same browser (this one may still be on its way through the provider)
    const tab = await page.context().newPage();
    const back = await tab.goto(`${f.base}/`);
    expect(new URL(back!.url()).pathname).toBe('/login');
  });

  // The sign-out form's answer cannot redirect to the provider (`form-action 'self'` binds redirects in
  // Chromium): the board answers a page that goes on by itself to the provider's end-session endpoint.
  it('a person’s "Sign out" goes through the provider and back to the sign-in page', async () => {
    const page = await asPerson('lead@acme.test');
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL(`${f.base}/login?signed_out=1`, { timeout: 5_000 });
    await expect(page.locator('main').textContent()).resolves.toContain('You are signed out.');
  });

  it('with several linked ids, lists each as a link; a member gets no admin links and a 403 page on each admin page', async () => {
    const page = await asPerson('dev@acme.test');
    await expect(page.locator('header .who-am-i').textContent()).resolves.toBe(
      'Signed in as Dee Dev (member)',
    );
    const links = page.locator('header ul.mine-ids a');
    await expect(links.allTextContents()).resolves.toEqual(['dee', 'dee-ci']);
    await expect(links.nth(1).getAttribute('href')).resolves.toBe('/people/dee-ci');
    await expect(page.locator('header nav[aria-label="admin pages"]').count()).resolves.toBe(0);
    for (const path of ['/tokens', '/audit', '/alerts']) {
      const res = await page.goto(`${f.base}${path}`);
      expect(res!.status(), path).toBe(403);
      const main = (await page.locator('main').textContent()) ?? '';
      expect(main, path).toContain('signed in with the role member');
      expect(main, path).toContain('hansard people role EMAIL admin');
      // the refusal is a signed-in page: the header still names them
      await expect(page.locator('header .who-am-i').textContent()).resolves.toBe(
        'Signed in as Dee Dev (member)',
      );
    }
  });

  // The same holds for the organisation form's GET /login/oidc: it answers a page that goes on to the
  // provider by itself (lib/http/routes/pages/oidc.tsx).
  it('signs in through the sign-in page’s organisation form, the tenant typed', async () => {
    const ctx = await open.fresh({ width: 1280, height: 900 });
    const page = ctx.pages()[0] ?? (await ctx.newPage());
    await page.goto(`${f.base}/login?next=%2Fpeople%2Flee`);
    await page.getByLabel('Tenant').fill('local');
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.waitForURL((u) => u.href.startsWith(op.issuer), { timeout: 5_000 });
    await page.locator('#email').fill('lead@acme.test');
    await Promise.all([page.waitForURL(`${f.base}/people/lee`), page.locator('#sign-in').click()]);
    await expect(page.locator('header .who-am-i').textContent()).resolves.toBe(
      'Signed in as Lee Lead (admin)',
    );
  });

  it('with no linked id, is told the command to ask an admin for', async () => {
    const page = await asPerson('new@acme.test');
    // no name from the provider: the email
    await expect(page.locator('header .who-am-i').textContent()).resolves.toBe(
      'Signed in as new@acme.test (member)',
    );
    await expect(page.locator('header .mine-hint code').textContent()).resolves.toBe(
      'hansard people link USER_ID new@acme.test',
    );
    await expect(page.locator('header a.mine').count()).resolves.toBe(0);
  });
});

describe('the admin pages', () => {
  it('are linked from an admin’s header, and refused to a board viewer with a page', async () => {
    const page = await withToken(boardAdmin, '/');
    await Promise.all([page.waitForURL(`${f.base}/audit`), page.locator('header a[href="/audit"]').click()]);
    await expect(page.locator('h1').textContent()).resolves.toContain('audit');
    await Promise.all([
      page.waitForURL(`${f.base}/tokens`),
      page.locator('header a[href="/tokens"]').click(),
    ]);
    await expect(page.locator(`tr[data-token="${boardAdminId}"]`).textContent()).resolves.toContain(
      "(this browser's sign-in)",
    );
    const viewer = await withToken(f.board, '/');
    for (const path of ['/audit', '/tokens']) {
      const res = await viewer.goto(`${f.base}${path}`);
      expect(res!.status()).toBe(403);
      await expect(viewer.locator('main').textContent()).resolves.toContain(
        'hansard token create --scopes board,admin',
      );
    }
  });

  it('revoke a token from the tokens page: the API refuses it, and the audit list names who did it', async () => {
    const victim = await mintToken(
      f.stores.state,
      'local',
      { scopes: ['read'], label: 'ci reader' },
      new Date(),
    );
    const self = () =>
      fetch(`${f.base}/v1/tokens/self`, { headers: { authorization: `Bearer ${victim.token}` } });
    expect((await self()).status).toBe(200);
    const page = await withToken(boardAdmin, '/tokens');
    const row = page.locator(`tr[data-token="${victim.record.id}"]`);
    await expect(row.getAttribute('data-state')).resolves.toBe('live');
    await Promise.all([
      page.waitForURL(/\/tokens\?revoked=/),
      row.getByRole('button', { name: `Revoke ${victim.record.id}` }).click(),
    ]);
    await expect(page.locator('p.flash').textContent()).resolves.toContain(
      `Token ${victim.record.id} was revoked`,
    );
    await expect(row.getAttribute('data-state')).resolves.toBe('revoked');
    await expect(row.locator('button').count()).resolves.toBe(0);
    expect((await self()).status).toBe(401);

    await Promise.all([page.waitForURL(`${f.base}/audit`), page.locator('header a[href="/audit"]').click()]);
    const entry = page.locator('tr[data-action="token.revoke"]', { hasText: victim.record.id });
    await expect(entry.count()).resolves.toBe(1);
    await expect(entry.locator('td[data-label="Who"]').textContent()).resolves.toBe(`token ${boardAdminId}`);
    await expect(entry.locator('td[data-label="Via"]').textContent()).resolves.toBe('board');
    await expect(entry.locator('td[data-label="When"] time').textContent()).resolves.toBe('just now');
  });
});

describe('accessibility and narrow screens', () => {
  const cases: [string, string, string | null][] = [
    ['/login?next=%2Ftokens&tenant=local', 'the sign-in page', null],
    ['/audit', 'the audit list', 'admin'],
    ['/tokens', 'the tokens page', 'admin'],
    ['/tokens', 'an admin page refused', 'viewer'],
  ];
  for (const [path, label, who] of cases) {
    for (const scheme of ['light', 'dark'] as const) {
      // the audit list also where it is still a table, at its narrowest (the phone layout starts at 700 px)
      for (const width of path === '/audit' ? [1280, 720, 390] : [1280, 390]) {
        it(`${label}: no serious or critical axe-core violation, no sideways scroll (${scheme}, ${width} px)`, async () => {
          let page: Page;
          if (who === null) {
            const ctx = await open.fresh({ width, height: 900 });
            page = ctx.pages()[0] ?? (await ctx.newPage());
            await page.goto(`${f.base}${path}`);
          } else {
            page = await withToken(who === 'admin' ? boardAdmin : f.board, path, width);
          }
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
          if (path === '/audit') {
            // an action's name stays whole (`oidc.set`, not `oidc.se` over `t`): one line box each
            const names = await page
              .locator('td[data-label="What"] code')
              .evaluateAll((els: { textContent: string | null; getClientRects(): { length: number } }[]) =>
                els.map((e) => ({ name: e.textContent, lines: e.getClientRects().length })),
              );
            expect(names.length).toBeGreaterThan(0);
            expect(names.filter((n) => n.lines !== 1)).toEqual([]);
          }
          await page.context().close();
        });
      }
    }
  }
});

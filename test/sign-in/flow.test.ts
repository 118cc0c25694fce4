/**
 * Team sign-in end to end over real HTTP on loopback (issue 29 items 1–3), without a browser: a real
 * OpenID provider (`oidc-provider`, test/support/oidc-provider.ts) and the app with the real SQLite store
 * and the local sealer; the fetch driver follows every redirect with a browser-like cookie jar. The app's
 * clock is ours (expiry, renewal and key rotation without waiting); the provider's is real.
 *
 * Covered: sign-in and role mapping, a refused person and whom they are told to ask, a change of role
 * taking effect at the next request, idle expiry, renewal and the absolute limit, key rotation, sign-out
 * (RP-initiated logout, a copied cookie opening nothing after, the form token), a tampered cookie, a flow
 * without its cookie, and a mix-up of two tenants' providers. The browser's view is ./browser.test.ts.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LocalSecretSealer, SIGN_IN_SEALING } from '../../lib/deploy/local-sealer.js';
import { formTokenOf } from '../../lib/http/form-token.js';
import { SESSION_COOKIE } from '../../lib/service/sign-in/cookie.js';
import { DEFAULT_SIGN_IN_CONFIG } from '../../lib/service/sign-in/deps.js';
import { forgetProviders } from '../../lib/service/sign-in/provider.js';
import type { StoredOidcSettings } from '../../lib/store/index.js';
import { CookieJar } from '../support/oidc-http.js';
import { type OidcProvider, startOidcProvider } from '../support/oidc-provider.js';
import { useServer } from '../support/server.js';

const sealer = new LocalSecretSealer(mkdtempSync(join(tmpdir(), 'hansard-sign-in-')), SIGN_IN_SEALING);
/** The app's clock: real time plus `skew` ms. */
let skew = 0;
const HOUR = 3_600_000;

const srv = useServer({
  tenants: ['acme', 'globex'],
  deps: { signIn: { sealer, config: DEFAULT_SIGN_IN_CONFIG }, now: () => new Date(Date.now() + skew) },
});

let p1: OidcProvider;
let p2: OidcProvider;
const ACCOUNTS = [
  { sub: 'u-lead', email: 'Lead@Acme.test', name: 'Lee Lead', groups: ['eng-leads', 'eng'] },
  { sub: 'u-dev', email: 'dev@acme.test', name: 'Dee Dev', groups: ['eng'] },
  { sub: 'u-out', email: 'out@acme.test', name: 'Otto', groups: ['sales'] },
  { sub: 'u-evil', email: 'evil@elsewhere.test', groups: ['eng-leads'] },
];

beforeAll(async () => {
  p1 = await startOidcProvider({ accounts: ACCOUNTS });
  p2 = await startOidcProvider({ accounts: ACCOUNTS });
  const redirect = `${srv.url}/login/oidc/callback`;
  const logout = `${srv.url}/login?signed_out=1`;
  await p1.setClient({
    client_id: 'acme-board',
    client_secret: 's1-secret',
    redirect_uris: [redirect],
    post_logout_redirect_uris: [logout],
  });
  await p2.setClient({
    client_id: 'globex-board',
    client_secret: 's2-secret',
    redirect_uris: [redirect],
    post_logout_redirect_uris: [logout],
  });
});
afterAll(async () => {
  await p1?.stop();
  await p2?.stop();
});

async function settings(
  tenant: string,
  p: OidcProvider,
  clientId: string,
  secret: string,
  more: Partial<StoredOidcSettings> = {},
) {
  await srv.stores.state.putOidcSettings({
    tenant,
    issuer: p.issuer,
    client_id: clientId,
    client_secret_sealed: await sealer.seal(tenant, secret),
    allowed_domains: ['acme.test'],
    groups_claim: 'groups',
    role_map: { 'eng-leads': 'admin', eng: 'member' },
    default_role: null,
    updated_at: new Date().toISOString(),
    updated_by: 'token:test',
    generation: 'g1',
    ...more,
  });
}

beforeEach(async () => {
  skew = 0;
  forgetProviders();
  await settings('acme', p1, 'acme-board', 's1-secret');
  await settings('globex', p2, 'globex-board', 's2-secret', {
    allowed_domains: [],
    role_map: {},
    default_role: 'viewer',
  });
  // A fresh person record for each case: no role of their own, no ended sessions.
  for (const email of ['lead@acme.test', 'dev@acme.test', 'out@acme.test']) {
    const rec = await srv.stores.state.getPerson('acme', email);
    if (rec)
      await srv.stores.state.putPerson(
        { ...rec, role: null, ended_sessions: [], sessions_valid_after: null, version: rec.version + 1 },
        rec.version,
      );
  }
});

/** What a browser sends for an address typed or pasted (Fetch Metadata): a sign-in the person started. */
const TYPED = { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };

/** Signs `email` in to `tenant` through its provider; the jar then holds the session cookie. */
async function signIn(p: OidcProvider, tenant: string, email: string, next = '/') {
  const jar = new CookieJar();
  const r = await p.signInHttp(
    `${srv.url}/login/oidc?tenant=${tenant}&next=${encodeURIComponent(next)}`,
    email,
    { jar },
  );
  return { ...r, jar };
}

/** GET `path` of the app with the jar's cookies, storing what it sets; no redirect followed. */
async function get(jar: CookieJar, path: string) {
  const url = `${srv.url}${path}`;
  const res = await fetch(url, { headers: { cookie: jar.header(url) }, redirect: 'manual' });
  jar.store(url, res.headers.getSetCookie());
  return {
    status: res.status,
    location: res.headers.get('location'),
    body: await res.text(),
    setCookie: res.headers.getSetCookie(),
  };
}

describe('signing in', () => {
  it('signs a person in with the role their groups map to, and shows who they are', async () => {
    const r = await signIn(p1, 'acme', 'lead@acme.test', '/alerts');
    // PKCE, state and nonce were sent; the browser lands on the page it asked for
    const auth = r.hops.find((h) => h.url.startsWith(p1.issuer) && h.url.includes('/auth'));
    expect(auth?.url).toMatch(/code_challenge_method=S256/);
    expect(auth?.url).toMatch(/[?&]state=/);
    expect(auth?.url).toMatch(/[?&]nonce=/);
    expect(r.url).toBe(`${srv.url}/alerts`);
    expect(r.response.status).toBe(200);
    const cookie = r.appCookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`))!;
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    // loopback http: not Secure (the only place it is off)
    expect(cookie).not.toMatch(/Secure/i);
    expect(r.body).toContain('lead@acme.test');
    // an admin: the admin pages open
    expect((await get(r.jar, '/audit')).status).toBe(200);
  });

  it('gives a member the board but not the admin pages', async () => {
    const r = await signIn(p1, 'acme', 'dev@acme.test');
    expect(r.response.status).toBe(200);
    expect((await get(r.jar, '/')).status).toBe(200);
    const alerts = await get(r.jar, '/alerts');
    expect(alerts.status).not.toBe(200);
  });

  it('refuses a person no group maps, saying why and whom to ask, and lists the refusal for admins', async () => {
    // an admin named on a record: the refused page names them
    const lead = await srv.stores.state.getPerson('acme', 'lead@acme.test');
    if (lead)
      await srv.stores.state.putPerson({ ...lead, role: 'admin', version: lead.version + 1 }, lead.version);
    const r = await signIn(p1, 'acme', 'out@acme.test');
    expect(r.response.status).toBe(403);
    expect(r.body).toContain('out@acme.test');
    expect(r.body).toMatch(/none of their groups is mapped/);
    expect(r.body).toContain('lead@acme.test');
    expect(r.body).toContain('eng-leads');
    expect(r.appCookies.some((c) => c.startsWith(`${SESSION_COOKIE}=`) && !/Max-Age=0/i.test(c))).toBe(false);
    const audit = await srv.stores.state.listAudit('acme', { limit: 10 });
    expect(audit.items.some((e) => e.action === 'sign-in.refused' && e.target === 'out@acme.test')).toBe(
      true,
    );
  });

  it('refuses an email outside the allowed domains even in a mapped group', async () => {
    const r = await signIn(p1, 'acme', 'evil@elsewhere.test');
    expect(r.response.status).toBe(403);
    expect(r.body).toMatch(/not at a domain/);
  });

  it('takes a role change at the next request: removed, then mapped again after signing in', async () => {
    const r = await signIn(p1, 'acme', 'dev@acme.test');
    expect((await get(r.jar, '/')).status).toBe(200);
    const rec = (await srv.stores.state.getPerson('acme', 'dev@acme.test'))!;
    await srv.stores.state.putPerson({ ...rec, role: 'none', version: rec.version + 1 }, rec.version);
    const refused = await get(r.jar, '/');
    expect(refused.status).toBe(403);
    expect(refused.body).toMatch(/removed/);
    // promoted by the role map: the admin page opens at the next request, with no new sign-in
    const r2 = await signIn(p1, 'acme', 'lead@acme.test');
    expect((await get(r2.jar, '/audit')).status).toBe(200);
    await settings('acme', p1, 'acme-board', 's1-secret', { role_map: { 'eng-leads': 'viewer' } });
    expect((await get(r2.jar, '/audit')).status).not.toBe(200);
    expect((await get(r2.jar, '/')).status).toBe(200);
  });
});

describe('the session cookie', () => {
  it('is renewed while used, ends when idle, and ends at the absolute limit', async () => {
    const r = await signIn(p1, 'acme', 'dev@acme.test');
    const first = r.jar.get(SESSION_COOKIE, srv.url);
    skew = 5 * 60_000;
    expect((await get(r.jar, '/')).setCookie.some((c) => c.startsWith(SESSION_COOKIE))).toBe(false);
    skew = 20 * 60_000;
    const renewed = await get(r.jar, '/');
    expect(renewed.status).toBe(200);
    expect(renewed.setCookie.some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(true);
    expect(r.jar.get(SESSION_COOKIE, srv.url)).not.toBe(first);
    // used every 3 hours: still in at 11 h 20 min; past 12 h from sign-in, over
    for (const h of [3, 6, 9, 11]) {
      skew = h * HOUR + 20 * 60_000;
      expect((await get(r.jar, '/')).status).toBe(200);
    }
    skew = 12 * HOUR + 60_000;
    const ended = await get(r.jar, '/');
    expect(ended.status).toBe(302);
    expect(ended.location).toMatch(/^\/login/);
    // idle: a copy of the first cookie, 4 h 1 min unused, opens nothing
    const idle = new CookieJar();
    idle.store(srv.url, [`${SESSION_COOKIE}=${first}; Path=/`]);
    skew = 4 * HOUR + 60_000;
    expect((await get(idle, '/')).status).toBe(302);
  });

  it('survives a key rotation (renewed under the new key) and refuses a key two periods old', async () => {
    // sign in shortly before the day's key period ends (the app's clock), then cross it
    const day = 86_400_000;
    const toBoundary = day - (Date.now() % day);
    skew = toBoundary - 10 * 60_000;
    const r = await signIn(p1, 'acme', 'dev@acme.test');
    const before = r.jar.get(SESSION_COOKIE, srv.url)!;
    const kid = (v: string) =>
      JSON.parse(Buffer.from(v.split('.')[0]!, 'base64url').toString()).kid as string;
    skew = toBoundary + 60_000;
    const after = await get(r.jar, '/');
    expect(after.status).toBe(200);
    const now = r.jar.get(SESSION_COOKIE, srv.url)!;
    expect(Number(kid(now))).toBe(Number(kid(before)) + 1);
    // the old cookie, presented 2 periods on: refused (its key no longer opens)
    const stale = new CookieJar();
    stale.store(srv.url, [`${SESSION_COOKIE}=${before}; Path=/`]);
    skew = toBoundary + day + 60_000;
    expect((await get(stale, '/')).status).toBe(302);
  });

  it('treats a tampered cookie as no sign-in', async () => {
    const r = await signIn(p1, 'acme', 'dev@acme.test');
    const v = r.jar.get(SESSION_COOKIE, srv.url)!;
    const parts = v.split('.');
    const ct = Buffer.from(parts[3]!, 'base64url');
    ct[0] = ct[0]! ^ 1;
    parts[3] = ct.toString('base64url');
    const bad = new CookieJar();
    bad.store(srv.url, [`${SESSION_COOKIE}=${parts.join('.')}; Path=/`]);
    const page = await get(bad, '/');
    expect(page.status).toBe(302);
    expect(page.location).toMatch(/^\/login/);
    // and the API's cookie routes answer 401, not a page
    expect((await get(bad, '/v1/board')).status).toBe(401);
  });
});

describe('signing out', () => {
  it('needs the form token, ends the session for good, and sends the browser to the provider', async () => {
    const r = await signIn(p1, 'acme', 'dev@acme.test');
    const copy = r.jar.get(SESSION_COOKIE, srv.url)!;
    const post = async (csrf: string | null) => {
      const url = `${srv.url}/logout`;
      return fetch(url, {
        method: 'POST',
        redirect: 'manual',
        headers: {
          cookie: r.jar.header(url),
          origin: srv.url,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: csrf === null ? '' : new URLSearchParams({ csrf }).toString(),
      });
    };
    expect((await post(null)).status).toBe(403);
    expect((await post('not-the-token')).status).toBe(403);
    expect((await get(r.jar, '/')).status).toBe(200);
    // the page's form carries the token: take it from the page as a browser would
    const page = await get(r.jar, '/');
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1];
    expect(csrf).toBeTruthy();
    const out = await post(csrf!);
    // a page that goes on to the provider's end-session endpoint (a form's redirect may not leave the origin)
    expect(out.status).toBe(200);
    expect(out.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=;`))).toBe(true);
    const refresh = /http-equiv="refresh" content="0;url=([^"]+)"/
      .exec(await out.text())?.[1]
      ?.replace(/&amp;/g, '&');
    expect(refresh).toMatch(new RegExp(`^${p1.issuer}/`));
    expect(refresh).toMatch(/post_logout_redirect_uri=/);
    // a copy of the cookie taken before opens nothing now
    const replay = new CookieJar();
    replay.store(srv.url, [`${SESSION_COOKIE}=${copy}; Path=/`]);
    expect((await get(replay, '/')).status).toBe(302);
    // an unrelated form token never matches (the token is keyed by the session's secret id)
    expect(formTokenOf('session:x')).not.toBe(csrf);
  });
});

describe('flows that must not sign anyone in', () => {
  it('a callback without the flow cookie (expired, or another browser) gets a page that says to start again', async () => {
    const r = await signIn(p1, 'acme', 'dev@acme.test');
    const cb = r.hops.find((h) => h.url.startsWith(`${srv.url}/login/oidc/callback`))!;
    const res = await fetch(cb.url, { redirect: 'manual', headers: TYPED });
    expect(res.status).toBe(400);
    expect(await res.text()).toMatch(/start again/i);
  });

  it("a mix-up: a flow begun for acme finished with globex's provider signs nobody in", async () => {
    // acme's flow is begun in this jar; its authorization URL is swapped for globex's provider (same
    // redirect URI): the callback carries p2's code and iss, which acme's flow must refuse
    const jar = new CookieJar();
    const start = await fetch(`${srv.url}/login/oidc?tenant=acme`, { redirect: 'manual', headers: TYPED });
    jar.store(srv.url, start.headers.getSetCookie());
    const toP1 = new URL(start.headers.get('location')!);
    expect(toP1.origin).toBe(new URL(p1.issuer).origin);
    const toP2 = new URL(`${p2.issuer}/auth`);
    for (const [k, v] of toP1.searchParams) toP2.searchParams.set(k, v);
    toP2.searchParams.set('client_id', 'globex-board');
    const r = await p2.signInHttp(toP2.href, 'dev@acme.test', { jar });
    expect(r.url).toMatch(/\/login\/oidc\/callback/);
    expect(r.response.status).toBe(502);
    // refused for the response's issuer (RFC 9207), before any code is exchanged at acme's provider
    expect(r.body).toMatch(/unexpected &quot;iss&quot; \(issuer\) response parameter/);
    expect(r.appCookies.some((c) => c.startsWith(`${SESSION_COOKIE}=`) && !/Max-Age=0/i.test(c))).toBe(false);
    expect(jar.get(SESSION_COOKIE, srv.url)).toBeUndefined();
  });

  it('a mix-up with providers that send no iss: the code is only ever exchanged at the flow tenant’s provider, which refuses it', async () => {
    const q1 = await startOidcProvider({ accounts: ACCOUNTS, issInAuthResponse: false });
    const q2 = await startOidcProvider({ accounts: ACCOUNTS, issInAuthResponse: false });
    try {
      const redirect = `${srv.url}/login/oidc/callback`;
      await q1.setClient({ client_id: 'acme-board', client_secret: 'q1-secret', redirect_uris: [redirect] });
      await q2.setClient({
        client_id: 'globex-board',
        client_secret: 'q2-secret',
        redirect_uris: [redirect],
      });
      await settings('acme', q1, 'acme-board', 'q1-secret');
      const jar = new CookieJar();
      const start = await fetch(`${srv.url}/login/oidc?tenant=acme`, { redirect: 'manual', headers: TYPED });
      jar.store(srv.url, start.headers.getSetCookie());
      const toQ2 = new URL(`${q2.issuer}/auth`);
      for (const [k, v] of new URL(start.headers.get('location')!).searchParams) toQ2.searchParams.set(k, v);
      toQ2.searchParams.set('client_id', 'globex-board');
      const r = await q2.signInHttp(toQ2.href, 'dev@acme.test', { jar });
      expect(r.url).toMatch(/\/login\/oidc\/callback/);
      expect(r.url).not.toMatch(/[?&]iss=/);
      expect(r.response.status).toBe(502);
      expect(r.body).toMatch(/invalid_grant|grant/);
      expect(jar.get(SESSION_COOKIE, srv.url)).toBeUndefined();
    } finally {
      await q1.stop();
      await q2.stop();
    }
  });

  it("a person of one tenant never reads another's board", async () => {
    const r = await signIn(p2, 'globex', 'dev@acme.test');
    expect(r.response.status).toBe(200);
    const board = await get(r.jar, '/v1/board');
    expect(board.status).toBe(200);
    expect(JSON.parse(board.body).tenant ?? 'globex').toBe('globex');
  });

  it('an unknown tenant and a tenant without sign-in get the same answer', async () => {
    await srv.stores.state.deleteOidcSettings('globex');
    const a = await fetch(`${srv.url}/login/oidc?tenant=globex`, { redirect: 'manual', headers: TYPED });
    const b = await fetch(`${srv.url}/login/oidc?tenant=nosuchtenant`, {
      redirect: 'manual',
      headers: TYPED,
    });
    expect(a.status).toBe(404);
    expect(b.status).toBe(404);
    expect((await a.text()).replace(/globex/g, 'X')).toBe((await b.text()).replace(/nosuchtenant/g, 'X'));
  });
});

/**
 * What an attacker of team sign-in tried (issue 29's attack review), each now refused, over real HTTP on
 * loopback against a real OpenID provider (test/support/oidc-provider.ts) and the app with a real SQLite
 * store: sessions that outlive a removal, login CSRF, identity look-alikes and unverified emails, group
 * names that are object properties, cookies too long to set, a provider error shown without its state, the
 * refused page naming admins to outsiders, a flood of refusals in the audit list, and the issuer and its
 * endpoints as a way into private addresses (SSRF).
 */
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { LocalSecretSealer, SIGN_IN_SEALING } from '../../lib/deploy/local-sealer.js';
import { FLOW_COOKIE, MAX_COOKIE_CHARS, SESSION_COOKIE } from '../../lib/service/sign-in/cookie.js';
import { DEFAULT_SIGN_IN_CONFIG } from '../../lib/service/sign-in/deps.js';
import { forgetProviders } from '../../lib/service/sign-in/provider.js';
import { CookieJar } from '../support/oidc-http.js';
import { type OidcProvider, startOidcProvider } from '../support/oidc-provider.js';
import { startServer, type TestServer, useServer } from '../support/server.js';

const sealer = new LocalSecretSealer(
  mkdtempSync(join(tmpdir(), 'hansard-sign-in-attacks-')),
  SIGN_IN_SEALING,
);
const srv = useServer({
  tenants: ['acme'],
  deps: { signIn: { sealer, config: DEFAULT_SIGN_IN_CONFIG } },
  // a provider refused (a 502 the server logs as a failed dependency) is what two cases provoke
  mayLog: /provider_unavailable/,
});
const TYPED = { 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' };

let p: OidcProvider;
const many = Array.from({ length: 300 }, (_, i) => `a-rather-long-group-name-number-${i}`);
beforeAll(async () => {
  p = await startOidcProvider({
    accounts: [
      { sub: 'kate', email: 'kate@acme.test', groups: ['eng'] },
      { sub: 'dev', email: 'dev@acme.test', groups: ['eng'] },
      { sub: 'kelvin', email: '\u212Aate@acme.test', groups: [] },
      { sub: 'unverified', email: 'unv@acme.test', email_verified: 'false' as never, groups: ['eng'] },
      { sub: 'proto', email: 'proto@acme.test', groups: ['__proto__', 'constructor', 'toString'] },
      { sub: 'big', email: 'big@acme.test', name: '\u0007'.repeat(200), groups: [...many, 'eng'] },
      { sub: 'out', email: 'out@elsewhere.test', groups: ['eng'] },
    ],
  });
  await p.setClient({
    client_id: 'acme',
    client_secret: 'secret-1',
    redirect_uris: [`${srv.url}/login/oidc/callback`],
    post_logout_redirect_uris: [`${srv.url}/login?signed_out=1`],
  });
});
afterAll(() => p?.stop());

/** The tenant's settings through its admin API (so a removal and a new set go through the service). */
async function setSettings(more: Record<string, unknown> = {}) {
  const res = await fetch(`${srv.url}/v1/tenants/acme/oidc?check=0`, {
    method: 'PUT',
    headers: { authorization: `Bearer ${srv.tenant.admin}`, 'content-type': 'application/json' },
    body: JSON.stringify({
      issuer: p.issuer,
      client_id: 'acme',
      client_secret: 'secret-1',
      allowed_domains: ['acme.test'],
      role_map: { eng: 'member' },
      ...more,
    }),
  });
  return { status: res.status, body: await res.text() };
}
const admin = (method: string, path: string, json?: unknown) =>
  fetch(`${srv.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${srv.tenant.admin}`, 'content-type': 'application/json' },
    ...(json === undefined ? {} : { body: JSON.stringify(json) }),
  });

beforeEach(async () => {
  forgetProviders();
  expect((await setSettings()).status).toBe(200);
});

async function signIn(email: string, next = '/') {
  const jar = new CookieJar();
  const r = await p.signInHttp(`${srv.url}/login/oidc?tenant=acme&next=${encodeURIComponent(next)}`, email, {
    jar,
  });
  return { ...r, jar, cookie: jar.get(SESSION_COOKIE, srv.url) };
}
async function get(cookie: string | undefined, path = '/') {
  const res = await fetch(`${srv.url}${path}`, {
    redirect: 'manual',
    headers: cookie ? { cookie: `${SESSION_COOKIE}=${cookie}` } : {},
  });
  return { status: res.status, location: res.headers.get('location'), body: await res.text() };
}

describe('sessions end for good', () => {
  it('a removed person stays signed out when their role comes back: their old cookie opens nothing', async () => {
    const r = await signIn('dev@acme.test');
    expect((await get(r.cookie)).status).toBe(200);
    expect((await admin('PUT', '/v1/people/dev@acme.test', { role: 'none' })).status).toBe(200);
    // removed: the session is over at once (and signing in again is refused, 403)
    expect((await get(r.cookie)).status).toBe(302);
    expect((await signIn('dev@acme.test')).response.status).toBe(403);
    expect((await admin('PUT', '/v1/people/dev@acme.test', { role: null })).status).toBe(200);
    const after = await get(r.cookie);
    expect(after.status).toBe(302);
    expect(after.location).toMatch(/^\/login\?.*ended=1/);
    // signing in again works
    expect((await get((await signIn('dev@acme.test')).cookie)).status).toBe(200);
  });

  it('sign-in removed and set again (the same issuer) ends every session made before; a change of role map does not', async () => {
    const r = await signIn('dev@acme.test');
    expect((await setSettings({ role_map: { eng: 'member', leads: 'admin' } })).status).toBe(200);
    expect((await get(r.cookie)).status).toBe(200);
    expect((await admin('DELETE', '/v1/tenants/acme/oidc')).status).toBe(204);
    expect((await setSettings()).status).toBe(200);
    expect((await get(r.cookie)).status).toBe(302);
  });
});

describe('login CSRF', () => {
  it('another site cannot start a sign-in in a visitor’s browser: it gets a page to confirm, no flow', async () => {
    for (const site of ['cross-site', 'same-site', undefined]) {
      const res = await fetch(`${srv.url}/login/oidc?tenant=acme`, {
        redirect: 'manual',
        headers: site ? { 'sec-fetch-site': site } : {},
      });
      expect(res.status).toBe(200);
      expect(res.headers.getSetCookie().some((c) => c.startsWith(FLOW_COOKIE))).toBe(false);
      expect(await res.text()).toMatch(/Another page sent you here to sign in to tenant acme/);
    }
    const typed = await fetch(`${srv.url}/login/oidc?tenant=acme`, { redirect: 'manual', headers: TYPED });
    expect(typed.status).toBe(302);
  });
});

describe('who a person is', () => {
  it('refuses an email that is not printable ASCII (the Kelvin sign would fold into kate)', async () => {
    const r = await signIn('\u212Aate@acme.test');
    expect(r.response.status).toBe(400);
    expect(r.body).toMatch(/printable ASCII/);
    expect(r.cookie).toBeUndefined();
  });

  it('refuses an email the provider does not say is verified, whatever the spelling', async () => {
    const r = await signIn('unv@acme.test');
    expect(r.response.status).toBe(400);
    expect(r.body).toMatch(/does not say unv@acme\.test is verified/);
  });

  it('a group named like an object property maps to nothing: refused, never a 500', async () => {
    const r = await signIn('proto@acme.test');
    expect(r.response.status).toBe(403);
    expect(r.body).toMatch(/none of their groups is mapped/);
  });

  it('an outsider refused for their domain is told no admin’s address, and a loop of refusals is one audit entry', async () => {
    expect((await admin('PUT', '/v1/people/kate@acme.test', { role: 'admin' })).status).toBe(200);
    const before = (await srv.stores.state.listAudit('acme', { limit: 1000 })).items.filter(
      (e) => e.action === 'sign-in.refused' && e.target === 'out@elsewhere.test',
    ).length;
    const r = await signIn('out@elsewhere.test');
    expect(r.response.status).toBe(403);
    expect(r.body).not.toContain('kate@acme.test');
    for (let i = 0; i < 5; i++) expect((await signIn('out@elsewhere.test')).response.status).toBe(403);
    const after = (await srv.stores.state.listAudit('acme', { limit: 1000 })).items.filter(
      (e) => e.action === 'sign-in.refused' && e.target === 'out@elsewhere.test',
    ).length;
    expect(after - before).toBeLessThanOrEqual(1);
  });
});

describe('cookies that would not fit', () => {
  it('a next full of quotes does not make the flow cookie too long: the sign-in goes on, back to the board', async () => {
    const next = `/${'"'.repeat(2000)}`;
    const res = await fetch(`${srv.url}/login/oidc?tenant=acme&next=${encodeURIComponent(next)}`, {
      redirect: 'manual',
      headers: TYPED,
    });
    expect(res.status).toBe(302);
    const flow = res.headers.getSetCookie().find((c) => c.startsWith(`${FLOW_COOKIE}=`))!;
    expect(flow.split(';')[0]!.length).toBeLessThan(MAX_COOKIE_CHARS + 30);
  });

  it('a person with a long name and hundreds of groups signs in, their mapped group kept', async () => {
    const r = await signIn('big@acme.test');
    expect(r.response.status).toBe(200);
    expect(r.cookie!.length).toBeLessThanOrEqual(MAX_COOKIE_CHARS);
    expect((await get(r.cookie)).body).toContain('(member)');
  });
});

describe('the provider’s answer', () => {
  it('an error answer whose state is not the flow’s is not shown', async () => {
    const jar = new CookieJar();
    const start = await fetch(`${srv.url}/login/oidc?tenant=acme`, { redirect: 'manual', headers: TYPED });
    jar.store(srv.url, start.headers.getSetCookie());
    const res = await fetch(
      `${srv.url}/login/oidc/callback?error=access_denied&error_description=${encodeURIComponent('Call IT on +1 555 0100 now')}&state=NOT-IT`,
      { headers: { cookie: jar.header(`${srv.url}/login/oidc/callback`) } },
    );
    expect(res.status).toBe(400);
    const text = await res.text();
    expect(text).not.toContain('555 0100');
    expect(text).toMatch(/not for the sign-in under way/);
  });

  it('a wrong client secret says so', async () => {
    expect((await setSettings({ client_secret: 'not-the-secret' })).status).toBe(200);
    const r = await signIn('dev@acme.test');
    expect(r.response.status).toBe(502);
    expect(r.body).toMatch(/client credentials .*check the client id and secret/);
  });
});

describe('the issuer is no way into private addresses', () => {
  let strict: TestServer;
  let fake: Server;
  let fakeUrl = '';
  beforeAll(async () => {
    strict = await startServer({
      signIn: { sealer, config: { ...DEFAULT_SIGN_IN_CONFIG, allowPrivateIssuers: false } },
    });
    // a "provider" on loopback whose discovery names a token endpoint at the metadata service
    fake = createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(
        JSON.stringify({
          issuer: fakeUrl,
          authorization_endpoint: `${fakeUrl}/auth`,
          token_endpoint: 'http://169.254.169.254/latest/meta-data/iam',
          jwks_uri: `${fakeUrl}/jwks`,
          response_types_supported: ['code'],
          subject_types_supported: ['public'],
          id_token_signing_alg_values_supported: ['RS256'],
        }),
      );
      void req;
    });
    await new Promise<void>((r) => fake.listen(0, '127.0.0.1', r));
    fakeUrl = `http://127.0.0.1:${(fake.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await strict?.close();
    await new Promise((r) => fake?.close(r));
  });

  it('a deployment that refuses private issuers refuses a loopback one at set time, naming the address', async () => {
    const { ensureTenant } = await import('../../lib/service/tenants/bootstrap.js');
    const made = await ensureTenant(strict.stores.state, 'acme', new Date());
    const res = await fetch(`${strict.url}/v1/tenants/acme/oidc`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${made!.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ issuer: p.issuer, client_id: 'acme', client_secret: 'x' }),
    });
    expect(res.status).toBe(502);
    expect(await res.text()).toMatch(/127\.0\.0\.1, a loopback, link-local or private address/);
  });

  it('a discovery document may not send the client secret to plain http elsewhere', async () => {
    const res = await admin('PUT', '/v1/tenants/acme/oidc', {
      issuer: fakeUrl,
      client_id: 'acme',
      client_secret: 'x',
    });
    expect(res.status).toBe(502);
    expect(await res.text()).toMatch(/token_endpoint hansard does not call: http:\/\/169\.254\.169\.254/);
  });

  it('refuses issuers with a user name, a discovery path, or Microsoft’s multi-tenant directories', async () => {
    for (const issuer of [
      'https://user:pw@idp.example',
      'https://idp.example/.well-known/openid-configuration',
      'https://login.microsoftonline.com/common/v2.0',
      'https://login.microsoftonline.com/organizations/v2.0',
    ]) {
      const res = await admin('PUT', '/v1/tenants/acme/oidc?check=0', {
        issuer,
        client_id: 'acme',
        client_secret: 'x',
      });
      expect(res.status, issuer).toBe(400);
    }
  });
});

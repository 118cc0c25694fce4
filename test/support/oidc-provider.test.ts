/**
 * The test provider of issue 29 (test/support/oidc-provider.ts) against the relying party the app uses,
 * openid-client v6, unchanged: discovery, an authorization URL with PKCE, state and nonce, the login driven
 * over plain fetch (and in Chromium) to a redirect URI served by a node:http server here, the code
 * exchanged for an ID token carrying email and groups, and RP-initiated logout. Real HTTP on loopback.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { browsers } from './browser.js';
import { CookieJar } from './oidc-http.js';
import { type OidcAccount, type OidcProvider, startOidcProvider } from './oidc-provider.js';

const ann: OidcAccount = {
  sub: 'ann-1',
  email: 'ann@example.com',
  name: 'Ann Lee',
  groups: ['eng', 'eng-leads'],
};
const bob: OidcAccount = { sub: 'bob-2', email: 'bob@example.com', email_verified: false, groups: [] };

/** The relying party's loopback side: `/cb` answers 200 and sets a cookie, `/signed-out` answers 200. */
let rp: Server;
let rpBase = '';
let op: OidcProvider;
let config: client.Configuration;
const open = browsers();

beforeAll(async () => {
  rp = createServer((req, res) => {
    const path = new URL(req.url ?? '/', rpBase).pathname;
    if (path === '/cb') res.setHeader('set-cookie', 'rp_session=opaque; Path=/; HttpOnly; SameSite=Lax');
    res.writeHead(path === '/cb' || path === '/signed-out' ? 200 : 404, { 'content-type': 'text/plain' });
    res.end(path);
  });
  await new Promise<void>((resolve) => rp.listen(0, '127.0.0.1', resolve));
  rpBase = `http://127.0.0.1:${(rp.address() as AddressInfo).port}`;
  op = await startOidcProvider({
    clients: [
      {
        client_id: 'board',
        client_secret: 'board-secret-0123456789abcdef0123456789',
        redirect_uris: [`${rpBase}/cb`],
        post_logout_redirect_uris: [`${rpBase}/signed-out`],
      },
    ],
    accounts: [ann, bob],
  });
  config = await discover(op, 'board');
});

afterAll(async () => {
  await open.closeAll();
  await op?.stop();
  rp?.closeAllConnections();
  await new Promise((resolve) => rp?.close(resolve));
});

async function discover(p: OidcProvider, clientId: string): Promise<client.Configuration> {
  const c = p.clients.find((x) => x.client_id === clientId)!;
  return client.discovery(new URL(p.issuer), clientId, undefined, client.ClientSecretBasic(c.client_secret), {
    execute: [client.allowInsecureRequests],
  });
}

/** An authorization request as the app makes it, with the checks it keeps for the callback. */
async function authorization(cfg: client.Configuration, scope = 'openid email profile') {
  const verifier = client.randomPKCECodeVerifier();
  const state = client.randomState();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(cfg, {
    redirect_uri: `${rpBase}/cb`,
    scope,
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  const exchange = (callback: string) =>
    client.authorizationCodeGrant(cfg, new URL(callback), {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
  return { url, state, exchange };
}

const loginPosts = (hops: { method: string; url: string }[]) =>
  hops.filter((h) => h.method === 'POST' && /\/interaction\/[\w-]+\/login$/.test(h.url)).length;

describe('the test OpenID provider', () => {
  it('publishes a discovery document a conforming client reads: code flow, S256, end session, iss', async () => {
    const meta = config.serverMetadata();
    expect(meta.issuer).toBe(op.issuer);
    expect(op.issuer).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(meta.end_session_endpoint).toBe(`${op.issuer}/session/end`);
    expect(meta.code_challenge_methods_supported).toEqual(['S256']);
    expect(meta.response_types_supported).toEqual(['code']);
    expect(meta.authorization_response_iss_parameter_supported).toBe(true);
    expect(meta.claims_supported).toEqual(
      expect.arrayContaining(['email', 'email_verified', 'name', 'groups']),
    );
  });

  it('signs in over plain fetch to the loopback redirect URI; the code gives an ID token with email and groups', async () => {
    const auth = await authorization(config);
    const done = await op.signInHttp(auth.url.href, 'ann@example.com');
    expect(done.response.status).toBe(200);
    const callback = new URL(done.url);
    expect(callback.origin + callback.pathname).toBe(`${rpBase}/cb`);
    expect(callback.searchParams.get('state')).toBe(auth.state);
    expect(callback.searchParams.get('iss')).toBe(op.issuer);
    expect(done.appCookies).toEqual(['rp_session=opaque; Path=/; HttpOnly; SameSite=Lax']);
    expect(loginPosts(done.hops)).toBe(1);

    const tokens = await auth.exchange(done.url);
    expect(tokens.claims()).toMatchObject({
      iss: op.issuer,
      aud: 'board',
      sub: 'ann-1',
      email: 'ann@example.com',
      email_verified: true,
      name: 'Ann Lee',
      groups: ['eng', 'eng-leads'],
    });
  });

  it('refuses an authorization request without PKCE, back at the redirect URI with invalid_request', async () => {
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: `${rpBase}/cb`,
      scope: 'openid email',
      state: 'no-pkce',
    });
    const done = await op.signInHttp(url.href, 'ann@example.com');
    const callback = new URL(done.url);
    expect(callback.searchParams.get('error')).toBe('invalid_request');
    expect(callback.searchParams.get('error_description')).toMatch(/PKCE/);
    expect(loginPosts(done.hops)).toBe(0);
  });

  it('stops on its login page, saying why, for an email it has no account for', async () => {
    const auth = await authorization(config);
    const done = await op.signInHttp(auth.url.href, 'nobody@example.com');
    expect(new URL(done.url).pathname).toMatch(/^\/interaction\/[\w-]+\/login$/);
    expect(done.body).toContain('No account for nobody@example.com.');
    expect(done.appCookies).toEqual([]);
  });

  it("keeps the provider's session in the jar: a second sign-in skips the login and sees changed groups", async () => {
    const jar = new CookieJar();
    const first = await authorization(config);
    await op.signInHttp(first.url.href, 'bob@example.com', { jar });
    op.setAccount({ ...bob, groups: ['viewers'] });
    const second = await authorization(config);
    const done = await op.signInHttp(second.url.href, 'bob@example.com', { jar });
    expect(loginPosts(done.hops)).toBe(0);
    const claims = (await second.exchange(done.url)).claims();
    expect(claims).toMatchObject({ sub: 'bob-2', email_verified: false, groups: ['viewers'] });
    op.setAccount(bob);
  });

  it('ends the session at the end-session URL, back at the post-logout URI; the next sign-in asks again', async () => {
    const jar = new CookieJar();
    const auth = await authorization(config);
    const signedIn = await op.signInHttp(auth.url.href, 'ann@example.com', { jar });
    const idToken = (await auth.exchange(signedIn.url)).id_token!;
    const end = client.buildEndSessionUrl(config, {
      id_token_hint: idToken,
      post_logout_redirect_uri: `${rpBase}/signed-out`,
      state: 'bye',
    });
    const out = await op.signOutHttp(end.href, { jar });
    expect(out.url).toBe(`${rpBase}/signed-out?state=bye`);
    expect(out.hops.some((h) => h.method === 'POST' && h.url === `${op.issuer}/session/end/confirm`)).toBe(
      true,
    );

    const again = await authorization(config);
    const done = await op.signInHttp(again.url.href, 'ann@example.com', { jar });
    expect(loginPosts(done.hops)).toBe(1);
  });

  it("drives an app that is a function (a Lambda handler's way): its redirects and cookies, from its sign-in route", async () => {
    const app = 'http://board.test';
    await op.setClient({
      client_id: 'fn-app',
      client_secret: 'fn-app-secret-0123456789abcdef01234567',
      redirect_uris: [`${app}/cb`],
    });
    const cfg = await discover(op, 'fn-app');
    let pending: Awaited<ReturnType<typeof authorization>> | undefined;
    const seen: string[] = [];
    // The app: /sign-in sends to the provider; /cb exchanges the code and sets its cookie; / wants it.
    const fetchApp = async (req: Request): Promise<Response> => {
      const url = new URL(req.url);
      seen.push(`${req.method} ${url.pathname} cookie=${req.headers.get('cookie') ?? ''}`);
      if (url.pathname === '/sign-in') {
        pending = await authorization(cfg, 'openid email profile');
        const to = pending.url;
        to.searchParams.set('redirect_uri', `${app}/cb`);
        return new Response(null, { status: 302, headers: { location: to.href } });
      }
      if (url.pathname === '/cb') {
        const email = String((await pending!.exchange(url.href)).claims()!.email);
        const headers = new Headers({ location: '/' });
        headers.append('set-cookie', `board_session=${encodeURIComponent(email)}; Path=/; HttpOnly`);
        return new Response(null, { status: 303, headers });
      }
      const who = /board_session=([^;]+)/.exec(req.headers.get('cookie') ?? '')?.[1];
      return new Response(who ? `hello ${decodeURIComponent(who)}` : 'who are you?', {
        status: who ? 200 : 401,
      });
    };
    const done = await op.signInHttp(`${app}/sign-in`, 'ann@example.com', { fetchApp });
    expect(done.url).toBe(`${app}/`);
    expect(done.body).toBe('hello ann@example.com');
    expect(done.appCookies).toEqual(['board_session=ann%40example.com; Path=/; HttpOnly']);
    // The provider's cookies (host 127.0.0.1) never went to the app's host.
    expect(seen.filter((s) => /(?:=|; )_(?:session|interaction)/.test(s))).toEqual([]);
    expect(seen.map((s) => s.split(' ')[1])).toEqual(['/sign-in', '/cb', '/']);
  });

  it('signs in and out in Chromium: #email, #sign-in, then #sign-out on the confirmation page', async () => {
    const ctx = await open.fresh();
    const page = await ctx.newPage();
    const auth = await authorization(config);
    await page.goto(auth.url.href);
    await page.fill('#email', 'ann@example.com');
    await Promise.all([page.waitForURL(`${rpBase}/cb?**`), page.click('#sign-in')]);
    const tokens = await auth.exchange(page.url());
    expect(tokens.claims()).toMatchObject({ email: 'ann@example.com', groups: ['eng', 'eng-leads'] });

    const end = client.buildEndSessionUrl(config, {
      id_token_hint: tokens.id_token!,
      post_logout_redirect_uri: `${rpBase}/signed-out`,
    });
    await page.goto(end.href);
    await Promise.all([page.waitForURL(`${rpBase}/signed-out`), page.click('#sign-out')]);
    expect(await page.textContent('body')).toBe('/signed-out');
  });
});

describe('its options', () => {
  it('without iss in the authorization response (no RFC 9207), a named groups claim and scope', async () => {
    const other = await startOidcProvider({
      accounts: [ann],
      groupsClaim: 'roles',
      groupsScope: 'groups',
      issInAuthResponse: false,
      autoConfirmLogout: true,
    });
    try {
      // Registered once the redirect URI is known, as a test whose app starts after the provider does.
      await other.setClient({
        client_id: 'b2',
        client_secret: 'b2-secret-0123456789abcdef0123456789',
        redirect_uris: [`${rpBase}/cb`],
        post_logout_redirect_uris: [`${rpBase}/signed-out`],
      });
      const cfg = await discover(other, 'b2');
      expect(cfg.serverMetadata().authorization_response_iss_parameter_supported).toBeUndefined();
      expect(cfg.serverMetadata().scopes_supported).toContain('groups');

      const auth = await authorization(cfg, 'openid email groups');
      const done = await other.signInHttp(auth.url.href, 'ann@example.com');
      expect(new URL(done.url).searchParams.has('iss')).toBe(false);
      const tokens = await auth.exchange(done.url);
      const claims = tokens.claims()!;
      expect(claims).toMatchObject({
        iss: other.issuer,
        email: 'ann@example.com',
        roles: ['eng', 'eng-leads'],
      });
      expect(claims).not.toHaveProperty('groups');
      expect(claims).not.toHaveProperty('name'); // profile was not asked for

      // autoConfirmLogout: the confirmation page submits itself in a browser.
      const ctx = await open.fresh();
      const page = await ctx.newPage();
      await page.goto(auth.url.href);
      await page.fill('#email', 'ann@example.com');
      await Promise.all([page.waitForURL(`${rpBase}/cb?**`), page.click('#sign-in')]);
      const end = client.buildEndSessionUrl(cfg, { post_logout_redirect_uri: `${rpBase}/signed-out` });
      await Promise.all([page.waitForURL(`${rpBase}/signed-out`), page.goto(end.href)]);
    } finally {
      await other.stop();
    }
    await expect(fetch(`${other.issuer}/.well-known/openid-configuration`)).rejects.toThrow();
  });

  it('stop() closes its server and its connections: the port refuses, no listening handle is left', async () => {
    const servers = () => process.getActiveResourcesInfo().filter((r) => r === 'TCPServerWrap').length;
    const before = servers();
    const p = await startOidcProvider();
    expect(servers()).toBe(before + 1);
    // A kept-alive connection open at stop() does not hold it open.
    expect((await fetch(`${p.issuer}/jwks`)).status).toBe(200);
    await p.stop();
    await expect(fetch(`${p.issuer}/jwks`)).rejects.toThrow();
    // libuv releases the closed handle a little after 'close'.
    await vi.waitFor(() => expect(servers()).toBe(before));
  });
});

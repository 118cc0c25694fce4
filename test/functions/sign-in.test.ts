/**
 * Team sign-in through the API function's Lambda handler (issue 29, "the same flows through the Lambda
 * handler"): `createApiHandler` (functions/api.ts) invoked as Lambda invokes it, with HTTP API payload 2.0
 * events (cookies in `event.cookies`, each Set-Cookie back in the result's `cookies`), over DynamoDB Local
 * and s3rver, with KMS answered by msw (a real symmetric key, test/support/kms-symmetric.ts) and a real
 * OpenID provider on loopback (test/support/oidc-provider.ts; msw lets its requests through). The fetch
 * driver of test/support/oidc-http.ts follows each redirect, sending the board's requests to the handler
 * through `lambdaFetch` and the provider's over the network. The loopback HTTP version is
 * test/sign-in/flow.test.ts.
 *
 * Covered: the OIDC settings put through the API function (discovery checked against the provider, the
 * client secret sealed with KMS Encrypt under `{tenant, purpose: sign-in-secret}` and opened with Decrypt
 * at each sign-in); sign-in of a member by their groups, the board page and `GET /v1/board` with the
 * cookie; the cookie's flags on an https origin (Secure on); a refused person's 403 page; sign-out with
 * the page's form token (a copy of the cookie opens nothing after; the browser goes to the provider's
 * end-session endpoint and back); a tampered cookie; and two containers sharing the cookie keys through
 * the table, each opening a key with one Encrypt and one Decrypt.
 */

import { ClientRequestInterceptor } from '@mswjs/interceptors/ClientRequest';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { SetupServerApi } from 'msw/node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { createApiHandler as CreateApiHandler } from '../../functions/api.js';
import { createClients } from '../../functions/clients.js';
import { parseConfig } from '../../functions/config.js';
import { createLogger } from '../../functions/logging.js';
import { API_DOMAIN, apiEvent, lambdaContext } from '../../harness/lambda-events.js';
import { type S3ReplayWorld, startS3ReplayWorld } from '../../harness/s3-replay-world.js';
import { SIGN_IN_SECRET_PURPOSE } from '../../lib/deploy/aws-sealer.js';
import { SESSION_COOKIE } from '../../lib/service/sign-in/cookie.js';
import { KEY_SEAL_CONTEXT } from '../../lib/service/sign-in/keys.js';
import { forgetProviders } from '../../lib/service/sign-in/provider.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import { kmsTestClient } from '../support/kms.js';
import { type FakeSymmetricKms, fakeSymmetricKms } from '../support/kms-symmetric.js';
import { CookieJar } from '../support/oidc-http.js';
import { type OidcProvider, startOidcProvider } from '../support/oidc-provider.js';

const KEY = 'arn:aws:kms:us-east-1:111122223333:key/3333cccc-2222-3333-4444-555566667777';
/** The board's origin: the HTTP API's domain the events come through (BOARD_ORIGIN). */
const ORIGIN = `https://${API_DOMAIN}`;
const CLIENT_SECRET = 'acme-board-secret-7f3a';
const DAY = 86_400_000;
const ACCOUNTS = [
  { sub: 'u-dev', email: 'dev@acme.test', name: 'Dee Dev', groups: ['eng'] },
  { sub: 'u-lead', email: 'lead@acme.test', name: 'Lee Lead', groups: ['eng-leads', 'eng'] },
  { sub: 'u-out', email: 'out@acme.test', name: 'Otto', groups: ['sales'] },
];

/**
 * KMS through msw, and nothing else: msw's node:http interceptor alone (the AWS SDK's transport), so the
 * fetch driver's and openid-client's requests to the provider are never intercepted. With msw's default
 * interceptors, a bypassed fetch answer's `body.cancel()` never settles (msw 2.15.0), and the driver
 * cancels each redirect's body.
 */
const msw = new SetupServerApi([], [new ClientRequestInterceptor()]);
let world: S3ReplayWorld;
let env: Record<string, string>;
let provider: OidcProvider;
let kms: FakeSymmetricKms;
let createApiHandler: typeof CreateApiHandler;
/** The first container, the one most cases use. */
let lambda: LambdaFetch;
/**
 * The app's clock: noon (UTC) of today, moving with real time, so that no case crosses a cookie-key
 * period (a day) and the key counts below stay exact; the provider's clock is real.
 */
const skew = DAY / 2 - (Date.now() % DAY);
const now = () => new Date(Date.now() + skew);

type Handler = (
  event: APIGatewayProxyEventV2,
  context: Context,
) => Promise<APIGatewayProxyStructuredResultV2>;
type LambdaFetch = (req: Request) => Promise<Response>;

/**
 * A new container: the API function's handler built from the environment as at a cold start (its own
 * clients, stores and key cache; KMS through msw), behind `fetch`'s shape.
 */
function container(environment: Record<string, string> = env): LambdaFetch {
  const config = parseConfig(environment);
  const handler = createApiHandler(environment, {
    clients: { ...createClients(config), kms: kmsTestClient() },
    logger: createLogger({ LOG_LEVEL: 'SILENT' }),
    now,
  }) as unknown as Handler;
  return (req) => lambdaFetch(handler, req);
}

/**
 * What API Gateway does around the function for one request: a payload 2.0 event from `req` (its
 * `Cookie` header split into `event.cookies`, as the HTTP API and function URLs send them, never as a
 * header), and a Response from the result (each of its `cookies` a Set-Cookie header).
 * Errors: a request for another origin than the board's (the driver sent it to the wrong place).
 */
async function lambdaFetch(handler: Handler, req: Request): Promise<Response> {
  const url = new URL(req.url);
  if (url.origin !== ORIGIN) throw new Error(`lambdaFetch: ${req.url} is not the board's`);
  const headers: Record<string, string> = {};
  req.headers.forEach((v, k) => {
    if (k !== 'cookie' && k !== 'host') headers[k] = v;
  });
  const body = req.method === 'GET' || req.method === 'HEAD' ? '' : await req.text();
  const event = apiEvent({
    method: req.method,
    path: url.pathname,
    query: url.search.slice(1),
    headers,
    domain: API_DOMAIN,
    ...(body ? { body } : {}),
  });
  const cookie = req.headers.get('cookie');
  if (cookie) event.cookies = cookie.split(/;\s*/);
  const result = await handler(event, lambdaContext('hansard-api'));
  const out = new Headers();
  for (const [k, v] of Object.entries(result.headers ?? {})) out.set(k, String(v));
  for (const c of result.cookies ?? []) out.append('set-cookie', c);
  const status = result.statusCode ?? 200;
  const bytes = Buffer.from(result.body ?? '', result.isBase64Encoded ? 'base64' : 'utf8');
  return new Response(status === 204 || status === 304 ? null : bytes, { status, headers: out });
}

beforeAll(async () => {
  world = await startS3ReplayWorld();
  provider = await startOidcProvider({ accounts: ACCOUNTS });
  await provider.setClient({
    client_id: 'acme-board',
    client_secret: CLIENT_SECRET,
    redirect_uris: [`${ORIGIN}/login/oidc/callback`],
    post_logout_redirect_uris: [`${ORIGIN}/login?signed_out=1`],
  });
  // the provider runs on loopback: a deployment never sets SIGN_IN_ALLOW_PRIVATE_ISSUERS (a test below shows it refused)
  env = {
    ...world.env,
    SIGN_IN_KMS_KEY_ID: KEY,
    BOARD_ORIGIN: ORIGIN,
    LOG_LEVEL: 'SILENT',
    SIGN_IN_ALLOW_PRIVATE_ISSUERS: '1',
  };
  // functions/api.ts builds its handler from process.env when loaded: give it one it accepts.
  Object.assign(process.env, env);
  ({ createApiHandler } = await import('../../functions/api.js'));
  // The provider, DynamoDB Local and s3rver are reached for real; KMS alone is answered here. One key
  // for the whole file: what one case seals (the client secret, the cookie keys) the next opens.
  msw.listen({ onUnhandledRequest: 'bypass' });
  kms = fakeSymmetricKms(msw, KEY);
  forgetProviders();
  lambda = container();
  await putSettings();
}, 120_000);

afterAll(async () => {
  msw.close();
  await provider?.stop();
  await world?.close();
});

beforeEach(() => {
  kms.calls.length = 0;
});

/** The calls to KMS of `op` whose encryption context names `tenant`, all under sign-in's purpose. */
function kmsCalls(op: 'Encrypt' | 'Decrypt', tenant: string) {
  return kms.calls.filter(
    (c) =>
      c.op === op &&
      (c.body.EncryptionContext as { tenant?: string } | undefined)?.tenant === tenant &&
      (c.body.EncryptionContext as { purpose?: string }).purpose === SIGN_IN_SECRET_PURPOSE,
  );
}

/**
 * `PUT /v1/tenants/acme/oidc` through the handler with the tenant's admin token, discovery checked
 * (the provider is on loopback, so the function reaches it).
 */
async function putSettings(): Promise<void> {
  const res = await lambda(
    new Request(`${ORIGIN}/v1/tenants/acme/oidc`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${world.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        issuer: provider.issuer,
        client_id: 'acme-board',
        client_secret: CLIENT_SECRET,
        allowed_domains: ['acme.test'],
        groups_claim: 'groups',
        role_map: { 'eng-leads': 'admin', eng: 'member' },
      }),
    }),
  );
  expect(res.status, await res.clone().text()).toBe(200);
  expect(await res.json()).toMatchObject({
    tenant: 'acme',
    issuer: provider.issuer,
    redirect_uri: `${ORIGIN}/login/oidc/callback`,
    post_logout_redirect_uri: `${ORIGIN}/login?signed_out=1`,
  });
  // sealed with KMS under the tenant and sign-in's purpose, and only then stored
  expect(kms.calls.map((c) => c.op)).toEqual(['Encrypt']);
  expect(kms.calls[0]!.body.EncryptionContext).toEqual({ tenant: 'acme', purpose: SIGN_IN_SECRET_PURPOSE });
  expect(Buffer.from(String(kms.calls[0]!.body.Plaintext), 'base64').toString()).toBe(CLIENT_SECRET);
}

/** Signs `email` in to acme through `via` (a container); the jar then holds the session cookie. */
async function signIn(email: string, via: LambdaFetch = lambda, next = '/') {
  const jar = new CookieJar();
  const r = await provider.signInHttp(
    `${ORIGIN}/login/oidc?tenant=acme&next=${encodeURIComponent(next)}`,
    email,
    { jar, fetchApp: via },
  );
  return { ...r, jar };
}

/** GET `path` of the board through `via` with the jar's cookies, storing what it sets; no redirect followed. */
async function get(jar: CookieJar, path: string, via: LambdaFetch = lambda) {
  const url = `${ORIGIN}${path}`;
  const res = await via(new Request(url, { headers: { cookie: jar.header(url) }, redirect: 'manual' }));
  jar.store(url, res.headers.getSetCookie());
  return { status: res.status, location: res.headers.get('location'), body: await res.text() };
}

/** A jar holding only session cookie value `v`. */
function jarWith(v: string): CookieJar {
  const jar = new CookieJar();
  jar.store(ORIGIN, [`${SESSION_COOKIE}=${v}; Path=/`]);
  return jar;
}

describe('sign-in through the API function', () => {
  it('refuses a loopback issuer in a deployment (no SIGN_IN_ALLOW_PRIVATE_ISSUERS): no SSRF into the sandbox', async () => {
    const { SIGN_IN_ALLOW_PRIVATE_ISSUERS: _allowed, ...deployed } = env;
    const res = await container(deployed)(
      new Request(`${ORIGIN}/v1/tenants/acme/oidc`, {
        method: 'PUT',
        headers: { authorization: `Bearer ${world.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ issuer: provider.issuer, client_id: 'acme-board', client_secret: 'x' }),
      }),
    );
    expect(res.status).toBe(502);
    expect(await res.text()).toMatch(
      /a loopback, link-local or private address, which this deployment does not call/,
    );
  });

  it('the settings were sealed with KMS (Encrypt, purpose sign-in) and are stored sealed', async () => {
    const state = new DynamoStateStore({
      tableName: env.TABLE_NAME!,
      client: createClients(parseConfig(env)).dynamodb,
    });
    const stored = (await state.getOidcSettings('acme'))!;
    expect(stored.client_secret_sealed).toMatch(/^kms1\./);
    expect(stored.client_secret_sealed).not.toContain(CLIENT_SECRET);
    const show = await lambda(
      new Request(`${ORIGIN}/v1/tenants/acme/oidc`, { headers: { authorization: `Bearer ${world.token}` } }),
    );
    expect(show.status).toBe(200);
    expect(await show.text()).not.toContain(CLIENT_SECRET);
  });

  it('signs a member in by their groups: the board page and GET /v1/board open with the cookie, which is Secure', async () => {
    const r = await signIn('dev@acme.test');
    expect(r.url).toBe(`${ORIGIN}/`);
    expect(r.response.status).toBe(200);
    expect(r.body).toContain('dev@acme.test');
    // PKCE, state and nonce went to the provider, with the redirect URI on the board's origin
    const auth = r.hops.find((h) => h.url.startsWith(`${provider.issuer}/auth`))!;
    expect(auth.url).toMatch(/code_challenge_method=S256/);
    expect(auth.url).toMatch(/[?&]state=/);
    expect(auth.url).toMatch(/[?&]nonce=/);
    expect(new URL(auth.url).searchParams.get('redirect_uri')).toBe(`${ORIGIN}/login/oidc/callback`);
    const cookie = r.appCookies.find((c) => c.startsWith(`${SESSION_COOKIE}=`))!;
    expect(cookie).toBeDefined();
    expect(cookie).toMatch(/;\s*Secure/i);
    expect(cookie).toMatch(/;\s*HttpOnly/i);
    expect(cookie).toMatch(/;\s*SameSite=Lax/i);
    // the client secret opened with Decrypt under the tenant's context once (kept by the container for
    // the callback); then this container's first use of the day's cookie key (a candidate sealed, the
    // table's key opened)
    const ctx = (c: (typeof kms.calls)[number]) => (c.body.EncryptionContext as { tenant: string }).tenant;
    expect(kms.calls.map((c) => `${c.op} ${ctx(c)}`)).toEqual([
      'Decrypt acme',
      `Encrypt ${KEY_SEAL_CONTEXT}`,
      `Decrypt ${KEY_SEAL_CONTEXT}`,
    ]);
    expect(kmsCalls('Decrypt', 'acme')).toHaveLength(1);
    expect(kmsCalls('Decrypt', KEY_SEAL_CONTEXT)).toHaveLength(1);
    expect(kms.calls.every((c) => c.body.KeyId === KEY)).toBe(true);

    const page = await get(r.jar, '/');
    expect(page.status).toBe(200);
    expect(page.body).toContain('dev@acme.test');
    const board = await get(r.jar, '/v1/board');
    expect(board.status, board.body).toBe(200);
    expect(JSON.parse(board.body)).toBeTypeOf('object');
    // a member: the admin pages do not open
    expect((await get(r.jar, '/audit')).status).not.toBe(200);
  }, 60_000);

  it('refuses a person no group maps with a 403 page that says why, and sets no session', async () => {
    const r = await signIn('out@acme.test');
    expect(r.url).toMatch(new RegExp(`^${ORIGIN}/login/oidc/callback`));
    expect(r.response.status).toBe(403);
    expect(r.body).toContain('out@acme.test');
    expect(r.body).toMatch(/none of their groups is mapped/);
    expect(r.appCookies.some((c) => c.startsWith(`${SESSION_COOKIE}=`) && !/Max-Age=0/i.test(c))).toBe(false);
    expect((await get(r.jar, '/')).status).toBe(302);
  }, 60_000);

  it("signs out with the page's form token: the session ends for good and the browser goes through the provider's end-session endpoint", async () => {
    const r = await signIn('dev@acme.test');
    const copy = r.jar.get(SESSION_COOKIE, ORIGIN)!;
    const post = (csrf: string) =>
      lambda(
        new Request(`${ORIGIN}/logout`, {
          method: 'POST',
          redirect: 'manual',
          headers: {
            cookie: r.jar.header(`${ORIGIN}/logout`),
            origin: ORIGIN,
            'content-type': 'application/x-www-form-urlencoded',
          },
          body: new URLSearchParams({ csrf }).toString(),
        }),
      );
    expect((await post('not-the-token')).status).toBe(403);
    const page = await get(r.jar, '/');
    expect(page.status).toBe(200);
    const csrf = /name="csrf" value="([^"]+)"/.exec(page.body)?.[1];
    expect(csrf).toBeTruthy();
    // the board's CSP (form-action 'self') keeps a form's redirect on the board: a page that goes on to
    // the provider by itself (meta refresh) and by its link
    const out = await post(csrf!);
    expect(out.status).toBe(200);
    const html = await out.text();
    const href = /<meta http-equiv="refresh" content="0;url=([^"]+)"/
      .exec(html)?.[1]
      ?.replaceAll('&amp;', '&');
    expect(href, html).toBeTruthy();
    expect(html).toContain(`href="${href!.replaceAll('&', '&amp;')}"`);
    const to = new URL(href!);
    const discovery = await fetch(`${provider.issuer}/.well-known/openid-configuration`);
    const { end_session_endpoint } = (await discovery.json()) as { end_session_endpoint: string };
    expect(`${to.origin}${to.pathname}`).toBe(end_session_endpoint);
    expect(to.searchParams.get('post_logout_redirect_uri')).toBe(`${ORIGIN}/login?signed_out=1`);
    // the cookie is cleared in the answer, and a copy taken before opens nothing
    expect(out.headers.getSetCookie().some((c) => c.startsWith(`${SESSION_COOKIE}=`))).toBe(true);
    const replay = await get(jarWith(copy), '/');
    expect(replay.status).toBe(302);
    expect(replay.location).toMatch(/^\/login/);
    // the provider signs out too and sends the browser back to the board's signed-out page
    const back = await provider.signOutHttp(to.href, { jar: r.jar, fetchApp: lambda });
    expect(back.url).toBe(`${ORIGIN}/login?signed_out=1`);
    expect(back.response.status).toBe(200);
  }, 60_000);

  it('treats a tampered cookie as no sign-in: the page sends to /login, the API answers 401', async () => {
    const r = await signIn('dev@acme.test');
    const parts = r.jar.get(SESSION_COOKIE, ORIGIN)!.split('.');
    const ct = Buffer.from(parts[3]!, 'base64url');
    ct[0] = ct[0]! ^ 1;
    parts[3] = ct.toString('base64url');
    const bad = jarWith(parts.join('.'));
    const page = await get(bad, '/');
    expect(page.status).toBe(302);
    expect(page.location).toMatch(/^\/login/);
    expect((await get(bad, '/v1/board')).status).toBe(401);
    // the untouched cookie still opens
    expect((await get(r.jar, '/')).status).toBe(200);
  }, 60_000);
});

describe('cookie keys across containers', () => {
  it('two containers from the same environment accept each other’s cookies, each opening the key once', async () => {
    const a = container();
    const b = container();
    const keyCalls = () => ({
      encrypt: kmsCalls('Encrypt', KEY_SEAL_CONTEXT).length,
      decrypt: kmsCalls('Decrypt', KEY_SEAL_CONTEXT).length,
    });

    const inA = await signIn('dev@acme.test', a);
    expect(inA.response.status).toBe(200);
    // a's first use of the day's key: one candidate sealed (Encrypt), the stored key opened (Decrypt)
    expect(keyCalls()).toEqual({ encrypt: 1, decrypt: 1 });
    expect((await get(inA.jar, '/', b)).status).toBe(200);
    expect(keyCalls()).toEqual({ encrypt: 2, decrypt: 2 });

    const inB = await signIn('lead@acme.test', b);
    expect(inB.response.status).toBe(200);
    expect((await get(inB.jar, '/audit', a)).status).toBe(200);
    expect((await get(inB.jar, '/v1/board', a)).status).toBe(200);
    for (let i = 0; i < 3; i++) {
      expect((await get(inA.jar, '/', i % 2 ? a : b)).status).toBe(200);
      expect((await get(inB.jar, '/v1/board', i % 2 ? b : a)).status).toBe(200);
    }
    // both keep the key they opened: no further KMS call for it in either container
    expect(keyCalls()).toEqual({ encrypt: 2, decrypt: 2 });
    // the one key is the table's: both containers opened the same stored ciphertext
    const opened = kmsCalls('Decrypt', KEY_SEAL_CONTEXT).map((c) => c.body.CiphertextBlob);
    expect(opened[0]).toBe(opened[1]);
    // and the client secret was opened once per container, never sealed again
    expect(kmsCalls('Encrypt', 'acme')).toHaveLength(0);
    expect(kmsCalls('Decrypt', 'acme')).toHaveLength(2);
  }, 60_000);
});

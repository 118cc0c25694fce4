/**
 * A real OpenID provider on loopback for the sign-in tests of issue 29: the `oidc-provider` package (v9, the
 * certified implementation, a dev dependency) on 127.0.0.1 over plain http, issuer `http://127.0.0.1:PORT`.
 * Authorization code flow only, PKCE (S256) required of every client, `openid email profile` scopes with
 * the groups claim in the ID token, RP-initiated logout with `end_session_endpoint` in discovery, its own
 * RS256 key made at start. Instead of the package's development pages, a login page of our own: a form with
 * `#email` and `#sign-in` that signs in the account with that email; consent is granted without a page.
 * `signInHttp` / `signOutHttp` drive the same pages with plain fetch (test/support/oidc-http.ts).
 *
 * Each call is a provider of its own (two tenants' providers side by side for a mix-up test); `stop()`
 * closes its server and its connections, and nothing else is left running (no timers: its store is a Map).
 *
 * @example
 *   const op = await startOidcProvider({ clients: [client], accounts: [ann] });
 *   const { url, appCookies } = await op.signInHttp(`${app}/auth/sign-in`, 'ann@example.com');
 *   await op.stop();
 */
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider, { type Adapter } from 'oidc-provider';
import { CookieJar, type FollowOptions, type FollowResult, firstForm, follow } from './oidc-http.js';

/** A relying party registered with the provider (client_secret_basic at the token endpoint). */
export interface OidcClient {
  client_id: string;
  client_secret: string;
  redirect_uris: string[];
  post_logout_redirect_uris?: string[];
}

/** A person who can sign in at the provider. */
export interface OidcAccount {
  sub: string;
  email: string;
  email_verified?: boolean;
  name?: string;
  groups?: string[];
}

export interface OidcProviderOptions {
  clients?: OidcClient[];
  accounts?: OidcAccount[];
  /** the claim the groups travel in (default `groups`; Entra uses `groups`, some set-ups `roles`) */
  groupsClaim?: string;
  /** the scope that releases the groups claim (default `profile`, so `openid email profile` carries it) */
  groupsScope?: string;
  /**
   * whether the authorization response carries `iss` (RFC 9207; default true). oidc-provider v9 always
   * sends it (its old `features.issAuthResp` is gone): false strips it from the redirect and drops
   * `authorization_response_iss_parameter_supported` from discovery, as a provider without RFC 9207 would.
   */
  issInAuthResponse?: boolean;
  /** the sign-out confirmation page submits itself (default false: a test clicks `#sign-out`) */
  autoConfirmLogout?: boolean;
}

export interface OidcProvider {
  /** `http://127.0.0.1:PORT`, no trailing slash */
  issuer: string;
  /** the registered clients, as given (secrets included) */
  clients: OidcClient[];
  /** the accounts, by sub */
  accounts: Map<string, OidcAccount>;
  /** adds or replaces an account (by sub): its claims change from the next token on */
  setAccount(account: OidcAccount): void;
  removeAccount(sub: string): void;
  /** registers or replaces a client (say once the app's port, and so its redirect URI, is known) */
  setClient(client: OidcClient): Promise<void>;
  /**
   * Follows `startUrl` (the app's sign-in route, or an authorization URL) through the provider's login as
   * `email` and back to the app, with plain fetch; returns the end of the chain and the app's cookies.
   */
  signInHttp(startUrl: string, email: string, opts?: FollowOptions): Promise<FollowResult>;
  /** Follows `startUrl` (the app's sign-out route, or an end-session URL), confirming the sign-out. */
  signOutHttp(startUrl: string, opts?: FollowOptions): Promise<FollowResult>;
  stop(): Promise<void>;
}

const LOGIN_PATH = /^\/interaction\/([\w-]+)(\/login)?$/;

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** The provider's storage: one Map, entries dropped once their `expiresIn` (seconds) has passed. */
function memoryAdapter(): (model: string) => Adapter {
  const rows = new Map<string, { payload: Record<string, unknown>; expiresAt: number }>();
  const live = (key: string) => {
    const row = rows.get(key);
    if (row && row.expiresAt <= Date.now()) rows.delete(key);
    return rows.get(key)?.payload;
  };
  return (model) => {
    const key = (id: string) => `${model}:${id}`;
    return {
      async upsert(id, payload, expiresIn) {
        const expiresAt = expiresIn === undefined ? Number.POSITIVE_INFINITY : Date.now() + expiresIn * 1000;
        rows.set(key(id), { payload, expiresAt });
        if (typeof payload.uid === 'string') rows.set(`${model}-uid:${payload.uid}`, { payload, expiresAt });
      },
      find: async (id) => live(key(id)),
      findByUid: async (uid) => live(`${model}-uid:${uid}`),
      findByUserCode: async () => undefined,
      async consume(id) {
        const p = live(key(id));
        if (p) p.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        const p = live(key(id));
        rows.delete(key(id));
        if (typeof p?.uid === 'string') rows.delete(`${model}-uid:${p.uid}`);
      },
      async revokeByGrantId(grantId) {
        for (const [k, row] of rows) if (row.payload.grantId === grantId) rows.delete(k);
      },
    };
  };
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head><body>${body}</body></html>`;
}

function loginPage(uid: string, clientId: string, error?: string): string {
  const alert = error ? `<p id="error" role="alert">${escapeHtml(error)}</p>` : '';
  return page(
    'Sign in: test provider',
    `<h1>Test provider</h1><p>Sign in to continue to ${escapeHtml(clientId)}.</p>${alert}` +
      `<form method="post" action="/interaction/${escapeHtml(uid)}/login">` +
      '<label for="email">Email</label> <input id="email" name="email" type="email" autocomplete="username" required> ' +
      '<button id="sign-in" type="submit">Sign in</button></form>',
  );
}

/** Starts a provider on 127.0.0.1 (a free port). Errors: a client the package refuses (bad metadata). */
export async function startOidcProvider(opts: OidcProviderOptions = {}): Promise<OidcProvider> {
  const groupsClaim = opts.groupsClaim ?? 'groups';
  const groupsScope = opts.groupsScope ?? 'profile';
  const accounts = new Map((opts.accounts ?? []).map((a) => [a.sub, a]));
  const clients: OidcClient[] = [];
  const adapter = memoryAdapter();

  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = {
    ...(await exportJWK(privateKey)),
    kid: randomBytes(8).toString('hex'),
    alg: 'RS256',
    use: 'sig',
  };

  const claims: Record<string, string[]> = {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name'],
  };
  claims[groupsScope] = [...(claims[groupsScope] ?? []), groupsClaim];

  const provider = new Provider(issuer, {
    adapter,
    jwks: { keys: [jwk] },
    cookies: { keys: [randomBytes(32).toString('base64url')] },
    // The package requires PKCE of public clients only; issue 29 sends it always, and a test that forgot
    // it should fail here as it would at a strict provider.
    pkce: { required: () => true },
    responseTypes: ['code'],
    claims,
    // Without this, a code flow's ID token carries `sub` alone and the scopes' claims go to userinfo only.
    conformIdTokenClaims: false,
    async findAccount(_ctx, sub) {
      const a = accounts.get(sub);
      if (!a) return undefined;
      return {
        accountId: a.sub,
        claims: () => ({
          sub: a.sub,
          email: a.email,
          email_verified: a.email_verified ?? true,
          name: a.name ?? a.email,
          [groupsClaim]: a.groups ?? [],
        }),
      };
    },
    interactions: { url: async (_ctx, interaction) => `/interaction/${interaction.uid}` },
    features: {
      devInteractions: { enabled: false },
      rpInitiatedLogout: {
        enabled: true,
        async logoutSource(ctx, form) {
          const auto = opts.autoConfirmLogout
            ? "<script>document.getElementById('sign-out').click()</script>"
            : '';
          ctx.type = 'html';
          ctx.body = page(
            'Sign out: test provider',
            `<h1>Sign out of the test provider?</h1>${form}` +
              '<button id="sign-out" type="submit" form="op.logoutForm" name="logout" value="yes">Sign out</button> ' +
              `<button id="stay-signed-in" type="submit" form="op.logoutForm">Stay signed in</button>${auto}`,
          );
        },
        async postLogoutSuccessSource(ctx) {
          ctx.type = 'html';
          ctx.body = page('Signed out: test provider', '<h1 id="signed-out">Signed out</h1>');
        },
      },
    },
    ttl: { AccessToken: 3600, IdToken: 3600, Interaction: 600, Session: 86_400, Grant: 86_400 },
    async renderError(ctx, out) {
      ctx.type = 'html';
      const lines = Object.entries(out).map(
        ([k, v]) => `<p><b>${escapeHtml(k)}</b>: ${escapeHtml(String(v))}</p>`,
      );
      ctx.body = page('Error: test provider', `<h1 id="provider-error">Provider error</h1>${lines.join('')}`);
    },
  });

  if (opts.issInAuthResponse === false) {
    provider.use(async (ctx, next) => {
      await next();
      if (ctx.path === '/.well-known/openid-configuration' && ctx.body && typeof ctx.body === 'object') {
        delete (ctx.body as Record<string, unknown>).authorization_response_iss_parameter_supported;
      }
      const location = ctx.response.get('location');
      if (!location) return;
      const to = new URL(location, issuer);
      if (to.searchParams.get('iss') !== issuer) return;
      to.searchParams.delete('iss');
      ctx.set('location', to.href);
    });
  }

  /** Our interaction pages: login by email, consent granted for whatever the client asked. */
  async function interaction(req: IncomingMessage, res: ServerResponse, uid: string, isPost: boolean) {
    const details = await provider.interactionDetails(req, res);
    if (details.uid !== uid) throw new Error(`interaction ${uid} is not this browser's (${details.uid})`);
    if (details.prompt.name === 'consent') {
      const accountId = details.session!.accountId;
      const grant =
        (details.grantId ? await provider.Grant.find(details.grantId) : undefined) ??
        new provider.Grant({ accountId, clientId: details.params.client_id });
      const { missingOIDCScope = [], missingOIDCClaims = [] } = details.prompt.details;
      if (missingOIDCScope.length) grant.addOIDCScope(missingOIDCScope.join(' '));
      if (missingOIDCClaims.length) grant.addOIDCClaims(missingOIDCClaims);
      const grantId = await grant.save();
      await provider.interactionFinished(
        req,
        res,
        { consent: { grantId } },
        { mergeWithLastSubmission: true },
      );
      return;
    }
    const send = (status: number, html: string) => {
      res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
      res.end(html);
    };
    if (!isPost) return send(200, loginPage(uid, details.params.client_id));
    const typed = new URLSearchParams(await readBody(req)).get('email')?.trim() ?? '';
    // Exact spelling first (a test may hold look-alike accounts), then any case.
    const account =
      [...accounts.values()].find((a) => a.email === typed) ??
      [...accounts.values()].find((a) => a.email.toLowerCase() === typed.toLowerCase());
    const email = typed.toLowerCase();
    if (!account) return send(200, loginPage(uid, details.params.client_id, `No account for ${email}.`));
    await provider.interactionFinished(
      req,
      res,
      { login: { accountId: account.sub } },
      { mergeWithLastSubmission: false },
    );
  }

  const callback = provider.callback();
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const m = LOGIN_PATH.exec(new URL(req.url ?? '/', issuer).pathname);
    if (!m) return callback(req, res);
    interaction(req, res, m[1]!, req.method === 'POST' && m[2] !== undefined).catch((err: Error) => {
      if (res.headersSent) return res.destroy();
      res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`interaction failed: ${err.name}: ${err.message}`);
    });
  });

  async function setClient(c: OidcClient): Promise<void> {
    const metadata = {
      ...c,
      post_logout_redirect_uris: c.post_logout_redirect_uris ?? [],
      token_endpoint_auth_method: 'client_secret_basic',
      grant_types: ['authorization_code'],
      response_types: ['code'],
    };
    await provider.Client.validate(metadata);
    await adapter('Client').upsert(c.client_id, metadata);
    const at = clients.findIndex((x) => x.client_id === c.client_id);
    if (at >= 0) clients.splice(at, 1, c);
    else clients.push(c);
  }
  for (const c of opts.clients ?? []) await setClient(c);

  const loginPageAction = (email: string) => (url: URL, html: string) => {
    if (!LOGIN_PATH.test(url.pathname)) return null;
    if (html.includes('id="error"')) return null; // refused: stop on the page that says why
    return { action: firstForm(html)?.action ?? `${url.pathname}/login`, fields: { email } };
  };

  return {
    issuer,
    clients,
    accounts,
    setAccount: (a) => void accounts.set(a.sub, a),
    removeAccount: (sub) => void accounts.delete(sub),
    setClient,
    signInHttp: (startUrl, email, o = {}) =>
      follow(startUrl, issuer, loginPageAction(email), { ...o, jar: o.jar ?? new CookieJar() }),
    signOutHttp: (startUrl, o = {}) =>
      follow(
        startUrl,
        issuer,
        (url, html) => {
          const form = url.pathname.startsWith('/session/end') ? firstForm(html) : null;
          return form && { action: form.action, fields: { ...form.fields, logout: 'yes' } };
        },
        o,
      ),
    stop: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      }),
  };
}

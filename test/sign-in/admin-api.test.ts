/**
 * Team sign-in's admin API (issue 29 items 1, 2 and 4) over real HTTP on loopback, with the real SQLite
 * store and the local sealer: `/v1/tenants/{t}/oidc` set (checked against a real OpenID provider on
 * loopback, `oidc-provider`), shown (never the secret), refused for a wrong issuer, a bad body, another
 * tenant (404 as for one that does not exist), a server without sign-in; `/v1/people` linked, unlinked,
 * given a role, listed a page at a time; `/v1/audit-log` naming who did each admin action (token, alert,
 * OIDC, person), `via` the board's form or the API, and an append that fails without failing the action.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { AUDIT_RETENTION_DAYS, MAX_LINKED_IDS } from '../../lib/contract/sign-in.js';
import { openLocalStores } from '../../lib/deploy/local.js';
import { LocalSecretSealer } from '../../lib/deploy/local-sealer.js';
import { DEFAULT_ALERT_CONFIG } from '../../lib/service/alerts/index.js';
import { hashToken } from '../../lib/service/index.js';
import type { ServiceContext } from '../../lib/service/shared/context.js';
import { DEFAULT_SIGN_IN_CONFIG } from '../../lib/service/sign-in/deps.js';
import { setPerson } from '../../lib/service/sign-in/people.js';
import type { StateStore, Stores } from '../../lib/store/index.js';
import { expectError, request } from '../support/http.js';
import { type OidcProvider, startOidcProvider } from '../support/oidc-provider.js';
import { useServer } from '../support/server.js';

const keysDir = mkdtempSync(join(tmpdir(), 'hansard-sign-in-admin-'));
const sealer = new LocalSecretSealer(keysDir);
const signIn = { sealer, config: DEFAULT_SIGN_IN_CONFIG };
const alerts = { sealer, config: { ...DEFAULT_ALERT_CONFIG, allowPrivateTargets: true } };

const srv = useServer({
  tenants: ['acme', 'globex'],
  tokens: {
    reader: ['read'],
    board: ['board'],
    globex: { tenant: 'globex', scopes: ['admin'] },
    boundAdmin: { scopes: ['admin'], session: 's_01KZVVGRNTBMSD610TK2GA9BFS' },
  },
  deps: { signIn, alerts },
  // a 5xx is logged by the app: the wrong issuer's refusal is one on purpose
  mayLog:
    /^answered 502 provider_unavailable AppError: the sign-in provider http:\/\/127\.0\.0\.1:\d+\/not-a-realm failed/,
});

const SECRET = 'op-client-secret-7f3k-never-shown';
let op: OidcProvider;
beforeAll(async () => {
  op = await startOidcProvider({
    clients: [{ client_id: 'hansard', client_secret: SECRET, redirect_uris: ['http://127.0.0.1/cb'] }],
  });
});
afterAll(async () => {
  await op?.stop();
});

const admin = () => srv.tenant.admin;
const oidc = (tenant = 'acme') => `/v1/tenants/${tenant}/oidc`;
const settings = (over: Record<string, unknown> = {}) => ({
  issuer: op.issuer,
  client_id: 'hansard',
  client_secret: SECRET,
  allowed_domains: ['example.com'],
  role_map: { 'eng-leads': 'admin', eng: 'member' },
  default_role: 'viewer',
  ...over,
});
async function tokenId(secret: string): Promise<string> {
  return (await srv.stores.state.getTokenByHash(hashToken(secret)))!.id;
}
async function audit(token = admin(), query = '') {
  const a = await request(srv, 'GET', `/v1/audit-log${query}`, { token });
  expect(a.status, a.text).toBe(200);
  return a.json as { entries: Record<string, unknown>[]; next: string | null };
}

describe('OIDC settings of a tenant', () => {
  it('answers 404 before any are set, saying how to set them', async () => {
    const err = expectError(srv, await request(srv, 'GET', oidc(), { token: admin() }), 404, 'not_found');
    expect(err.message).toContain('hansard tenant oidc set');
  });

  it('are set after the issuer’s discovery document is fetched: the view names the URIs to register, never the secret', async () => {
    const a = await request(srv, 'PUT', oidc(), { token: admin(), json: settings() });
    expect(a.status, a.text).toBe(200);
    expect(a.json).toEqual({
      tenant: 'acme',
      issuer: op.issuer,
      client_id: 'hansard',
      allowed_domains: ['example.com'],
      groups_claim: 'groups',
      role_map: { 'eng-leads': 'admin', eng: 'member' },
      default_role: 'viewer',
      redirect_uri: `${srv.url}/login/oidc/callback`,
      post_logout_redirect_uri: `${srv.url}/login?signed_out=1`,
      updated_at: expect.any(String),
      updated_by: `token:${await tokenId(admin())}`,
    });
    expect(a.text).not.toContain(SECRET);
    const shown = await request(srv, 'GET', oidc(), { token: admin() });
    expect(shown.status, shown.text).toBe(200);
    expect(shown.json).toEqual(a.json);
    expect(shown.text).not.toContain(SECRET);
  });

  it('keep the secret sealed for the tenant: it opens for acme only', async () => {
    const stored = (await srv.stores.state.getOidcSettings('acme'))!;
    expect(stored.client_secret_sealed).not.toContain(SECRET);
    expect(await sealer.open('acme', stored.client_secret_sealed)).toBe(SECRET);
    await expect(sealer.open('globex', stored.client_secret_sealed)).rejects.toThrow();
  });

  it('refuse an issuer that is no provider with 502 provider_unavailable, and keep what was set', async () => {
    const a = await request(srv, 'PUT', oidc(), {
      token: admin(),
      json: settings({ issuer: `${op.issuer}/not-a-realm`, client_id: 'other' }),
    });
    const err = expectError(srv, a, 502, 'provider_unavailable');
    expect(err.message).toContain(`${op.issuer}/not-a-realm`);
    expect(a.text).not.toContain(SECRET);
    const shown = await request(srv, 'GET', oidc(), { token: admin() });
    expect(shown.json).toMatchObject({ issuer: op.issuer, client_id: 'hansard' });
  });

  it('are stored unchecked with check=0, even for an issuer nobody answers at', async () => {
    const gone = 'http://127.0.0.1:9/nobody';
    const a = await request(srv, 'PUT', `${oidc()}?check=0`, {
      token: admin(),
      json: settings({ issuer: gone }),
    });
    expect(a.status, a.text).toBe(200);
    expect(a.json.issuer).toBe(gone);
    const back = await request(srv, 'PUT', oidc(), { token: admin(), json: settings() });
    expect(back.status, back.text).toBe(200);
  });

  it('refuse a body that is not settings with 400 invalid_body naming each field', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [settings({ issuer: 'http://idp.example.com' }), 'issuer'],
      [settings({ client_secret: '' }), 'client_secret'],
      [settings({ allowed_domains: ['@example.com'] }), 'allowed_domains.0'],
      [settings({ role_map: { eng: 'owner' } }), 'role_map.eng'],
      [settings({ extra: true }), ''],
    ];
    for (const [json, path] of cases) {
      const err = expectError(
        srv,
        await request(srv, 'PUT', oidc(), { token: admin(), json }),
        400,
        'invalid_body',
      );
      expect((err.details.issues as { path: string }[]).map((i) => i.path)).toContain(path);
    }
    const { client_secret: _s, ...noSecret } = settings();
    const err = expectError(
      srv,
      await request(srv, 'PUT', oidc(), { token: admin(), json: noSecret }),
      400,
      'invalid_body',
    );
    expect((err.details.issues as { path: string }[]).map((i) => i.path)).toEqual(['client_secret']);
  });

  it('refuse an issuer that is not a URL at all with 400 invalid_body naming issuer, never 500', async () => {
    for (const issuer of ['accounts.google.com', 'not-a-url', 'https://', 'https://exa mple.com']) {
      const err = expectError(
        srv,
        await request(srv, 'PUT', oidc(), { token: admin(), json: settings({ issuer, client_secret: '' }) }),
        400,
        'invalid_body',
      );
      const issues = err.details.issues as { path: string; message: string }[];
      expect(issues.find((i) => i.path === 'issuer')?.message, issuer).toContain('https://');
      // the body's other faults are named with it
      expect(issues.map((i) => i.path)).toContain('client_secret');
    }
  });

  it('are another tenant’s: 404 with the same bytes as a tenant that does not exist, and nothing changes', async () => {
    const before = await request(srv, 'GET', oidc(), { token: admin() });
    for (const method of ['GET', 'PUT', 'DELETE']) {
      const json = method === 'PUT' ? settings({ client_secret: 'globex-guess' }) : undefined;
      const onAcme = await request(srv, method, oidc('acme'), { token: srv.tokens.globex, json });
      const onNobody = await request(srv, method, oidc('nobody-here'), { token: srv.tokens.globex, json });
      expectError(srv, onAcme, 404, 'not_found');
      expect(onAcme.text).toBe(onNobody.text);
      expect(onAcme.text).not.toContain('acme');
    }
    expect((await request(srv, 'GET', oidc(), { token: admin() })).json).toEqual(before.json);
  });

  it('refuse a token without admin, a session-bound admin, no token and a bad tenant name', async () => {
    for (const token of [srv.tokens.reader, srv.tokens.board, srv.tokens.boundAdmin]) {
      expectError(srv, await request(srv, 'GET', oidc(), { token }), 403, 'forbidden');
      expectError(srv, await request(srv, 'PUT', oidc(), { token, json: settings() }), 403, 'forbidden');
    }
    expectError(srv, await request(srv, 'GET', oidc(), { token: null }), 401, 'unauthorized');
    const bad = expectError(
      srv,
      await request(srv, 'GET', oidc('ACME'), { token: admin() }),
      400,
      'invalid_id',
    );
    expect(bad.details).toEqual({ param: 'tenant' });
  });

  it('are removed with 204; then GET and DELETE answer 404', async () => {
    const a = await request(srv, 'DELETE', oidc(), { token: admin() });
    expect(a.status, a.text).toBe(204);
    expectError(srv, await request(srv, 'GET', oidc(), { token: admin() }), 404, 'not_found');
    expectError(srv, await request(srv, 'DELETE', oidc(), { token: admin() }), 404, 'not_found');
  });
});

describe('OIDC settings on a deployment with a public origin', () => {
  const behind = useServer({
    tenants: ['acme'],
    deps: {
      signIn: { sealer, config: { ...DEFAULT_SIGN_IN_CONFIG, publicOrigin: 'https://board.example.com/' } },
    },
  });

  it('name the URIs at the public origin, not the one the request came to', async () => {
    const a = await request(behind, 'PUT', `${oidc()}?check=0`, { token: behind.admin, json: settings() });
    expect(a.status, a.text).toBe(200);
    expect(a.json.redirect_uri).toBe('https://board.example.com/login/oidc/callback');
    expect(a.json.post_logout_redirect_uri).toBe('https://board.example.com/login?signed_out=1');
  });
});

describe('a server without team sign-in', () => {
  const bare = useServer({ tenants: ['acme'], mayLog: /^answered 503 sign_in_unavailable / });

  it('refuses to set OIDC with 503 sign_in_unavailable, storing nothing', async () => {
    const a = await request(bare, 'PUT', `${oidc()}?check=0`, { token: bare.admin, json: settings() });
    expectError(bare, a, 503, 'sign_in_unavailable');
    expect(await bare.stores.state.getOidcSettings('acme')).toBeNull();
  });
});

describe('people', () => {
  const person = (email: string) => `/v1/people/${encodeURIComponent(email)}`;
  const put = (email: string, json: unknown, token = admin()) =>
    request(srv, 'PUT', person(email), { token, json });

  it('are made by a link and a role, their email in lower case', async () => {
    const a = await put('Priya@Example.COM', { link: ['priya', 'p-laptop'], role: 'admin' });
    expect(a.status, a.text).toBe(200);
    expect(a.json).toEqual({
      email: 'priya@example.com',
      role: 'admin',
      user_ids: ['priya', 'p-laptop'],
      seen_user_ids: [],
      name: null,
      last_sign_in_at: null,
      updated_at: expect.any(String),
      updated_by: `token:${await tokenId(admin())}`,
    });
  });

  it('link each id once, unlink, and set the role back to the map (null) or none', async () => {
    let a = await put('priya@example.com', { link: ['priya', 'p-desk'], unlink: ['p-laptop'] });
    expect(a.json.user_ids).toEqual(['priya', 'p-desk']);
    a = await put('priya@example.com', { role: null });
    expect(a.json).toMatchObject({ role: null, user_ids: ['priya', 'p-desk'] });
    a = await put('priya@example.com', { role: 'none' });
    expect(a.json.role).toBe('none');
    const got = await request(srv, 'GET', person('PRIYA@example.com'), { token: admin() });
    expect(got.status, got.text).toBe(200);
    expect(got.json).toEqual(a.json);
  });

  it('answer 404 for one not known, and an unlink alone does not make one', async () => {
    expectError(
      srv,
      await request(srv, 'GET', person('nobody@example.com'), { token: admin() }),
      404,
      'not_found',
    );
    expectError(srv, await put('nobody@example.com', { unlink: ['x'] }), 404, 'not_found');
    expectError(srv, await put('nobody@example.com', { role: null }), 404, 'not_found');
    expect(await srv.stores.state.getPerson('acme', 'nobody@example.com')).toBeNull();
  });

  it(`refuse more than ${MAX_LINKED_IDS} linked ids, an id both linked and unlinked, and an empty change`, async () => {
    const many = Array.from({ length: MAX_LINKED_IDS - 1 }, (_, i) => `id-${i}`);
    const err = expectError(srv, await put('priya@example.com', { link: many }), 400, 'invalid_body');
    expect(err.details).toMatchObject({ max: MAX_LINKED_IDS });
    expect((await srv.stores.state.getPerson('acme', 'priya@example.com'))!.user_ids).toEqual([
      'priya',
      'p-desk',
    ]);
    expectError(srv, await put('priya@example.com', { link: ['a'], unlink: ['a'] }), 400, 'invalid_body');
    expectError(srv, await put('priya@example.com', {}), 400, 'invalid_body');
    expectError(srv, await put('priya@example.com', { role: 'owner' }), 400, 'invalid_body');
    const bad = expectError(srv, await put('not-an-email', { role: 'admin' }), 400, 'invalid_id');
    expect(bad.details).toEqual({ param: 'email' });
  });

  it('are listed by email a page at a time, with a cursor no other tenant can use', async () => {
    for (const e of ['ann@example.com', 'bob@example.com'])
      expect((await put(e, { role: 'viewer' })).status).toBe(200);
    const first = await request(srv, 'GET', '/v1/people?limit=2', { token: admin() });
    expect(first.status, first.text).toBe(200);
    expect(first.json.people.map((p: { email: string }) => p.email)).toEqual([
      'ann@example.com',
      'bob@example.com',
    ]);
    expect(first.json.next).toEqual(expect.any(String));
    const second = await request(
      srv,
      'GET',
      `/v1/people?limit=2&cursor=${encodeURIComponent(first.json.next)}`,
      {
        token: admin(),
      },
    );
    expect(second.json).toMatchObject({ next: null });
    expect(second.json.people.map((p: { email: string }) => p.email)).toEqual(['priya@example.com']);
    const borrowed = await request(srv, 'GET', `/v1/people?cursor=${encodeURIComponent(first.json.next)}`, {
      token: srv.tokens.globex,
    });
    expectError(srv, borrowed, 400, 'invalid_cursor');
    expectError(
      srv,
      await request(srv, 'GET', '/v1/people?cursor=forged', { token: admin() }),
      400,
      'invalid_cursor',
    );
  });

  it('are the tenant’s own: another tenant lists none of them and gets 404 for each', async () => {
    const theirs = await request(srv, 'GET', '/v1/people', { token: srv.tokens.globex });
    expect(theirs.status, theirs.text).toBe(200);
    expect(theirs.json).toEqual({ people: [], next: null });
    for (const e of ['priya@example.com', 'ann@example.com']) {
      const a = await request(srv, 'GET', person(e), { token: srv.tokens.globex });
      const fresh = await request(srv, 'GET', person('zed@example.com'), { token: srv.tokens.globex });
      expectError(srv, a, 404, 'not_found');
      expect(a.text).toBe(fresh.text);
    }
    expectError(srv, await request(srv, 'GET', '/v1/people', { token: srv.tokens.reader }), 403, 'forbidden');
    expectError(
      srv,
      await request(srv, 'GET', '/v1/people', { token: srv.tokens.boundAdmin }),
      403,
      'forbidden',
    );
  });

  it('keep both of two changes made at once: the one that lost the write reads again and retries', async () => {
    const state = srv.stores.state;
    const tok = (await state.getTokenByHash(hashToken(admin())))!;
    const ctx = (s: StateStore): ServiceContext => ({
      tenant: 'acme',
      caller: tok,
      state: s,
      segments: srv.stores.segments,
      now: () => new Date(),
    });
    let raced = false;
    // The first read of this change lets another change through before it answers: its write then loses.
    const racing = new Proxy(state, {
      get(target, prop, receiver) {
        if (prop === 'getPerson' && !raced) {
          return async (tenant: string, email: string) => {
            const seen = await target.getPerson(tenant, email);
            raced = true;
            await setPerson(ctx(state), email, { link: ['other-change'] });
            return seen;
          };
        }
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    const after = await setPerson(ctx(racing), 'ann@example.com', { link: ['this-change'] });
    expect(raced).toBe(true);
    expect(after.user_ids).toEqual(['other-change', 'this-change']);
    expect((await state.getPerson('acme', 'ann@example.com'))!.user_ids).toEqual([
      'other-change',
      'this-change',
    ]);
  });
});

describe('the audit list', () => {
  it('names who set and removed OIDC and changed people, from the API, newest first', async () => {
    const me = await tokenId(admin());
    const { entries } = await audit(admin(), '?limit=200');
    const ids = entries.map((e) => e.id as string);
    expect([...ids].sort().reverse()).toEqual(ids);
    const actions = entries.map((e) => e.action);
    expect(actions).toContain('oidc.set');
    expect(actions).toContain('oidc.remove');
    const link = entries.find(
      (e) => e.action === 'person.set' && e.detail === 'link priya, p-laptop; role admin',
    );
    expect(link).toEqual({
      id: expect.stringMatching(/^au_[0-9A-HJKMNP-TV-Z]{26}$/),
      at: expect.any(String),
      actor: { kind: 'token', token_id: me },
      action: 'person.set',
      target: 'priya@example.com',
      detail: 'link priya, p-laptop; role admin',
      via: 'api',
    });
    const set = entries.find((e) => e.action === 'oidc.set')!;
    expect(set.detail).toContain(`issuer ${op.issuer}`);
    expect(JSON.stringify(entries)).not.toContain(SECRET);
    // refused actions are not recorded: the 404s, 400s and 502 above left no entry
    expect(entries.filter((e) => e.target === 'nobody@example.com')).toEqual([]);
    expect(
      entries.filter((e) => e.action === 'oidc.set' && String(e.detail).includes('not-a-realm')),
    ).toEqual([]);
  });

  it('records token create and revoke, never the secret', async () => {
    const created = await request(srv, 'POST', '/v1/tokens', {
      token: admin(),
      json: { scopes: ['read', 'board'], label: 'ci' },
    });
    expect(created.status, created.text).toBe(201);
    const revoked = await request(srv, 'DELETE', `/v1/tokens/${created.json.id}`, { token: admin() });
    expect(revoked.status).toBe(204);
    const { entries } = await audit(admin(), '?limit=2');
    expect(entries.map((e) => [e.action, e.target])).toEqual([
      ['token.revoke', created.json.id],
      ['token.create', created.json.id],
    ]);
    expect(entries[1]!.detail).toBe('scopes read,board; label "ci"; expires never');
    expect(JSON.stringify(entries)).not.toContain(created.json.token);
  });

  it('records alert targets added, tested, rotated and removed; the board’s button as via board', async () => {
    const added = await request(srv, 'POST', '/v1/alerts', {
      token: admin(),
      json: { url: 'https://93.184.215.14/services/T0/B0/secret-path', label: 'ops' },
    });
    expect(added.status, added.text).toBe(201);
    const id = added.json.id as string;
    expect((await request(srv, 'POST', `/v1/alerts/${id}/test`, { token: admin() })).status).toBe(202);
    const board = await request(srv, 'POST', `/alerts/${id}/test`, {
      token: admin(),
      body: '',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(board.status, board.text).toBe(303);
    expect((await request(srv, 'POST', `/v1/alerts/${id}/rotate`, { token: admin(), json: {} })).status).toBe(
      200,
    );
    expect((await request(srv, 'DELETE', `/v1/alerts/${id}`, { token: admin() })).status).toBe(204);
    const { entries } = await audit(admin(), '?limit=5');
    expect(entries.map((e) => [e.action, e.target, e.via])).toEqual([
      ['alert.remove', id, 'api'],
      ['alert.rotate', id, 'api'],
      ['alert.test', id, 'board'],
      ['alert.test', id, 'api'],
      ['alert.add', id, 'api'],
    ]);
    expect(entries[4]!.detail).toBe('standard to 93.184.215.14 ("ops")');
    expect(JSON.stringify(entries)).not.toContain('secret-path');
  });

  it('keeps each entry 400 days, and pages with a cursor of its own', async () => {
    const stored = await srv.stores.state.listAudit('acme', { limit: 5 });
    for (const e of stored.items) {
      expect(Date.parse(e.expires_at) - Date.parse(e.at)).toBe(AUDIT_RETENTION_DAYS * 86_400_000);
    }
    const one = await audit(admin(), '?limit=1');
    expect(one.entries).toHaveLength(1);
    const two = await audit(admin(), `?limit=1&cursor=${encodeURIComponent(one.next!)}`);
    expect(String(two.entries[0]!.id) < String(one.entries[0]!.id)).toBe(true);
    const people = await request(srv, 'GET', '/v1/people?limit=1', { token: admin() });
    const crossed = await request(
      srv,
      'GET',
      `/v1/audit-log?cursor=${encodeURIComponent(people.json.next)}`,
      {
        token: admin(),
      },
    );
    expectError(srv, crossed, 400, 'invalid_cursor');
  });

  it('is the tenant’s own: another tenant sees only its own entries; a non-admin is refused', async () => {
    const acmeIds = new Set((await audit(admin(), '?limit=200')).entries.map((e) => e.id));
    const made = await request(srv, 'POST', '/v1/tokens', {
      token: srv.tokens.globex,
      json: { scopes: ['read'] },
    });
    expect(made.status).toBe(201);
    const theirs = await audit(srv.tokens.globex, '?limit=200');
    expect(theirs.entries.map((e) => [e.action, e.target])).toEqual([['token.create', made.json.id]]);
    for (const e of theirs.entries) expect(acmeIds.has(e.id)).toBe(false);
    expect(JSON.stringify(theirs)).not.toContain('priya@example.com');
    for (const token of [srv.tokens.reader, srv.tokens.board, srv.tokens.boundAdmin]) {
      expectError(srv, await request(srv, 'GET', '/v1/audit-log', { token }), 403, 'forbidden');
    }
  });
});

describe('an audit append that fails', () => {
  /** The local stores, whose audit append throws as a full disk would. */
  const failing = (dataDir: string): Stores => {
    const stores = openLocalStores(dataDir);
    const state = new Proxy(stores.state, {
      get(target, prop, receiver) {
        if (prop === 'appendAudit') return async () => Promise.reject(new Error('disk full (injected)'));
        const v = Reflect.get(target, prop, receiver);
        return typeof v === 'function' ? v.bind(target) : v;
      },
    });
    return { ...stores, state };
  };
  const broken = useServer({ tenants: ['acme'], deps: { signIn }, stores: failing });

  it('neither fails nor undoes the action, and is logged naming the action', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const created = await request(broken, 'POST', '/v1/tokens', {
        token: broken.admin,
        json: { scopes: ['read'] },
      });
      expect(created.status, created.text).toBe(201);
      const works = await request(broken, 'GET', '/v1/sessions', { token: created.json.token });
      expect(works.status).toBe(200);
      const person = await request(broken, 'PUT', '/v1/people/ann%40example.com', {
        token: broken.admin,
        json: { role: 'member' },
      });
      expect(person.status, person.text).toBe(200);
      expect(logged.mock.calls.map((c) => String(c[0]))).toEqual([
        expect.stringContaining('audit entry not recorded (token.create'),
        expect.stringContaining('audit entry not recorded (person.set'),
      ]);
      expect(String(logged.mock.calls[0]![0])).toContain('disk full (injected)');
    } finally {
      logged.mockRestore();
    }
  });
});

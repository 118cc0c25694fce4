/**
 * Token expiry on a clock the test moves (issue 8 item 10: deleting the expiry check used to leave every
 * test passing), over real HTTP: an API token, the board's sign-in cookie, a session token, and the
 * chain of a session token (it never outlives the token that minted it, and is refused once that one has
 * expired, even when it was stored with a later expiry of its own).
 */
import { describe, expect, it } from 'vitest';
import { BOARD_COOKIE } from '../../lib/http/auth.js';
import { newId } from '../../lib/log/index.js';
import { generateTokenSecret, hashToken, mintToken } from '../../lib/service/index.js';
import { expectError, request } from '../support/http.js';
import { useServer } from '../support/server.js';

const T0 = Date.UTC(2026, 5, 1, 12);
let now = T0;
const srv = useServer({ tenants: ['acme'], deps: { now: () => new Date(now) } });

/** A token made by the tenant's admin through `POST /v1/tokens` at the current clock. */
async function created(
  json: Record<string, unknown>,
): Promise<{ token: string; id: string; expires_at: string }> {
  const a = await request(srv, 'POST', '/v1/tokens', { token: srv.admin, json });
  expect(a.status, a.text).toBe(201);
  return a.json;
}

describe('an expired token', () => {
  it('is refused on the API from the millisecond it expires', async () => {
    now = T0;
    const t = await created({ scopes: ['read'], ttl_seconds: 3600 });
    expect(t.expires_at).toBe(new Date(T0 + 3600_000).toISOString());
    now = T0 + 3600_000 - 1;
    expect((await request(srv, 'GET', '/v1/sessions', { token: t.token })).status).toBe(200);
    for (const later of [T0 + 3600_000, T0 + 3600_001, T0 + 400 * 86_400_000]) {
      now = later;
      const err = expectError(
        srv,
        await request(srv, 'GET', '/v1/sessions', { token: t.token }),
        401,
        'unauthorized',
      );
      expect(err.message).toBe('the token was not accepted: it is unknown here, revoked or expired');
    }
  });

  it("signs the board's browser out: pages redirect to sign in, the board API answers 401", async () => {
    now = T0;
    const t = await created({ scopes: ['board'], ttl_seconds: 600 });
    // What the sign-in link leaves in the browser (lib/http/routes/pages/sign-in.tsx): the token in the
    // board cookie.
    const cookie = { cookie: `${BOARD_COOKIE}=${t.token}` };
    const sid = newId('s');

    now = T0 + 599_999;
    expect((await request(srv, { method: 'GET', path: '/', headers: cookie })).status).toBe(200);
    expect((await request(srv, { method: 'GET', path: '/v1/board', headers: cookie })).status).toBe(200);

    now = T0 + 600_000;
    for (const path of ['/', `/sessions/${sid}`]) {
      const page = await request(srv, { method: 'GET', path, headers: cookie });
      expect(page.status, path).toBe(302);
      // a page other than `/` is carried to sign-in as `next` (lib/http/auth.ts signInLocation)
      expect(page.headers.get('location')).toBe(
        path === '/' ? '/login' : `/login?next=${encodeURIComponent(path)}`,
      );
    }
    expectError(
      srv,
      await request(srv, { method: 'GET', path: '/v1/board', headers: cookie }),
      401,
      'unauthorized',
    );
  });

  it('ends a session token at its ttl_seconds', async () => {
    now = T0;
    const sid = newId('s');
    const minted = await request(srv, 'POST', `/v1/sessions/${sid}/tokens`, {
      token: srv.admin,
      json: { scopes: ['report'], ttl_seconds: 120 },
    });
    expect(minted.status, minted.text).toBe(201);
    expect(minted.json.expires_at).toBe(new Date(T0 + 120_000).toISOString());
    const report = () =>
      request(srv, 'POST', `/v1/sessions/${sid}/status`, {
        token: minted.json.token,
        json: { state: 'working' },
      });
    now = T0 + 119_999;
    expect((await report()).status).toBe(201);
    now = T0 + 120_000;
    expectError(srv, await report(), 401, 'unauthorized');
  });
});

describe('the chain of a session token', () => {
  it('never outlives the token that minted it, an admin token included', async () => {
    now = T0;
    const sid = newId('s');
    const admin = await created({ scopes: ['admin'], ttl_seconds: 3600 });
    const delegator = await created({ scopes: ['ingest', 'report'], ttl_seconds: 1800 });
    for (const parent of [admin, delegator]) {
      const a = await request(srv, 'POST', `/v1/sessions/${sid}/tokens`, {
        token: parent.token,
        json: { ttl_seconds: 30 * 86_400 },
      });
      expect(a.status, a.text).toBe(201);
      expect(a.json.expires_at).toBe(parent.expires_at);
    }
  });

  it('is refused once a token up its chain has expired or is gone, whatever its own expiry', async () => {
    now = T0;
    const sid = newId('s');
    const parent = await mintToken(
      srv.stores.state,
      'acme',
      { scopes: ['report'], ttl_seconds: 3600 },
      new Date(T0),
    );
    // Stored as a token minted before expiries were clamped would be: its own expiry 30 days out.
    const storeChild = async (parentId: string) => {
      const secret = generateTokenSecret();
      await srv.stores.state.putToken({
        id: `tok_${newId('e').slice(2)}`,
        tenant: 'acme',
        hash: hashToken(secret),
        scopes: ['report'],
        session: sid,
        label: null,
        created_at: new Date(T0).toISOString(),
        expires_at: new Date(T0 + 30 * 86_400_000).toISOString(),
        revoked_at: null,
        last_used_at: null,
        parent: parentId,
        root: parentId,
      });
      return secret;
    };
    const child = await storeChild(parent.record.id);
    const orphan = await storeChild(`tok_${newId('e').slice(2)}`);
    const report = (token: string) =>
      request(srv, 'POST', `/v1/sessions/${sid}/status`, { token, json: { state: 'working' } });

    now = T0 + 3599_999;
    expect((await report(child)).status).toBe(201);
    expectError(srv, await report(orphan), 401, 'unauthorized');
    now = T0 + 3600_000;
    expectError(srv, await report(child), 401, 'unauthorized');
    expectError(srv, await report(parent.token), 401, 'unauthorized');
  });
});

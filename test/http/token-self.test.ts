/**
 * `GET /v1/tokens/self` over real HTTP (issue 24 item 5): any token learns what it is (id, scopes, the
 * session it is bound to, label, created and expiry times) and nothing more: never its hash or secret,
 * never another token (not the one that minted it). A revoked or expired token, or none, gets 401.
 */
import { describe, expect, it } from 'vitest';
import { SCOPES } from '../../lib/contract/scopes.js';
import { idPattern, newId } from '../../lib/log/index.js';
import { hashToken } from '../../lib/service/index.js';
import { expectError, request } from '../support/http.js';
import { mint, useServer } from '../support/server.js';

const srv = useServer({ tenants: ['acme'] });

const self = (token: string | null) => request(srv, 'GET', '/v1/tokens/self', { token });

describe('GET /v1/tokens/self', () => {
  it('tells a session token minted for a harness which session it is bound to, and nothing of its parent', async () => {
    const sid = newId('s');
    const minted = await request(srv, 'POST', `/v1/sessions/${sid}/tokens`, {
      token: srv.admin,
      json: { scopes: ['report'], label: 'harness run 7', ttl_seconds: 3600 },
    });
    expect(minted.status, minted.text).toBe(201);
    const a = await self(minted.json.token);
    expect(a.status, a.text).toBe(200);
    expect(Object.keys(a.json).sort()).toEqual([
      'created_at',
      'expires_at',
      'id',
      'label',
      'scopes',
      'session',
    ]);
    expect(a.json).toEqual({
      id: minted.json.id,
      scopes: ['report'],
      session: sid,
      label: 'harness run 7',
      created_at: expect.any(String),
      expires_at: minted.json.expires_at,
    });
    const admin = (await srv.stores.state.getTokenByHash(hashToken(srv.admin)))!;
    for (const secret of [minted.json.token, hashToken(minted.json.token), admin.id, admin.hash, 'acme']) {
      expect(a.text).not.toContain(secret);
    }
  });

  it('answers every single-scope token, unbound ones with session null', async () => {
    for (const scope of SCOPES) {
      const token = await mint(srv, 'acme', [scope]);
      const a = await self(token);
      expect(a.status, `${scope}: ${a.text}`).toBe(200);
      expect(a.json).toMatchObject({ scopes: [scope], session: null, label: 'test', expires_at: null });
      expect(a.json.id).toMatch(idPattern('tok'));
      expect(a.json.id).toBe((await srv.stores.state.getTokenByHash(hashToken(token)))!.id);
    }
  });

  it('refuses no token, a revoked token and one whose minting token was revoked with 401', async () => {
    expectError(srv, await self(null), 401, 'unauthorized');
    const parent = await mint(srv, 'acme', ['report', 'read']);
    const child = await request(srv, 'POST', `/v1/sessions/${newId('s')}/tokens`, {
      token: parent,
      json: { scopes: ['report'] },
    });
    expect(child.status, child.text).toBe(201);
    expect((await self(child.json.token)).status).toBe(200);
    const parentId = (await srv.stores.state.getTokenByHash(hashToken(parent)))!.id;
    const revoked = await request(srv, 'DELETE', `/v1/tokens/${parentId}`, { token: srv.admin });
    expect(revoked.status, revoked.text).toBe(204);
    expectError(srv, await self(parent), 401, 'unauthorized');
    expectError(srv, await self(child.json.token), 401, 'unauthorized');
  });
});

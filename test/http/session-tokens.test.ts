/**
 * `POST /v1/sessions/{sid}/tokens` over real HTTP (issue 5): a token bound to one session, minted for a
 * harness by an admin or by an unbound token that hands on scopes it holds. Happy cases, refusals
 * (scope escalation 403, admin/board 400, bad bodies 400), and what the bound token may then reach.
 */
import { describe, expect, it } from 'vitest';
import { idPattern, newId } from '../../lib/log/index.js';
import { hashToken, mintToken } from '../../lib/service/index.js';
import { type Answer, expectError, request } from '../support/http.js';
import { writeSession } from '../support/segments.js';
import { makeTenant, mint, useServer } from '../support/server.js';
import { postChunk, tenantsDigest } from '../support/stored.js';

const srv = useServer({ tenants: ['acme'] });

const mintFor = (sid: string, token: string | null, json?: unknown): Promise<Answer> =>
  request(srv, 'POST', `/v1/sessions/${sid}/tokens`, json === undefined ? { token } : { token, json });

const HOUR = 3600_000;

/** The number of tokens the tenant has (nothing is stored by a refused request). */
async function tokenCount(): Promise<number> {
  return (await srv.stores.state.listTokens('acme')).length;
}

describe('POST /v1/sessions/{sid}/tokens: minting', () => {
  it('gives an admin an ingest + report token for 24 hours by default, its secret once', async () => {
    const seg = writeSession(srv.workDir);
    const before = Date.now();
    const a = await mintFor(seg.sid, srv.admin);
    expect(a.status, a.text).toBe(201);
    expect(Object.keys(a.json).sort()).toEqual(['expires_at', 'id', 'scopes', 'session', 'token']);
    expect(a.json.token).toMatch(/^hns_[0-9A-Za-z]{43}$/);
    expect(a.json.id).toMatch(idPattern('tok'));
    expect(a.json).toMatchObject({ scopes: ['ingest', 'report'], session: seg.sid });
    const expires = Date.parse(a.json.expires_at);
    expect(expires).toBeGreaterThanOrEqual(before + 24 * HOUR - 1000);
    expect(expires).toBeLessThanOrEqual(Date.now() + 24 * HOUR + 1000);

    // Stored as its hash only; listed with its session, never with the secret.
    const listed = await request(srv, 'GET', '/v1/tokens', { token: srv.admin });
    const rec = listed.json.tokens.find((t: { id: string }) => t.id === a.json.id);
    expect(rec).toMatchObject({ session: seg.sid, scopes: ['ingest', 'report'], revoked_at: null });
    expect(listed.text).not.toContain(a.json.token);
    expect(await srv.stores.state.getTokenByHash(hashToken(a.json.token))).toMatchObject({ id: a.json.id });
  });

  it('takes scopes, ttl_seconds and a label; 30 days is the longest lifetime', async () => {
    const sid = newId('s');
    const a = await mintFor(sid, srv.admin, {
      scopes: ['read', 'ingest', 'read'],
      ttl_seconds: 30 * 86400,
      label: 'ci job 42',
    });
    expect(a.status, a.text).toBe(201);
    expect(a.json.scopes).toEqual(['read', 'ingest']);
    expect(Date.parse(a.json.expires_at) - Date.now()).toBeGreaterThan(30 * 24 * HOUR - 60_000);
    const rec = await srv.stores.state.getTokenByHash(hashToken(a.json.token));
    expect(rec).toMatchObject({ label: 'ci job 42', session: sid, tenant: 'acme' });
  });

  it('lets an unbound token hand on scopes it holds, expiring no later than itself', async () => {
    const sid = newId('s');
    const delegator = await mintToken(
      srv.stores.state,
      'acme',
      { scopes: ['ingest', 'report', 'read'], label: 'ci', ttl_seconds: 3600 },
      new Date(),
    );
    const a = await mintFor(sid, delegator.token, { scopes: ['ingest'], ttl_seconds: 86400 });
    expect(a.status, a.text).toBe(201);
    expect(a.json).toMatchObject({ scopes: ['ingest'], session: sid });
    expect(a.json.expires_at).toBe(delegator.record.expires_at);
    // The default scopes (ingest, report) are both held, so an empty body works too.
    const b = await mintFor(sid, delegator.token);
    expect(b.status, b.text).toBe(201);
    expect(b.json.scopes).toEqual(['ingest', 'report']);
  });
});

describe('POST /v1/sessions/{sid}/tokens: refusals, nothing stored', () => {
  const refused = async (send: () => Promise<Answer>, status: number, code: string) => {
    const count = await tokenCount();
    const err = expectError(srv, await send(), status, code);
    expect(await tokenCount()).toBe(count);
    return err;
  };

  it('refuses a scope the unbound caller lacks with 403, naming it', async () => {
    const sid = newId('s');
    const ingestOnly = await mint(srv, 'acme', ['ingest']);
    const err = await refused(
      () => mintFor(sid, ingestOnly, { scopes: ['ingest', 'report'] }),
      403,
      'forbidden',
    );
    expect(err.details).toEqual({ required: ['report'] });
    // The default scopes ask for report too.
    await refused(() => mintFor(sid, ingestOnly), 403, 'forbidden');
    const readOnly = await mint(srv, 'acme', ['read', 'board']);
    await refused(() => mintFor(sid, readOnly, { scopes: ['ingest'] }), 403, 'forbidden');
  });

  it('refuses admin and board in a session token with 400, even to an admin', async () => {
    const sid = newId('s');
    for (const scopes of [['admin'], ['board'], ['ingest', 'admin']]) {
      const err = await refused(() => mintFor(sid, srv.admin, { scopes }), 400, 'invalid_body');
      expect(err.details).toMatchObject({
        refused: scopes.filter((x) => x === 'admin' || x === 'board'),
        allowed: ['ingest', 'report', 'read'],
      });
    }
  });

  it('refuses a malformed request with 400: lifetime out of range, unknown field, bad scope, not JSON', async () => {
    const sid = newId('s');
    const bad = [
      { ttl_seconds: 30 * 86400 + 1 },
      { ttl_seconds: 59 },
      { ttl_seconds: 3600.5 },
      { scopes: [] },
      { scopes: ['write'] },
      { session: newId('s') },
      { label: 'x'.repeat(121) },
      ['ingest'],
    ];
    for (const json of bad) await refused(() => mintFor(sid, srv.admin, json), 400, 'invalid_body');
    await refused(
      () =>
        request(srv, 'POST', `/v1/sessions/${sid}/tokens`, {
          token: srv.admin,
          body: '{"scopes":',
          headers: { 'content-type': 'application/json' },
        }),
      400,
      'invalid_body',
    );
    await refused(() => mintFor('s_not-a-session', srv.admin, {}), 400, 'invalid_id');
  });

  it('refuses a session-bound token: 403 for its own session, 404 for any other', async () => {
    const mine = newId('s');
    const bound = await mint(srv, 'acme', ['ingest', 'report', 'read'], mine);
    await refused(() => mintFor(mine, bound, { scopes: ['ingest'] }), 403, 'forbidden');
    const other = await refused(() => mintFor(newId('s'), bound, { scopes: ['ingest'] }), 404, 'not_found');
    expect(other.message).toBe('session not found');
  });

  it("answers 401 without a token; another tenant's admin mints only into its own tenant", async () => {
    await refused(() => mintFor(newId('s'), null, {}), 401, 'unauthorized');
    const seg = writeSession(srv.workDir);
    await postChunk(srv, srv.admin, seg.sid, seg.w, 0, seg.bytes);
    const globex = await makeTenant(srv, 'globex');
    const a = await mintFor(seg.sid, globex.admin, {});
    expect(a.status).toBe(201);
    // The same sid in globex is another session: acme's segment is not there for this token.
    expect((await srv.stores.state.getTokenByHash(hashToken(a.json.token)))?.tenant).toBe('globex');
    const read = await request(srv, 'GET', `/v1/sessions/${seg.sid}/writers/${seg.w}`, {
      token: a.json.token,
    });
    expectError(srv, read, 404, 'not_found');
  });
});

describe('a minted session token in use', () => {
  it('ingests and reports in its session only; another session answers 404 and nothing changes', async () => {
    const mine = writeSession(srv.workDir);
    const other = writeSession(srv.workDir);
    const minted = await mintFor(mine.sid, srv.admin);
    const token = minted.json.token as string;

    const up = await postChunk(srv, token, mine.sid, mine.w, 0, mine.bytes);
    expect(up.status, up.text).toBe(201);
    const report = await request(srv, 'POST', `/v1/sessions/${mine.sid}/status`, {
      token,
      json: { state: 'working', note: 'harness started' },
    });
    expect(report.status, report.text).toBe(201);

    await postChunk(srv, srv.admin, other.sid, other.w, 0, other.bytes);
    const before = tenantsDigest(srv);
    const refusals = [
      await postChunk(srv, token, other.sid, other.w, other.bytes.length, other.lines[0]!),
      await postChunk(srv, token, newId('s'), mine.w, 0, mine.bytes),
      await request(srv, 'GET', `/v1/sessions/${other.sid}/writers/${other.w}`, { token }),
      await request(srv, 'POST', `/v1/sessions/${other.sid}/status`, { token, json: { state: 'done' } }),
    ];
    for (const r of refusals) expectError(srv, r, 404, 'not_found');
    expect(tenantsDigest(srv)).toBe(before);

    // Its scopes hold in its own session: no read scope, no replay; no admin, no token listing.
    expectError(
      srv,
      await request(srv, 'GET', `/v1/sessions/${mine.sid}/replay`, { token }),
      403,
      'forbidden',
    );
    expectError(srv, await request(srv, 'GET', '/v1/tokens', { token }), 403, 'forbidden');
  });

  it('stops working once revoked', async () => {
    const sid = newId('s');
    const minted = await mintFor(sid, srv.admin, { scopes: ['report'] });
    const del = await request(srv, 'DELETE', `/v1/tokens/${minted.json.id}`, { token: srv.admin });
    expect(del.status).toBe(204);
    const r = await request(srv, 'POST', `/v1/sessions/${sid}/status`, {
      token: minted.json.token,
      json: { state: 'working' },
    });
    expectError(srv, r, 401, 'unauthorized');
  });
});

describe('POST /v1/tokens with a session', () => {
  // a server of its own: the first server's tenant is acme
  const srv2 = useServer();

  it('follows the session-token rules: no admin scope, and an expiry by default', async () => {
    const sid = 's_01KZVVGRNR3D5V708Z4NPGG11H';
    const refused = await request(srv2, 'POST', '/v1/tokens', {
      token: srv2.admin,
      json: { scopes: ['admin'], session: sid },
    });
    expect(refused.status).toBe(400);
    expect(refused.json.error.details.refused).toEqual(['admin']);
    const ok = await request(srv2, 'POST', '/v1/tokens', {
      token: srv2.admin,
      json: { scopes: ['ingest'], session: sid },
    });
    expect(ok.status).toBe(201);
    expect(ok.json.session).toBe(sid);
    expect(Date.parse(ok.json.expires_at) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    expect(Date.parse(ok.json.expires_at) - Date.now()).toBeLessThanOrEqual(24 * 3600 * 1000);
  });
});

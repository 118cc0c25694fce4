/**
 * Tokens over real HTTP (DESIGN §4): created by an admin (the secret shown once), listed without secrets
 * or hashes, revoked; scopes and session-bound tokens enforced on the routes.
 */
import { describe, expect, it } from 'vitest';
import { idPattern, newId } from '../../lib/log/index.js';
import { hashToken } from '../../lib/service/index.js';
import { expectError, request } from '../support/http.js';
import { writeSession } from '../support/segments.js';
import { mint, useServer } from '../support/server.js';
import { postChunk, tenantsDigest } from '../support/stored.js';

const srv = useServer();
const admin = () => srv.admin;

describe('POST /v1/tokens, GET /v1/tokens, DELETE /v1/tokens/{id}', () => {
  let created: { token: string; id: string };

  it('creates a token whose secret is hns_ and 43 characters, and which then works', async () => {
    const a = await request(srv, 'POST', '/v1/tokens', {
      token: admin(),
      json: { scopes: ['read'], label: 'auditor' },
    });
    expect(a.status, a.text).toBe(201);
    expect(a.json.token).toMatch(/^hns_[0-9A-Za-z]{43}$/);
    expect(a.json.id).toMatch(idPattern('tok'));
    expect(a.json).toMatchObject({ tenant: 'local', scopes: ['read'], session: null, label: 'auditor' });
    expect(a.json).not.toHaveProperty('hash');
    expect(a.text).not.toContain(hashToken(a.json.token));
    created = { token: a.json.token, id: a.json.id };

    const use = await request(srv, 'GET', '/v1/sessions', { token: created.token });
    expect(use.status).toBe(200);
    // its scopes hold: a read token cannot ingest
    const seg = writeSession(srv.workDir);
    expectError(srv, await postChunk(srv, created.token, seg.sid, seg.w, 0, seg.bytes), 403, 'forbidden');
  });

  it('lists tokens without any secret or hash', async () => {
    const a = await request(srv, 'GET', '/v1/tokens', { token: admin() });
    expect(a.status).toBe(200);
    const ids = a.json.tokens.map((t: { id: string }) => t.id);
    expect(ids).toContain(created.id);
    for (const t of a.json.tokens) {
      expect(t).not.toHaveProperty('hash');
      expect(t).not.toHaveProperty('token');
      expect(t).not.toHaveProperty('secret');
    }
    for (const secret of [created.token, admin()]) {
      expect(a.text).not.toContain(secret);
      expect(a.text).not.toContain(hashToken(secret));
    }
    expect(a.text).not.toMatch(/hns_[0-9A-Za-z]{43}/);
    expect(a.text).not.toMatch(/[0-9a-f]{64}/);
  });

  it('revokes a token, which then gets 401', async () => {
    const del = await request(srv, 'DELETE', `/v1/tokens/${created.id}`, { token: admin() });
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    const err = expectError(srv, await request(srv, 'GET', '/v1/sessions', { token: created.token }), 401);
    expect(err.code).toBe('unauthorized');
    const list = await request(srv, 'GET', '/v1/tokens', { token: admin() });
    const rec = list.json.tokens.find((t: { id: string }) => t.id === created.id);
    expect(rec.revoked_at).not.toBeNull();
  });

  it('answers 404 for revoking a token it does not hold, 400 for an invalid id', async () => {
    expectError(
      srv,
      await request(srv, 'DELETE', `/v1/tokens/tok_${newId('e').slice(2)}`, { token: admin() }),
      404,
      'not_found',
    );
    const err = expectError(
      srv,
      await request(srv, 'DELETE', '/v1/tokens/not-a-token', { token: admin() }),
      400,
      'invalid_id',
    );
    expect(err.details).toEqual({ param: 'id' });
  });

  it('refuses an invalid token request with 400', async () => {
    for (const json of [
      { scopes: [] },
      { scopes: ['root'] },
      { scopes: ['read'], session: 's_bad' },
      { scopes: ['read'], ttl_seconds: 5 },
      { scopes: ['read'], extra: 1 },
      {},
    ]) {
      expectError(
        srv,
        await request(srv, 'POST', '/v1/tokens', { token: admin(), json }),
        400,
        'invalid_body',
      );
    }
    expectError(
      srv,
      await request(srv, 'POST', '/v1/tokens', {
        token: admin(),
        body: '{',
        headers: { 'content-type': 'application/json' },
      }),
      400,
      'invalid_body',
    );
  });

  it('refuses a token without the admin scope with 403 on create, list and revoke', async () => {
    const everythingElse = await mint(srv, 'local', ['ingest', 'report', 'read', 'board']);
    const victim = await mint(srv, 'local', ['read']);
    const victimId = (await srv.stores.state.getTokenByHash(hashToken(victim)))!.id;
    const tries = [
      request(srv, 'POST', '/v1/tokens', { token: everythingElse, json: { scopes: ['admin'] } }),
      request(srv, 'GET', '/v1/tokens', { token: everythingElse }),
      request(srv, 'DELETE', `/v1/tokens/${victimId}`, { token: everythingElse }),
    ];
    for (const a of await Promise.all(tries)) {
      const err = expectError(srv, a, 403, 'forbidden');
      expect(err.details.required).toEqual(['admin']);
    }
    expect((await request(srv, 'GET', '/v1/sessions', { token: victim })).status).toBe(200);
    expectError(srv, await request(srv, 'GET', '/v1/tokens'), 401, 'unauthorized');
  });
});

describe('a session-bound token', () => {
  it('can ingest into its session and gets 404 for any other', async () => {
    const mine = writeSession(srv.workDir);
    const other = writeSession(srv.workDir);
    const a = await request(srv, 'POST', '/v1/tokens', {
      token: admin(),
      json: { scopes: ['ingest', 'read', 'report'], session: mine.sid, label: 'harness' },
    });
    expect(a.status, a.text).toBe(201);
    expect(a.json.session).toBe(mine.sid);
    const bound = a.json.token as string;

    const ok = await postChunk(srv, bound, mine.sid, mine.w, 0, mine.bytes);
    expect(ok.status, ok.text).toBe(201);
    expect((await request(srv, 'GET', `/v1/sessions/${mine.sid}/replay`, { token: bound })).status).toBe(200);
    expect(
      (
        await request(srv, 'POST', `/v1/sessions/${mine.sid}/status`, {
          token: bound,
          json: { state: 'working' },
        })
      ).status,
    ).toBe(201);

    // The other session, even once it exists, is not there for this token.
    await postChunk(srv, admin(), other.sid, other.w, 0, other.bytes);
    const before = tenantsDigest(srv);
    const refusals = [
      await postChunk(srv, bound, other.sid, other.w, other.bytes.length, other.lines[2]!),
      await postChunk(srv, bound, newId('s'), other.w, 0, other.bytes),
      await request(srv, 'GET', `/v1/sessions/${other.sid}/writers/${other.w}`, { token: bound }),
      await request(srv, 'GET', `/v1/sessions/${other.sid}/replay`, { token: bound }),
      await request(srv, 'GET', `/v1/sessions/${other.sid}/status`, { token: bound }),
      await request(srv, 'POST', `/v1/sessions/${other.sid}/status`, {
        token: bound,
        json: { state: 'done' },
      }),
    ];
    for (const r of refusals) expectError(srv, r, 404, 'not_found');
    expect(tenantsDigest(srv)).toBe(before);
    // An unknown session and a known other session answer alike.
    expect(refusals[0]!.text).toBe(refusals[1]!.text);

    const listed = await request(srv, 'GET', '/v1/sessions', { token: bound });
    expect(listed.json.sessions.map((s: { sid: string }) => s.sid)).toEqual([mine.sid]);
  });
});

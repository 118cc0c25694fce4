/**
 * The API's outer edges over real HTTP (DESIGN §4): liveness, unknown routes, the error envelope, and
 * tenant isolation (another tenant's session answers exactly as a session that does not exist).
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { hashToken } from '../../lib/service/index.js';
import { expectError, expectNoStackTrace, request } from '../support/http.js';
import { type LocalSegment, writeSession } from '../support/segments.js';
import { makeTenant, type TestTenant, useServer } from '../support/server.js';
import { postChunk, storedSegmentPath, upload } from '../support/stored.js';

const srv = useServer();

describe('GET /healthz', () => {
  it('answers 200 without a token', async () => {
    const a = await request(srv, 'GET', '/healthz');
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({ ok: true });
    expect(typeof a.json.version).toBe('string');
  });
});

describe('unknown routes', () => {
  it('answer 404 with the JSON error envelope', async () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['GET', '/v2/sessions'],
      ['PUT', '/healthz'],
      ['POST', '/v1/sessions'],
      ['GET', '/v1/sessions/x/y/z/w'],
    ] as const) {
      // JSON content: the board's CSRF guard (mounted at `/`) refuses a form-like body before routing.
      const json = method === 'GET' ? undefined : {};
      const a = await request(srv, method, path, { token: srv.admin, json });
      const err = expectError(srv, a, 404, 'not_found');
      expect(err.message.length).toBeGreaterThan(0);
    }
  });

  it('under /v1 still ask for a token first', async () => {
    expectError(srv, await request(srv, 'GET', '/v1/nope'), 401, 'unauthorized');
    expectError(srv, await request(srv, 'GET', '/v1/nope', { token: srv.admin }), 404, 'not_found');
  });
});

describe('error answers', () => {
  it('never carry a stack trace or a server path', async () => {
    const seg = writeSession(srv.workDir);
    const bad = [
      await request(srv, 'POST', `/v1/sessions/${seg.sid}/writers/${seg.w}/chunks?offset=0`, {
        token: srv.admin,
        body: '{"v":3',
      }),
      await postChunk(srv, srv.admin, seg.sid, seg.w, 0, 'not json\n'),
      await request(srv, 'POST', '/v1/tokens', {
        token: srv.admin,
        body: '{"scopes":',
        headers: { 'content-type': 'application/json' },
      }),
      await request(srv, 'POST', `/v1/sessions/${seg.sid}/status`, {
        token: srv.admin,
        json: { state: 1 },
      }),
      await request(srv, 'GET', '/v1/sessions?cursor=%E0%A4%A', { token: srv.admin }),
      await request(srv, 'GET', `/v1/sessions/${seg.sid}/replay?format=%00`, { token: srv.admin }),
      await request(srv, 'GET', '/v1/sessions', { headers: { authorization: 'Bearer' } }),
      await request(srv, 'GET', '/v1/sessions', { headers: { authorization: `Basic ${'x'.repeat(5000)}` } }),
    ];
    for (const a of bad) {
      expect(a.status).toBeGreaterThanOrEqual(400);
      expect(a.status).toBeLessThan(500);
      expectError(srv, a, a.status);
      expectNoStackTrace(srv, a);
      expect(a.text).not.toMatch(/\n\s+at /);
    }
  });
});

describe('tenant isolation', () => {
  let other: TestTenant;
  let seg: LocalSegment;

  beforeAll(async () => {
    other = await makeTenant(srv, 'other');
    seg = writeSession(srv.workDir);
    await upload(srv, srv.admin, seg);
    const r = await request(srv, 'POST', `/v1/sessions/${seg.sid}/status`, {
      token: srv.admin,
      json: { state: 'blocked', note: 'waiting on a secret' },
    });
    expect(r.status).toBe(201);
  });

  const paths = (sid: string, w: string) => [
    `/v1/sessions/${sid}`,
    `/v1/sessions/${sid}/writers/${w}`,
    `/v1/sessions/${sid}/writers/${w}/segment`,
    `/v1/sessions/${sid}/status`,
    `/v1/sessions/${sid}/replay`,
    `/v1/sessions/${sid}/replay?format=text`,
    `/v1/sessions/${sid}/replay?raw=1`,
    `/v1/sessions/${sid}/verify`,
    `/v1/sessions/${sid}/inspect`,
  ];

  it("answers 404 for another tenant's session exactly as for one that does not exist", async () => {
    const theirs = paths(seg.sid, seg.w);
    const nowhere = paths(newId('s'), newId('w'));
    for (let i = 0; i < theirs.length; i++) {
      // the owner sees it
      const own = await request(srv, 'GET', theirs[i]!, { token: srv.admin });
      expect(own.status, theirs[i]).toBe(200);
      const a = await request(srv, 'GET', theirs[i]!, { token: other.admin });
      const b = await request(srv, 'GET', nowhere[i]!, { token: other.admin });
      expectError(srv, a, 404, 'not_found');
      expect(a.text, theirs[i]).toBe(b.text);
      expect(a.text).not.toContain(seg.sid);
      expect(a.text).not.toContain(seg.w);
      expect(a.text).not.toContain('local');
    }
  });

  it("does not list or show another tenant's sessions", async () => {
    const list = await request(srv, 'GET', '/v1/sessions', { token: other.admin });
    expect(list.status).toBe(200);
    expect(list.json.sessions).toEqual([]);
    const board = await request(srv, 'GET', '/v1/board', { token: other.admin });
    expect(board.json.sessions).toEqual([]);
    expect(board.text).not.toContain(seg.sid);
    const tokens = await request(srv, 'GET', '/v1/tokens', { token: other.admin });
    expect(tokens.json.tokens.every((t: { tenant: string }) => t.tenant === 'other')).toBe(true);
  });

  it("cannot revoke another tenant's token", async () => {
    const id = (await srv.stores.state.getTokenByHash(hashToken(srv.admin)))!.id;
    const a = await request(srv, 'DELETE', `/v1/tokens/${id}`, { token: other.admin });
    const b = await request(srv, 'DELETE', `/v1/tokens/tok_${newId('e').slice(2)}`, { token: other.admin });
    expectError(srv, a, 404, 'not_found');
    expect(a.text).toBe(b.text);
    expect((await request(srv, 'GET', '/v1/sessions', { token: srv.admin })).status).toBe(200);
  });

  it('keeps the same session and writer ids of two tenants apart', async () => {
    const before = readFileSync(storedSegmentPath(srv, 'local', seg.sid, seg.w));
    // The other tenant uploads a different segment under the same ids: it opens its own writer.
    const text = writeSession(srv.workDir, { text: 'the other tenant' });
    const forged = Buffer.from(
      text.bytes.toString('utf8').replaceAll(text.sid, seg.sid).replaceAll(text.w, seg.w),
      'utf8',
    );
    const a = await postChunk(srv, other.admin, seg.sid, seg.w, 0, forged);
    expect(a.status, a.text).toBe(201);
    expect(a.json.length).toBe(forged.length);
    expect(readFileSync(storedSegmentPath(srv, 'local', seg.sid, seg.w)).equals(before)).toBe(true);
    expect(readFileSync(storedSegmentPath(srv, 'other', seg.sid, seg.w)).equals(forged)).toBe(true);
    const mine = await request(srv, 'GET', `/v1/sessions/${seg.sid}/writers/${seg.w}/segment`, {
      token: srv.admin,
    });
    expect(mine.bytes.equals(seg.bytes)).toBe(true);
    const theirs = await request(srv, 'GET', `/v1/sessions/${seg.sid}/replay`, { token: other.admin });
    expect(theirs.text).toContain('the other tenant');
    expect(theirs.text).not.toContain('restart the payments worker');
    // and the other tenant still sees no status of the first tenant's session
    expectError(
      srv,
      await request(srv, 'GET', `/v1/sessions/${seg.sid}/status`, { token: other.admin }),
      404,
      'not_found',
    );
  });
});

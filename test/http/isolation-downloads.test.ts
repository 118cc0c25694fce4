/**
 * The session page's downloads with the board's cookie (issue 14.3): the merged replay (NDJSON and
 * text), the raw replay, each writer's segment and the verify report are the API's routes, which take
 * the board cookie (`auth: 'bearer_or_cookie'`, scope `board`) besides a bearer token. Tenant isolation
 * holds for the cookie as for a token (test/http/isolation.test.ts covers the bearer side of every
 * route): a board cookie of A reads A's session; B's cookie on A's session answers exactly what it gets
 * for a session that does not exist (404, same bytes); no credentials is 401; the cookie of a token
 * without the board or read scope is 403; a session-bound cookie reads its own session only.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { type Answer, expectError, request } from '../support/http.js';
import { writeSession } from '../support/segments.js';
import { makeTenant, mint, useServer } from '../support/server.js';
import { upload } from '../support/stored.js';

const srv = useServer({ tenants: [] });
let sidA: string;
let wA: string;
let otherA: string;
let cookieA: string;
let cookieB: string;
let ingestCookieA: string;
let boundCookieA: string;

const cookie = (token: string) => ({ cookie: `hansard_board=${token}` });
const get = (path: string, token: string | null) =>
  request(srv, 'GET', path, token === null ? {} : { headers: cookie(token) });

/** The session page's download links of session `sid` (writer `w`), as the page gives them. */
const downloads = (sid: string, w: string) => [
  `/v1/sessions/${sid}/replay`,
  `/v1/sessions/${sid}/replay?format=text`,
  `/v1/sessions/${sid}/replay?raw=1`,
  `/v1/sessions/${sid}/writers/${w}/segment`,
  `/v1/sessions/${sid}/verify`,
];

beforeAll(async () => {
  const a = await makeTenant(srv, 'tenant-a-dl');
  const b = await makeTenant(srv, 'tenant-b-dl');
  const seg = writeSession(srv.workDir, { agent: 'a-agent' });
  const other = writeSession(srv.workDir, { agent: 'a-other' });
  await upload(srv, a.admin, seg);
  await upload(srv, a.admin, other);
  const segB = writeSession(srv.workDir, { agent: 'b-agent' });
  await upload(srv, b.admin, segB);
  sidA = seg.sid;
  wA = seg.w;
  otherA = other.sid;
  cookieA = await mint(srv, a.name, ['board']);
  cookieB = await mint(srv, b.name, ['board']);
  ingestCookieA = await mint(srv, a.name, ['ingest']);
  boundCookieA = await mint(srv, a.name, ['board'], otherA);
}, 60_000);

describe('the session page downloads with the board cookie', () => {
  it('A’s board cookie downloads A’s merged, text and raw replay, segment and verify report', async () => {
    const bearer = (path: string) => request(srv, 'GET', path, { token: cookieA });
    for (const path of downloads(sidA, wA)) {
      const viaCookie = await get(path, cookieA);
      expect(viaCookie.status, `${path}: ${viaCookie.text.slice(0, 200)}`).toBe(200);
      // the same bytes as the same token sent as a bearer token
      expect(viaCookie.bytes.equals((await bearer(path)).bytes), path).toBe(true);
    }
    expect((await get(`/v1/sessions/${sidA}/verify`, cookieA)).json.ok).toBe(true);
  });

  it('B’s cookie on A’s session answers as for a session that does not exist', async () => {
    const fresh = { sid: newId('s'), w: newId('w') };
    const theirs = downloads(sidA, wA);
    const none = downloads(fresh.sid, fresh.w);
    for (let i = 0; i < theirs.length; i++) {
      const a: Answer = await get(theirs[i]!, cookieB);
      const n: Answer = await get(none[i]!, cookieB);
      expect(a.status, theirs[i]).toBe(404);
      expect(a.text.replaceAll(sidA, fresh.sid).replaceAll(wA, fresh.w), theirs[i]).toBe(n.text);
      expect(a.text).not.toContain('a-agent');
    }
  });

  it('no cookie is 401; a cookie of a token without board or read is 403', async () => {
    for (const path of downloads(sidA, wA)) {
      expectError(srv, await get(path, null), 401, 'unauthorized');
      expectError(srv, await get(path, ingestCookieA), 403, 'forbidden');
    }
  });

  it('a session-bound board cookie reads its own session and not another of its tenant', async () => {
    const own = await get(`/v1/sessions/${otherA}/replay`, boundCookieA);
    expect(own.status).toBe(200);
    for (const path of downloads(sidA, wA)) expectError(srv, await get(path, boundCookieA), 404, 'not_found');
  });

  it('a bearer token still wins over a cookie: a wrong token is refused even with a good cookie', async () => {
    const a = await request(srv, 'GET', `/v1/sessions/${sidA}/verify`, {
      token: cookieB,
      headers: cookie(cookieA),
    });
    expectError(srv, a, 404, 'not_found');
  });
});

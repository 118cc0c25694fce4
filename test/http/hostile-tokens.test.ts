/**
 * Hostile use of tokens and listing cursors (issue 8), over real HTTP on a clock the test moves: forged,
 * altered and borrowed cursors, a session-bound token listing sessions, the session tokens of a revoked
 * token, a flood of minting, and session tokens sharing the allowance of the token they came from.
 *
 * Each case names its row of docs/api.md "Hostile input: tokens and cursors", and the last test checks
 * that the status asserted is the one documented there, and that no row is left without a case.
 */
import { readFileSync } from 'node:fs';
import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { MemoryRateLimiter } from '../../lib/ratelimit/index.js';
import { MAX_LIVE_CHILD_TOKENS } from '../../lib/service/index.js';
import { SEALED_CURSOR } from '../../lib/service/sessions/cursors.js';
import { decodeCursor, encodeCursor } from '../../lib/store/keys.js';
import { type Answer, expectError, request } from '../support/http.js';
import { writeSession } from '../support/segments.js';
import { mint, type TestServer, type TestTenant, useServer } from '../support/server.js';
import { upload } from '../support/stored.js';

/** The rows each case asserted, checked against the doc at the end. */
const asserted: Array<{ row: string; status: number; code?: string }> = [];

/** Asserts an answer for a documented row: the status, and the error code of a refusal. */
function expectRow(srv: TestServer, row: string, a: Answer, status: number, code?: string) {
  asserted.push({ row, status, ...(code ? { code } : {}) });
  if (code) return expectError(srv, a, status, code);
  expect(a.status, a.text).toBe(status);
  return null;
}

let now = Date.UTC(2026, 3, 1);
const srv = useServer({ tenants: ['acme', 'globex'], deps: { now: () => new Date(now) } });
/** acme's sessions, newest first */
let sids: string[];

const get = (path: string, token: string) => request(srv, 'GET', path, { token });
const mintFor = (sid: string, token: string, json: unknown = {}) =>
  request(srv, 'POST', `/v1/sessions/${sid}/tokens`, { token, json });

/** Three sessions of a tenant, ingested one clock second apart; their sids newest first. */
async function threeSessions(t: TestTenant): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < 3; i++) {
    now += 1000;
    const seg = writeSession(srv.workDir);
    await upload(srv, t.admin, seg);
    out.unshift(seg.sid);
  }
  return out;
}

beforeAll(async () => {
  sids = await threeSessions(srv.tenants.acme);
  await threeSessions(srv.tenants.globex);
});

describe('listing cursors', () => {
  const FORGED = 'cursor: a forged or altered one';
  const BORROWED = 'cursor: one this server gave another tenant, or an unbound token of the tenant';

  it('pages with the cursors it gives, and refuses forged and altered ones with 400', async () => {
    const first = await get('/v1/sessions?limit=1', srv.admin);
    expect(first.json.sessions.map((s: { sid: string }) => s.sid)).toEqual([sids[0]]);
    const next = first.json.next as string;
    expect(next).toMatch(SEALED_CURSOR);
    const second = await get(`/v1/sessions?limit=1&cursor=${next}`, srv.admin);
    expect(second.json.sessions.map((s: { sid: string }) => s.sid)).toEqual([sids[1]]);

    const [inner, tag] = next.split('.') as [string, string];
    const b64 = (text: string) => Buffer.from(text).toString('base64url');
    // The store's own cursor inside (base64url of [updated_at, sid]), unsigned: what was accepted before
    // cursors were signed.
    const unsigned = Buffer.from(inner, 'base64url').toString();
    expect(decodeCursor(unsigned)).toEqual([expect.any(String), sids[0]]);
    // A position of the client's choosing (here: before every session) under a real signature.
    const moved = b64(encodeCursor('9999-12-31T23:59:59.999Z', 's_Z'));
    const flipped = `${tag[0] === 'A' ? 'B' : 'A'}${tag.slice(1)}`;
    // The same bytes spelled otherwise: a last base64url character that differs only in unused bits.
    const respell = (text: string): string => {
      const bytes = Buffer.from(text, 'base64url');
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      for (const c of alphabet) {
        const other = `${text.slice(0, -1)}${c}`;
        if (other !== text && Buffer.from(other, 'base64url').equals(bytes)) return other;
      }
      throw new Error(`${text} has one spelling only`);
    };
    const forged = [
      unsigned,
      `${moved}.${tag}`,
      `${inner}.${flipped}`,
      `${inner}.${'A'.repeat(43)}`,
      `${inner}.${tag}x`,
      `${inner}=.${tag}`,
      `${respell(inner)}.${tag}`,
      `${inner}.${respell(tag)}`,
      `${inner}`,
      `.${tag}`,
    ];
    for (const cursor of forged) {
      const a = await get(`/v1/sessions?limit=1&cursor=${encodeURIComponent(cursor)}`, srv.admin);
      const err = expectRow(srv, FORGED, a, 400, 'invalid_cursor')!;
      expect(err.message).toContain('start from the first page');
      expect(a.text).not.toContain(sids[1]!);
    }
  });

  it("refuses another tenant's cursor, and an unbound token's cursor sent by a bound token", async () => {
    const theirs = (await get('/v1/sessions?limit=1', srv.tenants.globex.admin)).json.next as string;
    expect(typeof theirs).toBe('string');
    expectRow(srv, BORROWED, await get(`/v1/sessions?cursor=${theirs}`, srv.admin), 400, 'invalid_cursor');

    const ours = (await get('/v1/sessions?limit=1', srv.admin)).json.next as string;
    const bound = await mint(srv, 'acme', ['read'], sids[2]!);
    const a = await get(`/v1/sessions?limit=1&cursor=${ours}`, bound);
    expectRow(srv, BORROWED, a, 400, 'invalid_cursor');
    expect(a.text).not.toContain(sids[1]!);
  });
});

describe('a session-bound token listing sessions', () => {
  const ROW = 'listing: `GET /v1/sessions` with a session-bound token';

  it('gets its own session on one page, with no cursor to the others', async () => {
    // Its session is the oldest: the first page of the tenant's listing does not hold it.
    const bound = await mint(srv, 'acme', ['read'], sids[2]!);
    for (const path of ['/v1/sessions?limit=1', '/v1/sessions']) {
      const a = await get(path, bound);
      expectRow(srv, ROW, a, 200);
      expect(a.json.sessions.map((s: { sid: string }) => s.sid)).toEqual([sids[2]]);
      expect(a.json.next).toBeNull();
      for (const other of sids.slice(0, 2)) expect(a.text).not.toContain(other);
    }
    // A session that does not exist yet: an empty page, and still no cursor.
    const fresh = await mint(srv, 'acme', ['read'], newId('s'));
    const a = await get('/v1/sessions?limit=1', fresh);
    expectRow(srv, ROW, a, 200);
    expect(a.json).toEqual({ sessions: [], next: null });
  });
});

describe('a session-bound token on the board API', () => {
  const ROW = 'listing: `GET /v1/board` with a session-bound token whose session is not among the 100 newest';

  it('sees its own session, however many others are newer', async () => {
    const oldest = newId('s');
    const report = (sid: string, at: number) =>
      srv.stores.state.putStatus({
        tenant: 'acme',
        sid,
        reports: [
          {
            state: 'working',
            note: '',
            events: [],
            events_dropped: 0,
            reported_by: 'tok_TEST',
            reported_at: new Date(at).toISOString(),
          },
        ],
        dropped_events: 0,
        dropped_reports: 0,
        version: 1,
      });
    await report(oldest, now - 86_400_000);
    for (let i = 0; i < 100; i++) await report(newId('s'), now + i);
    const bound = await mint(srv, 'acme', ['read'], oldest);
    const a = await get('/v1/board', bound);
    expectRow(srv, ROW, a, 200);
    expect(a.json.sessions.map((s: { sid: string }) => s.sid)).toEqual([oldest]);
  });
});

describe('session tokens of a revoked token', () => {
  const ROW = 'token: a session token minted by a token that is then revoked';

  it('stop working when the token that minted them is revoked, admin or not', async () => {
    const sid = newId('s');
    const made = async (scopes: string[]) => {
      const a = await request(srv, 'POST', '/v1/tokens', { token: srv.admin, json: { scopes } });
      expect(a.status, a.text).toBe(201);
      return a.json as { token: string; id: string };
    };
    for (const parent of [await made(['ingest', 'report', 'read']), await made(['admin'])]) {
      const child = await mintFor(sid, parent.token, { scopes: ['report'] });
      expect(child.status, child.text).toBe(201);
      const report = () =>
        request(srv, 'POST', `/v1/sessions/${sid}/status`, {
          token: child.json.token,
          json: { state: 'working' },
        });
      expect((await report()).status).toBe(201);
      const revoked = await request(srv, 'DELETE', `/v1/tokens/${parent.id}`, { token: srv.admin });
      expect(revoked.status).toBe(204);
      const err = expectRow(srv, ROW, await report(), 401, 'unauthorized')!;
      expect(err.message).toBe('the token was not accepted: it is unknown here, revoked or expired');
      // The child itself is not marked revoked: it is refused through its chain.
      const listed = (await get('/v1/tokens', srv.admin)).json.tokens as Array<Record<string, unknown>>;
      expect(listed.find((t) => t.id === child.json.id)).toMatchObject({
        parent: parent.id,
        root: parent.id,
        revoked_at: null,
      });
    }
  });
});

describe('minting a flood of session tokens', () => {
  const ROW = `minting: more than ${MAX_LIVE_CHILD_TOKENS} unexpired session tokens from one token`;

  it(`stops at ${MAX_LIVE_CHILD_TOKENS} live ones per token; revoked and expired ones make room`, async () => {
    const parent = await mint(srv, 'acme', ['ingest', 'report']);
    const sid = newId('s');
    const ids: string[] = [];
    for (let i = 0; i < MAX_LIVE_CHILD_TOKENS; i++) {
      const a = await mintFor(sid, parent, { ttl_seconds: 3600 });
      expect(a.status, a.text).toBe(201);
      ids.push(a.json.id);
    }
    const count = (await srv.stores.state.listTokens('acme')).length;
    const refused = await mintFor(sid, parent, { ttl_seconds: 3600 });
    const err = expectRow(srv, ROW, refused, 409, 'too_many_tokens')!;
    expect(err.details).toEqual({
      max_live_tokens: MAX_LIVE_CHILD_TOKENS,
      live_tokens: MAX_LIVE_CHILD_TOKENS,
    });
    expect(err.message).toContain('wait until some expire');
    expect((await srv.stores.state.listTokens('acme')).length).toBe(count);
    // Another token of the tenant is not held back by this one's children.
    expect((await mintFor(sid, srv.admin)).status).toBe(201);

    expect((await request(srv, 'DELETE', `/v1/tokens/${ids[0]}`, { token: srv.admin })).status).toBe(204);
    expect((await mintFor(sid, parent, { ttl_seconds: 60 })).status).toBe(201);
    expectRow(srv, ROW, await mintFor(sid, parent), 409, 'too_many_tokens');
    // An hour later every one of them has expired.
    now += 3600_000;
    expect((await mintFor(sid, parent)).status).toBe(201);
  });
});

describe('rate limits of minted tokens', () => {
  const SHARED = 'rate limit: the session tokens of one token, together';
  const FLOOD = 'rate limit: minting tokens as fast as possible';
  let at = Date.UTC(2026, 3, 1);
  const limiter = new MemoryRateLimiter({ limit: 50, window_seconds: 60 }, { now: () => at });
  const limited = useServer({ tenants: ['acme'], deps: { now: () => new Date(at), rateLimiter: limiter } });

  it('counts every request of a token and of the tokens minted from it against one allowance', async () => {
    const sid = newId('s');
    const parent = await mint(limited, 'acme', ['ingest', 'report', 'read']);
    const children: string[] = [];
    for (let i = 0; i < 3; i++) {
      const a = await request(limited, 'POST', `/v1/sessions/${sid}/tokens`, { token: parent, json: {} });
      expect(a.status, a.text).toBe(201);
      children.push(a.json.token);
    }
    // 3 mints at 10 each: 20 requests' worth are left for the parent and its three children together.
    let passed = 0;
    for (let i = 0; i < 40; i++) {
      const token = children[i % 3]!;
      const a = await request(limited, 'GET', `/v1/sessions/${sid}/status`, { token });
      if (a.status === 429) {
        expectRow(limited, SHARED, a, 429, 'rate_limited');
        break;
      }
      expect(a.status).toBe(404);
      passed++;
    }
    expect(passed).toBe(20);
    expectRow(
      limited,
      SHARED,
      await request(limited, 'GET', '/v1/sessions', { token: parent }),
      429,
      'rate_limited',
    );
    // Another root token of the tenant has its own allowance.
    expect((await request(limited, 'GET', '/v1/sessions', { token: limited.admin })).status).toBe(200);
  });

  it('charges 10 requests for each mint, so a flood of minting is held back first', async () => {
    at += 3600_000;
    const sid = newId('s');
    const statuses: number[] = [];
    for (let i = 0; i < 8; i++) {
      const a = await request(limited, 'POST', `/v1/sessions/${sid}/tokens`, {
        token: limited.admin,
        json: {},
      });
      statuses.push(a.status);
      if (a.status === 429) {
        const err = expectRow(limited, FLOOD, a, 429, 'rate_limited')!;
        expect(err.message).toContain('minting a token counts as 10 requests');
        expect(a.headers.get('retry-after')).toBe('12');
      }
    }
    expect(statuses).toEqual([201, 201, 201, 201, 201, 429, 429, 429]);
    // What is left of the allowance is too little for a mint, and nothing for a plain request either.
    expectRow(
      limited,
      FLOOD,
      await request(limited, 'GET', '/v1/sessions', { token: limited.admin }),
      429,
      'rate_limited',
    );
    at += 12_000;
    expect(
      (await request(limited, 'POST', `/v1/sessions/${sid}/tokens`, { token: limited.admin, json: {} }))
        .status,
    ).toBe(201);
  });
});

describe('docs/api.md "Hostile input: tokens and cursors"', () => {
  it('documents every case with the status it asserts, and has no row without a case', () => {
    const doc = readFileSync(new URL('../../docs/api.md', import.meta.url), 'utf8');
    const heading = '\n## Hostile input: tokens and cursors\n';
    expect(doc.indexOf(heading)).toBeGreaterThan(-1);
    const rows = new Map<string, string>();
    for (const line of doc.slice(doc.indexOf(heading) + heading.length).split('\n')) {
      if (line.startsWith('## ')) break;
      const m = /^\| (.+) \| (.+) \|$/.exec(line);
      if (m && !m[1]!.startsWith('---') && m[1] !== 'what is sent') rows.set(m[1]!, m[2]!);
    }
    expect(asserted.length).toBeGreaterThan(0);
    for (const c of asserted) {
      const answer = rows.get(c.row);
      expect(answer, `docs/api.md has no row "${c.row}"`).toBeDefined();
      expect(answer!.includes(String(c.status)), `${c.row}: ${answer}`).toBe(true);
      if (c.code) expect(answer!.includes(`\`${c.code}\``), `${c.row}: ${answer}`).toBe(true);
    }
    const used = new Set(asserted.map((c) => c.row));
    expect([...rows.keys()].filter((r) => !used.has(r))).toEqual([]);
  });
});

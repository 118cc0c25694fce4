/**
 * `GET /v1/search`, `GET /v1/search/status` and `POST /v1/search/reindex` (issue 30 item 3) over real HTTP
 * on loopback, the local stores with the SQLite FTS5 index and its queue drained by hand (`indexNow`):
 * scopes (ingest or admin alone: 403; a session-bound token finds its own session only, even when the query
 * names another), bad queries (400 `bad_query` saying where), paging by cursor, tenants apart, the rate
 * limit's cost, reindex giving the same hits, and 503 where the app has no index.
 */
import { describe, expect, it } from 'vitest';
import { SearchAnswer, SearchStatus } from '../../lib/contract/search.js';
import { MemoryRateLimiter } from '../../lib/ratelimit/memory.js';
import { expectError, request } from '../support/http.js';
import { type LocalSegment, writeSession } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { upload } from '../support/stored.js';

const srv = useServer({
  tenants: ['acme', 'globex'],
  tokens: {
    reader: ['read'],
    board: ['board'],
    ingest: ['ingest'],
    adminOnly: ['admin'],
    other: { tenant: 'globex', scopes: ['read'] },
  },
});

/** acme's sessions: `billing` (codex), four more about payments (claude-code); globex's one. */
const s: { billing?: LocalSegment; payments: LocalSegment[]; globex?: LocalSegment } = { payments: [] };
let bound = '';

async function search(token: string, q: string, extra = '') {
  return request(srv, 'GET', `/v1/search?q=${encodeURIComponent(q)}${extra}`, { token });
}

async function hitsOf(token: string, q: string, extra = ''): Promise<SearchAnswer> {
  const a = await search(token, q, extra);
  expect(a.status, a.text).toBe(200);
  return SearchAnswer.parse(a.json);
}

async function setUp() {
  if (s.billing) return;
  s.billing = writeSession(srv.workDir, { agent: 'codex', text: 'migrate the billing schema before Friday' });
  await upload(srv, srv.tenants.acme.admin, s.billing);
  for (let i = 0; i < 4; i++) {
    const seg = writeSession(srv.workDir, { agent: 'claude-code', text: `payments dashboard number ${i}` });
    await upload(srv, srv.tenants.acme.admin, seg);
    s.payments.push(seg);
  }
  s.globex = writeSession(srv.workDir, { text: 'the quokka ledger is globex only' });
  await upload(srv, srv.tenants.globex.admin, s.globex);
  await srv.indexNow();
  const minted = await request(srv, 'POST', `/v1/sessions/${s.billing.sid}/tokens`, {
    token: srv.tenants.acme.admin,
    json: { scopes: ['read'] },
  });
  expect(minted.status, minted.text).toBe(201);
  bound = minted.json.token as string;
}

describe('GET /v1/search', () => {
  it('finds words and phrases with marked snippets and links to the timeline row', async () => {
    await setUp();
    const a = await hitsOf(srv.tokens.reader, '"billing schema"');
    expect(a.query.phrases).toEqual(['billing schema']);
    expect(a.hits.length).toBeGreaterThan(0);
    const h = a.hits[0]!;
    expect(h.sid).toBe(s.billing!.sid);
    expect(h.type).toBe('message');
    expect(h.person).toBe('priya');
    expect(h.link).toMatch(new RegExp(`^/sessions/${h.sid}\\?at=e-[^#]+#e-`));
    expect(h.snippet.filter((p) => p.hit).map((p) => p.text.toLowerCase())).toEqual(['billing', 'schema']);
    expect(a.lag_seconds).toBe(0);
  });

  it('filters by agent, tool and type', async () => {
    await setUp();
    const codex = await hitsOf(srv.tokens.reader, 'payments agent:codex type:action tool:bash');
    expect(codex.hits.map((h) => [h.sid, h.type, h.tool])).toEqual([[s.billing!.sid, 'action', 'bash']]);
    const outputs = await hitsOf(srv.tokens.board, 'payments agent:claude-code type:output', '&limit=50');
    expect(new Set(outputs.hits.map((h) => h.sid))).toEqual(new Set(s.payments.map((p) => p.sid)));
    expect(outputs.hits.every((h) => h.type === 'output' && h.agent === 'claude-code')).toBe(true);
  });

  it('pages by cursor: every hit once, in the order of one big page', async () => {
    await setUp();
    const all = await hitsOf(srv.tokens.reader, 'payments', '&limit=50');
    expect(all.next_cursor).toBeNull();
    // each of the five sessions has the word in its action and output, four also in their message
    expect(all.hits.length).toBe(14);
    const paged: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const a = await hitsOf(srv.tokens.reader, 'payments', `&limit=4${cursor ? `&cursor=${cursor}` : ''}`);
      expect(a.hits.length).toBeLessThanOrEqual(4);
      paged.push(...a.hits.map((h) => `${h.sid}/${h.id}`));
      cursor = a.next_cursor;
      pages += 1;
    } while (cursor !== null && pages < 10);
    expect(pages).toBe(4);
    expect(paged).toEqual(all.hits.map((h) => `${h.sid}/${h.id}`));
  });

  it('refuses a cursor of another query, and one that is not a cursor', async () => {
    await setUp();
    const first = await hitsOf(srv.tokens.reader, 'payments', '&limit=2');
    expect(first.next_cursor).not.toBeNull();
    const other = await search(srv.tokens.reader, 'billing', `&cursor=${first.next_cursor}`);
    expectError(srv, other, 400, 'invalid_cursor');
    expectError(srv, await search(srv.tokens.reader, 'payments', '&cursor=a%20b'), 400, 'bad_request');
  });

  it.each([
    ['"billing schema', 1, /quote is not closed/],
    ['billing owner:priya', 9, /"owner:" is not a filter/],
    ['billing after:yesterday', 9, /is not a date/],
    ['type:email', 1, /is not a type/],
    ['-billing', null, /exclusions alone/],
  ])('a bad query %j is 400 bad_query saying where', async (q, position, message) => {
    const err = expectError(srv, await search(srv.tokens.reader, q), 400, 'bad_query');
    expect(err.message).toMatch(message);
    expect(err.details).toEqual({ position, query: q });
  });

  it('an empty, missing or over-long query is bad_query too; a bad limit is bad_request', async () => {
    expectError(srv, await search(srv.tokens.reader, ''), 400, 'bad_query');
    expectError(srv, await request(srv, 'GET', '/v1/search', { token: srv.tokens.reader }), 400, 'bad_query');
    const long = expectError(srv, await search(srv.tokens.reader, 'a'.repeat(513)), 400, 'bad_query');
    expect(long.message).toMatch(/at most 512 characters/);
    for (const limit of ['0', '51', '1e1', '-1']) {
      expectError(srv, await search(srv.tokens.reader, 'payments', `&limit=${limit}`), 400, 'bad_request');
    }
    expectError(srv, await search(srv.tokens.reader, 'a', '&q=b'), 400, 'bad_request');
  });

  it('needs read or board: ingest or admin alone is 403, no token 401', async () => {
    for (const token of [srv.tokens.ingest, srv.tokens.adminOnly]) {
      const err = expectError(srv, await search(token, 'payments'), 403, 'forbidden');
      expect(err.details.required).toEqual(['read', 'board']);
      expectError(srv, await request(srv, 'GET', '/v1/search/status', { token }), 403, 'forbidden');
    }
    expectError(srv, await search('', 'payments'), 401, 'unauthorized');
  });

  it('a session-bound token finds its own session only, whatever session: the query names', async () => {
    await setUp();
    const own = await hitsOf(bound, 'payments');
    expect(own.hits.length).toBe(2);
    expect(own.hits.every((h) => h.sid === s.billing!.sid)).toBe(true);
    const elsewhere = await hitsOf(bound, `payments session:${s.payments[0]!.sid}`);
    expect(elsewhere.hits).toEqual([]);
    const both = await hitsOf(bound, `payments session:${s.payments[0]!.sid} session:${s.billing!.sid}`);
    expect(new Set(both.hits.map((h) => h.sid))).toEqual(new Set([s.billing!.sid]));
  });

  it('keeps tenants apart: a phrase only globex holds is found by globex alone', async () => {
    await setUp();
    expect((await hitsOf(srv.tokens.reader, '"quokka ledger"')).hits).toEqual([]);
    expect((await hitsOf(srv.tenants.acme.admin, 'quokka')).hits).toEqual([]);
    const globex = await hitsOf(srv.tokens.other, '"quokka ledger"');
    expect(globex.hits.map((h) => h.sid)).toEqual([s.globex!.sid]);
    // and globex does not see acme's sessions by a word both have
    const payments = await hitsOf(srv.tokens.other, 'payments', '&limit=50');
    expect(new Set(payments.hits.map((h) => h.sid))).toEqual(new Set([s.globex!.sid]));
  });
});

describe('the board page GET /search', () => {
  const page = (token: string, query: string) => request(srv, 'GET', `/search${query}`, { token });

  it('lists hits with <mark>ed words, keeps the query in the box, and refuses what it cannot show', async () => {
    await setUp();
    const hits = await page(srv.tokens.board, '?q=%22billing+schema%22');
    expect(hits.status).toBe(200);
    expect(hits.text).toContain('<mark>billing</mark> <mark>schema</mark>');
    expect(hits.text).toMatch(
      /<input id="search-q" type="search" name="q" value="&quot;billing schema&quot;"/,
    );
    expect(hits.text).toContain(`href="/sessions/${s.billing!.sid}?at=e-`);
    const bad = await page(srv.tokens.board, '?q=%22billing');
    expect(bad.status).toBe(400);
    expect(bad.headers.get('content-type')).toContain('text/html');
    expect(bad.text).toContain('a quote is not closed (at character 1)');
    expect(bad.text).toContain('aria-invalid="true"');
    const cursor = await page(srv.tokens.board, '?q=payments&cursor=zz_notacursor');
    expect(cursor.status).toBe(400);
    expect(cursor.text).toContain('its cursor is not one this board gave');
    const help = await page(srv.tokens.board, '');
    expect(help.status).toBe(200);
    expect(help.text).toContain('How to search');
  });
});

describe('GET /v1/search/status and POST /v1/search/reindex', () => {
  it('status: nothing queued once indexed, the documents counted', async () => {
    await setUp();
    const a = await request(srv, 'GET', '/v1/search/status', { token: srv.tokens.board });
    expect(a.status, a.text).toBe(200);
    const st = SearchStatus.parse(a.json);
    expect(st.queued).toBe(0);
    expect(st.lag_seconds).toBe(0);
    expect(st.docs).toBeGreaterThan(10);
  });

  it('reindex of one session or all is queued (202), and rebuilds the same hits', async () => {
    await setUp();
    const before = await hitsOf(srv.tokens.reader, 'payments', '&limit=50');
    const one = await request(srv, 'POST', '/v1/search/reindex', {
      token: srv.tenants.acme.admin,
      json: { sid: s.billing!.sid },
    });
    expect(one.status, one.text).toBe(202);
    expect(one.json).toMatchObject({ sessions: 1, writers: 1 });
    const all = await request(srv, 'POST', '/v1/search/reindex', { token: srv.tenants.acme.admin });
    expect(all.status, all.text).toBe(202);
    expect(all.json).toMatchObject({ sessions: 5, writers: 5 });
    const queued = await request(srv, 'GET', '/v1/search/status', { token: srv.tokens.reader });
    expect(queued.json.queued).toBeGreaterThan(0);
    await srv.indexNow();
    const after = await hitsOf(srv.tokens.reader, 'payments', '&limit=50');
    expect(after.hits).toEqual(before.hits);
  });

  it('reindex needs admin, a session of the tenant, and a body it reads', async () => {
    await setUp();
    const byReader = await request(srv, 'POST', '/v1/search/reindex', { token: srv.tokens.reader, json: {} });
    expectError(srv, byReader, 403, 'forbidden');
    // globex's session is not acme's: as one that does not exist
    const foreign = await request(srv, 'POST', '/v1/search/reindex', {
      token: srv.tenants.acme.admin,
      json: { sid: s.globex!.sid },
    });
    expectError(srv, foreign, 404, 'not_found');
    const bad = await request(srv, 'POST', '/v1/search/reindex', {
      token: srv.tenants.acme.admin,
      json: { sid: 'not-a-session' },
    });
    expectError(srv, bad, 400, 'invalid_body');
    const extra = await request(srv, 'POST', '/v1/search/reindex', {
      token: srv.tenants.acme.admin,
      json: { session: s.billing!.sid },
    });
    expectError(srv, extra, 400, 'invalid_body');
  });
});

describe('the rate limit', () => {
  const limited = useServer({
    tokens: { reader: ['read'] },
    deps: { rateLimiter: new MemoryRateLimiter({ limit: 12, window_seconds: 3600 }) },
  });

  it('a search costs five requests of it', async () => {
    const go = () => request(limited, 'GET', '/v1/search?q=anything', { token: limited.tokens.reader });
    expect((await go()).status).toBe(200);
    expect((await go()).status).toBe(200);
    // 10 of 12 taken: a plain read still fits, a third search does not
    expect(
      (await request(limited, 'GET', '/v1/search/status', { token: limited.tokens.reader })).status,
    ).toBe(200);
    expectError(limited, await go(), 429, 'rate_limited');
  });
});

describe('an app without a search index', () => {
  // A 503 is logged as the server's own failure; here it is the point.
  const bare = useServer({
    tokens: { reader: ['read'] },
    deps: { search: null },
    mayLog: /answered 503 search_unavailable/,
  });

  it('answers 503 search_unavailable; an empty query is still 400', async () => {
    const a = await request(bare, 'GET', '/v1/search?q=payments', { token: bare.tokens.reader });
    expect(expectError(bare, a, 503, 'search_unavailable').message).toMatch(/no search index/);
    const st = await request(bare, 'GET', '/v1/search/status', { token: bare.tokens.reader });
    expectError(bare, st, 503, 'search_unavailable');
    const re = await request(bare, 'POST', '/v1/search/reindex', { token: bare.admin });
    expectError(bare, re, 503, 'search_unavailable');
    const bad = await request(bare, 'GET', '/v1/search?q=', { token: bare.tokens.reader });
    expectError(bare, bad, 400, 'bad_query');
    const page = await request(bare, 'GET', '/search?q=payments', { token: bare.admin });
    expect(page.status).toBe(503);
    expect(page.text).toContain('Search is not available on this server');
  });
});

/**
 * Attacks on search's tenant isolation (issue 30 item 6) over real HTTP on loopback, the local stores
 * (SQLite FTS5 in the state database, the indexing queue drained by hand): what tenant `eve` can learn of
 * tenant `acme`'s words or activity without ever seeing a hit of acme's, and what a session-bound token
 * can learn beyond its session.
 *
 * Findings, fixed, each test naming its finding:
 * - SEARCH-IDF: SQLite's FTS5 table is one for every tenant, and bm25's document frequencies counted every
 *   tenant's documents: the order of eve's own hits for two words of hers changed with how many of acme's
 *   documents held one of the words, a one-bit oracle "does any other tenant's text hold word X". Now a
 *   hit is ranked by its own terms alone (lib/store/sqlite/search-rank.ts).
 * - SEARCH-STATUS-BYTES: `GET /v1/search/status`'s `bytes` was the whole index's size times the tenant's
 *   share of the documents, so it moved when another tenant indexed. Now the tenant's own rows.
 *
 * Checked (fixed meanwhile by commit 2731822): SEARCH-STATUS-BOUND, a token bound to one session read
 * `docs` (and `queued`) of the whole tenant through `GET /v1/search/status`.
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SearchAnswer, SearchStatus } from '../../lib/contract/search.js';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({
  tenants: ['acme', 'eve'],
  tokens: {
    acmeIngest: { tenant: 'acme', scopes: ['ingest'] },
    acmeRead: { tenant: 'acme', scopes: ['read'] },
    eveIngest: { tenant: 'eve', scopes: ['ingest'] },
    eveRead: { tenant: 'eve', scopes: ['read'] },
  },
});

type Writer = ReturnType<typeof openSession>;

/** A writer whose clock steps 1 ms an event from `start` (µs): the order of its events' ts is known. */
function newWriter(agent: string, start: number, sid?: string): Writer {
  mkdirSync(srv.workDir, { recursive: true });
  let t = start;
  return openSession(
    mkdtempSync(join(srv.workDir, 'attack-')),
    { agent, ...(sid ? { sid } : {}) },
    { clock: () => (t += 1000) },
  );
}

async function upload(token: string, s: Writer, from = 0): Promise<number> {
  const bytes = readFileSync(s.path);
  const r = await request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=${from}`, {
    token,
    body: bytes.subarray(from),
  });
  expect(r.status, r.text).toBe(201);
  return bytes.length;
}

async function search(token: string, q: string): Promise<SearchAnswer> {
  const r = await request(srv, 'GET', `/v1/search?q=${encodeURIComponent(q)}&limit=50`, { token });
  expect(r.status, r.text).toBe(200);
  return SearchAnswer.parse(r.json);
}

async function status(token: string): Promise<SearchStatus> {
  const r = await request(srv, 'GET', '/v1/search/status', { token });
  expect(r.status, r.text).toBe(200);
  return SearchStatus.parse(r.json);
}

const T0 = Date.parse('2026-12-01T00:00:00Z') * 1000;

describe('what a neighbour tenant learns without a hit', () => {
  // SEARCH-IDF (severity: medium, confidentiality across tenants). Fix: ranking from tenant-local
  // statistics (one FTS5 table per tenant, or a rank that does not use corpus-wide frequencies).
  it('the order of my own hits does not depend on another tenant’s words (SEARCH-IDF)', async () => {
    // eve: filler so that bm25's idf is positive, then X with "alpha" twice and Y (newer) with "qxzv"
    // twice. With equal frequencies the two score the same and Y, the newer, comes first; once any
    // other document holds "qxzv" its idf falls and X comes first.
    const e = newWriter('eve-agent', T0);
    for (let i = 0; i < 30; i++) e.message({ user_id: 'eve', text: `filler line number ${i}` });
    const x = e.message({ user_id: 'eve', text: 'alpha alpha qxzv' });
    const y = e.message({ user_id: 'eve', text: 'alpha qxzv qxzv' });
    await upload(srv.tokens.eveIngest, e);
    await srv.indexNow();
    const before = (await search(srv.tokens.eveRead, 'alpha qxzv')).hits.map((h) => h.id);
    expect(before).toEqual([y.id, x.id]);

    // acme, a tenant eve never sees, writes the word once.
    const a = newWriter('acme-agent', T0);
    a.message({ user_id: 'carol', text: 'the launch codeword is qxzv' });
    await upload(srv.tokens.acmeIngest, a);
    await srv.indexNow();
    expect((await search(srv.tokens.acmeRead, 'qxzv')).hits).toHaveLength(1);
    expect((await search(srv.tokens.eveRead, 'codeword')).hits).toEqual([]);

    const after = (await search(srv.tokens.eveRead, 'alpha qxzv')).hits.map((h) => h.id);
    // Eve's answer must be a function of eve's data alone.
    expect(after).toEqual(before);
  });

  // SEARCH-STATUS-BYTES (severity: low, activity of other tenants). Fix: bytes of the tenant's own rows.
  it('my index size does not move when another tenant indexes (SEARCH-STATUS-BYTES)', async () => {
    const e = newWriter('eve-agent', T0 + 10_000_000_000);
    e.message({ user_id: 'eve', text: 'my own quiet line' });
    await upload(srv.tokens.eveIngest, e);
    await srv.indexNow();
    const before = await status(srv.tokens.eveRead);

    const a = newWriter('acme-agent', T0 + 10_000_000_000);
    for (let i = 0; i < 400; i++) {
      a.message({
        user_id: 'carol',
        text: `acme confidential roadmap item ${i} ${'lorem ipsum '.repeat(20)}`,
      });
    }
    await upload(srv.tokens.acmeIngest, a);
    await srv.indexNow();
    const after = await status(srv.tokens.eveRead);
    expect(after.docs).toBe(before.docs);
    // eve's index did not change: neither may what the server says of its size
    expect(after.bytes).toBe(before.bytes);
  });
});

describe('a session-bound token', () => {
  // SEARCH-STATUS-BOUND (severity: low): a harness token of one session saw the tenant's volume. Fixed
  // meanwhile by commit 2731822 (a session-bound token gets no tenant figures).
  it('reads nothing of the other sessions through /v1/search/status (SEARCH-STATUS-BOUND)', async () => {
    const one = newWriter('acme-agent', T0 + 20_000_000_000);
    one.message({ user_id: 'carol', text: 'the bound session' });
    await upload(srv.tokens.acmeIngest, one);
    const other = newWriter('acme-agent', T0 + 20_000_000_000);
    for (let i = 0; i < 5; i++) other.message({ user_id: 'carol', text: `another session ${i}` });
    await upload(srv.tokens.acmeIngest, other);
    await srv.indexNow();
    const minted = await request(srv, 'POST', `/v1/sessions/${one.sid}/tokens`, {
      token: srv.tenants.acme.admin,
      json: { scopes: ['read'] },
    });
    expect(minted.status, minted.text).toBe(201);
    const bound = minted.json.token as string;
    // Its search sees its session only...
    expect((await search(bound, 'session')).hits.every((h) => h.sid === one.sid)).toBe(true);
    const own = (await search(bound, `session:${one.sid}`)).hits.length;
    // ...but the status counts the whole tenant's documents: refused, or counted for its session only.
    const r = await request(srv, 'GET', '/v1/search/status', { token: bound });
    if (r.status === 200) {
      const st = SearchStatus.parse(r.json);
      if (st.docs !== null) expect(st.docs).toBeLessThanOrEqual(own);
      expect(st.queued === null || st.queued === 0).toBe(true);
    } else expect(r.status).toBe(403);
  });

  it('cannot widen its search: session: of another, case tricks, repeated filters', async () => {
    const mine = newWriter('acme-agent', T0 + 30_000_000_000);
    mine.message({ user_id: 'carol', text: 'widen probe mine' });
    await upload(srv.tokens.acmeIngest, mine);
    const theirs = newWriter('acme-agent', T0 + 30_000_000_000);
    theirs.message({ user_id: 'carol', text: 'widen probe theirs' });
    await upload(srv.tokens.acmeIngest, theirs);
    await srv.indexNow();
    const minted = await request(srv, 'POST', `/v1/sessions/${mine.sid}/tokens`, {
      token: srv.tenants.acme.admin,
      json: { scopes: ['read'] },
    });
    const bound = minted.json.token as string;
    const queries = [
      'widen',
      `widen session:${theirs.sid}`,
      `widen session:${mine.sid} session:${theirs.sid}`,
      `widen SESSION:${theirs.sid}`,
      `widen Session:"${theirs.sid}"`,
      `widen session:${theirs.sid.toLowerCase()}`,
      'theirs',
    ];
    for (const q of queries) {
      const r = await request(srv, 'GET', `/v1/search?q=${encodeURIComponent(q)}`, { token: bound });
      if (r.status !== 200) {
        expect(r.status, `${q}: ${r.text}`).toBe(400);
        continue;
      }
      const hits = SearchAnswer.parse(r.json).hits;
      expect(
        hits.every((h) => h.sid === mine.sid),
        q,
      ).toBe(true);
    }
    // A cursor made by an unbound reader's query is no key to the other session either.
    const wide = await search(srv.tokens.acmeRead, 'widen');
    expect(wide.hits.length).toBeGreaterThanOrEqual(2);
    const page = await request(srv, 'GET', '/v1/search?q=widen&limit=1', { token: srv.tokens.acmeRead });
    const cursor = page.json.next_cursor as string;
    const r = await request(srv, 'GET', `/v1/search?q=widen&limit=1&cursor=${cursor}`, { token: bound });
    expect(r.status).toBe(200);
    expect(SearchAnswer.parse(r.json).hits.every((h) => h.sid === mine.sid)).toBe(true);
  });
});

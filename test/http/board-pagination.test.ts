/**
 * The board shows every session (issue 8.7): with 250 sessions, the HTML board (the overview, issue 14.1)
 * says how many there are, shows a page of 50 (or `?limit=`), and its "Next page" links reach every
 * session exactly once; `GET
 * /v1/board` pages the same way with `total` and a signed `next` cursor, as `GET /v1/sessions` does. Over
 * real HTTP on loopback with the local stores.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { newId, ULID_SOURCE } from '../../lib/log/index.js';
import { expectError, request } from '../support/http.js';
import { mint, useServer } from '../support/server.js';

const SESSIONS = 250;

const srv = useServer({ tenants: ['acme', 'globex'], tokens: { board: ['board'], reporter: ['report'] } });
const { tokens } = srv;
let sids: string[];

/** A board page, signed in with the board cookie; `path` as given. */
const page = (path: string) =>
  request(srv, 'GET', path, { headers: { cookie: `hansard_board=${tokens.board}` } });

/** The sessions a board page lists, in order. */
const rowsOf = (html: string) =>
  [...html.matchAll(new RegExp(`<tr data-sid="(s_${ULID_SOURCE})">`, 'g'))].map((m) => m[1]!);

/** The href of the page's "Next page" link, HTML entities decoded, or null. */
function nextOf(html: string): string | null {
  const m = /<a href="([^"]+)" rel="next">Next page<\/a>/.exec(html);
  return m ? m[1]!.replaceAll('&amp;', '&') : null;
}

/** Follows "Next page" from `first`; the sessions of each page. */
async function walkPages(first: string): Promise<string[][]> {
  const pages: string[][] = [];
  let path: string | null = first;
  while (path !== null && pages.length < 20) {
    const a = await page(path);
    expect(a.status, a.text.slice(0, 300)).toBe(200);
    expect(a.text).toContain(`<strong>${SESSIONS} sessions</strong>`);
    pages.push(rowsOf(a.text));
    path = nextOf(a.text);
  }
  return pages;
}

beforeAll(async () => {
  sids = Array.from({ length: SESSIONS }, () => newId('s'));
  // A status report makes a session (its index entry): 250 of them, ten at a time.
  for (let i = 0; i < SESSIONS; i += 10) {
    await Promise.all(
      sids.slice(i, i + 10).map(async (sid) => {
        const a = await request(srv, 'POST', `/v1/sessions/${sid}/status`, {
          token: tokens.reporter,
          json: { state: 'working', note: `session ${sid}` },
        });
        expect(a.status, a.text).toBe(201);
      }),
    );
  }
  // another tenant's sessions are not counted
  const a = await request(srv, 'POST', `/v1/sessions/${newId('s')}/status`, {
    token: srv.tenants.globex.admin,
    json: { state: 'done', note: 'elsewhere' },
  });
  expect(a.status).toBe(201);
  expect(srv.admin).toBeTruthy();
}, 60_000);

describe('the HTML board with 250 sessions', () => {
  it('says how many there are, shows 50, and its Next page links reach all 250 exactly once', async () => {
    const pages = await walkPages('/');
    expect(pages.map((p) => p.length)).toEqual([50, 50, 50, 50, 50]);
    const all = pages.flat();
    expect(new Set(all).size).toBe(SESSIONS);
    expect([...all].sort()).toEqual([...sids].sort());
    const first = await page('/');
    expect(first.text).toContain('<strong>250 sessions</strong>, 50 on this page');
    expect(first.text).not.toContain('First page');
  });

  it('takes ?limit= as the listing does, and keeps it on the Next page link', async () => {
    const pages = await walkPages('/?limit=120');
    expect(pages.map((p) => p.length)).toEqual([120, 120, 10]);
    expect(new Set(pages.flat()).size).toBe(SESSIONS);
    const second = await page(nextOf((await page('/?limit=120')).text)!);
    expect(second.text).toContain('<a href="/?limit=120">First page</a>');
  });

  it('answers a bad page, limit or filter with a page that links to the first page', async () => {
    for (const path of ['/?page=0', '/?page=x', '/?limit=0', '/?limit=201', '/?limit=ten', '/?state=bogus']) {
      const a = await page(path);
      expect(a.status, path).toBe(400);
      expect(a.headers.get('content-type')).toContain('text/html');
      expect(a.text).toContain('Go to the <a href="/">first page</a>');
    }
  });
});

describe('GET /v1/board with 250 sessions', () => {
  it('answers the total and a page of 100 with a next cursor, which reaches all 250 exactly once', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    const sizes: number[] = [];
    do {
      const q: string = cursor === null ? '' : `?cursor=${encodeURIComponent(cursor)}`;
      const a = await request(srv, 'GET', `/v1/board${q}`, { token: tokens.board });
      expect(a.status, a.text.slice(0, 300)).toBe(200);
      expect(a.json.total).toBe(SESSIONS);
      sizes.push(a.json.sessions.length);
      seen.push(...a.json.sessions.map((s: { sid: string }) => s.sid));
      cursor = a.json.next;
    } while (cursor !== null && sizes.length < 20);
    expect(sizes).toEqual([100, 100, 50]);
    expect(new Set(seen).size).toBe(SESSIONS);
    expect([...seen].sort()).toEqual([...sids].sort());
  });

  it('takes ?limit= up to 200', async () => {
    const a = await request(srv, 'GET', '/v1/board?limit=200', { token: tokens.board });
    expect(a.json.sessions).toHaveLength(200);
    const b = await request(srv, 'GET', `/v1/board?limit=200&cursor=${encodeURIComponent(a.json.next)}`, {
      token: tokens.board,
    });
    expect(b.json.sessions).toHaveLength(50);
    expect(b.json.next).toBeNull();
    expectError(
      srv,
      await request(srv, 'GET', '/v1/board?limit=201', { token: tokens.board }),
      400,
      'bad_request',
    );
  });

  it('refuses a cursor it did not give (400 invalid_cursor)', async () => {
    const a = await request(srv, 'GET', '/v1/board?cursor=eyJ0IjoiMjAyNiJ9', { token: tokens.board });
    expectError(srv, a, 400, 'invalid_cursor');
  });

  it('counts one session for a session-bound token', async () => {
    const bound = await mint(srv, 'acme', ['board'], sids[0]!);
    const a = await request(srv, 'GET', '/v1/board', { token: bound });
    expect(a.json).toMatchObject({ total: 1, next: null });
    expect(a.json.sessions.map((s: { sid: string }) => s.sid)).toEqual([sids[0]]);
  });
});

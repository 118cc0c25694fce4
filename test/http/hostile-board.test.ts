/**
 * The board's sign-in link and the headers of private answers, against the real server of `hansard serve`
 * (issue 8.6). `GET /?token=` signs a browser in only on a top-level navigation from no site or from the
 * board itself (`Sec-Fetch-Site: none`/`same-origin`); from another site, or from a client that does not
 * say, it answers a page asking to confirm, which posts to `/login`. Every answer of the API and of the
 * board pages, errors included, carries `Cache-Control: no-store` and `X-Content-Type-Options: nosniff`.
 * Each case names its row of docs/api.md "Hostile sign-in and headers"; the last test checks the table.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { type DocCase, itEachCase, itMatchesDoc } from '../support/doc-cases.js';
import { type Answer, navigate, request, TYPED_NAVIGATION as TYPED } from '../support/http.js';
import { type LocalSegment, writeSession } from '../support/segments.js';
import { useServer } from '../support/server.js';

const srv = useServer({ real: true, tokens: { board: ['board'], reader: ['read'] } });
const { tokens } = srv;
let seg: LocalSegment;

/** What a browser sends with a link followed from another site. */
const FROM_ELSEWHERE = { ...TYPED, 'sec-fetch-site': 'cross-site' };

const cookieOf = (a: Answer) => (a.headers.get('set-cookie') ?? '').split(';')[0]!;
/** `GET /?token=` with exactly these request headers. */
const link = (headers: Record<string, string>, token = tokens.board) =>
  navigate(srv, `/?token=${token}`, headers);

/** The answer is the confirm page: no cookie, the tenant named, a form posting the token to /login. */
function expectConfirmPage(a: Answer): void {
  expect(a.headers.get('set-cookie')).toBeNull();
  expect(a.headers.get('content-type')).toContain('text/html');
  expect(a.text).toContain('board of tenant <strong>local</strong>');
  expect(a.text).toMatch(
    /<form method="post" action="\/login"><input type="hidden" name="token" value="hns_/,
  );
  expect(a.text).toContain(`value="${tokens.board}"`);
}

function expectSignedIn(a: Answer): void {
  expect(a.headers.get('location')).toBe('/');
  expect(cookieOf(a)).toBe(`hansard_board=${tokens.board}`);
  expect(a.headers.get('set-cookie')).toMatch(/HttpOnly/i);
}

/** `Cache-Control: no-store` and `X-Content-Type-Options: nosniff` on the answer. */
function expectPrivate(a: Answer): void {
  expect(a.headers.get('cache-control'), `${a.status} ${a.text.slice(0, 200)}`).toBe('no-store');
  expect(a.headers.get('x-content-type-options')).toBe('nosniff');
}

const ROW = {
  direct: 'sign-in link `GET /?token=` on a navigation from no site or the same origin',
  elsewhere:
    'sign-in link from another site (`Sec-Fetch-Site: cross-site` or `same-site`), as an image or a frame, or with no `Sec-Fetch-Site` (curl, an older browser)',
  refused: 'sign-in link with an unknown token or one without the board scope, from anywhere',
  confirm: 'the confirm page’s button (`POST /login`, same origin)',
  crossPost:
    "`POST /login` (or `/logout`) from another site, or with neither `Origin: <base url>` nor `Sec-Fetch-Site: same-origin` (curl: add `-H 'Origin: <base url>'`)",
  api: 'any answer of the API (`/v1/…` but its description), errors included',
  pages: 'any answer of the board pages, errors and redirects included',
};

const CASES: DocCase[] = [
  {
    name: 'a typed or pasted link signs in',
    row: ROW.direct,
    status: 303,
    run: () => link(TYPED),
    check: (a) => {
      expectSignedIn(a);
      expectPrivate(a);
    },
  },
  {
    name: 'a link followed on the board itself signs in',
    row: ROW.direct,
    status: 303,
    run: () => link({ ...TYPED, 'sec-fetch-site': 'same-origin' }),
    check: expectSignedIn,
  },
  {
    name: 'a browser that sends Sec-Fetch-Site: none but no mode or destination signs in',
    row: ROW.direct,
    status: 303,
    run: () => link({ 'sec-fetch-site': 'none' }),
    check: expectSignedIn,
  },
  {
    name: 'a link from another site asks to confirm',
    row: ROW.elsewhere,
    status: 200,
    run: () => link(FROM_ELSEWHERE),
    check: (a) => {
      expectConfirmPage(a);
      expectPrivate(a);
    },
  },
  {
    name: 'a link from a sibling site asks to confirm',
    row: ROW.elsewhere,
    status: 200,
    run: () => link({ ...TYPED, 'sec-fetch-site': 'same-site' }),
    check: expectConfirmPage,
  },
  {
    name: 'an image of another site pointing at the link asks to confirm (sets no cookie)',
    row: ROW.elsewhere,
    status: 200,
    run: () =>
      link({ 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' }),
    check: expectConfirmPage,
  },
  {
    name: 'a frame of the board’s own origin asks to confirm',
    row: ROW.elsewhere,
    status: 200,
    run: () => link({ ...TYPED, 'sec-fetch-site': 'same-origin', 'sec-fetch-dest': 'iframe' }),
    check: expectConfirmPage,
  },
  {
    name: 'a fetch() of the board’s own origin asks to confirm',
    row: ROW.elsewhere,
    status: 200,
    run: () => link({ 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' }),
    check: expectConfirmPage,
  },
  {
    name: 'a client that sends no Sec-Fetch-Site asks to confirm',
    row: ROW.elsewhere,
    status: 200,
    run: () => link({}),
    check: expectConfirmPage,
  },
  {
    name: 'an unknown token from another site gets the sign-in page with why',
    row: ROW.refused,
    status: 401,
    run: () => link(FROM_ELSEWHERE, `hns_${'x'.repeat(43)}`),
    check: (a) => {
      expect(a.headers.get('set-cookie')).toBeNull();
      expect(a.text).toContain('not valid here');
      expect(a.text).not.toContain('type="hidden"');
      expectPrivate(a);
    },
  },
  {
    name: 'a token without the board scope, typed, gets the sign-in page with why',
    row: ROW.refused,
    status: 401,
    run: () => link(TYPED, tokens.reader),
    check: (a) => {
      expect(a.headers.get('set-cookie')).toBeNull();
      expect(a.text).toContain('needs the board scope');
    },
  },
  {
    name: 'the confirm page’s button signs in',
    row: ROW.confirm,
    status: 303,
    run: async () => {
      const page = await link(FROM_ELSEWHERE);
      const token = /name="token" value="([^"]+)"/.exec(page.text)![1]!;
      return request(srv, {
        method: 'POST',
        path: '/login',
        body: `token=${token}`,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: srv.url,
          'sec-fetch-site': 'same-origin',
        },
      });
    },
    check: (a) => {
      expectSignedIn(a);
      expectPrivate(a);
    },
  },
  {
    name: 'a form of another site posting the token to /login is refused',
    row: ROW.crossPost,
    status: 403,
    run: () =>
      request(srv, {
        method: 'POST',
        path: '/login',
        body: `token=${tokens.board}`,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          origin: 'https://evil.example',
          'sec-fetch-site': 'cross-site',
        },
      }),
    check: (a) => {
      expect(a.headers.get('set-cookie')).toBeNull();
      expectPrivate(a);
    },
  },
  ...(
    [
      ['the session listing', 200, () => '/v1/sessions', () => srv.admin],
      ['a streamed replay', 200, () => `/v1/sessions/${seg.sid}/replay?format=text`, () => srv.admin],
      ['the board as JSON', 200, () => '/v1/board', () => tokens.board],
      ['no token', 401, () => '/v1/sessions', () => null],
      ['a token without the scope', 403, () => '/v1/tokens', () => tokens.reader],
      ['a session that does not exist', 404, () => `/v1/sessions/${newId('s')}/replay`, () => srv.admin],
      ['an id that is not one', 400, () => '/v1/sessions/s_bad/replay', () => srv.admin],
      ['a route that does not exist', 404, () => '/v1/nothing-here', () => srv.admin],
    ] as const
  ).map(
    ([what, status, path, token]): DocCase => ({
      name: `the API: ${what}`,
      row: ROW.api,
      status,
      run: () => request(srv, { method: 'GET', path: path(), token: token() }),
      check: expectPrivate,
    }),
  ),
  ...(
    [
      ['the board', 200, () => '/'],
      ['a session’s timeline', 200, () => `/sessions/${seg.sid}`],
      ['a session that does not exist', 404, () => `/sessions/${newId('s')}`],
      ['the sign-in page', 200, () => '/login'],
    ] as const
  ).map(
    ([what, status, path]): DocCase => ({
      name: `the pages: ${what}`,
      row: ROW.pages,
      status,
      run: () =>
        request(srv, { method: 'GET', path: path(), headers: { cookie: `hansard_board=${tokens.board}` } }),
      check: expectPrivate,
    }),
  ),
  {
    name: 'the pages: the redirect of a browser that is not signed in',
    row: ROW.pages,
    status: 302,
    run: () => request(srv, { method: 'GET', path: '/' }),
    check: expectPrivate,
  },
];

beforeAll(async () => {
  seg = writeSession(srv.workDir);
  const up = await request(srv, {
    method: 'POST',
    path: `/v1/sessions/${seg.sid}/writers/${seg.w}/chunks?offset=0`,
    token: srv.admin,
    body: seg.bytes,
  });
  expect(up.status, up.text).toBe(201);
});

describe('the board’s sign-in link and private headers against the real server', () => {
  itEachCase(srv, CASES);

  it('the public description of the API stays cacheable', async () => {
    for (const path of ['/v1/openapi.json', '/healthz']) {
      const a = await request(srv, { method: 'GET', path });
      expect(a.status).toBe(200);
      expect(a.headers.get('cache-control')).toBeNull();
    }
  });

  itMatchesDoc('Hostile sign-in and headers', CASES);
});

/**
 * A board link opened signed out survives signing in: the page sends the browser to
 * `/login?next=<that link>` (`signInLocation`, lib/http/auth.ts), the sign-in page carries `next` in its
 * form, and `POST /login` (and the confirm page of a board link) redirects back to it. Only a path of the
 * board is followed back (`safeNext`, lib/http/routes/pages/sign-in.tsx): any other `next` lands on `/`,
 * so sign-in is no open redirect. Real HTTP against `createApp` on loopback.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { type Answer, request } from '../support/http.js';
import { type LocalSegment, writeSession } from '../support/segments.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { board: ['board'], ingest: ['ingest'] } });
let seg: LocalSegment;

/** `POST /login` from the board's own form with these fields (URL-encoded here). */
const postLogin = (fields: Record<string, string>) =>
  request(srv, {
    method: 'POST',
    path: '/login',
    body: new URLSearchParams(fields).toString(),
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: srv.url },
  });
const cookieOf = (a: Answer) => (a.headers.get('set-cookie') ?? '').split(';')[0]!;
/** The `next` the sign-in page's form carries, or null (hono/jsx escapes it: read back as HTML text). */
const formNext = (html: string) => /<input type="hidden" name="next" value="([^"]*)"/.exec(html)?.[1] ?? null;

beforeAll(async () => {
  seg = writeSession(srv.workDir);
  const up = await request(srv, {
    method: 'POST',
    path: `/v1/sessions/${seg.sid}/writers/${seg.w}/chunks?offset=0`,
    token: srv.tenant.admin,
    body: seg.bytes,
  });
  expect(up.status, up.text).toBe(201);
});

describe('a board link opened signed out', () => {
  it('a session link with its query goes to sign in and, signed in, back to the link', async () => {
    const link = `/sessions/${seg.sid}?at=e-m_01&person=priya`;
    const out = await request(srv, 'GET', link);
    expect(out.status).toBe(302);
    expect(out.headers.get('location')).toBe(`/login?next=${encodeURIComponent(link)}`);

    const login = await request(srv, 'GET', out.headers.get('location')!);
    expect(login.status).toBe(200);
    expect(formNext(login.text)).toBe(link.replaceAll('&', '&amp;'));

    const signed = await postLogin({ token: srv.tokens.board, next: link });
    expect(signed.status).toBe(303);
    expect(signed.headers.get('location')).toBe(link);
    expect(cookieOf(signed)).toBe(`hansard_board=${srv.tokens.board}`);

    const back = await request(srv, { method: 'GET', path: link, headers: { cookie: cookieOf(signed) } });
    expect(back.status, back.text.slice(0, 200)).toBe(200);
    expect(back.text).toContain(seg.sid);
  });

  it('the overview with a filter and a person page keep their link; `/` itself stays plain /login', async () => {
    for (const link of ['/?state=blocked', '/people/priya', '/agents/claude-code?page=2']) {
      const out = await request(srv, 'GET', link);
      expect(out.status, link).toBe(302);
      expect(out.headers.get('location')).toBe(`/login?next=${encodeURIComponent(link)}`);
    }
    const home = await request(srv, 'GET', '/');
    expect(home.headers.get('location')).toBe('/login');
  });

  it('a token without the board scope is sent to sign in with the link too', async () => {
    const link = `/sessions/${seg.sid}`;
    const out = await request(srv, 'GET', link, { token: srv.tokens.ingest });
    expect(out.status).toBe(302);
    expect(out.headers.get('location')).toBe(`/login?next=${encodeURIComponent(link)}`);
  });

  it('a refused token keeps `next` on the sign-in page it answers', async () => {
    const link = `/sessions/${seg.sid}`;
    const a = await postLogin({ token: `hns_${'x'.repeat(43)}`, next: link });
    expect(a.status).toBe(401);
    expect(formNext(a.text)).toBe(link);
  });

  it('the confirm page of a board link carries `next`, and its button goes back there', async () => {
    const link = `/sessions/${seg.sid}?at=d-0`;
    // fetch sends no Sec-Fetch-Site: the link asks to confirm
    const page = await request(srv, 'GET', `/?token=${srv.tokens.board}&next=${encodeURIComponent(link)}`);
    expect(page.status).toBe(200);
    expect(formNext(page.text)).toBe(link);
    const signed = await postLogin({ token: srv.tokens.board, next: link });
    expect(signed.headers.get('location')).toBe(link);
  });
});

describe('a `next` that is not a path of the board', () => {
  const HOSTILE = [
    '//evil.example',
    '//evil.example/sessions',
    '/\\evil.example',
    '/\\/evil.example',
    'https://evil.example',
    'http:/evil.example',
    'javascript:alert(1)',
    'JaVaScRiPt:alert(1)',
    '%2F%2Fevil.example',
    '/\r\nSet-Cookie: x=1',
    '/sessions\r\nLocation: https://evil.example',
    '/ok\tpath',
    '/ok path',
    '/ok\u0000',
    '/caf\u00e9',
    'evil.example',
    '',
    `/${'a'.repeat(2048)}`,
  ];

  it('signing in lands on `/`, whatever it was', async () => {
    for (const next of HOSTILE) {
      const a = await postLogin({ token: srv.tokens.board, next });
      expect(a.status, JSON.stringify(next)).toBe(303);
      expect(a.headers.get('location'), JSON.stringify(next)).toBe('/');
    }
  });

  it('the confirm page of a board link drops it', async () => {
    for (const next of HOSTILE) {
      const a = await request(srv, 'GET', `/?token=${srv.tokens.board}&next=${encodeURIComponent(next)}`);
      expect(a.status, JSON.stringify(next)).toBe(200);
      expect(formNext(a.text), JSON.stringify(next)).toBeNull();
    }
  });

  it('the sign-in page does not carry it', async () => {
    for (const next of HOSTILE) {
      const a = await request(srv, 'GET', `/login?next=${encodeURIComponent(next)}`);
      expect(a.status).toBe(200);
      expect(formNext(a.text), JSON.stringify(next)).toBeNull();
    }
  });

  it('the sign-in page escapes a path that holds markup', async () => {
    const next = '/sessions/x?q="><script>alert(1)</script>';
    const a = await request(srv, 'GET', `/login?next=${encodeURIComponent(next)}`);
    expect(a.text).not.toContain('<script>alert(1)');
    expect(a.text).not.toContain('"><script');
    expect(formNext(a.text)).toBe('/sessions/x?q=&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;');
  });

  it('a page link too long to carry goes to plain /login', async () => {
    const out = await request(srv, 'GET', `/people/${'p'.repeat(2100)}`);
    expect(out.status).toBe(302);
    expect(out.headers.get('location')).toBe('/login');
  });
});

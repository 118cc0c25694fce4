/**
 * `POST /login` without the board's own origin (curl, a script, another site's form) is still refused
 * with 403 `forbidden` and no cookie, and the refusal says what was refused and why: a sign-in must come
 * from the board's own page (`Origin` equal to the server's, or `Sec-Fetch-Site: same-origin`), and from
 * curl one adds `-H 'Origin: <base url>'`; hono's own answer said only "the request is not valid".
 * Real HTTP against `createApp` on loopback.
 */
import { describe, expect, it } from 'vitest';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { board: ['board'] } });

const form = (token: string) => new URLSearchParams({ token }).toString();
const login = (headers: Record<string, string>) =>
  request(srv, {
    method: 'POST',
    path: '/login',
    body: form(srv.tokens.board),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });

describe('POST /login without the board origin', () => {
  it('no Origin (curl): 403 forbidden naming the check, the base URL and the curl fix; no cookie', async () => {
    const r = await login({});
    expect(r.status).toBe(403);
    expect(r.headers.get('set-cookie')).toBeNull();
    const err = (JSON.parse(r.text) as { error: { code: string; message: string; details: unknown } }).error;
    expect(err.code).toBe('forbidden');
    expect(err.message).not.toContain('the request is not valid');
    expect(err.message).toContain("a sign-in must come from the board's own page");
    expect(err.message).toContain('no Origin header');
    expect(err.message).toContain('Sec-Fetch-Site same-origin');
    expect(err.message).toContain(`-H 'Origin: ${srv.url}'`);
    expect(err.details).toEqual({ origin: null, sec_fetch_site: null, expected_origin: srv.url });
  });

  it("another site's form: 403, naming the Origin it came with", async () => {
    const r = await login({ origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' });
    expect(r.status).toBe(403);
    expect(r.headers.get('set-cookie')).toBeNull();
    const err = (JSON.parse(r.text) as { error: { code: string; message: string } }).error;
    expect(err.code).toBe('forbidden');
    expect(err.message).toContain('Origin https://evil.example and Sec-Fetch-Site cross-site');
  });

  it("the fix the message gives works: with -H 'Origin: <base url>' the sign-in goes through", async () => {
    const r = await login({ origin: srv.url });
    expect(r.status).toBe(303);
    expect(r.headers.get('set-cookie')).toContain(`hansard_board=${srv.tokens.board}`);
  });

  it('POST /logout from elsewhere says sign-out', async () => {
    const r = await request(srv, {
      method: 'POST',
      path: '/logout',
      body: '',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(r.status).toBe(403);
    expect(r.text).toContain("a sign-out must come from the board's own page");
  });
});

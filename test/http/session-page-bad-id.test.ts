/**
 * A session page link whose id is not a session id (`/sessions/s_nope`, issue 14 finding 5) answers a
 * page like the rest of the board's bad links (`/?state=bogus`): HTML, 400, saying why and linking to the
 * board, not the API's JSON `invalid_id`. The API's route keeps its JSON.
 */
import { describe, expect, it } from 'vitest';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { board: ['board', 'read'] } });
const page = (path: string) =>
  request(srv, 'GET', path, { headers: { cookie: `hansard_board=${srv.tokens.board}` } });

describe('a malformed session id on the page route', () => {
  it('is an HTML page (400) with a link back to the board', async () => {
    for (const path of ['/sessions/s_nope', '/sessions/s_nope?after=3', '/sessions/nope?person=ada']) {
      const r = await page(path);
      expect(r.status, path).toBe(400);
      expect(r.headers.get('content-type')).toMatch(/^text\/html/);
      expect(r.text).toContain('That session link cannot be shown: the sid in the path is not valid');
      expect(r.text).toContain('<a href="/">');
      expect(r.text).not.toContain('"code":"invalid_id"');
    }
  });

  it('answers like /?state=bogus does (both HTML 400 pages)', async () => {
    const overview = await page('/?state=bogus');
    expect(overview.status).toBe(400);
    expect(overview.headers.get('content-type')).toMatch(/^text\/html/);
  });

  it('leaves the API route its JSON invalid_id', async () => {
    const api = await request(srv, 'GET', '/v1/sessions/s_nope', { token: srv.tokens.board });
    expect(api.status).toBe(400);
    expect(JSON.parse(api.text).error.code).toBe('invalid_id');
  });
});

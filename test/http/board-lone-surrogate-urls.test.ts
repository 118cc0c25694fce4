/**
 * The board's pages against names that are not well-formed text, in every place a page takes one: a
 * lone surrogate in a stored user_id and agent (written as a JSON escape, kept as U+FFFD in the summary,
 * as written in the segment) and malformed percent-escapes (`%ED%A0%BD`, `%D8%3D`, a bare `%`) in
 * `/people/…`, `/agents/…`, `?person=`, `?agent=` and `?q=`. No page answers 500 (test/attack/board-lone-
 * surrogate has the cut names).
 */
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSession } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { board: ['board'] } });

describe('board pages and lone surrogates', () => {
  it('answer every page without a 500', async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const s = openSession(mkdtempSync(join(srv.workDir, 'lone-')), { agent: 'coderLONE' });
    s.message({ user_id: 'aliceLONE', text: 'hello LONE there' });
    s.end();
    const body = readFileSync(s.path, 'utf8').replaceAll('LONE', '\\udc00');
    const up = await request(srv, 'POST', `/v1/sessions/${s.sid}/writers/${s.w}/chunks?offset=0`, {
      token: srv.admin,
      body,
    });
    expect(up.status, up.text).toBe(201);
    const cookie = { headers: { cookie: `hansard_board=${srv.tokens.board}` } };
    const bad = ['%ED%A0%BD', '%D8%3D', 'a%EF%BF%BD', '%'];
    const paths = [
      '/',
      '/board/fragment',
      `/sessions/${s.sid}`,
      `/people/${encodeURIComponent('alice\ufffd')}`,
      `/agents/${encodeURIComponent('coder\ufffd')}`,
      ...bad.flatMap((b) => [
        `/people/${b}`,
        `/agents/${b}`,
        `/?person=${b}`,
        `/?agent=${b}`,
        `/?q=${b}`,
        `/board/fragment?person=${b}`,
        `/sessions/${s.sid}?person=${b}`,
      ]),
    ];
    for (const path of paths) {
      const page = await request(srv, 'GET', path, cookie);
      expect(page.status, `${path}: ${page.text.slice(0, 200)}`).toBeLessThan(500);
    }
    // the summary keeps the names well-formed, and the person's page finds the session by them
    const alice = await request(
      srv,
      'GET',
      `/v1/board/overview?person=${encodeURIComponent('alice\ufffd')}`,
      {
        token: srv.tokens.board,
      },
    );
    expect(alice.json.matched).toBe(1);
    expect(alice.json.rows[0].agents).toEqual(['coder\ufffd']);
  });
});

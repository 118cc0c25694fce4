/**
 * A status report for a session nothing was uploaded of (issue 9.7): reports may come first, so it is
 * stored, but the answer says `writers: 0`, the CLI warns that the id may be mistyped, and the board lists
 * such sessions apart, under "No segments yet", not among the recorded ones.
 */
import { describe, expect, it } from 'vitest';
import { runCli } from '../../lib/client/cli/main.js';
import { newId } from '../../lib/log/index.js';
import { request } from '../support/http.js';
import { writeSession } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { upload } from '../support/stored.js';

const srv = useServer({ tenants: ['acme'], tokens: { board: ['board'] } });
const { tokens } = srv;

const report = (sid: string) =>
  request(srv, 'POST', `/v1/sessions/${sid}/status`, {
    token: srv.admin,
    json: { state: 'working', note: 'on it' },
  });

async function cliReport(sid: string) {
  let out = '';
  let err = '';
  const code = await runCli(
    ['session', 'report', '--session', sid, '--state', 'working', '--note', 'on it'],
    {
      stdout: { write: (s: string | Uint8Array) => (out += String(s)) },
      stderr: { write: (s: string) => (err += s) },
      env: { HANSARD_URL: srv.url, HANSARD_TOKEN: srv.admin },
      cwd: srv.workDir,
    },
  );
  return { code, out, err };
}

describe('a status report for a session with no segments', () => {
  it('is stored and answered with writers 0; once a segment arrives, writers counts it', async () => {
    const seg = writeSession(srv.workDir);
    const first = await report(seg.sid);
    expect(first.status).toBe(201);
    expect(first.json).toMatchObject({ sid: seg.sid, state: 'working', writers: 0 });
    await upload(srv, srv.admin, seg);
    expect((await report(seg.sid)).json.writers).toBe(1);
    const got = await request(srv, 'GET', `/v1/sessions/${seg.sid}/status`, { token: srv.admin });
    expect(got.json.writers).toBe(1);
  });

  it('makes `hansard session report` warn that the id may be mistyped, still exit 0', async () => {
    const typo = newId('s');
    const r = await cliReport(typo);
    expect(r.code).toBe(0);
    expect(r.out).toBe(`reported working for ${typo}\n`);
    expect(r.err).toContain(`the server has no segments of ${typo} yet`);
    expect(r.err).toContain('check the session id');
  });

  it('does not warn for a session with segments', async () => {
    const seg = writeSession(srv.workDir);
    await upload(srv, srv.admin, seg);
    const r = await cliReport(seg.sid);
    expect(r.code).toBe(0);
    expect(r.err).toBe('');
  });

  it('shows on the board under "No segments yet", apart from recorded sessions', async () => {
    const recorded = writeSession(srv.workDir);
    await upload(srv, srv.admin, recorded);
    await report(recorded.sid);
    const ghost = newId('s');
    await report(ghost);
    const a = await request(srv, 'GET', '/', { headers: { cookie: `hansard_board=${tokens.board}` } });
    expect(a.status).toBe(200);
    const apart = a.text.indexOf('<h2>No segments yet</h2>');
    expect(apart).toBeGreaterThan(0);
    const rowAt = (sid: string) => a.text.indexOf(`<tr data-sid="${sid}">`);
    expect(rowAt(recorded.sid)).toBeGreaterThan(0);
    expect(rowAt(recorded.sid)).toBeLessThan(apart);
    expect(rowAt(ghost)).toBeGreaterThan(apart);
  });
});

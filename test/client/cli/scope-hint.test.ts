/**
 * A token without the scope a command needs (issue 9.7): the server names the scopes required and the
 * ones the token has, and the CLI says which token to use instead, exit 2.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../../lib/client/cli/main.js';
import { openSession } from '../../../lib/log/index.js';
import { request } from '../../support/http.js';
import { makeTenant, mint, startServer, type TestServer } from '../../support/server.js';

let srv: TestServer;
let board: string;
let reader: string;
beforeAll(async () => {
  srv = await startServer();
  const t = await makeTenant(srv, 'acme');
  board = await mint(srv, t.name, ['board']);
  reader = await mint(srv, t.name, ['read']);
});
afterAll(() => srv.close());

async function cli(args: string[], token: string) {
  let out = '';
  let err = '';
  const code = await runCli(args, {
    stdout: { write: (s: string | Uint8Array) => (out += String(s)) },
    stderr: { write: (s: string) => (err += s) },
    env: { HANSARD_URL: srv.url, HANSARD_TOKEN: token },
    cwd: srv.workDir,
  });
  return { code, out, err };
}

describe('a token that lacks the scope', () => {
  it('gets 403 naming the scopes required and the ones it has', async () => {
    const a = await request(srv, 'GET', '/v1/sessions', { token: board });
    expect(a.status).toBe(403);
    expect(a.json.error.code).toBe('forbidden');
    expect(a.json.error.details).toEqual({ required: ['read'], has: ['board'] });
    expect(a.json.error.message).toBe(
      'this token lacks the read scope (it has board): use a token with read',
    );
  });

  it("says the board link's token only shows the board and which token to use, exit 2", async () => {
    const s = openSession(srv.workDir, { agent: 'bot' });
    s.message({ user_id: 'priya', text: 'hi' });
    s.end();
    const r = await cli(['upload', s.dir], board);
    expect(r.code, r.err).toBe(2);
    expect(r.err).toContain('lacks the ingest or read scope (it has board)');
    expect(r.err).toContain(
      'this token may only show the board (as the board link printed by hansard serve does)',
    );
    expect(r.err).toContain('admin token printed at the first start');
    // upload needs ingest (it reads what the server has first, which read would also allow)
    expect(r.err).toContain('hansard token create --scopes ingest (run it with an admin token)');
  });

  it('for another token, says how to make one with the scope', async () => {
    const r = await cli(
      ['session', 'report', '--session', 's_01KZVVGRNR3D5V708Z4NPGG11H', '--state', 'working', '--note', 'x'],
      reader,
    );
    expect(r.code).toBe(2);
    expect(r.err).toContain('lacks the report scope (it has read)');
    expect(r.err).not.toContain('board link');
    expect(r.err).toContain('hint: make a token with that scope: hansard token create --scopes report');
  });

  it('a session id the server does not have is "no such thing" with a hint to check the id, exit 2', async () => {
    const r = await cli(['replay', 's_01KZVVGRNR3D5V708Z4NPGG11H'], reader);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/^hansard: the server has no such thing: .*\(404 not_found\)\n/);
    expect(r.err).not.toContain('refused');
    expect(r.err).toContain('hint: check the id');
  });

  it('with --json, the failure is one JSON error object on stderr and nothing on stdout', async () => {
    const s = openSession(srv.workDir, { agent: 'bot' });
    s.end();
    const r = await cli(['upload', s.dir, '--json'], board);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err.endsWith('\n')).toBe(true);
    expect(JSON.parse(r.err)).toEqual({
      error: {
        code: 'forbidden',
        message: 'this token lacks the ingest or read scope (it has board): use a token with ingest or read',
        details: { required: ['ingest', 'read'], has: ['board'], status: 403 },
        exit_code: 2,
      },
    });
    const usage = await cli(['upload', s.path, '--json'], board);
    expect(usage.code).toBe(2);
    expect(JSON.parse(usage.err)).toMatchObject({
      error: { code: 'usage', message: expect.stringContaining('is a segment file'), exit_code: 2 },
    });
  });
});

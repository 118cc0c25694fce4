/**
 * `hansard session report --session B --session-token <bound to A>`: the server answers 404 (a session
 * token sees its own session only, as if B did not exist), so the hint says the token may be bound to
 * another session as well as "check the id"; the token's own session takes the report.
 */
import { mkdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../../lib/client/api/client.js';
import { uploadSession } from '../../../lib/client/api/upload.js';
import { runCli } from '../../../lib/client/cli/main.js';
import { openSession } from '../../../lib/log/write/writer.js';
import { useServer } from '../../support/server.js';

const srv = useServer({ real: true });

async function cli(args: string[], token?: string) {
  let out = '';
  let err = '';
  const code = await runCli(args, {
    stdout: { write: (s: string | Uint8Array) => (out += String(s)) },
    stderr: { write: (s: string) => (err += s) },
    env: { HANSARD_URL: srv.url, ...(token ? { HANSARD_TOKEN: token } : {}) },
    cwd: srv.workDir,
  } as Parameters<typeof runCli>[1]);
  return { code, out, err };
}

async function seeded(): Promise<string> {
  mkdirSync(srv.workDir, { recursive: true });
  const w = openSession(srv.workDir, { agent: 'bot' });
  w.message({ user_id: 'priya', text: 'fix the parser' });
  w.end();
  await uploadSession(w.dir, { client: new ApiClient({ url: srv.url, token: srv.admin }) });
  return w.sid;
}

describe('session report with a token bound to another session', () => {
  it('the 404 hint says the token may be bound to another session', async () => {
    const a = await seeded();
    const b = await seeded();
    const res = await new ApiClient({ url: srv.url, token: srv.admin }).request(
      'POST',
      `/v1/sessions/${a}/tokens`,
      {
        body: JSON.stringify({ scopes: ['report'] }),
        contentType: 'application/json',
      },
    );
    const token = (res.body as { token: string }).token;
    const r = await cli([
      'session',
      'report',
      '--session',
      b,
      '--session-token',
      token,
      '--state',
      'working',
    ]);
    expect(r.code).toBe(2);
    expect(r.err).toContain('(404 not_found)');
    expect(r.err).toContain('hint: check the id');
    expect(r.err).toContain('or the token is bound to another session');
    // The token's own session takes the report.
    const own = await cli([
      'session',
      'report',
      '--session',
      a,
      '--session-token',
      token,
      '--state',
      'working',
    ]);
    expect(own.code, own.err).toBe(0);
  }, 30_000);
});

/**
 * What `hansard mcp serve` says to a newcomer (the new-user trial of issues 24/25), through the real
 * built `bin/hansard` as a child process driven by the MCP SDK's client, against the real server:
 * - `--help` says a session token alone is enough (docs/mcp.md "Session resolution"), not that it needs
 *   HANSARD_SESSION_ID;
 * - `session_context` for a session known only from a token says only what is known: which session it
 *   is and where reports go, not that hansard records it (no hook does here); with the hook's state for
 *   that session it still says it is recorded;
 * - a token the server refuses, and one bound to no session, name how to make a session token: the CLI
 *   command (`hansard token create … --session`) as well as the API route.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { useServer } from '../../support/server.js';
import { tmpDirs } from '../../support/tmp.js';
import { useBuiltCli } from '../capture/helpers.js';
import { connectMcp, seedSession, sessionToken, writeHookState } from './helpers.js';

const cli = useBuiltCli('mcp-words');
const srv = useServer({ real: true });
const dirs = tmpDirs('hansard-mcp-words-');

type Result = { content: { type: string; text: string }[]; isError?: boolean };
const text = (r: unknown) => (r as Result).content.map((c) => c.text).join('\n');

describe('what hansard mcp serve says', () => {
  it('--help says a session token alone is enough, and how to make one', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [cli.bin, 'mcp', 'serve', '--help'], {
      env: { PATH: process.env.PATH ?? '' },
    });
    const help = stdout.replace(/\s+/g, ' ');
    expect(help).not.toContain('HANSARD_SESSION_TOKEN (with HANSARD_SESSION_ID)');
    expect(help).toContain('HANSARD_SESSION_TOKEN (alone is enough: the server says which session');
    expect(help).toContain('hansard token create --scopes report,ingest --session s_…');
  }, 60_000);

  it('session_context with a token alone says which session it is, not that a hook records it; with the hook state, that it does', async () => {
    const sid = await seedSession(srv.url, srv.admin, srv.workDir);
    const token = await sessionToken(srv.url, srv.admin, sid, ['report', 'read']);
    const state = dirs.make();
    const cwd = dirs.make();
    const env = { HANSARD_URL: srv.url, HANSARD_SESSION_TOKEN: token, HANSARD_STATE_DIR: state };
    const alone = await connectMcp(cli.bin, env, cwd);
    try {
      const c = await alone.client.callTool({ name: 'session_context', arguments: {} });
      expect((c as Result).isError, text(c)).toBeFalsy();
      expect(text(c)).not.toContain('hansard is recording this session');
      expect(text(c)).toContain(
        `This is hansard session ${sid} (reports go to ${srv.url}); no hansard hook on this machine is known to record it.`,
      );
    } finally {
      await alone.close();
    }
    // The Claude Code hook of this machine records that session: then it is said.
    writeHookState(state, 'claude-session-1', { sid, cwd, token });
    const hooked = await connectMcp(cli.bin, env, cwd);
    try {
      const c = await hooked.client.callTool({ name: 'session_context', arguments: {} });
      expect(text(c)).toContain(`hansard is recording this session as ${sid} (shipped to ${srv.url}).`);
    } finally {
      await hooked.close();
    }
  }, 60_000);

  it('a refused token and a token bound to no session name the CLI command that makes a session token', async () => {
    const res = await fetch(`${srv.url}/v1/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${srv.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ scopes: ['report'], label: 'unbound' }),
    });
    const unbound = ((await res.json()) as { token: string }).token;
    const mcp = await connectMcp(
      cli.bin,
      { HANSARD_URL: srv.url, HANSARD_SESSION_TOKEN: unbound, HANSARD_STATE_DIR: dirs.make() },
      dirs.make(),
    );
    const how = 'make one with `hansard token create --scopes report,ingest --session s_…` (an admin token)';
    try {
      const r = await mcp.client.callTool({ name: 'report_status', arguments: { state: 'working' } });
      expect((r as Result).isError).toBe(true);
      expect(text(r)).toContain('HANSARD_SESSION_TOKEN is bound to no session');
      expect(text(r)).toContain(how);
      const refused = await mcp.client.callTool({
        name: 'session_context',
        arguments: { session_token: `hns_${'x'.repeat(43)}` },
      });
      expect((refused as Result).isError).toBe(true);
      expect(text(refused)).toContain('(401 unauthorized)');
      expect(text(refused)).toContain(
        `the token is not valid (expired or revoked): use a new session token; ${how}`,
      );
      expect(text(refused)).not.toContain('mint a new session token');
    } finally {
      await mcp.close();
    }
  }, 60_000);
});

/**
 * A session token alone is enough (issue 24 item 5, seed 000: "When the harness supplies a Hansard
 * session token, pass it through … `session_token` in MCP"). `bin/hansard mcp serve --status` as a real
 * child process, driven by the MCP SDK's own client, against the real server through a loopback proxy
 * that notes each request: given a session-bound token as `HANSARD_SESSION_TOKEN` or as a call's
 * `session_token`, and no `HANSARD_SESSION_ID` nor any hook state, the server asks `GET /v1/tokens/self`
 * once per token and reports on the session the token is bound to.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { useServer } from '../../support/server.js';
import { tmpDirs } from '../../support/tmp.js';
import { useBuiltCli } from '../capture/helpers.js';
import { type CountingProxy, connectMcp, countingProxy, seedSession, sessionToken } from './helpers.js';

const cli = useBuiltCli('mcp-token-session');
const srv = useServer({ real: true });
const dirs = tmpDirs('hansard-mcp-token-');
let proxy: CountingProxy;
beforeAll(async () => {
  proxy = await countingProxy(srv.url);
});
afterAll(async () => {
  await proxy?.close();
});

type Result = { content: { type: string; text: string }[]; isError?: boolean };
const text = (r: unknown) => (r as Result).content.map((c) => c.text).join('\n');

/** The session's latest status as the admin reads it. */
async function statusOf(sid: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${srv.url}/v1/sessions/${sid}/status`, {
    headers: { authorization: `Bearer ${srv.admin}` },
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** How many times the proxy saw the server asked which token it is. */
const selfAsked = () => proxy.seen.filter((l) => l === 'GET /v1/tokens/self').length;

describe('a session token without HANSARD_SESSION_ID', () => {
  it('HANSARD_SESSION_TOKEN alone: report_status and session_context act on its session, asking the server once', async () => {
    const sid = await seedSession(srv.url, srv.admin, srv.workDir);
    const token = await sessionToken(srv.url, srv.admin, sid, ['report', 'read']);
    const before = selfAsked();
    const mcp = await connectMcp(
      cli.bin,
      { HANSARD_URL: proxy.url, HANSARD_SESSION_TOKEN: token, HANSARD_STATE_DIR: dirs.make() },
      dirs.make(),
    );
    try {
      const r = (await mcp.client.callTool({
        name: 'report_status',
        arguments: { state: 'working', note: 'checking the parser' },
      })) as Result;
      expect(r.isError, text(r)).toBeFalsy();
      expect(text(r).split('\n')[0]).toBe(`reported working for ${sid}`);
      const c = (await mcp.client.callTool({ name: 'session_context', arguments: {} })) as Result;
      expect(c.isError, text(c)).toBeFalsy();
      expect(text(c)).toContain(`Session: ${sid} (found through HANSARD_SESSION_TOKEN; server ${proxy.url})`);
      expect(text(c)).toContain('Latest status: working "checking the parser"');
      const again = (await mcp.client.callTool({
        name: 'report_status',
        arguments: { state: 'done', note: 'parser fixed' },
      })) as Result;
      expect(text(again).split('\n')[0]).toBe(`reported done for ${sid}`);
    } finally {
      await mcp.close();
    }
    // one request for three calls: the binding is cached for the server's life
    expect(selfAsked() - before).toBe(1);
    const stored = await statusOf(sid);
    expect(stored.status).toBe(200);
    expect(stored.body).toMatchObject({ sid, state: 'done', note: 'parser fixed' });
  }, 60_000);

  it('a call’s session_token alone: the report and a subagent capture land on its session', async () => {
    const sid = await seedSession(srv.url, srv.admin, srv.workDir);
    const token = await sessionToken(srv.url, srv.admin, sid, ['ingest', 'report']);
    const before = selfAsked();
    const mcp = await connectMcp(
      cli.bin,
      { HANSARD_URL: proxy.url, HANSARD_STATE_DIR: dirs.make() },
      dirs.make(),
    );
    try {
      const r = (await mcp.client.callTool({
        name: 'report_status',
        arguments: { state: 'needs_review', session_token: token },
      })) as Result;
      expect(r.isError, text(r)).toBeFalsy();
      expect(text(r).split('\n')[0]).toBe(`reported needs_review for ${sid}`);
      const cap = (await mcp.client.callTool({
        name: 'capture_subagent_messages',
        arguments: { messages: [{ role: 'assistant', text: 'looked at the parser' }], session_token: token },
      })) as Result;
      expect(cap.isError, text(cap)).toBeFalsy();
      expect(text(cap)).toMatch(new RegExp(`^captured 1 message of subagent as writer w_\\w+ of ${sid} `));
    } finally {
      await mcp.close();
    }
    expect(selfAsked() - before).toBe(1);
    expect((await statusOf(sid)).body).toMatchObject({ sid, state: 'needs_review' });
    const session = await fetch(`${srv.url}/v1/sessions/${sid}`, {
      headers: { authorization: `Bearer ${srv.admin}` },
    });
    const body = (await session.json()) as { writers: { agent: string }[] };
    expect(body.writers.map((w) => w.agent)).toContain('subagent');
  }, 60_000);

  it('a token bound to no session, or one the server refuses, is a tool error saying so', async () => {
    // a report token of the whole tenant, bound to no session
    const res = await fetch(`${srv.url}/v1/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${srv.admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ scopes: ['report'], label: 'unbound' }),
    });
    const unbound = ((await res.json()) as { token: string }).token;
    const mcp = await connectMcp(
      cli.bin,
      { HANSARD_URL: proxy.url, HANSARD_SESSION_TOKEN: unbound, HANSARD_STATE_DIR: dirs.make() },
      dirs.make(),
    );
    try {
      const r = (await mcp.client.callTool({
        name: 'report_status',
        arguments: { state: 'working' },
      })) as Result;
      expect(r.isError).toBe(true);
      expect(text(r)).toContain('HANSARD_SESSION_TOKEN is bound to no session');
      expect(text(r)).toContain('set HANSARD_SESSION_ID=s_…');
      const refused = (await mcp.client.callTool({
        name: 'session_context',
        arguments: { session_token: `hns_${'x'.repeat(43)}` },
      })) as Result;
      expect(refused.isError).toBe(true);
      expect(text(refused)).toContain('(401 unauthorized)');
      expect(text(refused)).toContain('the token is not valid (expired or revoked)');
    } finally {
      await mcp.close();
    }
  }, 60_000);
});

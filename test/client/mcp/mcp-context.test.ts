/**
 * What `report_status` and `session_context` tell the agent (docs/mcp.md), as a real `hansard mcp serve
 * --status` child process against a real server: `report_status` shows the verdicts the server computes
 * on read (the POST's own answer leaves every claim unchecked), `session_context` counts only the work
 * items not stopped and shows each with its freshness word and what it waits on, and its project folder
 * is the session's own when the hook state says where the session runs.
 */
import { realpathSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../../lib/client/api/client.js';
import { uploadSession } from '../../../lib/client/api/upload.js';
import { openSession } from '../../../lib/log/write/writer.js';
import { useServer } from '../../support/server.js';
import { tmpDirs } from '../../support/tmp.js';
import { useBuiltCli } from '../capture/helpers.js';
import { connectMcp, seedSession, sessionToken, writeHookState } from './helpers.js';

const cli = useBuiltCli('mcp-context');
const srv = useServer({ real: true });
const dirs = tmpDirs('hansard-mcp-context-');

type Result = { content: { type: string; text: string }[]; isError?: boolean };
const text = (r: unknown) => (r as Result).content.map((c) => c.text).join('\n');

async function call(env: Record<string, string>, cwd: string, name: string, args: Record<string, unknown>) {
  const mcp = await connectMcp(cli.bin, env, cwd);
  try {
    const r = (await mcp.client.callTool({ name, arguments: args })) as Result;
    expect(r.isError, text(r)).toBeFalsy();
    return text(r);
  } finally {
    await mcp.close();
  }
}

describe('report_status', () => {
  it('answers with the verdicts the server computes on read: a passed claim on exit code 1 is unsupported', async () => {
    const sid = await seedSession(srv.url, srv.admin, srv.workDir);
    const w = openSession(srv.workDir, { sid, agent: 'claude-code' });
    const t = w.turnStart({ context_message_ids: [] });
    for (const [id, code] of [
      ['toolu_fail', 1],
      ['toolu_ok', 0],
    ] as const) {
      const a = w.action({ turn_id: t.turn_id, tool: 'Bash', input: { command: 'npm test' }, call_id: id });
      w.actionResult({ action_id: a.id, status: code === 0 ? 'ok' : 'error', output: '…', exit_code: code });
    }
    w.turnEnd({ turn_id: t.turn_id, status: 'completed' });
    w.end();
    await uploadSession(w.dir, { client: new ApiClient({ url: srv.url, token: srv.admin }) });
    const token = await sessionToken(srv.url, srv.admin, sid, ['report']);
    const env = {
      HANSARD_URL: srv.url,
      HANSARD_SESSION_TOKEN: token,
      HANSARD_SESSION_ID: sid,
      HANSARD_STATE_DIR: dirs.make(),
    };
    const evidence = [
      { type: 'command', ref: 'toolu_fail', result: 'passed' },
      { type: 'command', ref: 'toolu_ok', result: 'passed' },
    ];
    const out = await call(env, dirs.make(), 'report_status', {
      state: 'done',
      note: 'tests pass',
      events: [{ kind: 'evidence', evidence }],
    });
    expect(out.split('\n')[0]).toBe(`reported done for ${sid}`);
    expect(out).toContain('Declared evidence (all kept reports): 1 supported, 1 unsupported, 0 unchecked');
    expect(out).toMatch(/- unsupported: command toolu_fail passed: .*1/);
    expect(out).not.toContain('unsupported: command toolu_ok');
  }, 60_000);
});

/**
 * A loopback proxy to the real server that answers `GET /v1/sessions/{sid}/status` with a 403 (a read the
 * token may not do) and forwards everything else as it is. Returns its URL and a closer.
 */
async function refusingStatusReads(target: string): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer(async (req, res) => {
    if (req.method === 'GET' && /^\/v1\/sessions\/[^/]+\/status$/.test(req.url ?? '')) {
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({ error: { code: 'forbidden', message: 'status reads refused here', details: {} } }),
      );
      return;
    }
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers = Object.fromEntries(
      Object.entries(req.headers).filter(([k]) => !['host', 'connection', 'content-length'].includes(k)),
    ) as Record<string, string>;
    const up = await fetch(`${target}${req.url}`, {
      method: req.method,
      headers,
      ...(chunks.length ? { body: Buffer.concat(chunks) } : {}),
    });
    res.writeHead(up.status, { 'content-type': up.headers.get('content-type') ?? 'application/json' });
    res.end(Buffer.from(await up.arrayBuffer()));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return { url: `http://127.0.0.1:${port}`, close: () => new Promise((r) => server.close(() => r())) };
}

describe('report_status when the status cannot be read back', () => {
  it('says the report was stored and that the verdicts come with session_context', async () => {
    const sid = await seedSession(srv.url, srv.admin, srv.workDir);
    const token = await sessionToken(srv.url, srv.admin, sid, ['report']);
    const proxy = await refusingStatusReads(srv.url);
    try {
      const env = {
        HANSARD_URL: proxy.url,
        HANSARD_SESSION_TOKEN: token,
        HANSARD_SESSION_ID: sid,
        HANSARD_STATE_DIR: dirs.make(),
      };
      const out = await call(env, dirs.make(), 'report_status', {
        state: 'working',
        events: [
          { kind: 'evidence', evidence: [{ type: 'test', ref: 'parser-unit-tests', result: 'passed' }] },
        ],
      });
      expect(out.split('\n')[0]).toBe(`reported working for ${sid}`);
      expect(out).toContain('the report was stored');
      expect(out).toContain('status reads refused here');
      expect(out).toContain('they come with session_context');
      const stored = await fetch(`${srv.url}/v1/sessions/${sid}/status`, {
        headers: { authorization: `Bearer ${srv.admin}` },
      });
      expect(((await stored.json()) as { state: string }).state).toBe('working');
    } finally {
      await proxy.close();
    }
  }, 60_000);
});

describe('session_context', () => {
  it('counts the work items not stopped, each with its freshness word and what it waits on', async () => {
    const sid = await seedSession(srv.url, srv.admin, srv.workDir);
    const other = await seedSession(srv.url, srv.admin, srv.workDir);
    const api = new ApiClient({ url: srv.url, token: srv.admin });
    const post = async (path: string, body: Record<string, unknown>) =>
      (await api.request('POST', path, { body: JSON.stringify(body), contentType: 'application/json' }))
        .body as { id: string };
    const owner = (s: string) => ({ session: s, system: 'claude-code', actor: 'agent' });
    const start = (s: string, summary: string) =>
      post('/v1/work', { ...owner(s), subject: { kind: 'session', ref: s }, mode: 'implementing', summary });
    const active = await start(sid, 'fix the parser');
    const waiting = await start(sid, 'ship the parser');
    await post(`/v1/work/${waiting.id}/wait`, {
      ...owner(sid),
      dependency: { kind: 'review', ref: 'PR-12' },
      reason: 'needs a reviewer',
    });
    const stopped = await start(sid, 'old spike');
    await post(`/v1/work/${stopped.id}/stop`, { ...owner(sid), outcome: 'completed' });
    await start(other, 'another session');
    const env = {
      HANSARD_URL: srv.url,
      HANSARD_TOKEN: srv.admin,
      HANSARD_SESSION_ID: sid,
      HANSARD_STATE_DIR: dirs.make(),
    };
    const out = await call(env, dirs.make(), 'session_context', {});
    expect(out).toContain('Open work: 2 open items');
    expect(out).toContain(`- ${active.id} implementing "fix the parser": observed`);
    expect(out).toContain(
      `- ${waiting.id} implementing "ship the parser": observed; waiting on review:PR-12: needs a reviewer`,
    );
    expect(out).not.toContain(stopped.id);
    expect(out).not.toContain('another session');
  }, 60_000);

  it("shows the session's own project folder from the hook state, and says when the folder is the server's", async () => {
    const sid = await seedSession(srv.url, srv.admin, srv.workDir);
    const token = await sessionToken(srv.url, srv.admin, sid, ['report']);
    const project = realpathSync(dirs.make());
    const serverCwd = realpathSync(dirs.make());
    const state = dirs.make();
    writeHookState(state, 'claude-far', { sid, cwd: project, token });
    const fromHook = await call(
      { HANSARD_URL: srv.url, HANSARD_STATE_DIR: state },
      serverCwd,
      'session_context',
      {
        session_token: token,
      },
    );
    expect(fromHook).toContain(`(${project})`);
    expect(fromHook).not.toContain(`(${serverCwd})`);
    expect(fromHook).not.toContain("this MCP server's working directory");
    const fromEnv = await call(
      {
        HANSARD_URL: srv.url,
        HANSARD_SESSION_TOKEN: token,
        HANSARD_SESSION_ID: sid,
        HANSARD_STATE_DIR: dirs.make(),
      },
      serverCwd,
      'session_context',
      {},
    );
    expect(fromEnv).toContain(`(${serverCwd})`);
    expect(fromEnv).toContain(
      "(The project folder above is this MCP server's working directory: the session was found through HANSARD_SESSION_TOKEN",
    );
  }, 60_000);
});

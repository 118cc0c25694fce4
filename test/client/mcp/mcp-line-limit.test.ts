/**
 * One JSON-RPC message over the stdio limit (issue 24 item 5): the MCP SDK reads at most 10 MiB
 * (10,485,760 bytes) of one line, and a longer one made `hansard mcp serve` exit 0 without answering, so
 * every later call of that agent failed. Now the server stays up: a `tools/call` over the limit is
 * answered with a tool error naming it, any other request with a JSON-RPC error, a notification or a
 * line without an id with nothing; the next call answers. `bin/hansard mcp serve --status` as a real
 * child process against a real server, driven by the MCP SDK's own client (`StdioClientTransport`) and by
 * raw JSON-RPC lines.
 */
import { describe, expect, it } from 'vitest';
import { useServer } from '../../support/server.js';
import { tmpDirs } from '../../support/tmp.js';
import { useBuiltCli } from '../capture/helpers.js';
import { connectMcp, rawMcp, seedSession, sessionToken } from './helpers.js';

const cli = useBuiltCli('mcp-line-limit');
const srv = useServer({ real: true });
const dirs = tmpDirs('hansard-mcp-limit-');

/** The MCP SDK's stdio read buffer (`STDIO_DEFAULT_MAX_BUFFER_SIZE`), which the docs name. */
const LIMIT = 10 * 1024 * 1024;

type Result = { content: { type: string; text: string }[]; isError?: boolean };
const text = (r: unknown) => (r as Result).content.map((c) => c.text).join('\n');

async function boundEnv() {
  const sid = await seedSession(srv.url, srv.admin, srv.workDir);
  const token = await sessionToken(srv.url, srv.admin, sid, ['ingest', 'report', 'read']);
  return {
    sid,
    env: {
      HANSARD_URL: srv.url,
      HANSARD_SESSION_TOKEN: token,
      HANSARD_SESSION_ID: sid,
      HANSARD_STATE_DIR: dirs.make(),
    },
  };
}

async function writersOf(sid: string): Promise<number> {
  const res = await fetch(`${srv.url}/v1/sessions/${sid}`, {
    headers: { authorization: `Bearer ${srv.admin}` },
  });
  return ((await res.json()) as { writers: unknown[] }).writers.length;
}

describe('a JSON-RPC message over the 10 MiB stdio limit', () => {
  it('capture_subagent_messages over it answers a tool error naming the limit; the server stays up and the next call answers', async () => {
    const { sid, env } = await boundEnv();
    const mcp = await connectMcp(cli.bin, env, dirs.make());
    try {
      // 110 messages of 100,000 characters: each within the per-message limit, the call ~11 MB
      const messages = Array.from({ length: 110 }, (_, i) => ({
        role: 'assistant',
        text: `${i} ${'x'.repeat(99_990)}`,
      }));
      const r = (await mcp.client.callTool({
        name: 'capture_subagent_messages',
        arguments: { messages, agent: 'big-subagent' },
      })) as Result;
      expect(r.isError).toBe(true);
      expect(text(r)).toContain('capture_subagent_messages');
      expect(text(r)).toContain(`over the ${LIMIT.toLocaleString('en-US')} bytes (10 MiB)`);
      expect(text(r)).toContain('nothing was done');
      // the same agent's next calls are answered by the same server
      const c = (await mcp.client.callTool({ name: 'session_context', arguments: {} })) as Result;
      expect(c.isError, text(c)).toBeFalsy();
      expect(text(c)).toContain(`Session: ${sid} (found through HANSARD_SESSION_TOKEN`);
      const small = (await mcp.client.callTool({
        name: 'capture_subagent_messages',
        arguments: { messages: messages.slice(0, 2), agent: 'big-subagent' },
      })) as Result;
      expect(small.isError, text(small)).toBeFalsy();
      expect(mcp.stderr()).toContain('over the 10,485,760 bytes');
    } finally {
      await mcp.close();
    }
    // the seeded writer and the small capture; nothing of the refused one
    expect(await writersOf(sid)).toBe(2);
  }, 120_000);

  it('raw lines: a request over it gets a JSON-RPC error with its id, a notification or a line without an id nothing, and the server goes on', async () => {
    const { env } = await boundEnv();
    const pad = 'y'.repeat(LIMIT + 10);
    const run = await rawMcp(cli.bin, env, dirs.make(), [
      {
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      },
      { method: 'notifications/initialized' },
      // not JSON at all, and a notification: nothing to answer
      `{"no id here": "${pad}`,
      { method: 'notifications/cancelled', params: { requestId: 99, reason: pad } },
      // a request whose id comes first, another whose id comes last behind look-alikes in its params
      { id: 2, method: 'tools/list', params: { _meta: { pad } } },
      {
        method: 'tools/call',
        params: {
          name: 'report_status',
          arguments: { state: 'working', note: `"id": 666, \\"id\\": 667 ${pad}`, events: [{ id: 668 }] },
        },
        id: 'call-"3"',
      },
      { id: 4, method: 'tools/list' },
    ]);
    expect(run.code, run.stderr).toBe(0);
    const answers = run.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(answers.map((a) => a.id)).toEqual([1, 2, 'call-"3"', 4]);
    const byId = new Map(answers.map((a) => [a.id, a]));
    const listError = byId.get(2)!.error as { code: number; message: string };
    expect(listError.code).toBe(-32600);
    expect(listError.message).toContain(`over the ${LIMIT.toLocaleString('en-US')} bytes (10 MiB)`);
    const call = byId.get('call-"3"')!.result as Result;
    expect(call.isError).toBe(true);
    expect(text(call)).toContain('report_status');
    expect(text(call)).toContain('10 MiB');
    const tools = (byId.get(4)!.result as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(tools).toEqual(['report_status', 'session_context', 'capture_subagent_messages']);
    // every over-limit line is named on stderr, with its size
    expect(run.stderr.match(/over the 10,485,760 bytes/g)).toHaveLength(4);
  }, 120_000);
});

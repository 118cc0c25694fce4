/**
 * `hansard mcp serve --status` under the real Claude Code 2.1.328 (issue 12 item 3, "Done when"): in a
 * temporary HOME with hansard's hooks installed by `integrations sync`, `claude -p` runs with
 * `--mcp-config` naming this checkout's `hansard mcp serve --status` and `ENABLE_TOOL_SEARCH=false` (so the
 * MCP tools are offered directly, not behind the tool search). The scripted model calls
 * `mcp__hansard__report_status` WITHOUT a `session_token`; the report must land on the session the hooks
 * record (found through the hook's state: the live session in this folder), and the tool's answer must
 * reach the model. Then `session_context` is called the same way and must name that session.
 *
 * And as a harness that supplies a session token runs it (issue 24 item 5, seed 000): no hooks, no hook
 * state, the MCP server's `env` in the config holding only `HANSARD_URL` and `HANSARD_SESSION_TOKEN` (no
 * `HANSARD_SESSION_ID`): the report must land on the session the token is bound to, which the MCP server
 * asks the hansard server (`GET /v1/tokens/self`).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { newId } from '../../lib/log/format/ids.js';
import { request } from '../support/http.js';
import { type AnthropicStub, type Reply, startAnthropicStub } from './support/anthropic-stub.js';
import { hasToolResult, runProcess } from './support/claude.js';
import {
  type CaptureServer,
  hansard,
  requireCapture,
  spooledSessions,
  startCaptureServer,
} from './support/hansard.js';

let cs: CaptureServer;
const stubs: AnthropicStub[] = [];
const roots: string[] = [];
beforeAll(async () => {
  cs = await startCaptureServer();
});
afterAll(async () => {
  for (const stub of stubs) await stub.close();
  await cs?.srv.close();
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

const text = (t: string): Reply => ({ content: [{ type: 'text', text: t }] });
const REPORT = 'mcp__hansard__report_status';
const CONTEXT = 'mcp__hansard__session_context';

/** The text of the `tool_result` of `id` in a request, or ''. */
function toolResultText(body: unknown, id: string): string {
  const messages = (body as { messages?: { content: unknown }[] }).messages ?? [];
  for (const m of messages) {
    for (const b of Array.isArray(m.content) ? (m.content as Record<string, unknown>[]) : []) {
      if (b.type !== 'tool_result' || b.tool_use_id !== id) continue;
      return typeof b.content === 'string' ? b.content : JSON.stringify(b.content);
    }
  }
  return '';
}

describe('hansard mcp serve --status in the real Claude Code', () => {
  it('report_status without session_token lands on the session the hooks record', async () => {
    await requireCapture('claude-code');
    const home = mkdtempSync(join(tmpdir(), 'hansard-rc-mcp-'));
    roots.push(home);
    const state = join(home, 'state');
    const env = { HOME: home, HANSARD_STATE_DIR: state, CODEX_HOME: join(home, '.codex') };
    const sync = await hansard(
      ['integrations', 'sync', '--only', 'claude-code', '--url', cs.url, '--token', cs.token],
      env,
    );
    expect(sync.code, `integrations sync: ${sync.stdout}${sync.stderr}`).toBe(0);
    const stub = await startAnthropicStub((req) => {
      if (!req.tools?.length) return text('ok');
      if (hasToolResult(req, 'toolu_ctx0001')) return text('Reported and read back.');
      if (hasToolResult(req, 'toolu_mcp0001')) {
        return { content: [{ type: 'tool_use', id: 'toolu_ctx0001', name: CONTEXT, input: {} }] };
      }
      return {
        content: [
          {
            type: 'tool_use',
            id: 'toolu_mcp0001',
            name: REPORT,
            input: { state: 'working', note: 'checking the parser' },
          },
        ],
      };
    });
    stubs.push(stub);
    const mcpConfig = JSON.stringify({
      mcpServers: { hansard: { command: inject('hansardBin'), args: ['mcp', 'serve', '--status'] } },
    });
    const cwd = join(home, 'proj');
    mkdirSync(cwd, { recursive: true });
    const run = await runProcess(
      inject('claudeBin'),
      ['-p', 'report your status', '--mcp-config', mcpConfig, '--allowedTools', REPORT, CONTEXT],
      cwd,
      {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        ANTHROPIC_BASE_URL: stub.url,
        ANTHROPIC_API_KEY: 'sk-ant-fake-real-client-test',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_TELEMETRY: '1',
        ENABLE_TOOL_SEARCH: 'false',
        ...env,
      },
      60_000,
    ).catch((err: Error) => {
      const seen = stub.requests.map(
        (r) => `${r.path} tools=${r.body.tools?.length ?? 0} msgs=${r.body.messages?.length ?? 0}`,
      );
      throw new Error(`${err.message.slice(0, 3000)}\nrequests: ${JSON.stringify(seen)}`);
    });
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Reported and read back.');
    // The MCP tools were offered directly.
    const offered = stub.requests.find((r) => r.body.tools?.length)?.body.tools?.map((t) => t.name) ?? [];
    expect(offered).toEqual(
      expect.arrayContaining([REPORT, CONTEXT, 'mcp__hansard__capture_subagent_messages']),
    );
    const sids = spooledSessions(state);
    expect(sids, `one captured session under ${state}/spool`).toHaveLength(1);
    const sid = sids[0]!;
    const all = stub.requests.map((r) => r.body);
    expect(all.map((b) => toolResultText(b, 'toolu_mcp0001')).join('')).toContain(
      `reported working for ${sid}`,
    );
    expect(all.map((b) => toolResultText(b, 'toolu_ctx0001')).join('')).toContain(
      `Session: ${sid} (found through claude-code hook state`,
    );
    const got = await request(cs.srv, 'GET', `/v1/sessions/${sid}/status`, { token: cs.admin });
    expect(got.status, got.text).toBe(200);
    expect(got.json).toMatchObject({ sid, state: 'working', note: 'checking the parser' });
    console.info(`claude with hansard mcp: ${run.ms} ms`);
  });

  it('given only HANSARD_SESSION_TOKEN in its env, report_status lands on the session the token is bound to', async () => {
    await requireCapture('claude-code');
    const home = mkdtempSync(join(tmpdir(), 'hansard-rc-mcp-token-'));
    roots.push(home);
    // The harness's session: a token bound to it, minted with the capture token as a harness would.
    const sid = newId('s');
    const minted = await request(cs.srv, 'POST', `/v1/sessions/${sid}/tokens`, {
      token: cs.token,
      json: { scopes: ['ingest', 'report', 'read'], label: 'harness' },
    });
    expect(minted.status, minted.text).toBe(201);
    const stub = await startAnthropicStub((req) => {
      if (!req.tools?.length) return text('ok');
      if (hasToolResult(req, 'toolu_tokctx01')) return text('Reported with the harness token.');
      if (hasToolResult(req, 'toolu_tokrep01')) {
        return { content: [{ type: 'tool_use', id: 'toolu_tokctx01', name: CONTEXT, input: {} }] };
      }
      return {
        content: [
          {
            type: 'tool_use',
            id: 'toolu_tokrep01',
            name: REPORT,
            input: { state: 'needs_review', note: 'parser fixed, please review' },
          },
        ],
      };
    });
    stubs.push(stub);
    const mcpConfig = JSON.stringify({
      mcpServers: {
        hansard: {
          command: inject('hansardBin'),
          args: ['mcp', 'serve', '--status'],
          env: { HANSARD_URL: cs.url, HANSARD_SESSION_TOKEN: minted.json.token },
        },
      },
    });
    const cwd = join(home, 'proj');
    mkdirSync(cwd, { recursive: true });
    const run = await runProcess(
      inject('claudeBin'),
      ['-p', 'report your status', '--mcp-config', mcpConfig, '--allowedTools', REPORT, CONTEXT],
      cwd,
      {
        PATH: process.env.PATH ?? '/usr/bin:/bin',
        HOME: home,
        ANTHROPIC_BASE_URL: stub.url,
        ANTHROPIC_API_KEY: 'sk-ant-fake-real-client-test',
        DISABLE_AUTOUPDATER: '1',
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
        DISABLE_TELEMETRY: '1',
        ENABLE_TOOL_SEARCH: 'false',
      },
      60_000,
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain('Reported with the harness token.');
    const all = stub.requests.map((r) => r.body);
    expect(all.map((b) => toolResultText(b, 'toolu_tokrep01')).join('')).toContain(
      `reported needs_review for ${sid}`,
    );
    expect(all.map((b) => toolResultText(b, 'toolu_tokctx01')).join('')).toContain(
      `Session: ${sid} (found through HANSARD_SESSION_TOKEN`,
    );
    const got = await request(cs.srv, 'GET', `/v1/sessions/${sid}/status`, { token: cs.admin });
    expect(got.status, got.text).toBe(200);
    expect(got.json).toMatchObject({ sid, state: 'needs_review', note: 'parser fixed, please review' });
    console.info(`claude with hansard mcp and a harness token: ${run.ms} ms`);
  });
});

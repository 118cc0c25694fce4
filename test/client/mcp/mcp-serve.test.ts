/**
 * `hansard mcp serve --status` (issue 12 item 3) as a real child process (`bin/hansard` of the current
 * source) against the real server of `hansard serve`, driven by the MCP SDK's own client: the three tools
 * and their JSON schemas, a report read back through `session_context`, bad calls refused with the seed's
 * limits, the session found from the environment, from the Claude Code hook's state, or not at all (a
 * clear tool error), a subagent's messages in the merged replay as a writer of their own, and stdout
 * holding JSON-RPC lines only, even when a library logs with console.log.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../../lib/client/api/client.js';
import { uploadSession } from '../../../lib/client/api/upload.js';
import { openSession } from '../../../lib/log/write/writer.js';
import { useServer } from '../../support/server.js';
import { tmpDirs } from '../../support/tmp.js';
import { useBuiltCli } from '../capture/helpers.js';
import { connectMcp, rawMcp, seedSession, sessionToken, writeHookState } from './helpers.js';

const cli = useBuiltCli('mcp');
const srv = useServer({ real: true });
const dirs = tmpDirs('hansard-mcp-');

type Result = {
  content: { type: string; text: string }[];
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
};
/** The parts of a tool's JSON schema the tests read. */
interface JsonSchema {
  type?: string;
  enum?: string[];
  required?: string[];
  maxLength?: number;
  maxItems?: number;
  additionalProperties?: boolean;
  properties: Record<
    'state' | 'note' | 'events' | 'evidence' | 'ref' | 'session_token' | 'messages',
    JsonSchema
  >;
  items: JsonSchema;
}
const text = (r: unknown) => (r as Result).content.map((c) => c.text).join('\n');

/** A seeded session, a session token for it (ingest, report, read), and an env naming both. */
async function boundSession() {
  const sid = await seedSession(srv.url, srv.admin, srv.workDir);
  const token = await sessionToken(srv.url, srv.admin, sid, ['ingest', 'report', 'read']);
  const state = dirs.make();
  return {
    sid,
    token,
    state,
    env: {
      HANSARD_URL: srv.url,
      HANSARD_SESSION_TOKEN: token,
      HANSARD_SESSION_ID: sid,
      HANSARD_STATE_DIR: state,
    },
  };
}

describe('hansard mcp serve --status', () => {
  it('lists the three tools with their JSON schemas, the API limits in them', async () => {
    const s = await boundSession();
    const mcp = await connectMcp(cli.bin, s.env, dirs.make());
    try {
      const { tools } = await mcp.client.listTools();
      expect(tools.map((t) => t.name).sort()).toEqual([
        'capture_subagent_messages',
        'report_status',
        'session_context',
      ]);
      const report = tools.find((t) => t.name === 'report_status')!.inputSchema as unknown as JsonSchema;
      expect(report.required).toEqual(['state']);
      expect(report.properties.state.enum).toEqual(['working', 'blocked', 'needs_review', 'done']);
      expect(report.properties.note.maxLength).toBe(240);
      expect(report.properties.events.maxItems).toBe(4);
      expect(report.properties.events.items.properties.evidence.maxItems).toBe(4);
      expect(report.properties.events.items.properties.evidence.items.properties.ref.maxLength).toBe(160);
      expect(report.properties.session_token.type).toBe('string');
      expect(report.additionalProperties).toBe(false);
      const context = tools.find((t) => t.name === 'session_context')!.inputSchema as unknown as JsonSchema;
      expect(Object.keys(context.properties)).toEqual(['session_token']);
      const capture = tools.find((t) => t.name === 'capture_subagent_messages')!
        .inputSchema as unknown as JsonSchema;
      expect(capture.required).toEqual(['messages']);
      expect(capture.properties.messages.maxItems).toBe(500);
    } finally {
      await mcp.close();
    }
  }, 60_000);

  it('reports a status and reads it back through session_context', async () => {
    const s = await boundSession();
    const mcp = await connectMcp(cli.bin, s.env, dirs.make());
    try {
      const events = [
        { kind: 'evidence', evidence: [{ type: 'test', ref: 'parser-unit-tests', result: 'passed' }] },
      ];
      const r = (await mcp.client.callTool({
        name: 'report_status',
        arguments: { state: 'needs_review', note: 'parser fixed, tests pass', events },
      })) as Result;
      expect(r.isError, text(r)).toBeFalsy();
      expect(text(r).split('\n')[0]).toBe(`reported needs_review for ${s.sid}`);
      // Text only: Claude Code gives the model structured content instead of the text when there is one.
      expect(r.structuredContent).toBeUndefined();
      const c = (await mcp.client.callTool({ name: 'session_context', arguments: {} })) as Result;
      expect(c.isError, text(c)).toBeFalsy();
      expect(text(c)).toContain(`Session: ${s.sid} (found through HANSARD_SESSION_TOKEN; server ${srv.url})`);
      expect(text(c)).toContain('Latest status: needs_review "parser fixed, tests pass" (reported ');
      expect(text(c)).toContain('1 declared event)');
      expect(text(c)).toContain('Open work: none recorded');
      // No hook of this machine records it (a token and HANSARD_SESSION_ID only): said as such.
      expect(text(c)).toContain(`This is hansard session ${s.sid} (reports go to ${srv.url})`);
      expect(text(c)).toContain('report_status');
      const stored = await fetch(`${srv.url}/v1/sessions/${s.sid}/status`, {
        headers: { authorization: `Bearer ${srv.admin}` },
      });
      expect(await stored.json()).toMatchObject({ sid: s.sid, state: 'needs_review', events });
      expect(mcp.stderr()).toBe('');
    } finally {
      await mcp.close();
    }
  }, 60_000);

  it('refuses bad reports with an MCP tool error that names the limit, and stores nothing', async () => {
    const s = await boundSession();
    const mcp = await connectMcp(cli.bin, s.env, dirs.make());
    const call = (args: Record<string, unknown>) =>
      mcp.client.callTool({ name: 'report_status', arguments: args }) as Promise<Result>;
    try {
      const long = await call({ state: 'working', note: 'n'.repeat(241) });
      expect(long.isError).toBe(true);
      expect(text(long)).toBe(
        'MCP error -32602: Input validation error: Invalid arguments for tool report_status: the note is at most 240 characters at note',
      );
      const five = await call({
        state: 'working',
        events: Array.from({ length: 5 }, () => ({ kind: 'plan' })),
      });
      expect(five.isError).toBe(true);
      expect(text(five)).toContain('a report has at most four events at events');
      const state = await call({ state: 'finished' });
      expect(state.isError).toBe(true);
      expect(text(state)).toMatch(/"working"\|"blocked"\|"needs_review"\|"done" at state$/);
      const ref = await call({
        state: 'working',
        events: [
          { kind: 'evidence', evidence: [{ type: 'command', ref: 'r'.repeat(161), result: 'exit:0' }] },
        ],
      });
      expect(text(ref)).toContain('a reference is at most 160 characters at events[0].evidence[0].ref');
      const c = (await mcp.client.callTool({ name: 'session_context', arguments: {} })) as Result;
      expect(text(c)).toContain('Latest status: none yet');
    } finally {
      await mcp.close();
    }
  }, 60_000);

  it('without a session says what to set, as a tool error', async () => {
    const state = dirs.make();
    const project = dirs.make();
    const mcp = await connectMcp(cli.bin, { HANSARD_URL: srv.url, HANSARD_STATE_DIR: state }, project);
    try {
      for (const name of ['report_status', 'session_context', 'capture_subagent_messages']) {
        const args =
          name === 'report_status'
            ? { state: 'working' }
            : name === 'capture_subagent_messages'
              ? { messages: [{ role: 'assistant', text: 'hi' }] }
              : {};
        const r = (await mcp.client.callTool({ name, arguments: args })) as Result;
        expect(r.isError, name).toBe(true);
        expect(text(r)).toContain(
          'no hansard session for this MCP server: pass session_token, or set HANSARD_SESSION_TOKEN',
        );
        expect(text(r)).toContain(`in this directory (${project})`);
      }
      // A session token alone: the server is asked which session it is bound to, and refuses a bad one.
      const r = (await mcp.client.callTool({
        name: 'report_status',
        arguments: { state: 'working', session_token: `hns_${'x'.repeat(43)}` },
      })) as Result;
      expect(r.isError).toBe(true);
      expect(text(r)).toContain('(401 unauthorized)');
    } finally {
      await mcp.close();
    }
  }, 60_000);

  it("finds the session from the Claude Code hook's state: the live one in this directory written last", async () => {
    const project = dirs.make();
    const elsewhere = dirs.make();
    const state = dirs.make();
    const [mine, older, ended, other] = await Promise.all(
      [0, 1, 2, 3].map(() => seedSession(srv.url, srv.admin, srv.workDir)),
    );
    const token = await sessionToken(srv.url, srv.admin, mine!, ['report']);
    const t = (minutesAgo: number) => new Date(Date.now() - minutesAgo * 60_000);
    writeHookState(state, 'claude-mine', { sid: mine!, cwd: project, token, mtime: t(2) });
    writeHookState(state, 'claude-older', { sid: older!, cwd: project, token: null, mtime: t(30) });
    writeHookState(state, 'claude-ended', { sid: ended!, cwd: project, ended: true, mtime: t(1) });
    writeHookState(state, 'claude-other', { sid: other!, cwd: elsewhere, mtime: t(0) });
    // The shipping token of `hansard integrations sync`: the hook's session token (report only) posts the
    // report; uploads use this one.
    writeFileSync(join(state, 'config.json'), JSON.stringify({ url: srv.url, token: srv.admin }));
    const mcp = await connectMcp(cli.bin, { HANSARD_STATE_DIR: state }, project);
    try {
      const r = (await mcp.client.callTool({
        name: 'report_status',
        arguments: { state: 'working' },
      })) as Result;
      expect(text(r)).toBe(`reported working for ${mine}`);
      const c = (await mcp.client.callTool({ name: 'session_context', arguments: {} })) as Result;
      expect(text(c)).toContain(
        `Session: ${mine} (found through claude-code hook state, Claude Code session claude-mine; server ${srv.url})`,
      );
      expect(text(c)).toContain('Latest status: working');
      const got = await fetch(`${srv.url}/v1/sessions/${older}/status`, {
        headers: { authorization: `Bearer ${srv.admin}` },
      });
      expect(got.status).toBe(404);
    } finally {
      await mcp.close();
    }
  }, 60_000);

  it("captures a subagent's messages as a writer of its own, in the merged replay", async () => {
    const s = await boundSession();
    const mcp = await connectMcp(cli.bin, s.env, dirs.make());
    try {
      const r = (await mcp.client.callTool({
        name: 'capture_subagent_messages',
        arguments: {
          agent: 'test-runner',
          subagent_id: 'agent-7',
          messages: [
            { role: 'user', text: 'run the parser tests' },
            {
              role: 'tool',
              tool: 'Bash',
              call_id: 'toolu_1',
              input: { command: 'npm test' },
              output: '12 passed',
              exit_code: 0,
            },
            { role: 'assistant', text: 'all 12 parser tests pass' },
          ],
        },
      })) as Result;
      expect(r.isError, text(r)).toBeFalsy();
      const w = /as writer (w_[0-9A-Z]{26}) of/.exec(text(r))?.[1] as string;
      expect(text(r)).toMatch(
        new RegExp(
          `^captured 3 messages of test-runner as writer ${w} of ${s.sid} \\(\\d+ bytes uploaded\\)$`,
        ),
      );
      const res = await fetch(`${srv.url}/v1/sessions/${s.sid}/replay`, {
        headers: { authorization: `Bearer ${srv.admin}` },
      });
      expect(res.status).toBe(200);
      const lines = (await res.text())
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l));
      expect(new Set(lines.map((e) => e.w)).size).toBe(2);
      const sub = lines.filter((e) => e.w === w);
      expect(sub.map((e) => e.type)).toEqual([
        'writer.start',
        'message',
        'turn.start',
        'agent.action',
        'agent.action_result',
        'agent.output',
        'turn.end',
        'writer.end',
      ]);
      expect(sub[0].meta).toMatchObject({ agent: 'test-runner', subagent_id: 'agent-7' });
      expect(sub[1]).toMatchObject({ user_id: 'parent-agent', text: 'run the parser tests' });
      expect(sub[4]).toMatchObject({ status: 'ok', exit_code: 0 });
      expect(sub[5].text).toBe('all 12 parser tests pass');
      expect(lines.find((e) => e.type === 'message' && e.w !== w).text).toBe('fix the parser');
    } finally {
      await mcp.close();
    }
  }, 60_000);

  it("shows the server's evidence verdicts: a passed claim on exit code 1 is unsupported", async () => {
    const s = await boundSession();
    // The agent's own writer: two recorded commands, one failing, one passing.
    const w = openSession(srv.workDir, { sid: s.sid, agent: 'claude-code' });
    const t = w.turnStart({ context_message_ids: [] });
    for (const [call, code] of [
      ['toolu_fail', 1],
      ['toolu_ok', 0],
    ] as const) {
      const a = w.action({ turn_id: t.turn_id, tool: 'Bash', input: { command: 'npm test' }, call_id: call });
      w.actionResult({ action_id: a.id, status: code === 0 ? 'ok' : 'error', output: '…', exit_code: code });
    }
    w.turnEnd({ turn_id: t.turn_id, status: 'completed' });
    w.end();
    await uploadSession(w.dir, { client: new ApiClient({ url: srv.url, token: srv.admin }) });
    const mcp = await connectMcp(cli.bin, s.env, dirs.make());
    try {
      const evidence = [
        { type: 'command', ref: 'toolu_fail', result: 'passed' },
        { type: 'command', ref: 'toolu_ok', result: 'passed' },
      ];
      const r = (await mcp.client.callTool({
        name: 'report_status',
        arguments: { state: 'done', note: 'tests pass', events: [{ kind: 'evidence', evidence }] },
      })) as Result;
      expect(r.isError, text(r)).toBeFalsy();
      const c = (await mcp.client.callTool({ name: 'session_context', arguments: {} })) as Result;
      expect(text(c)).toContain(
        'Declared evidence (all kept reports): 1 supported, 1 unsupported, 0 unchecked',
      );
      expect(text(c)).toMatch(/- unsupported: command toolu_fail passed: .*1/);
      expect(text(c)).not.toContain('unsupported: command toolu_ok');
    } finally {
      await mcp.close();
    }
  }, 60_000);

  it('writes nothing but JSON-RPC lines on stdout, even when a library logs or stdin holds garbage, and answers initialize fast', async () => {
    const s = await boundSession();
    const noise = join(dirs.make(), 'stray-log.mjs');
    mkdirSync(join(noise, '..'), { recursive: true });
    // A library that logs to the console on every request it makes (the tools fetch the API).
    writeFileSync(
      noise,
      "const f = globalThis.fetch; globalThis.fetch = (...a) => { console.log('a library logs', String(a[0])); console.info('and informs'); return f(...a); };\n",
    );
    const run = await rawMcp(
      cli.bin,
      { ...process.env, ...s.env, NODE_OPTIONS: `--import ${noise}` } as Record<string, string>,
      dirs.make(),
      [
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
        'not json at all',
        '{"jsonrpc":"2.0","id":',
        { id: 2, method: 'tools/list' },
        {
          id: 3,
          method: 'tools/call',
          params: { name: 'report_status', arguments: { state: 'working', note: 'raw' } },
        },
        {
          id: 4,
          method: 'tools/call',
          params: { name: 'report_status', arguments: { state: 'working', note: 'x'.repeat(241) } },
        },
        { id: 5, method: 'tools/call', params: { name: 'session_context', arguments: {} } },
        { id: 6, method: 'no/such/method' },
      ],
    );
    expect(run.code).toBe(0);
    const answers = run.lines.map((l) => JSON.parse(l));
    for (const a of answers) expect(a.jsonrpc).toBe('2.0');
    expect(answers.map((a) => a.id)).toEqual([1, 2, 3, 4, 5, 6]);
    expect(answers[2].result.isError).toBeFalsy();
    expect(answers[3].result.isError).toBe(true);
    expect(answers[5].error.code).toBe(-32601);
    expect(run.stderr).toContain('a library logs');
    expect(run.stderr).toContain('and informs');
    // Lines that are not JSON-RPC are reported on stderr and skipped; the session goes on.
    expect(run.stderr).toMatch(/hansard mcp: .*not valid JSON/);
    // The client's start-up wait (Claude Code's MCP_TIMEOUT default is 30 s); logged for the report.
    console.info(`mcp serve: initialize answered in ${Math.round(run.initializeMs)} ms`);
    expect(run.initializeMs).toBeLessThan(10_000);
  }, 60_000);
});

/**
 * The MCP tools (issue 12 item 3) against hostile input and across sessions, in this process (the SDK's
 * in-memory transport, the same server code `hansard mcp serve` runs) against a real HTTP server:
 * a token bound to one session reaches no other through any tool; bad arguments are refused by name and
 * store nothing; secrets in a subagent's messages are redacted before they leave the machine; a damaged
 * hook state is skipped, an expired minted token gives way to the configured one, an explicit
 * session_token finds its session in the hook state wherever it runs; `HANSARD_DECLARED_EVENTS=1` asks
 * for declared events in `session_context`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createMcpServer } from '../../../lib/client/mcp/index.js';
import { useServer } from '../../support/server.js';
import { tmpDirs } from '../../support/tmp.js';
import { seedSession, sessionToken, writeHookState } from './helpers.js';

const srv = useServer();
const dirs = tmpDirs('hansard-mcp-hostile-');
const open: Client[] = [];
afterEach(async () => {
  for (const c of open.splice(0)) await c.close();
});

type Result = { content: { text: string }[]; isError?: boolean; structuredContent?: Record<string, unknown> };

/** A client connected to the MCP server in this process, with `env` and `cwd`. */
async function connect(env: Record<string, string>, cwd = dirs.make()) {
  const server = createMcpServer({ env, cwd, statusOnly: true });
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: 'hostile', version: '1' });
  await client.connect(b);
  open.push(client);
  return async (name: string, args: Record<string, unknown>) => {
    const r = (await client.callTool({ name, arguments: args })) as Result;
    return { ...r, text: r.content.map((c) => c.text).join('\n') };
  };
}

async function statusOf(sid: string): Promise<number> {
  const res = await fetch(`${srv.url}/v1/sessions/${sid}/status`, {
    headers: { authorization: `Bearer ${srv.admin}` },
  });
  return res.status;
}

describe('isolation: a session token reaches its own session only', () => {
  it('refuses report_status, session_context and capture on another session, storing nothing', async () => {
    const mine = await seedSession(srv.url, srv.admin, srv.workDir);
    const theirs = await seedSession(srv.url, srv.admin, srv.workDir);
    const token = await sessionToken(srv.url, srv.admin, mine, ['ingest', 'report', 'read']);
    const call = await connect({
      HANSARD_URL: srv.url,
      HANSARD_SESSION_TOKEN: token,
      HANSARD_SESSION_ID: theirs,
      HANSARD_STATE_DIR: dirs.make(),
    });
    const report = await call('report_status', { state: 'done' });
    expect(report.isError).toBe(true);
    expect(report.text).toContain('the hansard server refused: session not found (404 not_found)');
    const context = await call('session_context', {});
    expect(context.isError).toBe(true);
    expect(context.text).toContain('(404 not_found)');
    const capture = await call('capture_subagent_messages', { messages: [{ role: 'assistant', text: 'x' }] });
    expect(capture.isError).toBe(true);
    expect(capture.text).toContain('(404 not_found)');
    expect(capture.text).toMatch(/the segment is kept in .*mcp-spool.*: `hansard upload .*` ships it/);
    expect(await statusOf(theirs)).toBe(404);
    const replay = await fetch(`${srv.url}/v1/sessions/${theirs}/replay`, {
      headers: { authorization: `Bearer ${srv.admin}` },
    });
    expect(
      new Set(
        (await replay.text())
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l).w),
      ).size,
    ).toBe(1);
  });

  it('a report-only token cannot capture (ingest), and says which scope is missing', async () => {
    const sid = await seedSession(srv.url, srv.admin, srv.workDir);
    const token = await sessionToken(srv.url, srv.admin, sid, ['report']);
    const call = await connect({
      HANSARD_URL: srv.url,
      HANSARD_STATE_DIR: dirs.make(),
      HANSARD_SESSION_ID: sid,
    });
    const r = await call('capture_subagent_messages', {
      session_token: token,
      messages: [{ role: 'assistant', text: 'x' }],
    });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('(403 forbidden)');
    expect(r.text).toContain('report to post, ingest to upload');
  });
});

describe('hostile arguments are refused by name and store nothing', () => {
  const cases: [string, string, Record<string, unknown>, string][] = [
    ['report_status', 'a note on two lines', { state: 'working', note: 'a\nb' }, 'the note is one line'],
    ['report_status', 'an unknown field', { state: 'working', sid: 's_x' }, 'Unrecognized key: "sid"'],
    [
      'report_status',
      'an absolute file ref',
      {
        state: 'working',
        events: [{ kind: 'evidence', evidence: [{ type: 'file', ref: '/etc/passwd', result: 'present' }] }],
      },
      'a file reference is a relative path',
    ],
    [
      'report_status',
      'a result that is not one of the seed',
      {
        state: 'working',
        events: [{ kind: 'evidence', evidence: [{ type: 'test', ref: 'unit', result: 'great' }] }],
      },
      'at events[0].evidence[0].result',
    ],
    ['report_status', 'a state of the wrong type', { state: 7 }, 'at state'],
    [
      'capture_subagent_messages',
      '501 messages',
      { messages: Array.from({ length: 501 }, () => ({ role: 'assistant', text: 'x' })) },
      'at most 500 messages a call',
    ],
    [
      'capture_subagent_messages',
      'a message of 100,001 characters',
      { messages: [{ role: 'assistant', text: 'x'.repeat(100_001) }] },
      'a message is at most 100000 characters',
    ],
    [
      'capture_subagent_messages',
      'an unknown role',
      { messages: [{ role: 'system', text: 'x' }] },
      'at messages[0].role',
    ],
    [
      'capture_subagent_messages',
      'a parent action that is not an id',
      { messages: [{ role: 'assistant', text: 'x' }], parent_action_id: '../../etc' },
      'an action id: a_ followed by a ULID',
    ],
    ['capture_subagent_messages', 'no messages', { messages: [] }, 'at messages'],
    ['session_context', 'an unknown field', { sid: 's_x' }, 'Unrecognized key: "sid"'],
  ];
  it.each(cases)('%s: %s', async (tool, _name, args, says) => {
    const sid = await seedSession(srv.url, srv.admin, srv.workDir);
    const token = await sessionToken(srv.url, srv.admin, sid, ['ingest', 'report', 'read']);
    const call = await connect({
      HANSARD_URL: srv.url,
      HANSARD_SESSION_TOKEN: token,
      HANSARD_SESSION_ID: sid,
      HANSARD_STATE_DIR: dirs.make(),
    });
    const r = await call(tool, args);
    expect(r.isError).toBe(true);
    expect(r.text).toContain(`Invalid arguments for tool ${tool}:`);
    expect(r.text).toContain(says);
    expect(await statusOf(sid)).toBe(404);
  });
});

describe("a subagent's messages", () => {
  it('are redacted before upload: a credential never reaches the server', async () => {
    const sid = await seedSession(srv.url, srv.admin, srv.workDir);
    const token = await sessionToken(srv.url, srv.admin, sid, ['ingest', 'report', 'read']);
    const call = await connect({
      HANSARD_URL: srv.url,
      HANSARD_SESSION_TOKEN: token,
      HANSARD_SESSION_ID: sid,
      HANSARD_STATE_DIR: dirs.make(),
    });
    const secret = 'AKIAIOSFODNN7EXAMPLE';
    const r = await call('capture_subagent_messages', {
      messages: [
        { role: 'user', text: `deploy with key ${secret}` },
        {
          role: 'tool',
          tool: 'Bash',
          input: { command: 'env' },
          output: `AWS_ACCESS_KEY_ID=${secret}`,
          exit_code: 0,
        },
      ],
    });
    expect(r.isError, r.text).toBeFalsy();
    const replay = await (
      await fetch(`${srv.url}/v1/sessions/${sid}/replay`, {
        headers: { authorization: `Bearer ${srv.admin}` },
      })
    ).text();
    expect(replay).toContain('deploy with key');
    expect(replay).not.toContain(secret);
  });
});

describe('session resolution from the hook state', () => {
  it('skips damaged state files and picks the live session of this folder', async () => {
    const sid = await seedSession(srv.url, srv.admin, srv.workDir);
    const project = dirs.make();
    const state = dirs.make();
    mkdirSync(join(state, 'claude-code'), { recursive: true });
    writeFileSync(join(state, 'claude-code', 'garbage.json'), '{"version":1,"sid":');
    writeFileSync(join(state, 'claude-code', 'array.json'), '[1,2,3]');
    writeHookState(state, 'bad-sid', { sid: 's_not_an_id', cwd: project });
    writeHookState(state, '%zz', { sid, cwd: project, token: null });
    writeFileSync(join(state, 'config.json'), JSON.stringify({ url: srv.url, token: srv.admin }));
    const call = await connect({ HANSARD_STATE_DIR: state }, project);
    const r = await call('report_status', { state: 'working' });
    expect(r.text).toBe(`reported working for ${sid}`);
    const c = await call('session_context', {});
    expect(c.text).toContain('found through claude-code hook state, Claude Code session %zz');
  });

  it('an expired minted token gives way to the configured server token', async () => {
    const sid = await seedSession(srv.url, srv.admin, srv.workDir);
    const project = dirs.make();
    const state = dirs.make();
    writeHookState(state, 'claude-1', { sid, cwd: project, token: 'hns_expired' });
    // writeHookState's token expires in a day: make it expire now.
    const path = join(state, 'claude-code', 'claude-1.json');
    const st = JSON.parse((await import('node:fs')).readFileSync(path, 'utf8'));
    st.token.expires_at = new Date(Date.now() + 30_000).toISOString();
    writeFileSync(path, JSON.stringify(st));
    writeFileSync(join(state, 'config.json'), JSON.stringify({ url: srv.url, token: srv.admin }));
    const r = await (await connect({ HANSARD_STATE_DIR: state }, project))('report_status', {
      state: 'blocked',
    });
    expect(r.isError, r.text).toBeFalsy();
    expect(r.text).toBe(`reported blocked for ${sid}`);
  });

  it('an explicit session_token finds its session in the hook state, wherever that session runs', async () => {
    const sid = await seedSession(srv.url, srv.admin, srv.workDir);
    const token = await sessionToken(srv.url, srv.admin, sid, ['report']);
    const state = dirs.make();
    writeHookState(state, 'claude-far', { sid, cwd: dirs.make(), token });
    const call = await connect({ HANSARD_URL: srv.url, HANSARD_STATE_DIR: state });
    const r = await call('report_status', { state: 'needs_review', session_token: token });
    expect(r.text).toBe(`reported needs_review for ${sid}`);
  });
});

describe('session_context instructions', () => {
  it('ask for declared events only with HANSARD_DECLARED_EVENTS=1', async () => {
    const sid = await seedSession(srv.url, srv.admin, srv.workDir);
    const token = await sessionToken(srv.url, srv.admin, sid, ['report']);
    const env = {
      HANSARD_URL: srv.url,
      HANSARD_SESSION_TOKEN: token,
      HANSARD_SESSION_ID: sid,
      HANSARD_STATE_DIR: dirs.make(),
    };
    const off = await (await connect(env))('session_context', {});
    expect(off.text).toContain('report with the report_status tool');
    expect(off.text).not.toContain('declare');
    const on = await (await connect({ ...env, HANSARD_DECLARED_EVENTS: '1' }))('session_context', {});
    expect(on.text).toContain('declare what you did');
    expect(on.text).toContain("report_status's events");
  });
});

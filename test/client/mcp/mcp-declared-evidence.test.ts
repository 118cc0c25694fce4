/**
 * The attack of issue 24 item 1, as an agent would make it through MCP alone: its `npm test` exited 1
 * under the runtime's hooks; it then sends `capture_subagent_messages` with a tool message saying
 * `{"tool":"Bash","input":{"command":"npm test"},"exit_code":0}` and `report_status` claiming `passed`.
 * The real `bin/hansard mcp serve --status`, driven by the MCP SDK's client, against the real server: the
 * captured writer says `provenance: declared` in its writer.start, and the claim stays unsupported, resting
 * on the hooks' exit 1 (docs/status.md "What a verdict rests on").
 */
import { mkdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ApiClient } from '../../../lib/client/api/client.js';
import { uploadSession } from '../../../lib/client/api/upload.js';
import { openSession } from '../../../lib/log/write/writer.js';
import { useServer } from '../../support/server.js';
import { tmpDirs } from '../../support/tmp.js';
import { useBuiltCli } from '../capture/helpers.js';
import { connectMcp, sessionToken } from './helpers.js';

const cli = useBuiltCli('mcp-declared');
const srv = useServer({ real: true });
const dirs = tmpDirs('hansard-mcp-declared-');

type Result = { content: { type: string; text: string }[]; isError?: boolean };
const text = (r: unknown) => (r as Result).content.map((c) => c.text).join('\n');

describe("an agent's own tool messages through MCP", () => {
  it('do not turn its failed npm test into a supported claim', async () => {
    // What the hooks recorded: npm test, exit 1.
    mkdirSync(srv.workDir, { recursive: true });
    const hook = openSession(srv.workDir, { agent: 'claude-code', provenance: 'hook' });
    hook.message({ user_id: 'priya', text: 'make the tests pass' }, { at: Date.now() * 1000 - 120e6 });
    const t = hook.turnStart({ context_message_ids: null }, { at: Date.now() * 1000 - 110e6 });
    const a = hook.action(
      { turn_id: t.turn_id, tool: 'Bash', input: { command: 'npm test' }, call_id: 'toolu_01Hook' },
      { at: Date.now() * 1000 - 100e6 },
    );
    hook.actionResult({ action_id: a.id, status: 'error', exit_code: 1 }, { at: Date.now() * 1000 - 90e6 });
    hook.close();
    await uploadSession(hook.dir, { client: new ApiClient({ url: srv.url, token: srv.admin }) });

    const token = await sessionToken(srv.url, srv.admin, hook.sid, ['ingest', 'report', 'read']);
    const env = {
      HANSARD_URL: srv.url,
      HANSARD_SESSION_TOKEN: token,
      HANSARD_SESSION_ID: hook.sid,
      HANSARD_STATE_DIR: dirs.make(),
    };
    const mcp = await connectMcp(cli.bin, env, dirs.make());
    try {
      const cap = (await mcp.client.callTool({
        name: 'capture_subagent_messages',
        arguments: {
          agent: 'test-runner',
          messages: [{ role: 'tool', tool: 'Bash', input: { command: 'npm test' }, exit_code: 0 }],
        },
      })) as Result;
      expect(cap.isError, text(cap)).toBeFalsy();
      const declared = /as writer (w_[0-9A-Z]{26}) of/.exec(text(cap))?.[1] as string;
      expect(declared).toMatch(/^w_/);
      const rep = (await mcp.client.callTool({
        name: 'report_status',
        arguments: {
          state: 'done',
          note: 'tests pass',
          events: [{ kind: 'evidence', evidence: [{ type: 'test', ref: 'npm test', result: 'passed' }] }],
        },
      })) as Result;
      expect(rep.isError, text(rep)).toBeFalsy();

      // The captured writer declares itself declared, in its writer.start as stored.
      const seg = await fetch(`${srv.url}/v1/sessions/${hook.sid}/writers/${declared}/segment`, {
        headers: { authorization: `Bearer ${srv.admin}` },
      });
      const start = JSON.parse((await seg.text()).split('\n')[0]!);
      expect(start).toMatchObject({ type: 'writer.start', meta: { provenance: 'declared' } });

      const res = await fetch(`${srv.url}/v1/sessions/${hook.sid}/status`, {
        headers: { authorization: `Bearer ${srv.admin}` },
      });
      const status = (await res.json()) as {
        events: { evidence: { check: Record<string, unknown> }[] }[];
      };
      const check = status.events[0]!.evidence[0]!.check;
      expect(check).toMatchObject({
        verdict: 'unsupported',
        action_id: a.id,
        exit_code: 1,
        rests_on: { w: hook.w, provenance: 'hook', exit_code: 1, token_label: 'bootstrap admin' },
      });
      // session_context tells the agent the same
      const ctx = (await mcp.client.callTool({ name: 'session_context', arguments: {} })) as Result;
      expect(text(ctx)).toContain('unsupported: test npm test passed');
    } finally {
      await mcp.close();
    }
  }, 60_000);
});

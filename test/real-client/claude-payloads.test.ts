/**
 * What the real Claude Code 2.1.328 gives its hooks, recorded by a hook that only saves its stdin: the
 * hansard hook is written against test/fixtures/real-client/0*.json, and this suite shows those are
 * still what the client sends, and pins the payloads the fixtures lack (a failing command, a subagent,
 * a background subagent). Needs no hansard code, so it runs whatever state the hook is in.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { type AnthropicStub, startAnthropicStub } from './support/anthropic-stub.js';
import { claudeScenario, runClaude, SUBAGENT_PROMPT, writeLoggingHooks } from './support/claude.js';
import { ROOT } from './support/clients.js';

type Payload = Record<string, unknown> & { hook_event_name: string };

const roots: string[] = [];
const stubs: AnthropicStub[] = [];
afterAll(async () => {
  for (const s of stubs) await s.close();
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** Plays one scenario with the logging hook; returns the payloads in the order the hooks started. */
async function record(name: Parameters<typeof claudeScenario>[0]): Promise<Payload[]> {
  const sc = claudeScenario(name);
  const stub = await startAnthropicStub(sc.script);
  stubs.push(stub);
  const home = mkdtempSync(join(tmpdir(), 'hansard-rc-payloads-'));
  roots.push(home);
  const log = join(home, 'hook-log');
  mkdirSync(log);
  const hook = join(home, 'log-hook.sh');
  // The name sorts by start time (ns) so the order is the order Claude Code ran the hooks.
  writeFileSync(hook, `#!/bin/sh\ncat > "${log}/$(date +%s%N)-$$.json"\nexit 0\n`, { mode: 0o755 });
  writeLoggingHooks(home, hook);
  const run = await runClaude({
    bin: inject('claudeBin'),
    home,
    cwd: join(home, 'proj'),
    baseUrl: stub.url,
    prompt: sc.prompt,
    allowedTools: sc.allowedTools,
  });
  expect(run.code, run.stderr).toBe(0);
  expect(run.stdout).toContain(sc.finalText);
  return readdirSync(log)
    .sort()
    .map((f) => JSON.parse(readFileSync(join(log, f), 'utf8')) as Payload);
}

/** A payload with its run-specific values replaced by placeholders. */
function normalize(p: Payload): Payload {
  const out: Payload = { ...p };
  for (const k of ['session_id', 'transcript_path', 'cwd', 'prompt_id', 'agent_id', 'agent_transcript_path'])
    if (typeof out[k] === 'string') out[k] = `<${k}>`;
  if (typeof out.duration_ms === 'number') out.duration_ms = '<ms>';
  return out;
}

const key = (p: Payload) => `${p.hook_event_name}:${String(p.tool_use_id ?? '')}`;

describe('Claude Code 2.1.328 hook payloads, recorded', () => {
  it('a prompt with two parallel Bash calls: the same payloads as test/fixtures/real-client/0*.json', async () => {
    const got = await record('parallel');
    const dir = join(ROOT, 'test/fixtures/real-client');
    const fixtures = readdirSync(dir)
      .filter((f) => /^0\d-.*\.json$/.test(f))
      .sort()
      .map((f) => JSON.parse(readFileSync(join(dir, f), 'utf8')) as Payload);
    // Parallel hooks start in either order; compare per (event, tool_use_id), and the sequence of events.
    expect(got.map(key).sort()).toEqual(fixtures.map(key).sort());
    const byKey = new Map(got.map((p) => [key(p), normalize(p)]));
    for (const f of fixtures) expect(byKey.get(key(f)), key(f)).toEqual(normalize(f));
    expect(got.map((p) => p.hook_event_name)).toEqual(fixtures.map((p) => p.hook_event_name));
    // One session, one prompt id from the prompt on.
    expect(new Set(got.map((p) => p.session_id)).size).toBe(1);
    expect(new Set(got.slice(1).map((p) => p.prompt_id)).size).toBe(1);
  });

  it('a failing command fires PostToolUseFailure (error text with the exit code), never PostToolUse', async () => {
    const got = await record('failing');
    expect(got.map((p) => p.hook_event_name)).toEqual([
      'SessionStart',
      'UserPromptSubmit',
      'PreToolUse',
      'PostToolUseFailure',
      'Stop',
      'SessionEnd',
    ]);
    const failure = got[3]!;
    expect(normalize(failure)).toEqual({
      session_id: '<session_id>',
      transcript_path: '<transcript_path>',
      cwd: '<cwd>',
      prompt_id: '<prompt_id>',
      permission_mode: 'default',
      effort: { level: 'medium' },
      hook_event_name: 'PostToolUseFailure',
      tool_name: 'Bash',
      tool_input: { command: 'ls no-such-file', description: 'List a missing file' },
      tool_use_id: 'toolu_fail0001',
      error: "Exit code 2\nls: cannot access 'no-such-file': No such file or directory",
      is_interrupt: false,
      duration_ms: '<ms>',
    });
    expect(failure.tool_use_id).toBe(got[2]!.tool_use_id);
  });

  it('a subagent (Agent tool, in the foreground): SubagentStart/Stop and its tool calls carry agent_id', async () => {
    const got = await record('subagent');
    const seq = got.map(
      (p) => `${p.hook_event_name}${p.agent_id ? '@sub' : ''}:${String(p.tool_name ?? '')}`,
    );
    expect(seq).toEqual([
      'SessionStart:',
      'UserPromptSubmit:',
      'PreToolUse:Agent',
      'SubagentStart@sub:',
      'PreToolUse@sub:Bash',
      'PostToolUse@sub:Bash',
      'SubagentStop@sub:',
      'PostToolUse:Agent',
      'Stop:',
      'SessionEnd:',
    ]);
    const agentId = got[3]!.agent_id;
    expect(typeof agentId).toBe('string');
    for (const p of got.filter((p) => p.agent_id)) {
      expect(p.agent_id).toBe(agentId);
      expect(p.agent_type).toBe('general-purpose');
      // The subagent's events carry the main session's id and the prompt that launched it.
      expect(p.session_id).toBe(got[0]!.session_id);
      expect(p.prompt_id).toBe(got[1]!.prompt_id);
    }
    const stop = got.find((p) => p.hook_event_name === 'SubagentStop')!;
    expect(stop.last_assistant_message).toBe('Subagent finished: from-subagent.');
    expect(String(stop.agent_transcript_path)).toMatch(/\/subagents\/agent-[0-9a-f]+\.jsonl$/);
    const agentPre = got.find((p) => p.hook_event_name === 'PreToolUse' && p.tool_name === 'Agent')!;
    expect((agentPre.tool_input as { prompt: string }).prompt).toBe(SUBAGENT_PROMPT);
    // Only the person's prompt is a UserPromptSubmit.
    expect(got.filter((p) => p.hook_event_name === 'UserPromptSubmit')).toHaveLength(1);
  });

  it('a background subagent (the default): its completion arrives as a second UserPromptSubmit, a <task-notification>', async () => {
    const got = await record('subagentAsync');
    const prompts = got.filter((p) => p.hook_event_name === 'UserPromptSubmit');
    expect(prompts).toHaveLength(2);
    expect(prompts[0]!.prompt).toBe('delegate the echo to a subagent');
    // Not the person: Claude Code feeds the subagent's result back as a prompt of its own, with a new prompt_id.
    expect(String(prompts[1]!.prompt)).toMatch(
      /^<task-notification>\n<task-id>[0-9a-f]+<\/task-id>\n<tool-use-id>toolu_task0001<\/tool-use-id>/,
    );
    expect(prompts[1]!.prompt_id).not.toBe(prompts[0]!.prompt_id);
    const agentPost = got.find((p) => p.hook_event_name === 'PostToolUse' && p.tool_name === 'Agent')!;
    expect(agentPost.tool_response).toMatchObject({ isAsync: true, status: 'async_launched' });
    // The main turn stops while the subagent still runs, then a second Stop ends the notification's turn.
    const stops = got.filter((p) => p.hook_event_name === 'Stop');
    expect(stops).toHaveLength(2);
    expect(stops[0]!.background_tasks).toMatchObject([{ type: 'subagent', status: 'running' }]);
  });
});

/**
 * Capture against the real Claude Code 2.1.328 (issue 11 item 5): in a temporary HOME, `hansard
 * integrations sync` installs hansard's hooks into `~/.claude/settings.json`; `claude -p` plays a
 * scripted session against the Messages API stand-in, running `hansard hook claude-code` for real on
 * every event (its parallel tool calls as concurrent hook processes); the spool is shipped to a real
 * `hansard serve` (by the hook's own shipper if it did within 10 s, else `hansard upload <state>/spool`);
 * and the server's copy is checked: verify clean, the person's prompts, the actions and their results
 * counted and paired by call id, every action attributed to the prompt that caused it, no hook failure
 * recorded. Scenarios: two parallel Bash calls, a failing command, a subagent.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type AnthropicStub, startAnthropicStub } from './support/anthropic-stub.js';
import { type ClaudeScenario, claudeScenario, runClaude, SUBAGENT_PROMPT } from './support/claude.js';
import {
  type CaptureServer,
  type Ev,
  hansard,
  ofType,
  readStored,
  requireCapture,
  type StoredSession,
  spooledSessions,
  startCaptureServer,
  waitForSession,
} from './support/hansard.js';

let cs: CaptureServer;
const roots: string[] = [];
const stubs: AnthropicStub[] = [];
beforeAll(async () => {
  cs = await startCaptureServer();
});
afterAll(async () => {
  for (const s of stubs) await s.close();
  await cs?.srv.close();
  for (const r of roots) rmSync(r, { recursive: true, force: true });
});

/** A temporary HOME with a state dir, and the environment hansard and the client run with. */
function sandbox(): { home: string; state: string; env: Record<string, string> } {
  const home = mkdtempSync(join(tmpdir(), 'hansard-rc-claude-'));
  roots.push(home);
  const state = join(home, 'state');
  return {
    home,
    state,
    env: { HOME: home, HANSARD_STATE_DIR: state, CODEX_HOME: join(home, '.codex') },
  };
}

/** `integrations sync` into the sandbox's HOME, with the server and token it keeps in `<state>/config.json`. */
async function sync(env: Record<string, string>, url = cs.url): Promise<void> {
  const r = await hansard(['integrations', 'sync', '--url', url, '--token', cs.token], env);
  expect(r.code, `integrations sync: ${r.stdout}${r.stderr}`).toBe(0);
}

/** One scripted session captured end to end; what the server stored of it. */
interface Captured {
  sc: ClaudeScenario;
  stub: AnthropicStub;
  sid: string;
  stored: StoredSession;
  state: string;
  /** the environment hansard and the client ran with */
  env: Record<string, string>;
  shippedByItself: boolean;
}

/**
 * Plays scenario `name` with hansard's hooks shipping to `serverUrl` (default the test server; a URL
 * nothing listens on plays the session offline), then ships the spool to the test server.
 */
async function capture(name: ClaudeScenario['name'], serverUrl = cs.url): Promise<Captured> {
  await requireCapture('claude-code');
  const { home, state, env } = sandbox();
  await sync(env, serverUrl);
  const sc = claudeScenario(name);
  const stub = await startAnthropicStub(sc.script);
  stubs.push(stub);
  const run = await runClaude({
    bin: inject('claudeBin'),
    home,
    cwd: join(home, 'proj'),
    baseUrl: stub.url,
    prompt: sc.prompt,
    allowedTools: sc.allowedTools,
    env,
  });
  expect(run.code, run.stderr).toBe(0);
  // The hooks were never in the way: the session ran to its scripted answer.
  expect(run.stdout).toContain(sc.finalText);
  const sids = spooledSessions(state);
  expect(sids, `one spooled session under ${state}/spool`).toHaveLength(1);
  const sid = sids[0]!;
  const offline = serverUrl !== cs.url;
  const shippedByItself = await waitForSession(cs, sid, offline ? 0 : 10_000);
  if (offline)
    expect(shippedByItself, 'nothing reached the test server while its URL was not configured').toBe(false);
  const up = await hansard(['upload', join(state, 'spool'), '--json'], {
    ...env,
    HANSARD_URL: cs.url,
    HANSARD_TOKEN: cs.token,
  });
  expect(up.code, `hansard upload: ${up.stdout}${up.stderr}`).toBe(0);
  const stored = await readStored(cs, sid);
  console.info(
    `${name}: claude ${run.ms} ms, ${stored.events.length} events, shipped by the hook itself: ${shippedByItself}`,
  );
  return { sc, stub, sid, stored, state, env, shippedByItself };
}

/** The checks every captured session passes. */
function expectClean(c: Captured): void {
  const problems = c.stored.verify.problems.filter((p: { severity: string }) => p.severity !== 'info');
  expect(problems, 'verify of the stored session').toEqual([]);
  expect(c.stored.verify.ok).toBe(true);
  const failures = join(c.state, 'hook-failures.json');
  const recorded = existsSync(failures) ? JSON.parse(readFileSync(failures, 'utf8')).failures : [];
  expect(recorded, 'hook failures recorded in the state dir').toEqual([]);
  // SessionStart's additionalContext (the hansard session identity) reached the model.
  expect(JSON.stringify(c.stub.requests[0]?.body ?? {})).toContain(c.sid);
}

/** The person's prompts: the session's `message` events, by text. */
const prompts = (s: StoredSession): string[] => ofType(s, 'message').map((m) => m.text);

/** Every action's result, paired by `action_id`, and the action's call id. */
function pairs(s: StoredSession): { action: Ev; result: Ev | undefined }[] {
  const results = ofType(s, 'agent.action_result');
  return ofType(s, 'agent.action').map((action) => ({
    action,
    result: results.find((r) => r.action_id === action.id),
  }));
}

/** Every `agent.action` is attributed to exactly the one prompt `message`. */
function expectAttributedToPrompt(s: StoredSession): void {
  const [prompt] = ofType(s, 'message');
  for (const a of ofType(s, 'agent.action')) {
    const at = s.attribution.find((x: { event_id: string }) => x.event_id === a.id);
    expect(at, `attribution of ${a.tool} ${a.call_id}`).toBeDefined();
    expect(at.message_ids, `attribution of ${a.tool} ${a.call_id} (${at.basis})`).toEqual([prompt!.id]);
    expect(at.confidence).toBeGreaterThan(0);
  }
}

/** What the `parallel` scenario must leave on the server. */
function expectParallel(s: StoredSession): void {
  expect(prompts(s)).toEqual(['run the greeting']);
  expect(ofType(s, 'turn.start')).toHaveLength(1);
  expect(ofType(s, 'turn.end')).toHaveLength(1);
  const p = pairs(s);
  expect(p.map((x) => x.action.call_id).sort()).toEqual(['toolu_fake0001a', 'toolu_fake0001b']);
  for (const { action, result } of p) {
    expect(action.tool).toBe('Bash');
    expect(result, `the result of ${action.call_id}`).toBeDefined();
    expect(result!.status).toBe('ok');
    const printed = action.call_id === 'toolu_fake0001a' ? 'hello-from-tool' : 'second-parallel-call';
    expect(JSON.stringify(action.input)).toContain(`echo ${printed}`);
    expect(JSON.stringify(result!.output)).toContain(printed);
  }
  expect(ofType(s, 'agent.action_result')).toHaveLength(2);
  expectAttributedToPrompt(s);
}

describe('capture from the real Claude Code 2.1.328', () => {
  it('integrations sync installs a hansard hook for every event Claude Code fires with something to record', async () => {
    await requireCapture('claude-code');
    const { home, env } = sandbox();
    await sync(env);
    const settings = JSON.parse(readFileSync(join(home, '.claude', 'settings.json'), 'utf8'));
    // The events the payload suite saw in these scenarios. PostToolUseFailure is the only result a
    // failing tool call gets (never PostToolUse); without it the action has no result.
    for (const event of [
      'SessionStart',
      'UserPromptSubmit',
      'PreToolUse',
      'PostToolUse',
      'PostToolUseFailure',
      'SubagentStop',
      'Stop',
      'SessionEnd',
    ]) {
      const commands = (settings.hooks?.[event] ?? []).flatMap((g: { hooks?: { command?: string }[] }) =>
        (g.hooks ?? []).map((h) => h.command ?? ''),
      );
      expect(
        commands.some((c: string) => /hook claude-code/.test(c)),
        `a hansard hook on ${event}`,
      ).toBe(true);
    }
  });

  it('two parallel Bash calls: one prompt, two actions each with its result, attributed to the prompt', async () => {
    const c = await capture('parallel');
    expectClean(c);
    expectParallel(c.stored);
    // doctor, in the same HOME and state dir, finds nothing to do once the session is on the server.
    const doctor = await hansard(['doctor', '--json'], c.env);
    const findings = JSON.parse(doctor.stdout || '{}').findings ?? [];
    expect(
      findings.filter((f: { ok: boolean }) => !f.ok),
      `hansard doctor: ${doctor.stdout}${doctor.stderr}`,
    ).toEqual([]);
    expect(doctor.code).toBe(0);
  });

  it('offline: with the server unreachable the session runs as usual, and nothing is lost once shipped', async () => {
    // A loopback port nothing listens on: the hooks can only spool.
    const dead = createServer();
    await new Promise<void>((r) => dead.listen(0, '127.0.0.1', r));
    const { port } = dead.address() as AddressInfo;
    await new Promise((r) => dead.close(r));
    const c = await capture('parallel', `http://127.0.0.1:${port}`);
    const problems = c.stored.verify.problems.filter((p: { severity: string }) => p.severity !== 'info');
    expect(problems, 'verify of the stored session').toEqual([]);
    expectParallel(c.stored);
  });

  it('a failing command: its result is recorded as an error with exit code 2', async () => {
    const c = await capture('failing');
    expectClean(c);
    expect(prompts(c.stored)).toEqual(['list the missing file']);
    const p = pairs(c.stored);
    expect(p).toHaveLength(1);
    const { action, result } = p[0]!;
    expect(action.call_id).toBe('toolu_fail0001');
    expect(
      result,
      'the result of the failing call (Claude Code sends it as PostToolUseFailure)',
    ).toBeDefined();
    expect(result!.status).toBe('error');
    expect(result!.exit_code).toBe(2);
    expect(`${result!.error ?? ''}${JSON.stringify(result!.output)}`).toContain('No such file or directory');
    expectAttributedToPrompt(c.stored);
  });

  it("a subagent: its prompt is not the person's, its action and the Agent call are both attributed to the prompt", async () => {
    const c = await capture('subagent');
    expectClean(c);
    // The subagent's task is the agent's instruction, never a `message` (only a person speaks).
    expect(prompts(c.stored)).toEqual(['delegate the echo to a subagent']);
    expect(JSON.stringify(ofType(c.stored, 'message'))).not.toContain(SUBAGENT_PROMPT);
    const p = pairs(c.stored);
    expect(p.map((x) => `${x.action.tool}:${x.action.call_id}`).sort()).toEqual([
      'Agent:toolu_task0001',
      'Bash:toolu_sub0001',
    ]);
    for (const { action, result } of p) {
      expect(result, `the result of ${action.tool} ${action.call_id}`).toBeDefined();
      expect(result!.status).toBe('ok');
    }
    expectAttributedToPrompt(c.stored);
  });

  it("a background subagent: the <task-notification> Claude Code submits as a prompt is not the person's", async () => {
    const c = await capture('subagentAsync');
    expectClean(c);
    // Claude Code 2.1.328 hands the finished subagent's result back through UserPromptSubmit (the
    // payload suite shows it); the person typed one prompt.
    expect(prompts(c.stored)).toEqual(['delegate the echo to a subagent']);
    const p = pairs(c.stored);
    expect(p.map((x) => `${x.action.tool}:${x.action.call_id}`).sort()).toEqual([
      'Agent:toolu_task0001',
      'Bash:toolu_sub0001',
    ]);
    for (const { action, result } of p)
      expect(result, `the result of ${action.tool} ${action.call_id}`).toBeDefined();
    expectAttributedToPrompt(c.stored);
  });
});

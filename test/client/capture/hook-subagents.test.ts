/**
 * Subagents are linked by what identifies them, not by order of arrival (issue 25 item 3). Claude Code's
 * SubagentStart names the subagent (`agent_id`) and its type (`agent_type`), never the Agent call that
 * launched it; a background launch's answer names the subagent's id (`agentId`). Payloads shaped as
 * Claude Code 2.1.x sends them (test/fixtures/real-client, the hooks reference), through the real
 * `bin/hansard hook claude-code` process, one at a time in the order given.
 */
import { describe, expect, it } from 'vitest';
import { drainInboxes } from '../../../lib/client/capture/hook.js';
import { readHookFailures } from '../../../lib/client/capture/state-dir.js';
import { tmpDirs } from '../../support/tmp.js';
import { hookEnv, runHook, sessionEvents, spoolSessions, useBuiltCli, verifyDir } from './helpers.js';

const cli = useBuiltCli('subagents');
const tmp = tmpDirs('hansard-hook-subagents-');

type Ev = Record<string, unknown> & { type: string };

const base = {
  session_id: '6f1d2c3b-25a0-4c11-9e0f-000000000003',
  transcript_path: '/home/user/.claude/projects/-home-user-proj/6f1d2c3b-25a0-4c11-9e0f-000000000003.jsonl',
  cwd: '/home/user/proj',
  permission_mode: 'default',
  prompt_id: 'c0a8012e-4b7d-4f3a-9d55-0000000000a1',
};

const hook = (hook_event_name: string, fields: Record<string, unknown> = {}) => ({
  ...base,
  hook_event_name,
  ...fields,
});
const agentInput = (subagent_type: string | undefined, description: string) => ({
  description,
  prompt: `${description}, then report back`,
  ...(subagent_type ? { subagent_type } : {}),
});
const launch = (id: string, type: string | undefined, description: string) =>
  hook('PreToolUse', { tool_name: 'Agent', tool_input: agentInput(type, description), tool_use_id: id });
const answered = (id: string, type: string | undefined, description: string, response: unknown) =>
  hook('PostToolUse', {
    tool_name: 'Agent',
    tool_input: agentInput(type, description),
    tool_use_id: id,
    tool_response: response,
  });
const start = (agent_id: string, agent_type: string) => hook('SubagentStart', { agent_id, agent_type });
const stop = (agent_id: string, agent_type: string, last: string) =>
  hook('SubagentStop', {
    agent_id,
    agent_type,
    stop_hook_active: false,
    agent_transcript_path: `/home/user/.claude/projects/-home-user-proj/subagents/agent-${agent_id}.jsonl`,
    last_assistant_message: last,
  });
const subCall = (agent_id: string, agent_type: string, id: string, command: string) => [
  hook('PreToolUse', {
    agent_id,
    agent_type,
    tool_name: 'Bash',
    tool_input: { command, description: command },
    tool_use_id: id,
  }),
  hook('PostToolUse', {
    agent_id,
    agent_type,
    tool_name: 'Bash',
    tool_input: { command, description: command },
    tool_use_id: id,
    tool_response: { stdout: 'ok', stderr: '', interrupted: false },
  }),
];
const done = (text: string) => ({ status: 'completed', content: [{ type: 'text', text }] });

/** Runs `payloads` through the hook one by one; returns the session's events. */
async function session(payloads: Record<string, unknown>[]): Promise<{ evs: Ev[]; dir: string }> {
  const state = tmp.make();
  for (const p of payloads) {
    const r = await runHook(cli.bin, ['claude-code'], JSON.stringify(p), { HANSARD_STATE_DIR: state });
    expect(r, String(p.hook_event_name)).toMatchObject({ code: 0, stderr: '' });
  }
  // A hook past its budget on a busy machine defers its payload; write it as the shipper would.
  await drainInboxes(state, hookEnv({ HANSARD_STATE_DIR: state }));
  for (const f of readHookFailures(state)) expect(f.reason).toBe('timeout');
  const dirs = spoolSessions(state);
  expect(dirs).toHaveLength(1);
  return { evs: sessionEvents(dirs[0]!) as Ev[], dir: dirs[0]! };
}

/** The launching action each subagent's writer names (subagent id → the Agent call's tool_use_id, or null). */
function links(evs: Ev[]): Record<string, string | null> {
  const out: Record<string, string | null> = {};
  for (const s of evs.filter((e) => e.type === 'writer.start' && (e.meta as Ev).subagent_id)) {
    const meta = s.meta as Ev;
    const parent = evs.find((e) => e.type === 'agent.action' && e.id === meta.parent_action_id);
    out[String(meta.subagent_id)] = parent ? String(parent.call_id) : null;
  }
  return out;
}

/** Every action has exactly one result. */
function expectEachActionOneResult(evs: Ev[]): void {
  const results = evs.filter((e) => e.type === 'agent.action_result');
  for (const a of evs.filter((e) => e.type === 'agent.action'))
    expect(
      results.filter((r) => r.action_id === a.id),
      String(a.call_id),
    ).toHaveLength(1);
}

describe('a SubagentStop of an agent never seen, with an empty agent_type, between two SubagentStarts', () => {
  it('takes no call: both real subagents link to their own Agent calls, the stop is a marked, unlinked note', async () => {
    const { evs, dir } = await session([
      hook('SessionStart', { source: 'startup' }),
      hook('UserPromptSubmit', { prompt: 'look at the logs and plan the fix' }),
      launch('toolu_agent_logs', 'Explore', 'Read the logs'),
      launch('toolu_agent_plan', 'Plan', 'Plan the fix'),
      start('a5e1f0c9d2b3', 'Explore'),
      stop('f00dcafe1234', '', 'Compacted the conversation.'),
      start('b7c2d4e6f8a0', 'Plan'),
      ...subCall('a5e1f0c9d2b3', 'Explore', 'toolu_sub_logs', 'grep -r timeout logs'),
      ...subCall('b7c2d4e6f8a0', 'Plan', 'toolu_sub_plan', 'ls test'),
      stop('a5e1f0c9d2b3', 'Explore', 'The logs show a timeout.'),
      stop('b7c2d4e6f8a0', 'Plan', 'Raise the timeout.'),
      answered('toolu_agent_logs', 'Explore', 'Read the logs', done('The logs show a timeout.')),
      answered('toolu_agent_plan', 'Plan', 'Plan the fix', done('Raise the timeout.')),
      hook('Stop', { stop_hook_active: false, last_assistant_message: 'It times out; raise the timeout.' }),
      hook('SessionEnd', { reason: 'prompt_input_exit' }),
    ]);
    expect(links(evs)).toEqual({ a5e1f0c9d2b3: 'toolu_agent_logs', b7c2d4e6f8a0: 'toolu_agent_plan' });
    const unlinked = evs.filter((e) => e.unlinked_subagent === true);
    expect(unlinked).toEqual([
      expect.objectContaining({
        type: 'note',
        import_kind: 'meta',
        text: 'Compacted the conversation.',
        agent_id: 'f00dcafe1234',
      }),
    ]);
    // It writes in the main writer, and no writer of its own.
    const main = evs.find((e) => e.type === 'writer.start' && (e.meta as Ev).claude_session_id)!;
    expect(unlinked[0]!.w).toBe(main.w);
    expectEachActionOneResult(evs);
    expect(await verifyDir(dir)).toEqual([]);
  }, 120_000);
});

describe('what ties a subagent to its call', () => {
  it('its type: SubagentStarts arriving in the other order than the calls still link each to its own', async () => {
    const { evs, dir } = await session([
      hook('UserPromptSubmit', { prompt: 'review and test' }),
      launch('toolu_review', 'code-reviewer', 'Review the diff'),
      launch('toolu_tests', 'test-runner', 'Run the tests'),
      start('c1', 'test-runner'),
      start('c2', 'code-reviewer'),
      stop('c1', 'test-runner', 'All green.'),
      stop('c2', 'code-reviewer', 'Looks fine.'),
      answered('toolu_review', 'code-reviewer', 'Review the diff', done('Looks fine.')),
      answered('toolu_tests', 'test-runner', 'Run the tests', done('All green.')),
      hook('Stop', { stop_hook_active: false, last_assistant_message: 'Reviewed and tested.' }),
      hook('SessionEnd', { reason: 'other' }),
    ]);
    expect(links(evs)).toEqual({ c1: 'toolu_tests', c2: 'toolu_review' });
    expect(await verifyDir(dir)).toEqual([]);
  }, 120_000);

  it('a subagent no waiting call asks for starts unlinked and leaves the waiting call to its own subagent', async () => {
    const { evs } = await session([
      hook('UserPromptSubmit', { prompt: 'explore' }),
      launch('toolu_explore', 'Explore', 'Find the config'),
      start('d1', 'statusline-setup'),
      start('d2', 'Explore'),
      stop('d1', 'statusline-setup', 'Status line set.'),
      stop('d2', 'Explore', 'config.ts'),
      answered('toolu_explore', 'Explore', 'Find the config', done('config.ts')),
    ]);
    expect(links(evs)).toEqual({ d1: null, d2: 'toolu_explore' });
  }, 120_000);

  it('a call naming no type takes a subagent of any type once no call naming its type waits; an empty type takes none', async () => {
    const { evs } = await session([
      hook('UserPromptSubmit', { prompt: 'two helpers' }),
      launch('toolu_untyped', undefined, 'Summarise the README'),
      launch('toolu_typed', 'Explore', 'Find the tests'),
      start('e0', ''),
      start('e1', 'Explore'),
      start('e2', 'general-purpose'),
    ]);
    expect(links(evs)).toEqual({ e0: null, e1: 'toolu_typed', e2: 'toolu_untyped' });
  }, 120_000);

  it('its id: background launches link by the agentId their answer names, whatever the order of arrival', async () => {
    const async = (agentId: string) => ({
      isAsync: true,
      status: 'async_launched',
      agentId,
      description: 'x',
      outputFile: `/tmp/claude/tasks/${agentId}.output`,
    });
    const { evs, dir } = await session([
      hook('UserPromptSubmit', { prompt: 'run both in the background' }),
      launch('toolu_bg_first', 'general-purpose', 'Count the files'),
      answered('toolu_bg_first', 'general-purpose', 'Count the files', async('a1b2c3')),
      launch('toolu_bg_second', 'general-purpose', 'Count the lines'),
      answered('toolu_bg_second', 'general-purpose', 'Count the lines', async('d4e5f6')),
      hook('Stop', { stop_hook_active: false, last_assistant_message: 'Both started.' }),
      start('d4e5f6', 'general-purpose'),
      ...subCall('d4e5f6', 'general-purpose', 'toolu_bg_wc', 'wc -l src/*.ts'),
      stop('d4e5f6', 'general-purpose', '1200 lines.'),
      // The first one's SubagentStart hook never ran: its stop is still tied to its call by the id.
      stop('a1b2c3', 'general-purpose', '42 files.'),
      hook('SessionEnd', { reason: 'other' }),
    ]);
    expect(links(evs)).toEqual({ d4e5f6: 'toolu_bg_second', a1b2c3: 'toolu_bg_first' });
    const first = evs.find((e) => e.type === 'writer.start' && (e.meta as Ev).subagent_id === 'a1b2c3')!;
    expect(evs.filter((e) => e.w === first.w).map((e) => e.type)).toEqual([
      'writer.start',
      'turn.start',
      'agent.output',
      'turn.end',
      'writer.end',
    ]);
    expectEachActionOneResult(evs);
    expect(await verifyDir(dir)).toEqual([]);
  }, 120_000);

  it('a SubagentStop without agent_id ends the one running subagent of its type, else it is an unlinked note', async () => {
    const { evs } = await session([
      hook('UserPromptSubmit', { prompt: 'two kinds' }),
      launch('toolu_g1', 'Explore', 'One'),
      launch('toolu_g2', 'Plan', 'Two'),
      start('g1', 'Explore'),
      start('g2', 'Plan'),
      hook('SubagentStop', {
        agent_type: 'Plan',
        stop_hook_active: false,
        last_assistant_message: 'planned',
      }),
      hook('SubagentStop', { agent_type: '', stop_hook_active: false, last_assistant_message: 'who?' }),
    ]);
    const g2 = evs.find((e) => e.type === 'writer.start' && (e.meta as Ev).subagent_id === 'g2')!;
    expect(evs.filter((e) => e.w === g2.w).map((e) => e.type)).toEqual([
      'writer.start',
      'turn.start',
      'agent.output',
      'turn.end',
      'writer.end',
    ]);
    const g1 = evs.find((e) => e.type === 'writer.start' && (e.meta as Ev).subagent_id === 'g1')!;
    expect(evs.some((e) => e.w === g1.w && e.type === 'writer.end')).toBe(false);
    expect(evs.filter((e) => e.unlinked_subagent === true).map((e) => e.text)).toEqual(['who?']);
  }, 120_000);
});

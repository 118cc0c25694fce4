/**
 * Attack (issue 25 item 2, lib/client/capture/deliveries.ts): duplicate deliveries harder than two identical
 * copies. Real `bin/hansard hook claude-code` processes: three copies of every event of a tool call
 * started at the same moment (the result's copies racing the call's), copies that differ by one byte
 * (a success and a failure of one call, a Stop with another flag), and a prompt delivered three times
 * at once. One tool call must stay one action with exactly one result; no action may lose its result.
 */
import { describe, expect, it } from 'vitest';
import { drainInboxes } from '../../lib/client/capture/hook.js';
import { readHookFailures } from '../../lib/client/capture/state-dir.js';
import { hookEnv, runHook, sessionEvents, spoolSessions, useBuiltCli } from '../client/capture/helpers.js';
import { tmpDirs } from '../support/tmp.js';

const cli = useBuiltCli('attack-duplicates');
const tmp = tmpDirs('hansard-attack-dups-');

type Ev = Record<string, unknown> & { type: string };
const events = (state: string): Ev[] => spoolSessions(state).flatMap((d) => sessionEvents(d) as Ev[]);

async function deliver(state: string, payload: Record<string, unknown>): Promise<void> {
  const r = await runHook(cli.bin, ['claude-code'], JSON.stringify(payload), { HANSARD_STATE_DIR: state });
  expect(r, String(payload.hook_event_name)).toMatchObject({ code: 0, stderr: '' });
}
/** What a hook deferred on a machine too busy to run it in time, written as the shipper writes it. */
async function settle(state: string): Promise<void> {
  await drainInboxes(state, hookEnv({ HANSARD_STATE_DIR: state }));
  for (const f of readHookFailures(state)) expect(f.reason).toBe('timeout');
}

function session(state: string) {
  const base = { session_id: `dup-${state.slice(-6)}`, transcript_path: '/t/x.jsonl', cwd: state };
  return {
    base,
    begin: () => deliver(state, { ...base, hook_event_name: 'UserPromptSubmit', prompt: 'run the tests' }),
  };
}

/** Each action one result, and no result without its action. */
function oneResultEach(evs: Ev[]): void {
  const actions = evs.filter((e) => e.type === 'agent.action');
  const results = evs.filter((e) => e.type === 'agent.action_result');
  for (const a of actions)
    expect(
      results.filter((r) => r.action_id === a.id),
      String(a.call_id),
    ).toHaveLength(1);
  expect(results).toHaveLength(actions.length);
}

describe('three copies at once', () => {
  it('PreToolUse and PostToolUse, three copies each, all six started at once: one action, one result', async () => {
    const state = tmp.make();
    const { base, begin } = session(state);
    await begin();
    const call = { tool_name: 'Bash', tool_use_id: 'toolu_01Three', tool_input: { command: 'npm test' } };
    const pre = { ...base, hook_event_name: 'PreToolUse', ...call };
    const post = { ...pre, hook_event_name: 'PostToolUse', tool_response: { stdout: 'ok', stderr: '' } };
    await Promise.all([pre, pre, pre, post, post, post].map((p) => deliver(state, p)));
    await deliver(state, { ...base, hook_event_name: 'Stop' });
    await settle(state);
    const evs = events(state);
    expect(evs.filter((e) => e.type === 'agent.action')).toHaveLength(1);
    oneResultEach(evs);
    expect(evs.find((e) => e.type === 'agent.action_result')).toMatchObject({ status: 'ok' });
  }, 120_000);

  it('the result copies first (the call copies slower to start), then three call copies at once: one action, one result', async () => {
    const state = tmp.make();
    const { base, begin } = session(state);
    await begin();
    const call = {
      tool_name: 'Bash',
      tool_use_id: 'toolu_01Reversed',
      tool_input: { command: 'make check' },
    };
    const pre = { ...base, hook_event_name: 'PreToolUse', ...call };
    const post = { ...pre, hook_event_name: 'PostToolUse', tool_response: { stdout: 'ok', stderr: '' } };
    await Promise.all([post, post].map((p) => deliver(state, p)));
    await Promise.all([pre, pre, pre].map((p) => deliver(state, p)));
    // and a late copy of the result that says it failed
    await deliver(state, { ...base, hook_event_name: 'PostToolUseFailure', ...call, error: 'Exit code 2' });
    await deliver(state, { ...base, hook_event_name: 'Stop' });
    await settle(state);
    const evs = events(state);
    expect(evs.filter((e) => e.type === 'agent.action')).toHaveLength(1);
    oneResultEach(evs);
    expect(evs.find((e) => e.type === 'agent.action_result')).toMatchObject({ status: 'ok' });
  }, 120_000);

  it('a prompt delivered three times at once is one message and one turn', async () => {
    const state = tmp.make();
    const { base } = session(state);
    const prompt = {
      ...base,
      hook_event_name: 'UserPromptSubmit',
      prompt: 'fix the parser',
      prompt_id: 'p-1',
    };
    await Promise.all([prompt, prompt, prompt].map((p) => deliver(state, p)));
    await deliver(state, { ...base, hook_event_name: 'Stop' });
    await settle(state);
    const evs = events(state);
    expect(evs.filter((e) => e.type === 'message')).toHaveLength(1);
    expect(evs.filter((e) => e.type === 'turn.start')).toHaveLength(1);
    expect(evs.filter((e) => e.type === 'turn.end')).toHaveLength(1);
  }, 120_000);
});

describe('copies that differ by one byte', () => {
  it('a success and a failure delivered for one tool_use_id: one result, the call still one action', async () => {
    const state = tmp.make();
    const { base, begin } = session(state);
    await begin();
    const call = { tool_name: 'Bash', tool_use_id: 'toolu_01Differ', tool_input: { command: 'npm test' } };
    await deliver(state, { ...base, hook_event_name: 'PreToolUse', ...call });
    const ok = {
      ...base,
      hook_event_name: 'PostToolUse',
      ...call,
      tool_response: { stdout: 'ok', stderr: '' },
    };
    const failed = { ...base, hook_event_name: 'PostToolUseFailure', ...call, error: 'Exit code 1' };
    await Promise.all(
      [ok, failed, { ...ok, tool_response: { stdout: 'ok!', stderr: '' } }].map((p) => deliver(state, p)),
    );
    await deliver(state, { ...base, hook_event_name: 'Stop' });
    await settle(state);
    const evs = events(state);
    expect(evs.filter((e) => e.type === 'agent.action')).toHaveLength(1);
    oneResultEach(evs);
    expect(evs.filter((e) => e.type === 'note' && e.import_kind === 'duplicate')).toHaveLength(2);
  }, 120_000);

  it('two Stop copies, one with stop_hook_active flipped, at once: the turn ends once', async () => {
    const state = tmp.make();
    const { base, begin } = session(state);
    await begin();
    const stop = {
      ...base,
      hook_event_name: 'Stop',
      stop_hook_active: false,
      last_assistant_message: 'done',
    };
    await Promise.all([stop, { ...stop, stop_hook_active: true }].map((p) => deliver(state, p)));
    await settle(state);
    const evs = events(state);
    expect(evs.filter((e) => e.type === 'turn.end')).toHaveLength(1);
    expect(evs.filter((e) => e.type === 'agent.output')).toHaveLength(1);
  }, 120_000);
});

/**
 * A whole Claude Code session with a subagent, a failing command, a compaction and a notification, as
 * hook payloads through the real `bin/hansard hook claude-code` process (issue 11): the events each
 * becomes, the subagent's own writer linked to its Task call, verify clean, and attribution tying every
 * action to the prompt. Plus redaction of what the hook writes, and a session resumed after SessionEnd.
 */
import { describe, expect, it } from 'vitest';
import { attribute } from '../../../lib/log/replay/attribution.js';
import { tmpDirs } from '../../support/tmp.js';
import { runHook, sessionEvents, spoolSessions, useBuiltCli, verifyDir } from './helpers.js';

const cli = useBuiltCli('mapping');
const tmp = tmpDirs('hansard-hook-mapping-');

type Ev = Record<string, unknown>;
const base = {
  session_id: 'sess-map-1',
  transcript_path: '/home/user/.claude/x.jsonl',
  cwd: '/home/user/proj',
};

async function runAll(state: string, payloads: Ev[]): Promise<void> {
  for (const p of payloads) {
    const r = await runHook(cli.bin, ['claude-code'], JSON.stringify({ ...base, ...p }), {
      HANSARD_STATE_DIR: state,
    });
    expect(r.code, String(p.hook_event_name)).toBe(0);
    expect(r.stderr).toBe('');
  }
}

describe('a session with a subagent and a failing command', () => {
  it('maps every event; the subagent writes its own segment linked to the Task call; verify clean; attribution to the prompt', async () => {
    const state = tmp.make();
    const bash = (command: string) => ({ tool_name: 'Bash', tool_input: { command } });
    await runAll(state, [
      { hook_event_name: 'SessionStart', source: 'startup' },
      { hook_event_name: 'UserPromptSubmit', prompt: 'investigate the flaky test' },
      {
        hook_event_name: 'PreToolUse',
        tool_name: 'Task',
        tool_input: { prompt: 'look at the logs' },
        tool_use_id: 'toolu_task',
      },
      { hook_event_name: 'SubagentStart', agent_id: 'agent-1', agent_type: 'general-purpose' },
      {
        hook_event_name: 'PreToolUse',
        ...bash('grep -r flaky logs/'),
        tool_use_id: 'toolu_sub1',
        agent_id: 'agent-1',
      },
      {
        hook_event_name: 'PostToolUse',
        ...bash('grep -r flaky logs/'),
        tool_use_id: 'toolu_sub1',
        agent_id: 'agent-1',
        tool_response: { stdout: 'logs/a.log: flaky', stderr: '', interrupted: false },
      },
      {
        hook_event_name: 'SubagentStop',
        agent_id: 'agent-1',
        last_assistant_message: 'The logs show a timeout.',
      },
      {
        hook_event_name: 'PostToolUse',
        tool_name: 'Task',
        tool_use_id: 'toolu_task',
        tool_response: { content: 'The logs show a timeout.' },
      },
      { hook_event_name: 'PreToolUse', ...bash('npm test'), tool_use_id: 'toolu_fail' },
      {
        hook_event_name: 'PostToolUseFailure',
        ...bash('npm test'),
        tool_use_id: 'toolu_fail',
        error: 'Exit code 2\n1 test failed',
      },
      {
        hook_event_name: 'Notification',
        message: 'Claude needs your permission to use Bash',
        notification_type: 'permission_prompt',
      },
      { hook_event_name: 'PreCompact', trigger: 'auto', custom_instructions: '' },
      { hook_event_name: 'Stop', last_assistant_message: 'The test fails on a timeout.' },
      { hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' },
    ]);
    const dirs = spoolSessions(state);
    expect(dirs).toHaveLength(1);
    expect(await verifyDir(dirs[0]!)).toEqual([]);
    const evs = sessionEvents(dirs[0]!);
    const starts = evs.filter((e) => e.type === 'writer.start');
    expect(starts).toHaveLength(2);
    const main = starts.find((s) => (s.meta as Ev).claude_session_id === 'sess-map-1')!;
    const sub = starts.find((s) => s !== main)!;
    const of = (w: unknown) => evs.filter((e) => e.w === w);
    const task = of(main.w).find((e) => e.type === 'agent.action' && e.tool === 'Task')!;
    expect(sub.meta).toMatchObject({
      subagent_id: 'agent-1',
      parent_writer: main.w,
      parent_action_id: task.id,
    });
    expect(of(sub.w).map((e) => e.type)).toEqual([
      'writer.start',
      'turn.start',
      'agent.action',
      'agent.action_result',
      'agent.output',
      'turn.end',
      'writer.end',
    ]);
    const failed = of(main.w).find((e) => e.type === 'agent.action_result' && e.status === 'error')!;
    expect(failed).toMatchObject({ exit_code: 2, error: 'Exit code 2\n1 test failed' });
    expect(of(main.w).find((e) => e.import_kind === 'meta' && e.notification_type)).toMatchObject({
      text: 'Claude needs your permission to use Bash',
    });
    expect(of(main.w).find((e) => e.import_kind === 'compaction')).toMatchObject({ trigger: 'auto' });
    expect(of(main.w).at(-1)).toMatchObject({ type: 'writer.end', reason: 'prompt_input_exit' });

    const message = evs.find((e) => e.type === 'message')!;
    // Attribution over the merged order: here the spool's lines sorted by time.
    const merged = [...evs].sort((a, b) => String(a.ts).localeCompare(String(b.ts)));
    const actions = attribute(merged).filter((a) => a.type === 'agent.action');
    expect(actions).toHaveLength(3);
    for (const a of actions) expect(a.message_ids).toEqual([message.id]);
  }, 120_000);
});

describe('a background subagent (Claude Code 2.1.328: the Agent call answers at once)', () => {
  it("its <task-notification> prompt is not the person's; the work it starts is attributed to the person's prompt", async () => {
    const state = tmp.make();
    const bash = { tool_name: 'Bash', tool_input: { command: 'echo hi' } };
    await runAll(state, [
      { hook_event_name: 'SessionStart', source: 'startup' },
      { hook_event_name: 'UserPromptSubmit', prompt: 'delegate the echo to a subagent' },
      {
        hook_event_name: 'PreToolUse',
        tool_name: 'Agent',
        tool_input: { prompt: 'echo hi' },
        tool_use_id: 'toolu_task0001',
      },
      {
        hook_event_name: 'PostToolUse',
        tool_name: 'Agent',
        tool_use_id: 'toolu_task0001',
        tool_response: { isAsync: true, status: 'async_launched' },
      },
      {
        hook_event_name: 'Stop',
        last_assistant_message: 'Started it.',
        background_tasks: [{ type: 'subagent', status: 'running' }],
      },
      { hook_event_name: 'SubagentStart', agent_id: 'bg-1', agent_type: 'general-purpose' },
      { hook_event_name: 'PreToolUse', ...bash, tool_use_id: 'toolu_sub0001', agent_id: 'bg-1' },
      {
        hook_event_name: 'PostToolUse',
        ...bash,
        tool_use_id: 'toolu_sub0001',
        agent_id: 'bg-1',
        tool_response: { stdout: 'hi', stderr: '', interrupted: false },
      },
      { hook_event_name: 'SubagentStop', agent_id: 'bg-1', last_assistant_message: 'echoed hi' },
      {
        hook_event_name: 'UserPromptSubmit',
        prompt:
          '<task-notification>\n<task-id>a1b2</task-id>\n<tool-use-id>toolu_task0001</tool-use-id>\n<result>echoed hi</result>\n</task-notification>',
      },
      { hook_event_name: 'Stop', last_assistant_message: 'The subagent echoed hi.' },
      { hook_event_name: 'SessionEnd', reason: 'other' },
    ]);
    const dir = spoolSessions(state)[0]!;
    expect(await verifyDir(dir)).toEqual([]);
    const evs = sessionEvents(dir);
    const messages = evs.filter((e) => e.type === 'message');
    expect(messages.map((e) => e.text)).toEqual(['delegate the echo to a subagent']);
    expect(evs.find((e) => e.injected === true)).toMatchObject({ type: 'note', import_kind: 'meta' });
    const agent = evs.find((e) => e.type === 'agent.action' && e.tool === 'Agent')!;
    const sub = evs.find((e) => e.type === 'writer.start' && (e.meta as Ev).subagent_id === 'bg-1')!;
    expect((sub.meta as Ev).parent_action_id).toBe(agent.id);
    const merged = [...evs].sort((x, y) => String(x.ts).localeCompare(String(y.ts)));
    const attributed = attribute(merged);
    expect(attributed.filter((a) => a.type === 'agent.action')).toHaveLength(2);
    for (const a of attributed) expect(a.message_ids, `${a.type} ${a.event_id}`).toEqual([messages[0]!.id]);
  }, 60_000);
});

describe('what the hook writes', () => {
  it('is redacted as the library writer redacts (a GitHub token in a prompt and a command)', async () => {
    const state = tmp.make();
    const secret = `ghp_${'A1b2C3d4E5'.repeat(3)}abcdef`;
    await runAll(state, [
      { hook_event_name: 'UserPromptSubmit', prompt: `use ${secret} to push` },
      {
        hook_event_name: 'PreToolUse',
        tool_name: 'Bash',
        tool_input: { command: `GH_TOKEN=${secret} git push` },
        tool_use_id: 't1',
      },
    ]);
    const text = JSON.stringify(sessionEvents(spoolSessions(state)[0]!));
    expect(text).not.toContain(secret);
    expect(text).toContain('[REDACTED:');
  });

  it('a Claude session resumed after SessionEnd goes on in a new writer of the same hansard session', async () => {
    const state = tmp.make();
    await runAll(state, [
      { hook_event_name: 'SessionStart', source: 'startup' },
      { hook_event_name: 'SessionEnd', reason: 'clear' },
      { hook_event_name: 'SessionStart', source: 'resume' },
      { hook_event_name: 'UserPromptSubmit', prompt: 'and now?' },
      { hook_event_name: 'Stop' },
      { hook_event_name: 'SessionEnd', reason: 'other' },
    ]);
    const dirs = spoolSessions(state);
    expect(dirs).toHaveLength(1);
    expect(sessionEvents(dirs[0]!).filter((e) => e.type === 'writer.start')).toHaveLength(2);
    expect(await verifyDir(dirs[0]!)).toEqual([]);
  });
});

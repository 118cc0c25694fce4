/**
 * Duplicate deliveries are one event (issue 25 item 2): a hook registered twice makes Claude Code run it
 * twice for one event, two processes at the same moment; Codex may run `notify` twice for one turn. Real
 * `bin/hansard hook …` processes, started two at a time as a duplicated registration starts them: case 31
 * through its own script, then every kind of hook event delivered twice, copies that arrive late, calls
 * without `tool_use_id`, and Codex notify.
 */
import { execFile } from 'node:child_process';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { drainInboxes } from '../../../lib/client/capture/hook.js';
import { readHookFailures } from '../../../lib/client/capture/state-dir.js';
import { tmpDirs } from '../../support/tmp.js';
import {
  fixture,
  hookEnv,
  ROOT,
  runHook,
  sessionEvents,
  spoolSessions,
  useBuiltCli,
  verifyDir,
} from './helpers.js';

const cli = useBuiltCli('duplicates');
const tmp = tmpDirs('hansard-hook-duplicates-');

type Ev = Record<string, unknown> & { type: string };
const events = (state: string): Ev[] => spoolSessions(state).flatMap((d) => sessionEvents(d) as Ev[]);
const isDuplicateNote = (e: Ev) => e.type === 'note' && e.import_kind === 'duplicate';

/** One delivery: a hook process with `payload` on stdin; it must exit 0 silently. */
async function once(state: string, payload: Record<string, unknown>): Promise<void> {
  const r = await runHook(cli.bin, ['claude-code'], JSON.stringify(payload), { HANSARD_STATE_DIR: state });
  expect(r, String(payload.hook_event_name)).toMatchObject({ code: 0, stderr: '' });
}

/** Two deliveries of `payload` by two processes started at the same moment. */
async function twice(state: string, payload: Record<string, unknown>): Promise<void> {
  await Promise.all([once(state, payload), once(state, payload)]);
}

/**
 * Writes what a hook deferred past its budget (a machine too busy to run it in time answers empty and
 * leaves its payload in the session's inbox), as the shipper does; the only failures allowed are those.
 */
async function settle(state: string): Promise<void> {
  await drainInboxes(state, hookEnv({ HANSARD_STATE_DIR: state }));
  for (const f of readHookFailures(state)) expect(f.reason).toBe('timeout');
}

/** Every action of `evs` has exactly one result, and every result names an action of `evs`. */
function expectEachActionOneResult(evs: Ev[]): void {
  const actions = evs.filter((e) => e.type === 'agent.action');
  const results = evs.filter((e) => e.type === 'agent.action_result');
  for (const a of actions)
    expect(
      results.filter((r) => r.action_id === a.id),
      `results of ${a.call_id}`,
    ).toHaveLength(1);
  expect(results.length).toBe(actions.length);
}

describe('case 31: every event but the prompt delivered twice, by the case script', () => {
  it('one session, one action for toolu_31_dup_a with one result, one answer, one turn.end; the copies are marked duplicate notes', async () => {
    // Three rounds: which copy wins the session's lock varies from round to round.
    for (let round = 0; round < 3; round++) {
      const state = tmp.make();
      const env = hookEnv({
        HANSARD_STATE_DIR: state,
        PATH: `${dirname(process.execPath)}:${process.env.PATH ?? ''}`,
      });
      await promisify(execFile)('sh', [join(ROOT, 'test/fixtures/cases/31-hooks-fire-twice.sh'), cli.bin], {
        env,
      });
      // Copies that met in the inbox (deferred past the budget) are recognised the same way.
      await settle(state);
      const dirs = spoolSessions(state);
      expect(dirs).toHaveLength(1);
      const evs = sessionEvents(dirs[0]!) as Ev[];
      const actions = evs.filter((e) => e.type === 'agent.action');
      expect(actions).toHaveLength(1);
      expect(actions[0]).toMatchObject({ call_id: 'toolu_31_dup_a', tool: 'Bash' });
      expect(evs.filter((e) => e.type === 'agent.action_result')).toEqual([
        expect.objectContaining({ action_id: actions[0]!.id, status: 'ok' }),
      ]);
      expect(evs.filter((e) => e.type === 'agent.output').map((e) => e.text)).toEqual([
        'src holds a.ts and b.ts.',
      ]);
      expect(evs.filter((e) => e.type === 'turn.end')).toHaveLength(1);
      expect(evs.filter((e) => e.type === 'message').map((e) => e.text)).toEqual(['list the files in src']);
      // What is not one of the events above is a note marked as a duplicate, by the hook.
      const notes = evs.filter((e) => e.type === 'note');
      for (const n of notes) expect(n).toMatchObject({ import_kind: 'duplicate', author: 'hansard-hook' });
      expect(notes.length).toBeLessThanOrEqual(4);
      expectEachActionOneResult(evs);
      // The writer is left open (no SessionEnd in the case): that is all verify says.
      expect((await verifyDir(dirs[0]!)).filter((p) => p.code !== 'segment_open')).toEqual([]);
    }
  }, 120_000);
});

const base = {
  session_id: 'sess-dup-all',
  transcript_path: '/home/user/.claude/projects/-home-user-proj/sess-dup-all.jsonl',
  cwd: '/home/user/proj',
  permission_mode: 'default',
};
const prompt = { prompt_id: 'prompt-dup-1' };
const sub = { agent_id: 'a0f3c1e2', agent_type: 'Explore' };
const bash = (command: string) => ({ tool_name: 'Bash', tool_input: { command, description: command } });

/** A session with every event kind Claude Code sends, in the order it sends them. */
const SESSION: Record<string, unknown>[] = [
  { hook_event_name: 'SessionStart', source: 'startup' },
  { hook_event_name: 'UserPromptSubmit', ...prompt, prompt: 'find why the test is flaky' },
  {
    hook_event_name: 'PreToolUse',
    ...prompt,
    tool_name: 'Agent',
    tool_input: { description: 'Read the logs', prompt: 'read logs/', subagent_type: 'Explore' },
    tool_use_id: 'toolu_dup_agent',
  },
  { hook_event_name: 'SubagentStart', ...prompt, ...sub },
  {
    hook_event_name: 'PreToolUse',
    ...prompt,
    ...sub,
    ...bash('grep -r flaky logs'),
    tool_use_id: 'toolu_dup_sub',
  },
  {
    hook_event_name: 'PostToolUse',
    ...prompt,
    ...sub,
    ...bash('grep -r flaky logs'),
    tool_use_id: 'toolu_dup_sub',
    tool_response: { stdout: 'logs/a.log: flaky', stderr: '', interrupted: false },
  },
  {
    hook_event_name: 'SubagentStop',
    ...prompt,
    ...sub,
    stop_hook_active: false,
    agent_transcript_path: '/home/user/.claude/projects/-home-user-proj/subagents/agent-a0f3c1e2.jsonl',
    last_assistant_message: 'The logs show a timeout.',
  },
  {
    hook_event_name: 'PostToolUse',
    ...prompt,
    tool_name: 'Agent',
    tool_input: { description: 'Read the logs', prompt: 'read logs/', subagent_type: 'Explore' },
    tool_use_id: 'toolu_dup_agent',
    tool_response: { status: 'completed', content: [{ type: 'text', text: 'The logs show a timeout.' }] },
  },
  { hook_event_name: 'PermissionRequest', ...prompt, ...bash('npm test') },
  {
    hook_event_name: 'Notification',
    message: 'Claude needs your permission to use Bash',
    notification_type: 'permission_prompt',
  },
  { hook_event_name: 'PreToolUse', ...prompt, ...bash('npm test'), tool_use_id: 'toolu_dup_fail' },
  {
    hook_event_name: 'PostToolUseFailure',
    ...prompt,
    ...bash('npm test'),
    tool_use_id: 'toolu_dup_fail',
    error: 'Exit code 1\n1 test failed',
    is_interrupt: false,
  },
  { hook_event_name: 'PreCompact', trigger: 'auto', custom_instructions: '' },
  { hook_event_name: 'Stop', stop_hook_active: false, last_assistant_message: 'It times out on CI.' },
  { hook_event_name: 'SessionEnd', reason: 'prompt_input_exit' },
].map((p) => ({ ...base, ...p }));

/** Each writer's event types in order (duplicate notes left out), the main writer first. */
function shape(evs: Ev[]): string[][] {
  const starts = evs.filter((e) => e.type === 'writer.start');
  const main = starts.filter((s) => (s.meta as Ev).claude_session_id !== undefined);
  return [...main, ...starts.filter((s) => !main.includes(s))].map((s) =>
    evs.filter((e) => e.w === s.w && !isDuplicateNote(e)).map((e) => `${e.type}:${e.import_kind ?? ''}`),
  );
}

describe('every kind of Claude Code hook event delivered twice at the same moment', () => {
  it('records what a single delivery records, plus at most one note marked duplicate per copy', async () => {
    const single = tmp.make();
    for (const p of SESSION) await once(single, p);
    await settle(single);
    const doubled = tmp.make();
    for (const p of SESSION) await twice(doubled, p);
    await settle(doubled);

    const one = events(single);
    const two = events(doubled);
    expect(one.filter(isDuplicateNote)).toEqual([]);
    expect(shape(two)).toEqual(shape(one));
    expect(shape(two)).toHaveLength(2);
    const dups = two.filter(isDuplicateNote);
    // The SessionEnd copy finds every writer ended: nothing reopens one for its note.
    expect(dups).toHaveLength(SESSION.length - 1);
    for (const d of dups) expect(String(d.text)).toMatch(/ delivered again \(.*\): recorded once$/);
    expect(dups.map((d) => d.text)).toContain(
      'PreToolUse delivered again (tool_use_id toolu_dup_agent): recorded once',
    );
    expectEachActionOneResult(two);
    // The subagent is linked to the one Agent call, as with one delivery.
    const agent = two.find((e) => e.type === 'agent.action' && e.tool === 'Agent')!;
    const subStart = two.find(
      (e) => e.type === 'writer.start' && (e.meta as Ev).subagent_id === sub.agent_id,
    )!;
    expect((subStart.meta as Ev).parent_action_id).toBe(agent.id);
    expect(two.filter((e) => e.import_kind === 'compaction')).toHaveLength(1);
    for (const dir of spoolSessions(doubled)) expect(await verifyDir(dir)).toEqual([]);
  }, 180_000);

  it('a copy arriving after its call has a result, and calls without tool_use_id, write no second action', async () => {
    const state = tmp.make();
    const pre = { ...base, hook_event_name: 'PreToolUse', ...bash('ls'), tool_use_id: 'toolu_late' };
    const post = { ...pre, hook_event_name: 'PostToolUse', tool_response: { stdout: 'a', stderr: '' } };
    // Payloads of older Claude Code versions: no tool_use_id, paired by tool and input.
    const bare = { ...base, hook_event_name: 'PreToolUse', ...bash('pwd') };
    const bareOut = { ...bare, hook_event_name: 'PostToolUse', tool_response: { stdout: '/p', stderr: '' } };
    await once(state, { ...base, hook_event_name: 'UserPromptSubmit', prompt: 'list' });
    await once(state, pre);
    await once(state, post);
    await once(state, pre); // the copy, late (its process was slow to start, or its payload deferred)
    await once(state, post);
    // A result whose call was never seen writes the call; its own copies later change nothing.
    const orphan = { ...post, tool_use_id: 'toolu_orphan' };
    await once(state, orphan);
    await once(state, { ...pre, tool_use_id: 'toolu_orphan' });
    await once(state, orphan);
    await twice(state, bare);
    await twice(state, bareOut);
    await once(state, { ...base, hook_event_name: 'Stop', last_assistant_message: 'done' });
    await settle(state);

    const evs = events(state);
    const actions = evs.filter((e) => e.type === 'agent.action');
    expect(actions.map((a) => a.call_id)).toEqual(['toolu_late', 'toolu_orphan', 'hook:1']);
    expectEachActionOneResult(evs);
    expect(evs.filter((e) => e.type === 'agent.action_result').every((r) => r.status === 'ok')).toBe(true);
    expect(evs.filter(isDuplicateNote)).toHaveLength(6);
    expect((await verifyDir(spoolSessions(state)[0]!)).filter((p) => p.code !== 'segment_open')).toEqual([]);
  }, 120_000);

  it('the same prompt text sent again with a new prompt_id, after a turn, is a new prompt', async () => {
    const state = tmp.make();
    const ask = (id: string) => ({
      ...base,
      hook_event_name: 'UserPromptSubmit',
      prompt_id: id,
      prompt: 'go on',
    });
    const stop = { ...base, hook_event_name: 'Stop', last_assistant_message: 'ok' };
    await twice(state, ask('p-a'));
    await twice(state, stop);
    await twice(state, ask('p-b'));
    await twice(state, stop);
    await settle(state);
    const evs = events(state);
    expect(evs.filter((e) => e.type === 'message').map((e) => e.text)).toEqual(['go on', 'go on']);
    expect(evs.filter((e) => e.type === 'turn.end')).toHaveLength(2);
    expect(evs.filter(isDuplicateNote)).toHaveLength(4);
  }, 60_000);
});

describe('Codex notify delivered twice', () => {
  const payload = JSON.parse(fixture('real-client/codex-0.169.0-notify.json')) as Record<string, unknown>;
  const codex = async (state: string, p: Record<string, unknown>) => {
    const r = await runHook(cli.bin, ['codex', JSON.stringify(p)], '', { HANSARD_STATE_DIR: state });
    expect(r).toMatchObject({ code: 0, stdout: '', stderr: '' });
  };

  it('one turn per turn id, one per identical payload without one; another notify type for the turn does not hide it', async () => {
    const state = tmp.make();
    await Promise.all([codex(state, payload), codex(state, payload)]);
    const noId = { ...payload, 'turn-id': undefined, 'input-messages': ['and without an id'] };
    await Promise.all([codex(state, noId), codex(state, noId)]);
    // A type this version does not know, for a turn not notified yet, then that turn's completion.
    const turn3 = { ...payload, 'turn-id': 'turn-3', 'input-messages': ['third'] };
    await codex(state, { ...turn3, type: 'approval-requested' });
    await Promise.all([codex(state, turn3), codex(state, turn3)]);
    await settle(state);

    const evs = events(state);
    expect(evs.filter((e) => e.type === 'message').map((e) => e.text)).toEqual([
      'run the greeting',
      'and without an id',
      'third',
    ]);
    expect(evs.filter((e) => e.type === 'turn.end')).toHaveLength(3);
    expect(evs.filter((e) => e.import_kind === 'unknown_record')).toHaveLength(1);
    const dups = evs.filter(isDuplicateNote);
    expect(dups.map((d) => d.text)).toEqual([
      'agent-turn-complete delivered again (turn-id 01a22e35-e3ab-7ba0-af4e-f69d50bef33d): recorded once',
      'agent-turn-complete delivered again (identical to the event recorded before it): recorded once',
      'agent-turn-complete delivered again (turn-id turn-3): recorded once',
    ]);
    expect((await verifyDir(spoolSessions(state)[0]!)).filter((p) => p.code !== 'segment_open')).toEqual([]);
  }, 60_000);
});

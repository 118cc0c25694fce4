/**
 * Every recorded hook payload through the real `bin/hansard hook claude-code` process (payload on stdin)
 * and the Codex notify payload through `bin/hansard hook codex '<json>'` (issue 11): the events each
 * becomes, the SessionStart answer, and the whole real-client run (Claude Code 2.1.328, two parallel tool
 * calls finishing out of order) as a session whose verify is clean and whose attribution ties both
 * actions to the prompt.
 */
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readHookFailures } from '../../../lib/client/capture/state-dir.js';
import { attribute } from '../../../lib/log/replay/attribution.js';
import { tmpDirs } from '../../support/tmp.js';
import { fixture, ROOT, runHook, sessionEvents, spoolSessions, useBuiltCli, verifyDir } from './helpers.js';

const cli = useBuiltCli('fixtures');
const tmp = tmpDirs('hansard-hook-fixtures-');

type Ev = Record<string, unknown> & { type: string };
const events = (state: string): Ev[] => spoolSessions(state).flatMap((d) => sessionEvents(d) as Ev[]);
const claude = (state: string, payload: string, env: Record<string, string> = {}) =>
  runHook(cli.bin, ['claude-code'], payload, { HANSARD_STATE_DIR: state, ...env });

describe('the real-client run (Claude Code 2.1.328): 01–08 in the order the hooks ran', () => {
  const files = readdirSync(join(ROOT, 'test/fixtures/real-client'))
    .filter((f) => /^0\d-.*\.json$/.test(f))
    .sort();

  it('becomes one session: verify clean, both actions paired by tool_use_id and attributed to the prompt', async () => {
    expect(files).toHaveLength(8);
    const state = tmp.make();
    for (const f of files) {
      const r = await claude(state, fixture(`real-client/${f}`));
      expect(r.code, `${f}: ${r.stderr}`).toBe(0);
      expect(r.stderr).toBe('');
      if (f.includes('SessionStart')) {
        const out = JSON.parse(r.stdout) as { hookSpecificOutput: Record<string, string> };
        expect(out.hookSpecificOutput.hookEventName).toBe('SessionStart');
        expect(out.hookSpecificOutput.additionalContext).toMatch(/recording this session as s_[0-9A-Z]{26}/);
        expect(out.hookSpecificOutput.additionalContext).toContain('Project: proj (/home/user/proj)');
      } else expect(r.stdout).toBe('');
    }
    const dirs = spoolSessions(state);
    expect(dirs).toHaveLength(1);
    expect(await verifyDir(dirs[0]!)).toEqual([]);
    const evs = events(state);
    expect(evs.map((e) => e.type)).toEqual([
      'writer.start',
      'message',
      'turn.start',
      'agent.action',
      'agent.action',
      'agent.action_result',
      'agent.action_result',
      'agent.output',
      'turn.end',
      'writer.end',
    ]);
    const [a1, a2] = evs.filter((e) => e.type === 'agent.action');
    const [r2, r1] = evs.filter((e) => e.type === 'agent.action_result');
    expect(a1).toMatchObject({
      tool: 'Bash',
      call_id: 'toolu_fake0001a',
      input: { command: 'echo hello-from-tool' },
    });
    expect(a2).toMatchObject({ call_id: 'toolu_fake0001b' });
    // 05 (the second call) finished first: each result names its own action, not the first pending one.
    expect(r2).toMatchObject({ action_id: a2!.id, status: 'ok', exit_code: 0 });
    expect(r2!.output).toMatchObject({ stdout: 'second-parallel-call' });
    expect(r1).toMatchObject({ action_id: a1!.id, status: 'ok', exit_code: 0 });
    const message = evs.find((e) => e.type === 'message')!;
    expect(message).toMatchObject({ user_id: 'user', text: 'run the greeting' });
    expect(evs.find((e) => e.type === 'agent.output')).toMatchObject({
      text: 'All done: the command printed its greeting.',
    });
    expect(evs.find((e) => e.type === 'turn.end')).toMatchObject({ status: 'completed' });
    expect(evs.at(-1)).toMatchObject({ type: 'writer.end', reason: 'other' });
    const attributions = attribute(evs);
    const actions = attributions.filter((a) => a.type === 'agent.action');
    expect(actions.map((a) => a.event_id)).toEqual([a1!.id, a2!.id]);
    for (const a of actions) expect(a).toMatchObject({ message_ids: [message.id], confidence: 1 });
    expect(readHookFailures(state)).toEqual([]);
  });
});

describe('the older samples (test/fixtures/real/hook-*.json), each on its own', () => {
  const cases: Record<string, (evs: Ev[]) => void> = {
    'hook-SessionStart.json': (evs) => expect(evs.map((e) => e.type)).toEqual(['writer.start']),
    'hook-UserPromptSubmit.json': (evs) => {
      expect(evs.map((e) => e.type)).toEqual(['writer.start', 'message', 'turn.start']);
      expect(evs[1]).toMatchObject({ text: 'What is 2+2?', permission_mode: 'acceptEdits' });
    },
    'hook-PreToolUse.Bash.json': (evs) => {
      // No tool_use_id in these older payloads: a synthetic call id, paired by tool and input.
      expect(evs.map((e) => e.type)).toEqual(['writer.start', 'turn.start', 'agent.action']);
      expect(evs[2]).toMatchObject({ tool: 'Bash', input: { command: 'pwd' }, call_id: 'hook:1' });
    },
    'hook-PreToolUse.Edit.json': (evs) =>
      expect(evs[2]).toMatchObject({
        type: 'agent.action',
        tool: 'Edit',
        input: { file_path: '/tmp/test-edit-target.json' },
      }),
    'hook-PostToolUse.Bash.json': (evs) => {
      // A result whose call was never seen: the call is written from what the result repeats.
      expect(evs.map((e) => e.type)).toEqual([
        'writer.start',
        'turn.start',
        'agent.action',
        'agent.action_result',
      ]);
      expect(evs[2]).toMatchObject({ tool: 'Bash', reconstructed: true });
      expect(evs[3]).toMatchObject({ action_id: evs[2]!.id, status: 'ok', exit_code: 0 });
      expect(evs[3]!.output).toMatchObject({ stdout: '/test/project' });
    },
    'hook-PostToolUse.Edit.json': (evs) =>
      expect(evs[3]).toMatchObject({ type: 'agent.action_result', status: 'ok', exit_code: null }),
    'hook-Stop.json': (evs) => expect(evs.map((e) => e.type)).toEqual(['writer.start']),
    'hook-SessionEnd.json': (evs) => expect(evs.map((e) => e.type)).toEqual(['writer.start', 'writer.end']),
  };
  it('covers every hook-*.json', () => {
    const all = readdirSync(join(ROOT, 'test/fixtures/real')).filter((f) => /^hook-.*\.json$/.test(f));
    expect(all.sort()).toEqual(Object.keys(cases).sort());
  });
  for (const [file, check] of Object.entries(cases)) {
    it(`${file}: exit 0, the events it maps to`, async () => {
      const state = tmp.make();
      const r = await claude(state, fixture(`real/${file}`));
      expect(r.code).toBe(0);
      expect(r.stdout === '' || file === 'hook-SessionStart.json').toBe(true);
      check(events(state));
    });
  }

  it('Pre then Post without tool_use_id pair by tool and input, first in first out; verify clean', async () => {
    const state = tmp.make();
    for (const f of [
      'hook-UserPromptSubmit',
      'hook-PreToolUse.Bash',
      'hook-PreToolUse.Edit',
      'hook-PreToolUse.Bash',
    ]) {
      expect((await claude(state, fixture(`real/${f}.json`))).code).toBe(0);
    }
    for (const f of [
      'hook-PostToolUse.Edit',
      'hook-PostToolUse.Bash',
      'hook-PostToolUse.Bash',
      'hook-Stop',
      'hook-SessionEnd',
    ]) {
      expect((await claude(state, fixture(`real/${f}.json`))).code).toBe(0);
    }
    const evs = events(state);
    const actions = evs.filter((e) => e.type === 'agent.action');
    const results = evs.filter((e) => e.type === 'agent.action_result');
    expect(actions.map((a) => a.call_id)).toEqual(['hook:1', 'hook:2', 'hook:3']);
    expect(results.map((r) => r.action_id)).toEqual([actions[1]!.id, actions[0]!.id, actions[2]!.id]);
    expect(await verifyDir(spoolSessions(state)[0]!)).toEqual([]);
  });
});

describe('SessionStart', () => {
  it('with HANSARD_DECLARED_EVENTS=1 asks for declared events in reports (seed 000); without, not', async () => {
    const on = await claude(tmp.make(), fixture('real/hook-SessionStart.json'), {
      HANSARD_DECLARED_EVENTS: '1',
    });
    const off = await claude(tmp.make(), fixture('real/hook-SessionStart.json'));
    const ctx = (r: { stdout: string }) =>
      (JSON.parse(r.stdout) as { hookSpecificOutput: { additionalContext: string } }).hookSpecificOutput
        .additionalContext;
    expect(ctx(on)).toContain('--events');
    expect(ctx(on)).toContain('plan, decision, assumption, evidence, blocked, lesson');
    expect(ctx(off)).not.toContain('--events');
    expect(ctx(off)).toContain('hansard session report --session s_');
  });

  it('a second SessionStart of the same Claude session (resume) keeps the hansard session', async () => {
    const state = tmp.make();
    const first = await claude(state, fixture('real/hook-SessionStart.json'));
    const resumed = await claude(
      state,
      JSON.stringify({ ...JSON.parse(fixture('real/hook-SessionStart.json')), source: 'resume' }),
    );
    const sid = (r: { stdout: string }) => /as (s_[0-9A-Z]{26})/.exec(r.stdout)?.[1];
    expect(sid(resumed)).toBe(sid(first));
    expect(events(state).at(-1)).toMatchObject({
      type: 'note',
      text: 'Claude Code session start (source: resume)',
    });
  });
});

describe('hansard hook codex (notify: the JSON is the last argument)', () => {
  it('codex-0.169.0-notify.json: prompt message, turn naming it, the answer, turn end; verify clean', async () => {
    const state = tmp.make();
    const payload = fixture('real-client/codex-0.169.0-notify.json').trim();
    const r = await runHook(cli.bin, ['codex', payload], '', { HANSARD_STATE_DIR: state });
    expect(r).toMatchObject({ code: 0, stdout: '' });
    const evs = events(state);
    expect(evs.map((e) => e.type)).toEqual([
      'writer.start',
      'message',
      'turn.start',
      'agent.output',
      'turn.end',
    ]);
    expect(evs[0]).toMatchObject({
      meta: { agent: 'codex', codex_thread_id: '01a22e35-e369-71d0-bca7-d5b5fbf89b61' },
    });
    expect(evs[1]).toMatchObject({
      text: 'run the greeting',
      codex_turn_id: '01a22e35-e3ab-7ba0-af4e-f69d50bef33d',
    });
    expect(evs[2]).toMatchObject({ context_message_ids: [evs[1]!.id] });
    expect(evs[3]).toMatchObject({ text: 'Done: the greeting was printed.' });
    // The same turn notified again is not written twice; a next turn goes on in the same session.
    await runHook(cli.bin, ['codex', payload], '', { HANSARD_STATE_DIR: state });
    const next = JSON.stringify({
      ...JSON.parse(payload),
      'turn-id': 'turn-2',
      'input-messages': ['and again'],
    });
    await runHook(cli.bin, ['codex', next], '', { HANSARD_STATE_DIR: state });
    expect(spoolSessions(state)).toHaveLength(1);
    expect(
      events(state)
        .filter((e) => e.type === 'message')
        .map((e) => e.text),
    ).toEqual(['run the greeting', 'and again']);
    expect(await verifyDir(spoolSessions(state)[0]!)).toEqual([
      expect.objectContaining({ code: 'segment_open' }),
    ]);
    expect(readHookFailures(state)).toEqual([]);
  });
});

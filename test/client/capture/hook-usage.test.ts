/**
 * Token usage from Claude Code's transcript through the real `bin/hansard hook claude-code` process
 * (issue 27 item 1: "The hook may read usage from `transcript_path` only when it is a regular file under
 * the Claude Code projects folder, from the offset it last read, within its budget"): a note per message
 * id with its last figures, in the open turn before `turn.end`; only new bytes on the next read; a partial
 * last line left for later; a link, a file outside the projects folder, a FIFO and a folder refused (the
 * hook still answers, the refusal counted once for `hansard doctor`); a huge transcript read in bounded
 * pieces. The records are the real ones of test/fixtures/real/ccl-representative_messages.jsonl, streamed
 * copies of them made as Claude Code writes a streamed message (one record per content block, the same
 * message id, a growing output count).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mappingStatePath, readHookFailures } from '../../../lib/client/capture/state-dir.js';
import { USAGE_READ_MAX_BYTES } from '../../../lib/client/capture/transcript-usage.js';
import { tmpDirs } from '../../support/tmp.js';
import {
  fixture,
  hookEnv,
  pool,
  runHook,
  sessionEvents,
  spoolSessions,
  useBuiltCli,
  verifyDir,
} from './helpers.js';

const cli = useBuiltCli('usage');
const tmp = tmpDirs('hansard-hook-usage-');

type Ev = Record<string, unknown>;
const REAL = fixture('real/ccl-representative_messages.jsonl')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Ev);
const ASSISTANT = REAL.find((r) => r.type === 'assistant')!;
const USER = REAL.find((r) => r.type === 'user')!;

/** An assistant record shaped as the fixture's, with message `id`, output count `out` and `text`. */
function assistant(id: string, out: number, text: string, more: Ev = {}): string {
  const m = ASSISTANT.message as Ev;
  return `${JSON.stringify({
    ...ASSISTANT,
    uuid: `${id}-${out}`,
    requestId: `req_${id}`,
    ...more,
    message: {
      ...m,
      id,
      content: [{ type: 'text', text }],
      usage: { ...(m.usage as Ev), output_tokens: out },
      ...(more.message as Ev | undefined),
    },
  })}\n`;
}
const userLine = `${JSON.stringify(USER)}\n`;

/** A Claude config folder with a projects folder and a transcript path in it (not yet written). */
function setup(): { state: string; config: string; transcript: string; env: Record<string, string> } {
  const root = tmp.make();
  const config = join(root, 'claude');
  const project = join(config, 'projects', '-home-user-proj');
  mkdirSync(project, { recursive: true });
  const state = join(root, 'state');
  return {
    state,
    config,
    transcript: join(project, 'sess-usage.jsonl'),
    env: { HANSARD_STATE_DIR: state, CLAUDE_CONFIG_DIR: config },
  };
}

async function hook(env: Record<string, string>, transcript: string, p: Ev): Promise<void> {
  const r = await runHook(
    cli.bin,
    ['claude-code'],
    JSON.stringify({ session_id: 'sess-usage', transcript_path: transcript, cwd: '/home/user/proj', ...p }),
    env,
  );
  expect(r.code, String(p.hook_event_name)).toBe(0);
  expect(r.stderr).toBe('');
}

const usageNotes = (evs: Ev[]) => evs.filter((e) => e.import_kind === 'token_usage');
const events = (state: string) => sessionEvents(spoolSessions(state)[0]!);
const cursorOf = (state: string, transcript: string) =>
  (
    JSON.parse(readFileSync(mappingStatePath(state, 'claude-code', 'sess-usage'), 'utf8')) as {
      usage: { files: Record<string, { offset: number }> };
    }
  ).usage.files[transcript];

describe('usage from the transcript', () => {
  it('one note per message id with its last figures, in the open turn before turn.end; <synthetic> skipped; verify clean', async () => {
    const { env, transcript } = setup();
    await hook(env, transcript, { hook_event_name: 'SessionStart', source: 'startup' });
    writeFileSync(transcript, userLine);
    await hook(env, transcript, { hook_event_name: 'UserPromptSubmit', prompt: 'edit the decorator' });
    // A streamed message: three records of msg_a, output 5, 40, 85; the last carries costUSD.
    appendFileSync(
      transcript,
      assistant('msg_a', 5, 'Let me') +
        assistant('msg_a', 40, 'Let me look') +
        assistant('msg_a', 85, 'Let me look at it', { costUSD: 0.0123 }) +
        assistant('msg_synth', 0, 'No response requested.', { message: { model: '<synthetic>' } }),
    );
    await hook(env, transcript, {
      hook_event_name: 'PreToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_use_id: 'toolu_1',
    });
    await hook(env, transcript, {
      hook_event_name: 'PostToolUse',
      tool_name: 'Bash',
      tool_input: { command: 'ls' },
      tool_use_id: 'toolu_1',
      tool_response: { stdout: 'a.py', stderr: '', interrupted: false },
    });
    appendFileSync(transcript, assistant('msg_b', 12, 'Done.'));
    await hook(env, transcript, { hook_event_name: 'Stop', last_assistant_message: 'Done.' });

    const evs = events(env.HANSARD_STATE_DIR!);
    const notes = usageNotes(evs);
    expect(notes.map((n) => [n.message_id, (n.usage as Ev).output_tokens])).toEqual([
      ['msg_a', 85],
      ['msg_b', 12],
    ]);
    expect(notes[0]).toMatchObject({
      type: 'note',
      author: 'claude-code',
      usage_source: 'claude_message',
      model: 'claude-3-sonnet-20240229',
      request_id: 'req_msg_a',
      cost_usd: 0.0123,
      usage: {
        input_tokens: 25,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 85,
      },
    });
    // Read at PostToolUse; on a machine too loaded to start the hook within its read deadline, at Stop.
    expect(['PostToolUse', 'Stop']).toContain(notes[0]!.hook_event);
    expect(notes[1]).not.toHaveProperty('cost_usd');
    // Both inside the turn: after its turn.start, the last before its turn.end.
    const types = evs.map((e) => (e.import_kind === 'token_usage' ? `usage:${e.message_id}` : e.type));
    const start = types.indexOf('turn.start');
    const end = types.lastIndexOf('turn.end');
    expect(types.indexOf('usage:msg_a')).toBeGreaterThan(start);
    expect(types.slice(end - 2, end + 1)).toEqual(['usage:msg_b', 'agent.output', 'turn.end']);
    const problems = await verifyDir(spoolSessions(env.HANSARD_STATE_DIR!)[0]!);
    expect(problems.filter((p) => p.severity !== 'info')).toEqual([]);
    // Counted by `hansard usage`: msg_a once with its last figures, both in the one turn.
    const total = (
      JSON.parse(
        execFileSync(
          process.execPath,
          [cli.bin, 'usage', spoolSessions(env.HANSARD_STATE_DIR!)[0]!, '--json'],
          {
            encoding: 'utf8',
          },
        ),
      ) as { total: Record<string, unknown> }
    ).total;
    expect(total).toMatchObject({
      input_tokens: 50,
      output_tokens: 97,
      records: 2,
      turns: 1,
      unknown_turns: 0,
    });
  });

  it('a second Stop reads only the bytes after the first; an identical repeat is not written again, a grown one is', async () => {
    const { env, transcript } = setup();
    const state = env.HANSARD_STATE_DIR!;
    await hook(env, transcript, { hook_event_name: 'SessionStart', source: 'startup' });
    writeFileSync(transcript, userLine + assistant('msg_1', 30, 'First answer.'));
    await hook(env, transcript, { hook_event_name: 'UserPromptSubmit', prompt: 'one' });
    await hook(env, transcript, { hook_event_name: 'Stop', last_assistant_message: 'First answer.' });
    expect(cursorOf(state, transcript)?.offset).toBe(statSync(transcript).size);

    appendFileSync(transcript, userLine + assistant('msg_2', 7, 'Second answer.'));
    await hook(env, transcript, { hook_event_name: 'UserPromptSubmit', prompt: 'two' });
    await hook(env, transcript, { hook_event_name: 'Stop', last_assistant_message: 'Second answer.' });
    // The same record again (Claude Code rewrote it unchanged), then the same id with more output.
    appendFileSync(transcript, assistant('msg_2', 7, 'Second answer.'));
    await hook(env, transcript, { hook_event_name: 'SessionEnd', reason: 'other' });
    const afterRepeat = usageNotes(events(state)).map(
      (n) => `${n.message_id}:${(n.usage as Ev).output_tokens}`,
    );
    expect(afterRepeat).toEqual(['msg_1:30', 'msg_2:7']);
    appendFileSync(transcript, assistant('msg_2', 9, 'Second answer.'));
    await hook(env, transcript, { hook_event_name: 'SessionStart', source: 'resume' });
    await hook(env, transcript, { hook_event_name: 'UserPromptSubmit', prompt: 'three' });
    const notes = usageNotes(events(state)).map((n) => `${n.message_id}:${(n.usage as Ev).output_tokens}`);
    expect(notes).toEqual(['msg_1:30', 'msg_2:7', 'msg_2:9']);
    expect(cursorOf(state, transcript)?.offset).toBe(statSync(transcript).size);
  });

  it('a partial last line is left for the next read, then read once complete', async () => {
    const { env, transcript } = setup();
    const state = env.HANSARD_STATE_DIR!;
    await hook(env, transcript, { hook_event_name: 'SessionStart', source: 'startup' });
    await hook(env, transcript, { hook_event_name: 'UserPromptSubmit', prompt: 'go' });
    const whole = assistant('msg_p2', 50, 'Two.');
    const cut = 40;
    writeFileSync(transcript, assistant('msg_p1', 10, 'One.') + whole.slice(0, cut));
    const post = { tool_name: 'Bash', tool_input: { command: 'true' } };
    await hook(env, transcript, { hook_event_name: 'PreToolUse', ...post, tool_use_id: 'toolu_p' });
    await hook(env, transcript, { hook_event_name: 'PostToolUse', ...post, tool_use_id: 'toolu_p' });
    expect(usageNotes(events(state)).map((n) => n.message_id)).toEqual(['msg_p1']);
    expect(cursorOf(state, transcript)?.offset).toBe(statSync(transcript).size - cut);
    appendFileSync(transcript, whole.slice(cut));
    await hook(env, transcript, { hook_event_name: 'Stop', last_assistant_message: 'Two.' });
    const notes = usageNotes(events(state));
    expect(notes.map((n) => [n.message_id, (n.usage as Ev).output_tokens])).toEqual([
      ['msg_p1', 10],
      ['msg_p2', 50],
    ]);
  });

  it('a huge transcript is read at most USAGE_READ_MAX_BYTES per hook; the rest by the next hooks, each message once', async () => {
    const { env, transcript } = setup();
    const state = env.HANSARD_STATE_DIR!;
    await hook(env, transcript, { hook_event_name: 'SessionStart', source: 'startup' });
    await hook(env, transcript, { hook_event_name: 'UserPromptSubmit', prompt: 'big' });
    const pad = 'x'.repeat(2_000);
    const lines: string[] = [];
    for (let i = 0; i < 2_200; i++) lines.push(assistant(`msg_h${i}`, i + 1, `${pad} ${i}`));
    writeFileSync(transcript, lines.join(''));
    const size = statSync(transcript).size;
    expect(size).toBeGreaterThan(2 * USAGE_READ_MAX_BYTES);
    // Hooks until the whole file is read: three on an idle machine; more when the machine is so busy that
    // a hook stops reading to keep its deadline (what it leaves, the next one reads).
    const offsets: number[] = [0];
    const post = { tool_name: 'Bash', tool_input: { command: 'true' } };
    for (let i = 0; i < 15 && offsets[offsets.length - 1] !== size; i++) {
      await hook(env, transcript, { hook_event_name: 'PreToolUse', ...post, tool_use_id: `toolu_h${i}` });
      await hook(env, transcript, { hook_event_name: 'PostToolUse', ...post, tool_use_id: `toolu_h${i}` });
      offsets.push(cursorOf(state, transcript)?.offset ?? 0);
    }
    expect(offsets[offsets.length - 1]).toBe(size);
    // never more than USAGE_READ_MAX_BYTES a hook, so at least three hooks for more than twice that
    for (let i = 1; i < offsets.length; i++)
      expect(offsets[i]! - offsets[i - 1]!).toBeLessThanOrEqual(USAGE_READ_MAX_BYTES);
    expect(offsets.length - 1).toBeGreaterThanOrEqual(3);
    const ids = usageNotes(events(state)).map((n) => n.message_id);
    expect(ids).toHaveLength(2_200);
    expect(new Set(ids).size).toBe(2_200);
  });
});

describe('parallel tool calls', () => {
  it('hooks running at once read the transcript one after another under the session lock: each message once', async () => {
    const { env, transcript } = setup();
    const state = env.HANSARD_STATE_DIR!;
    await hook(env, transcript, { hook_event_name: 'SessionStart', source: 'startup' });
    writeFileSync(transcript, userLine);
    await hook(env, transcript, { hook_event_name: 'UserPromptSubmit', prompt: 'in parallel' });
    const calls = Array.from({ length: 8 }, (_, i) => i);
    for (const i of calls) appendFileSync(transcript, assistant(`msg_par${i}`, i + 1, `call ${i}`));
    await pool(calls, 8, async (i) => {
      const call = { tool_name: 'Bash', tool_input: { command: `echo ${i}` }, tool_use_id: `toolu_par${i}` };
      // The transcript grows while the hooks run, as Claude Code's does.
      appendFileSync(transcript, assistant(`msg_late${i}`, 1, `late ${i}`));
      await hook(env, transcript, { hook_event_name: 'PreToolUse', ...call });
      await hook(env, transcript, { hook_event_name: 'PostToolUse', ...call });
    });
    await hook(env, transcript, { hook_event_name: 'Stop', last_assistant_message: 'late 7' });
    // A hook the machine's load pushed past its deadline leaves its bytes to the next: the next prompt's.
    await hook(env, transcript, { hook_event_name: 'UserPromptSubmit', prompt: 'next' });
    const ids = usageNotes(events(state)).map((n) => n.message_id as string);
    expect(ids).toHaveLength(16);
    expect(new Set(ids).size).toBe(16);
  });
});

describe('refused transcripts: nothing read, the hook answers, the refusal counted once', () => {
  const refusedCase = async (
    make: (s: ReturnType<typeof setup>) => string,
    reason: RegExp,
  ): Promise<void> => {
    const s = setup();
    const path = make(s);
    const { env } = s;
    await hook(env, path, { hook_event_name: 'SessionStart', source: 'startup' });
    await hook(env, path, { hook_event_name: 'UserPromptSubmit', prompt: 'go' });
    const started = performance.now();
    await hook(env, path, { hook_event_name: 'Stop', last_assistant_message: 'Answer.' });
    await hook(env, path, { hook_event_name: 'UserPromptSubmit', prompt: 'again' });
    // A FIFO is never waited on: a hook blocked on it would be killed at its hard deadline and record no
    // refusal (the assertions below); this bound only catches a hang past both hooks' deadlines, and is
    // loose so that a busy machine's slow process starts do not fail it.
    expect(performance.now() - started).toBeLessThan(20_000);
    const evs = events(env.HANSARD_STATE_DIR!);
    expect(usageNotes(evs)).toEqual([]);
    expect(evs.filter((e) => e.type === 'turn.end')).toHaveLength(1);
    const refused = readHookFailures(env.HANSARD_STATE_DIR!).filter((f) => f.reason === 'transcript_refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]!.hook).toBe('claude-code:UserPromptSubmit');
    expect(refused[0]!.message).toMatch(reason);
    // Never the path or any content of it.
    expect(refused[0]!.message).not.toContain(path);
    // `hansard doctor` counts it and says what to do.
    const doctor = spawnSync(process.execPath, [cli.bin, 'doctor', '--json'], {
      env: hookEnv({ ...env, HOME: join(s.config, '..') }),
      encoding: 'utf8',
    });
    const finding = (
      JSON.parse(doctor.stdout) as {
        findings: { check: string; ok: boolean; message: string; fix: string }[];
      }
    ).findings.find((f) => f.check === 'hook_failures')!;
    expect(finding.ok).toBe(false);
    expect(finding.message).toContain('claude-code:UserPromptSubmit: 1, last transcript_refused');
    expect(finding.fix).toContain('CLAUDE_CONFIG_DIR');
  };

  it('a symbolic link to a transcript (in the projects folder, to a real one)', async () => {
    await refusedCase((s) => {
      const real = join(s.config, 'projects', '-home-user-proj', 'real.jsonl');
      writeFileSync(real, assistant('msg_link', 5, 'Answer.'));
      const link = join(s.config, 'projects', '-home-user-proj', 'link.jsonl');
      symlinkSync(real, link);
      return link;
    }, /symbolic link/);
  });

  it('a regular file outside the projects folder (an /etc/passwd-like file)', async () => {
    await refusedCase((s) => {
      const etc = join(s.config, '..', 'etc');
      mkdirSync(etc);
      const passwd = join(etc, 'passwd');
      writeFileSync(passwd, `root:x:0:0:root:/root:/bin/bash\n${assistant('msg_out', 5, 'Answer.')}`);
      return passwd;
    }, /outside the Claude Code projects folder/);
  });

  it('a path in the projects folder that leads outside through a linked folder', async () => {
    await refusedCase((s) => {
      const outside = join(s.config, '..', 'elsewhere');
      mkdirSync(outside);
      writeFileSync(join(outside, 't.jsonl'), assistant('msg_via', 5, 'Answer.'));
      symlinkSync(outside, join(s.config, 'projects', 'linked'));
      return join(s.config, 'projects', 'linked', 't.jsonl');
    }, /outside the Claude Code projects folder/);
  });

  it('a FIFO (never opened for a blocking read)', async () => {
    await refusedCase((s) => {
      const fifo = join(s.config, 'projects', '-home-user-proj', 'fifo.jsonl');
      execFileSync('mkfifo', [fifo]);
      return fifo;
    }, /a FIFO/);
  });

  it('a folder', async () => {
    await refusedCase((s) => {
      const dir = join(s.config, 'projects', '-home-user-proj', 'dir.jsonl');
      mkdirSync(dir);
      return dir;
    }, /a folder/);
  });
});

describe('subagents', () => {
  it("a subagent's own transcript (agent_transcript_path) lands in its writer before it ends; sidechain records of the main transcript go to the running subagent's writer, or to the main writer marked sidechain", async () => {
    const { env, transcript } = setup();
    const state = env.HANSARD_STATE_DIR!;
    const subFile = join(transcript.slice(0, -'.jsonl'.length), 'subagents', 'agent-a1b2.jsonl');
    mkdirSync(join(subFile, '..'), { recursive: true });
    const side = (id: string, out: number, text: string, agentId: string) =>
      assistant(id, out, text, { isSidechain: true, agentId });
    await hook(env, transcript, { hook_event_name: 'SessionStart', source: 'startup' });
    writeFileSync(transcript, userLine);
    await hook(env, transcript, { hook_event_name: 'UserPromptSubmit', prompt: 'look at the logs' });
    appendFileSync(transcript, assistant('msg_main1', 20, 'I will ask a subagent.'));
    const task = { tool_name: 'Task', tool_input: { prompt: 'read logs', subagent_type: 'general-purpose' } };
    await hook(env, transcript, { hook_event_name: 'PreToolUse', ...task, tool_use_id: 'toolu_task' });
    await hook(env, transcript, {
      hook_event_name: 'SubagentStart',
      agent_id: 'a1b2',
      agent_type: 'general-purpose',
    });
    // The subagent's records in its own file, and (as older Claude Code wrote them) two in the main
    // transcript: one of this subagent, one of a subagent this session never saw.
    writeFileSync(
      subFile,
      side('msg_sub1', 3, 'Reading.', 'a1b2') + side('msg_sub1', 30, 'Reading.', 'a1b2'),
    );
    appendFileSync(
      transcript,
      side('msg_old', 4, 'old style', 'a1b2') + side('msg_other', 6, 'other', 'zz99'),
    );
    const bash = { tool_name: 'Bash', tool_input: { command: 'cat log' }, agent_id: 'a1b2' };
    await hook(env, transcript, { hook_event_name: 'PreToolUse', ...bash, tool_use_id: 'toolu_sub' });
    await hook(env, transcript, {
      hook_event_name: 'PostToolUse',
      ...bash,
      tool_use_id: 'toolu_sub',
      agent_transcript_path: subFile,
    });
    appendFileSync(subFile, side('msg_sub2', 11, 'The logs show a timeout.', 'a1b2'));
    await hook(env, transcript, {
      hook_event_name: 'SubagentStop',
      agent_id: 'a1b2',
      agent_type: 'general-purpose',
      agent_transcript_path: subFile,
      last_assistant_message: 'The logs show a timeout.',
    });
    appendFileSync(transcript, assistant('msg_main2', 9, 'A timeout.'));
    await hook(env, transcript, { hook_event_name: 'PostToolUse', ...task, tool_use_id: 'toolu_task' });
    await hook(env, transcript, { hook_event_name: 'Stop', last_assistant_message: 'A timeout.' });

    const evs = events(state);
    const starts = evs.filter((e) => e.type === 'writer.start');
    const main = starts.find((s) => (s.meta as Ev).claude_session_id === 'sess-usage')!.w;
    const sub = starts.find((s) => (s.meta as Ev).subagent_id === 'a1b2')!.w;
    const notesOf = (w: unknown) =>
      usageNotes(evs.filter((e) => e.w === w)).map((n) => [
        n.message_id,
        (n.usage as Ev).output_tokens,
        n.sidechain ?? false,
        n.agent_id ?? null,
      ]);
    expect(notesOf(sub)).toEqual([
      ['msg_old', 4, false, null],
      ['msg_sub1', 30, false, null],
      ['msg_sub2', 11, false, null],
    ]);
    expect(notesOf(main)).toEqual([
      ['msg_main1', 20, false, null],
      ['msg_other', 6, true, 'zz99'],
      ['msg_main2', 9, false, null],
    ]);
    const subTypes = evs.filter((e) => e.w === sub).map((e) => (e.import_kind ? `usage` : e.type));
    expect(subTypes.slice(-4)).toEqual(['usage', 'agent.output', 'turn.end', 'writer.end']);
    const problems = await verifyDir(spoolSessions(state)[0]!);
    expect(problems.filter((p) => p.severity !== 'info')).toEqual([]);
  });
});

describe('a subagent whose last message reaches its file after its SubagentStop', () => {
  it("is read at the main agent's next Stop, into the main writer marked sidechain, and then no more", async () => {
    const { env, transcript } = setup();
    const state = env.HANSARD_STATE_DIR!;
    const subFile = join(transcript.slice(0, -'.jsonl'.length), 'subagents', 'agent-c3d4.jsonl');
    mkdirSync(join(subFile, '..'), { recursive: true });
    const side = (id: string, out: number, text: string) =>
      assistant(id, out, text, { isSidechain: true, agentId: 'c3d4' });
    await hook(env, transcript, { hook_event_name: 'SessionStart', source: 'startup' });
    writeFileSync(transcript, userLine);
    await hook(env, transcript, { hook_event_name: 'UserPromptSubmit', prompt: 'delegate' });
    const task = { tool_name: 'Task', tool_input: { prompt: 'p', subagent_type: 'general-purpose' } };
    await hook(env, transcript, { hook_event_name: 'PreToolUse', ...task, tool_use_id: 'toolu_t' });
    await hook(env, transcript, {
      hook_event_name: 'SubagentStart',
      agent_id: 'c3d4',
      agent_type: 'general-purpose',
    });
    writeFileSync(subFile, side('msg_s1', 8, 'Looking.'));
    await hook(env, transcript, {
      hook_event_name: 'SubagentStop',
      agent_id: 'c3d4',
      agent_type: 'general-purpose',
      agent_transcript_path: subFile,
      last_assistant_message: 'Found it.',
    });
    appendFileSync(subFile, side('msg_s2', 13, 'Found it.'));
    await hook(env, transcript, { hook_event_name: 'PostToolUse', ...task, tool_use_id: 'toolu_t' });
    await hook(env, transcript, { hook_event_name: 'Stop', last_assistant_message: '' });
    const files = (
      JSON.parse(readFileSync(mappingStatePath(state, 'claude-code', 'sess-usage'), 'utf8')) as {
        usage: { files: Record<string, { done?: boolean }> };
      }
    ).usage.files;
    expect(files[subFile]?.done).toBe(true);
    const evs = events(state);
    const sub = evs.find((e) => e.type === 'writer.start' && (e.meta as Ev).subagent_id === 'c3d4')!.w;
    expect(
      usageNotes(evs)
        .sort((a, b) => String(a.message_id).localeCompare(String(b.message_id)))
        .map((n) => [n.message_id, n.w === sub, n.sidechain ?? false, n.agent_id ?? null]),
    ).toEqual([
      ['msg_s1', true, false, null],
      ['msg_s2', false, true, 'c3d4'],
    ]);
  });
});

describe('where reading begins', () => {
  it('capture that begins mid-session (no SessionStart of a new session) reads the transcript from where it ended then', async () => {
    const { env, transcript } = setup();
    writeFileSync(transcript, userLine + assistant('msg_before', 99, 'Earlier answer.') + userLine);
    await hook(env, transcript, { hook_event_name: 'UserPromptSubmit', prompt: 'now' });
    appendFileSync(transcript, assistant('msg_after', 5, 'Now.'));
    await hook(env, transcript, { hook_event_name: 'Stop', last_assistant_message: 'Now.' });
    expect(usageNotes(events(env.HANSARD_STATE_DIR!)).map((n) => n.message_id)).toEqual(['msg_after']);
  });

  it('…but a transcript not there yet when capture began is read from its start once it is', async () => {
    const { env, transcript } = setup();
    await hook(env, transcript, { hook_event_name: 'UserPromptSubmit', prompt: 'now' });
    writeFileSync(transcript, userLine + assistant('msg_first', 5, 'First.'));
    await hook(env, transcript, { hook_event_name: 'Stop', last_assistant_message: 'First.' });
    expect(usageNotes(events(env.HANSARD_STATE_DIR!)).map((n) => n.message_id)).toEqual(['msg_first']);
  });
});

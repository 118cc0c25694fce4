/**
 * Attack on the capture hook's transcript positions (lib/client/capture/claude-usage.ts `keep`, at most
 * `MAX_FILES` = 16 files remembered per session, docs/capture.md "Token usage"), through the real
 * `bin/hansard hook claude-code` process: subagents whose SubagentStop came before their final message
 * reached their file (anthropics/claude-code#15813: their files stay "not done"), enough of them to pass
 * the cap, then the main agent goes on. Whatever the hook forgets, each message must be counted once:
 * `hansard usage DIR --json` over what the hook recorded equals the messages the transcripts hold. The
 * records are the real ones of test/fixtures/real/ccl-representative_messages.jsonl.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MAX_FILES } from '../../lib/client/capture/transcript-usage.js';
import {
  fixture,
  hookEnv,
  runHook,
  sessionEvents,
  spoolSessions,
  useBuiltCli,
} from '../client/capture/helpers.js';
import { tmpDirs } from '../support/tmp.js';

const cli = useBuiltCli('usage-files-attack');
const tmp = tmpDirs('hansard-usage-files-');

type Ev = Record<string, unknown>;
const ASSISTANT = fixture('real/ccl-representative_messages.jsonl')
  .split('\n')
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Ev)
  .find((r) => r.type === 'assistant')!;

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
    },
  })}\n`;
}

async function hook(env: Record<string, string>, transcript: string, p: Ev): Promise<void> {
  const r = await runHook(
    cli.bin,
    ['claude-code'],
    JSON.stringify({ session_id: 'sess-files', transcript_path: transcript, cwd: '/home/user/proj', ...p }),
    env,
  );
  expect(r.code, String(p.hook_event_name)).toBe(0);
  expect(r.stderr).toBe('');
}

function localUsage(state: string) {
  const r = spawnSync(process.execPath, [cli.bin, 'usage', spoolSessions(state)[0]!, '--json'], {
    env: hookEnv({}),
    encoding: 'utf8',
  });
  expect(r.status, r.stderr).toBe(0);
  return JSON.parse(r.stdout).total as { output_tokens: number; records: number };
}

describe('more transcript files than the hook remembers', () => {
  // DEFECT: `keep` forgets, past MAX_FILES, the first "done" file, else the OLDEST file whatever it is,
  // the main transcript included. Subagents whose SubagentStop came before their final message was in
  // their file stay not done; once MAX_FILES of them were kept after the main transcript's last read,
  // the main transcript's position is forgotten, and the next hook reads it again from byte 0 (the state
  // began with the session) and writes a note for every message again. The fold replaces a repeated id
  // only among the writer's last 32, so a main transcript of 40 messages is counted twice. What should
  // happen: the main transcript's position is never forgotten while the session runs (forget subagents'
  // files, which a revisit can afford to lose, or keep the main one apart), and each message counts once.
  it.fails('subagents left not done past the cap do not make the main transcript count twice', async () => {
    const root = tmp.make();
    const config = join(root, 'claude');
    const project = join(config, 'projects', '-home-user-proj');
    mkdirSync(project, { recursive: true });
    const transcript = join(project, 'sess-files.jsonl');
    const subDir = join(project, 'sess-files', 'subagents');
    mkdirSync(subDir, { recursive: true });
    const state = join(root, 'state');
    const env = { HANSARD_STATE_DIR: state, CLAUDE_CONFIG_DIR: config };

    await hook(env, transcript, { hook_event_name: 'SessionStart', source: 'startup' });
    writeFileSync(transcript, '');
    await hook(env, transcript, { hook_event_name: 'UserPromptSubmit', prompt: 'fan out' });
    // 40 main messages, read at the main agent's tool call
    appendFileSync(
      transcript,
      Array.from({ length: 40 }, (_, i) => assistant(`msg_m${i}`, i + 1, `m ${i}`)).join(''),
    );
    const task = { tool_name: 'Task', tool_input: { prompt: 'look', subagent_type: 'general-purpose' } };
    await hook(env, transcript, { hook_event_name: 'PreToolUse', ...task, tool_use_id: 'toolu_task' });
    await hook(env, transcript, {
      hook_event_name: 'PostToolUse',
      ...task,
      tool_use_id: 'toolu_task',
      tool_response: { content: [{ type: 'text', text: 'started' }] },
    });
    const afterMain = localUsage(state);
    expect(afterMain.records).toBe(40);

    // MAX_FILES subagents stop before their final message reached their file: none done
    for (let i = 0; i < MAX_FILES; i++) {
      const id = `sub${i}`;
      const file = join(subDir, `agent-${id}.jsonl`);
      writeFileSync(file, assistant(`msg_s${i}`, 1, 'working on it', { isSidechain: true, agentId: id }));
      await hook(env, transcript, {
        hook_event_name: 'SubagentStart',
        agent_id: id,
        agent_type: 'general-purpose',
      });
      await hook(env, transcript, {
        hook_event_name: 'SubagentStop',
        agent_id: id,
        agent_type: 'general-purpose',
        agent_transcript_path: file,
        last_assistant_message: `final answer ${i}`,
      });
    }
    // the main agent goes on: one more message and a tool call
    appendFileSync(transcript, assistant('msg_last', 7, 'done'));
    const bash = { tool_name: 'Bash', tool_input: { command: 'true' } };
    await hook(env, transcript, { hook_event_name: 'PreToolUse', ...bash, tool_use_id: 'toolu_b' });
    await hook(env, transcript, {
      hook_event_name: 'PostToolUse',
      ...bash,
      tool_use_id: 'toolu_b',
      tool_response: { stdout: '', stderr: '', interrupted: false },
    });
    const notesOfFirst = sessionEvents(spoolSessions(state)[0]!).filter(
      (e) => e.import_kind === 'token_usage' && e.message_id === 'msg_m0',
    );
    // the main transcript's first message: one note (twice when its position was forgotten)
    expect(notesOfFirst).toHaveLength(1);
    const total = localUsage(state);
    // 40 + 1 main messages, one record of each subagent
    expect(total.records).toBe(41 + MAX_FILES);
  }, 120_000);
});

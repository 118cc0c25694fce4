/**
 * One Claude Code Bash call records one status and exit code whichever way it was captured (issue 24/25
 * trial, finding 1): the live hook (the real `bin/hansard hook claude-code` process), `hansard import
 * claude-code` of a transcript, and of `claude -p --output-format stream-json` output. Each call is shaped
 * as Claude Code reports it (claude-code-outcome.ts): a foreground success answers `{stdout, …}` (exit 0),
 * a failure's text starts `Exit code N` (exit N), a `grep` that found nothing says so in
 * `returnCodeInterpretation` (a non-zero exit taken for no error: none), a background launch names its
 * `backgroundTaskId` (not ended: none), an interrupted call carries Claude Code's marker or
 * `interrupted: true` (`cancelled`, none).
 */
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runHansard } from '../../support/cli.js';
import { runHook, sessionEvents, spoolSessions, useBuiltCli } from '../capture/helpers.js';

const cli = useBuiltCli('bash-exit');
const INTERRUPTED = '[Request interrupted by user for tool use]';
const bashOut = (extra: Record<string, unknown> = {}) => ({
  stdout: '',
  stderr: '',
  interrupted: false,
  isImage: false,
  noOutputExpected: false,
  ...extra,
});

/** One Bash call as Claude Code reports its end, and what every capture path must record of it. */
interface Call {
  command: string;
  /** the tool_result block's `is_error`, and the hook's PostToolUseFailure */
  failed: boolean;
  /** the tool_result content (the hook's `error` when failed) */
  content: string;
  /** `toolUseResult` / `tool_response` (a failure's is Claude Code's "Error: …" string) */
  response: unknown;
  interrupt?: boolean;
  expected: { status: string; exit_code: number | null };
}

const CALLS: Call[] = [
  {
    command: 'npm test',
    failed: false,
    content: '12 passed',
    response: bashOut({ stdout: '12 passed' }),
    expected: { status: 'ok', exit_code: 0 },
  },
  {
    command: 'npm run lint',
    failed: true,
    content: 'Exit code 2\nsrc/a.ts: 1 problem',
    response: 'Error: Exit code 2\nsrc/a.ts: 1 problem',
    expected: { status: 'error', exit_code: 2 },
  },
  {
    command: 'grep -r TODO src',
    failed: false,
    content: '(Bash completed with no output)',
    response: bashOut({ returnCodeInterpretation: 'No matches found' }),
    expected: { status: 'ok', exit_code: null },
  },
  {
    command: 'npm run build',
    failed: false,
    content: 'Command running in background with ID: b7',
    response: bashOut({ backgroundTaskId: 'b7' }),
    expected: { status: 'ok', exit_code: null },
  },
  {
    command: 'sleep 600',
    failed: true,
    content: `Exit code 137\n${INTERRUPTED}`,
    response: `Error: Exit code 137\n${INTERRUPTED}`,
    interrupt: true,
    expected: { status: 'cancelled', exit_code: null },
  },
  {
    command: 'npm start',
    failed: false,
    content: 'listening on 3000',
    response: bashOut({ stdout: 'listening on 3000', interrupted: true }),
    expected: { status: 'cancelled', exit_code: null },
  },
];

const SID = '7b0c1d2e-3f40-4a5b-8c6d-7e8f90a1b2c3';
const at = (i: number) => new Date(Date.UTC(2026, 11, 1, 9, 0, i)).toISOString();
const id = (i: number) => `toolu_bash_${i}`;

/** The calls as a transcript (`stream`: as stream-json output: `session_id`, `tool_use_result`). */
function records(stream: boolean): string {
  const common = (n: number) =>
    stream
      ? { session_id: SID }
      : { sessionId: SID, uuid: `r${n}`, timestamp: at(n), cwd: '/home/user/proj' };
  const lines: unknown[] = [];
  if (stream) lines.push({ type: 'system', subtype: 'init', session_id: SID, tools: ['Bash'] });
  lines.push({ type: 'user', ...common(0), message: { role: 'user', content: 'check the project' } });
  CALLS.forEach((c, i) => {
    const use = { type: 'tool_use', id: id(i), name: 'Bash', input: { command: c.command } };
    lines.push({
      type: 'assistant',
      ...common(2 * i + 1),
      message: { role: 'assistant', content: [use], stop_reason: 'tool_use' },
    });
    const block = { type: 'tool_result', tool_use_id: id(i), content: c.content, is_error: c.failed };
    lines.push({
      type: 'user',
      ...common(2 * i + 2),
      message: { role: 'user', content: [block] },
      [stream ? 'tool_use_result' : 'toolUseResult']: c.response,
    });
  });
  lines.push({
    type: 'assistant',
    ...common(99),
    message: { role: 'assistant', content: [{ type: 'text', text: 'Done.' }], stop_reason: 'end_turn' },
  });
  if (stream) lines.push({ type: 'result', subtype: 'success', is_error: false, session_id: SID });
  return `${lines.map((l) => JSON.stringify(l)).join('\n')}\n`;
}

/** The same calls as hook payloads (PreToolUse, then PostToolUse or PostToolUseFailure). */
function payloads(): Record<string, unknown>[] {
  const base = { session_id: SID, transcript_path: '/home/user/.claude/x.jsonl', cwd: '/home/user/proj' };
  const out: Record<string, unknown>[] = [
    { ...base, hook_event_name: 'SessionStart', source: 'startup' },
    { ...base, hook_event_name: 'UserPromptSubmit', prompt: 'check the project' },
  ];
  CALLS.forEach((c, i) => {
    const call = { ...base, tool_name: 'Bash', tool_input: { command: c.command }, tool_use_id: id(i) };
    out.push({ ...call, hook_event_name: 'PreToolUse' });
    out.push(
      c.failed
        ? {
            ...call,
            hook_event_name: 'PostToolUseFailure',
            error: c.content,
            is_interrupt: c.interrupt ?? false,
          }
        : { ...call, hook_event_name: 'PostToolUse', tool_response: c.response },
    );
  });
  out.push({ ...base, hook_event_name: 'Stop', last_assistant_message: 'Done.' });
  return out;
}

/** Each Bash action's command → its result's status and exit code, over a session directory. */
function outcomes(dir: string): Record<string, { status: unknown; exit_code: unknown }> {
  const evs = sessionEvents(dir);
  const out: Record<string, { status: unknown; exit_code: unknown }> = {};
  for (const a of evs.filter((e) => e.type === 'agent.action' && e.tool === 'Bash')) {
    const r = evs.find((e) => e.type === 'agent.action_result' && e.action_id === a.id);
    out[String((a.input as { command: string }).command)] = { status: r?.status, exit_code: r?.exit_code };
  }
  return out;
}

const expected = Object.fromEntries(CALLS.map((c) => [c.command, c.expected]));

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'hansard-bash-exit-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('a Claude Code Bash call records the exit code Claude Code reports, on every capture path', () => {
  it('hansard import claude-code of a transcript', async () => {
    writeFileSync(join(root, 't.jsonl'), records(false));
    const r = await runHansard(['import', 'claude-code', 't.jsonl'], { cwd: root, env: {} });
    expect(r.code, r.err).toBe(0);
    expect(outcomes(r.out.trim())).toEqual(expected);
  });

  it('hansard import claude-code of stream-json output', async () => {
    writeFileSync(join(root, 's.ndjson'), records(true));
    const r = await runHansard(['import', 'claude-code', 's.ndjson'], { cwd: root, env: {} });
    expect(r.code, r.err).toBe(0);
    expect(r.err).toContain('imported Claude Code stream-json');
    expect(outcomes(r.out.trim())).toEqual(expected);
  });

  it('the live hook (PostToolUse / PostToolUseFailure)', async () => {
    const state = join(root, 'state');
    for (const p of payloads()) {
      const h = await runHook(cli.bin, ['claude-code'], JSON.stringify(p), { HANSARD_STATE_DIR: state });
      expect(h.code, String(p.hook_event_name)).toBe(0);
    }
    const [dir] = spoolSessions(state);
    expect(readdirSync(dir!).some((n) => n.endsWith('.jsonl'))).toBe(true);
    expect(outcomes(dir!)).toEqual(expected);
  }, 60_000);
});

/**
 * The `codex exec --json` importer (issue 10, `hansard import codex FILE` on Codex's exec event stream):
 * the real capture in test/fixtures/real/hcn-harnesses-codex-tool.ndjson, and hand-made streams for a
 * failing command, a stream cut off mid-turn, a failed turn, reasoning, a malformed line and unknown
 * records.
 */
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CodexExecImportResult,
  importCodexExec,
  NO_EXEC_PROMPT_NOTICE,
} from '../../lib/importers/codex-exec.js';
import { runHansard } from '../support/cli.js';
import { tmpDirs } from '../support/tmp.js';
import { type Ev, marked, ofType, readBack, readSession, verify, writeStream } from './stream-helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
const REAL = join(ROOT, 'test/fixtures/real/hcn-harnesses-codex-tool.ndjson');
const scratch = tmpDirs('hansard-codex-exec-');

const cmd = (id: string, status: string, exit: number | null, out = '') => ({
  id,
  type: 'command_execution',
  command: `bash -lc 'step ${id}'`,
  aggregated_output: out,
  exit_code: exit,
  status,
});
const started = (item: object) => ({ type: 'item.started', item });
const completed = (item: object) => ({ type: 'item.completed', item });
const usage = {
  type: 'turn.completed',
  usage: { input_tokens: 10, cached_input_tokens: 2, output_tokens: 3 },
};

async function importLines(lines: (object | string)[]) {
  const path = writeStream(scratch.make(), 'exec.ndjson', lines);
  const result = await importCodexExec(path, scratch.make());
  return { result, events: await readBack(result.path) };
}

describe('the real capture (codex exec --json, one shell call)', () => {
  // Read off the file by hand (8 lines): 1 thread.started (meta note, its thread_id on writer.start),
  // 2 turn.started (the one turn), 3 item.completed `error` (the skills warning: an error note),
  // 4 item.completed agent_message (output 1), 5 item.started command_execution item_2 (the action),
  // 6 item.completed item_2 exit_code 0 (its result, ok), 7 agent_message (output 2), 8 turn.completed
  // with usage (token_usage note, the turn completed). No prompt is printed (0 person prompts), one
  // command (1 action, 1 result), no subagents (0 subagent writers), no compaction (0 compactions).
  let result: CodexExecImportResult;
  let events: Ev[];
  beforeAll(async () => {
    result = await importCodexExec(REAL, scratch.make());
    events = await readBack(result.path);
  });

  it('holds 0 prompts, 1 turn, 1 action, 1 result, 2 outputs, 0 subagent writers, 0 compactions', async () => {
    expect(result.counts).toMatchObject({
      prompts: 0,
      turns: 1,
      actions: 1,
      results: 1,
      outputs: 2,
      notes: 3,
      compactions: 0,
      tokenUsage: 1,
      errors: 1,
      reasoning: 0,
      unknown: 0,
      skipped: {},
    });
    expect(ofType(events, 'message')).toHaveLength(0);
    expect((await readSession(result.dir)).length).toBe(1); // no subagent writer
    expect(result.problems).toEqual([]);
    expect(result.interrupted).toBe(false);
  });

  it('maps the command to an action and its result with exit code 0, the messages to outputs', () => {
    const [action] = ofType(events, 'agent.action');
    expect(action).toMatchObject({
      tool: 'command_execution',
      input: { command: "/bin/zsh -lc 'echo tooltest'" },
      call_id: 'item_2',
    });
    expect(ofType(events, 'agent.action_result')).toEqual([
      expect.objectContaining({ action_id: action!.id, status: 'ok', exit_code: 0, output: 'tooltest\n' }),
    ]);
    expect(ofType(events, 'agent.output').map((e) => e.text)).toEqual([
      'I’ll run the command and report the exact output.',
      '`tooltest`',
    ]);
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['completed']);
  });

  it('keeps the error item, thread start and usage as marked notes; says the prompt is absent', () => {
    expect(marked(events, 'error').map((n) => n.text)).toEqual([
      expect.stringMatching(/^Skill descriptions were shortened/),
    ]);
    expect(marked(events, 'meta').map((n) => JSON.parse(n.text as string).type)).toEqual(['thread.started']);
    expect(events[0]!.meta).toMatchObject({ codex_thread_id: '019fee5a-b3fd-7cf3-91f9-95b96c5323c5' });
    const [u] = marked(events, 'token_usage');
    // exec's usage is the thread's running total (openai/codex#17539), and the text says so
    expect(u!.text).toBe('token usage (thread total): input 51306 (cached 36352), output 80 (reasoning 0)');
    expect(u!.extra).toMatchObject({ usage: { input_tokens: 51306, cache_write_input_tokens: 0 } });
    expect(result.notices).toEqual([NO_EXEC_PROMPT_NOTICE]);
    expect(ofType(events, 'turn.start')[0]!.context_message_ids).toBeNull();
  });

  it('verifies clean', async () => {
    const v = await verify(result.dir);
    expect(v.summary).toMatchObject({ errors: 0, warnings: 0 });
    expect(v.code).toBe(0);
  });
});

describe('hand-made streams', () => {
  it('a failing command: exit code 1 → an error result holding the code', async () => {
    const { result, events } = await importLines([
      { type: 'thread.started', thread_id: 't1' },
      { type: 'turn.started' },
      started(cmd('c1', 'in_progress', null)),
      completed(cmd('c1', 'failed', 1, 'boom\n')),
      usage,
    ]);
    expect(ofType(events, 'agent.action_result')).toEqual([
      expect.objectContaining({ status: 'error', exit_code: 1, error: 'exit code 1', output: 'boom\n' }),
    ]);
    expect(result.counts).toMatchObject({ actions: 1, results: 1 });
    expect((await verify(result.dir)).summary).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('a completed command never seen starting still gets its action; declined is cancelled', async () => {
    const { events } = await importLines([
      { type: 'turn.started' },
      completed(cmd('c2', 'completed', 0, 'ok\n')),
      completed(cmd('c3', 'declined', null)),
      usage,
    ]);
    expect(ofType(events, 'agent.action').map((a) => a.call_id)).toEqual(['c2', 'c3']);
    expect(ofType(events, 'agent.action_result').map((r) => r.status)).toEqual(['ok', 'cancelled']);
  });

  it('a stream cut off mid-turn: the running command is cancelled and the turn interrupted', async () => {
    const { result, events } = await importLines([
      { type: 'thread.started', thread_id: 't1' },
      { type: 'turn.started' },
      started(cmd('c1', 'in_progress', null)),
    ]);
    expect(result.interrupted).toBe(true);
    expect(ofType(events, 'agent.action_result')).toEqual([
      expect.objectContaining({ status: 'cancelled', error: 'the stream ended before turn.completed' }),
    ]);
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['interrupted']);
    expect((await verify(result.dir)).summary).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('a turn per turn.started/turn.completed; turn.failed fails its turn; reasoning is a thinking note', async () => {
    const { result, events } = await importLines([
      { type: 'turn.started' },
      completed({ id: 'r1', type: 'reasoning', text: '**Checking the tree**' }),
      completed({ id: 'm1', type: 'agent_message', text: 'done' }),
      usage,
      { type: 'turn.started' },
      { type: 'error', message: 'stream disconnected' },
      { type: 'turn.failed', error: { message: 'stream disconnected' } },
    ]);
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['completed', 'failed']);
    expect(marked(events, 'thinking').map((n) => n.text)).toEqual(['reasoning: **Checking the tree**']);
    expect(marked(events, 'error').map((n) => n.text)).toEqual([
      'stream disconnected',
      'turn failed: stream disconnected',
    ]);
    expect(result.counts).toMatchObject({ turns: 2, reasoning: 1, errors: 2, tokenUsage: 1 });
    expect(result.interrupted).toBe(false);
  });

  it('a malformed line is reported with its line number and the rest is imported', async () => {
    const { result, events } = await importLines([
      { type: 'turn.started' },
      completed({ id: 'm1', type: 'agent_message', text: 'before' }),
      '{"type":"item.completed","item":{',
      completed({ id: 'm2', type: 'agent_message', text: 'after' }),
      usage,
    ]);
    expect(result.problems).toEqual([{ line: 3, message: 'line is not valid JSON', kind: 'kept_as_note' }]);
    expect(ofType(events, 'agent.output').map((e) => e.text)).toEqual(['before', 'after']);
    expect(marked(events, 'unknown_record').map((n) => n.text)).toEqual([
      '{"type":"item.completed","item":{',
    ]);
    expect((await verify(result.dir)).summary.errors).toBe(0);
  });

  it('unknown events and unknown item types are kept exactly as unknown_record notes and counted', async () => {
    const futureEvent = { type: 'thread.renamed', name: 'x' };
    const futureItem = completed({ id: 'z1', type: 'hologram', payload: [1, 2] });
    const { result, events } = await importLines([{ type: 'turn.started' }, futureEvent, futureItem, usage]);
    expect(marked(events, 'unknown_record').map((n) => n.text)).toEqual([
      JSON.stringify(futureEvent),
      JSON.stringify(futureItem),
    ]);
    expect(result.counts.unknown).toBe(2);
    expect(result.problems).toEqual([]);
  });
});

describe('the commands', () => {
  it('hansard import codex FILE tells an exec stream from a rollout and imports it', async () => {
    const out = scratch.make();
    const r = await runHansard(['import', 'codex', REAL, '--out', out], { cwd: ROOT });
    expect(r.code).toBe(0);
    expect(r.err).toContain('imported codex exec --json: 1 turn, 1 action, 1 result, 2 outputs');
    expect(r.err).toContain(`note: ${NO_EXEC_PROMPT_NOTICE}`);
    // a rollout still goes to the rollout importer
    const rollout = join(ROOT, 'test/fixtures/real/cct-sample_codex_session.jsonl');
    const j = await runHansard(['import', 'codex', rollout, '--out', out, '--json'], { cwd: ROOT });
    expect(j.code).toBe(0);
    expect(JSON.parse(j.out)).not.toHaveProperty('interrupted');
  });

  it('import hcn of this file and import claude-code of it name hansard import codex', async () => {
    const out = scratch.make();
    const hcn = await runHansard(['import', 'hcn', REAL, '--out', out], { cwd: ROOT });
    expect(hcn.code).toBe(2);
    expect(hcn.err).toContain('import it with `hansard import codex FILE`');
    const cc = await runHansard(['import', 'claude-code', REAL, '--out', out], { cwd: ROOT });
    expect(cc.code).toBe(2);
    expect(cc.err).toContain('is codex exec --json output: import it with `hansard import codex');
  });
});

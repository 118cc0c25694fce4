/**
 * The Codex rollout importer (issue 10 item 2, DESIGN §6 `hansard import codex`): the synthetic rollout with
 * tool calls and both output shapes, the real rollout cut off mid-turn, and hand-made rollouts for a
 * malformed line and unknown line types. Counts stated here are read off the fixtures by hand.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../../lib/client/cli/main.js';
import { type CodexImportResult, importCodexRollout, toolOutput } from '../../lib/importers/codex.js';
import { decodeEvent, type LogEvent, readSegmentFile } from '../../lib/log/index.js';
import { tmpDirs } from '../support/tmp.js';

const SYNTHETIC = 'test/fixtures/synthetic/codex-rollout-tools.jsonl';
const REAL = 'test/fixtures/real/cct-sample_codex_session.jsonl';

const scratch = tmpDirs('hansard-codex-import-');
const tmp = () => scratch.make();

type Ev = LogEvent & Record<string, unknown>;
async function readBack(path: string): Promise<Ev[]> {
  const events: Ev[] = [];
  for await (const item of readSegmentFile(path)) {
    if (item.kind === 'problem') throw new Error(`segment problem: ${item.problem.message}`);
    events.push(decodeEvent(item.event) as Ev);
  }
  return events;
}
const ofType = (events: Ev[], type: string) => events.filter((e) => e.type === type);

/** `hansard verify DIR --json` in-process: the report. */
async function verify(dir: string): Promise<{ code: number; report: { summary: { errors: number } } }> {
  let out = '';
  const io = {
    stdout: {
      write: (s: string | Uint8Array) => (out += typeof s === 'string' ? s : Buffer.from(s).toString()),
    },
    stderr: { write: (_s: string) => {} },
    env: {},
    cwd: process.cwd(),
  };
  const code = await runCli(['verify', dir, '--json'], io);
  return { code, report: JSON.parse(out) };
}

async function importFile(file: string): Promise<{ result: CodexImportResult; events: Ev[] }> {
  const result = await importCodexRollout(file, tmp());
  return { result, events: await readBack(result.path) };
}

describe('the synthetic rollout (tool calls, both output shapes, cut off after a call)', () => {
  let result: CodexImportResult;
  let events: Ev[];
  beforeAll(async () => {
    ({ result, events } = await importFile(SYNTHETIC));
  });

  it('holds 2 prompts, 2 turns, 4 actions, 3 results, 1 answer, 1 reasoning summary, none doubled', () => {
    expect(ofType(events, 'message')).toHaveLength(2);
    expect(ofType(events, 'message').map((m) => m.text)).toEqual([
      'Run the tests and fix the failing one',
      'Now commit it',
    ]);
    expect(ofType(events, 'turn.start')).toHaveLength(2);
    expect(ofType(events, 'agent.action')).toHaveLength(4);
    expect(ofType(events, 'agent.action_result')).toHaveLength(3);
    expect(ofType(events, 'agent.output')).toHaveLength(1);
    const reasoning = ofType(events, 'note').filter((n) => kindOf(n) === 'thinking');
    expect(reasoning.map((n) => n.text)).toEqual(['reasoning summary: Run the suite first']);
    // The rollout's only token record is a thread total (no `last_token_usage`): kept, labelled as such.
    const usage = ofType(events, 'note').filter((n) => kindOf(n) === 'token_usage');
    expect(usage.map((n) => n.text)).toEqual([
      'token usage (thread total): input 5200 (cached 0), output 310 (reasoning 0), total 5510',
    ]);
    expect(result.counts).toMatchObject({
      prompts: 2,
      turns: 2,
      actions: 4,
      results: 3,
      outputs: 1,
      reasoning: 1,
      tokenUsage: 1,
    });
    expect(result.counts.skipped).toEqual({
      'response_item/message (prompt copy)': 2,
      'event_msg/agent_message (answer copy)': 1,
    });
    expect(result.problems).toEqual([]);
  });

  it('maps each call to an action with its tool and input, and each output to a result with its exit code', () => {
    const actions = ofType(events, 'agent.action');
    expect(actions.map((a) => [a.tool, a.call_id])).toEqual([
      ['shell', 'call_A1'],
      ['apply_patch', 'call_A2'],
      ['exec_command', 'call_A3'],
      ['shell', 'call_B1'],
    ]);
    expect(actions[0]!.input).toMatchObject({ command: ['bash', '-lc', 'npm test'] });
    const results = ofType(events, 'agent.action_result');
    expect(results.map((r) => r.action_id)).toEqual(actions.slice(0, 3).map((a) => a.id));
    expect(results.map((r) => r.exit_code)).toEqual([1, 0, 0]);
    expect(results.map((r) => r.status)).toEqual(['error', 'ok', 'ok']);
    expect(results[0]!.output).toBe('1 failed, 41 passed\n');
    expect(results[2]!.output).toBe('42 passed\n');
  });

  it('ends turn 1 completed and turn 2 (cut off after a call with no output) interrupted', () => {
    const starts = ofType(events, 'turn.start');
    const ends = ofType(events, 'turn.end');
    expect(ends.map((e) => [e.turn_id, e.status])).toEqual([
      [starts[0]!.turn_id, 'completed'],
      [starts[1]!.turn_id, 'interrupted'],
    ]);
    expect(starts[1]!.context_message_ids).toEqual([ofType(events, 'message')[1]!.id]);
    expect(events.at(-1)!.type).toBe('writer.end');
  });

  it('stamps events with the rollout time', () => {
    expect(events[0]!.ts).toBe('2026-10-05T09:00:00.000000Z');
    expect(ofType(events, 'message')[1]!.ts).toBe('2026-10-05T09:01:00.001000Z');
  });

  it('verifies clean', async () => {
    const v = await verify(result.dir);
    expect(v.report.summary.errors).toBe(0);
    expect(v.code).toBe(0);
  });
});

describe('the real rollout (cct-sample, cut off after the first prompt)', () => {
  let result: CodexImportResult;
  let events: Ev[];
  beforeAll(async () => {
    ({ result, events } = await importFile(REAL));
  });

  // The file: 1 session_meta, 3 response_item user messages (AGENTS.md instructions, <environment_context>,
  // the prompt), 1 event_msg/user_message (the prompt again), 6 turn_context; no call, output or answer.
  it('holds 1 prompt, 1 turn left interrupted, no actions, results or answers', () => {
    expect(result.counts).toMatchObject({
      prompts: 1,
      turns: 1,
      actions: 0,
      results: 0,
      outputs: 0,
      reasoning: 0,
    });
    expect(ofType(events, 'message').map((m) => m.text)).toEqual([
      'can you analyse the MD files in this directory and determine if the info we have is clear enough to start planning the migration?',
    ]);
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['interrupted']);
    expect(result.counts.skipped).toEqual({ 'response_item/message (prompt copy)': 1 });
    expect(result.problems).toEqual([]);
  });

  it('keeps the injected context as codex notes and session_meta/turn_context lines as they are', () => {
    const notes = ofType(events, 'note');
    const context = notes.filter((n) => n.author === 'codex').map((n) => String(n.text));
    expect(context).toHaveLength(2);
    expect(context[0]).toMatch(/^context: # AGENTS\.md instructions/);
    expect(context[1]).toMatch(/^context: <environment_context>/);
    const kept = notes
      .filter((n) => n.author === 'hansard-import')
      .map((n) => JSON.parse(String(n.text)).type);
    expect(kept).toEqual(['session_meta', ...Array(6).fill('turn_context')]);
    expect(result.counts.notes).toBe(9);
  });

  it('verifies clean', async () => {
    expect((await verify(result.dir)).report.summary.errors).toBe(0);
  });
});

describe('lines the importer cannot map', () => {
  it('reports a malformed line by its number and imports the rest', async () => {
    const lines = readFileSync(SYNTHETIC, 'utf8').trimEnd().split('\n');
    lines.splice(6, 0, '{"timestamp":"2026-10-05T09:00:05.000Z","type":"response_item","payl');
    const dir = tmp();
    const file = join(dir, 'rollout.jsonl');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const { result, events } = await importFile(file);
    expect(result.problems).toEqual([{ line: 7, message: 'line is not valid JSON', kind: 'kept_as_note' }]);
    expect(result.counts).toMatchObject({ prompts: 2, turns: 2, actions: 4, results: 3, outputs: 1 });
    expect(ofType(events, 'note').some((n) => String(n.text).endsWith('"payl'))).toBe(true);
    expect((await verify(result.dir)).report.summary.errors).toBe(0);
  });

  it('keeps unknown line and payload types as notes and counts them', async () => {
    const dir = tmp();
    const file = join(dir, 'rollout.jsonl');
    const rows = [
      {
        timestamp: '2026-01-01T00:00:00Z',
        type: 'event_msg',
        payload: { type: 'user_message', message: 'hi' },
      },
      { timestamp: '2026-01-01T00:00:01Z', type: 'future_line', payload: { x: 1 } },
      {
        timestamp: '2026-01-01T00:00:02Z',
        type: 'response_item',
        payload: { type: 'future_item', q: 'x' },
      },
      { timestamp: '2026-01-01T00:00:03Z', type: 'event_msg', payload: { type: 'brand_new_event' } },
      {
        timestamp: '2026-01-01T00:00:04Z',
        type: 'response_item',
        payload: { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'hello' }] },
      },
      { timestamp: '2026-01-01T00:00:05Z', type: 'event_msg', payload: { type: 'task_complete' } },
    ];
    writeFileSync(file, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
    const { result, events } = await importFile(file);
    expect(result.counts.unknown).toBe(3);
    const kept = ofType(events, 'note').map((n) => JSON.parse(String(n.text)));
    expect(kept).toEqual([rows[1], rows[2], rows[3]]);
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['completed']);
    expect(result.problems).toEqual([]);
  });
});

const kindOf = (e: Ev) => (e.extra as Record<string, unknown>).import_kind ?? null;
let tick = Date.parse('2026-02-01T00:00:00Z');
const row = (type: string, payload: Record<string, unknown>) => {
  tick += 1000;
  return { timestamp: new Date(tick).toISOString(), type, payload };
};
async function importRows(rows: unknown[]) {
  const file = join(tmp(), 'rollout.jsonl');
  writeFileSync(file, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  return importFile(file);
}

// The real Codex CLI 0.169.0 (`codex exec "run the greeting"` against a scripted model; its README in
// test/fixtures/real-client/): 1 session_meta, task_started, a developer message (skills instructions),
// the <environment_context> user message, world_state, turn_context, thread_settings_applied, the prompt
// as a response_item and again as item_completed/UserMessage, one exec_command call, its
// item_completed/CommandExecution, its output in the third shape ("Process exited with code 0"), the
// answer as item_completed/AgentMessage then as a response_item, 2 token_usage_record + 2 token_count,
// task_complete.
describe('the real Codex 0.169.0 rollout (one command, one answer)', () => {
  let result: CodexImportResult;
  let events: Ev[];
  beforeAll(async () => {
    ({ result, events } = await importFile('test/fixtures/real-client/codex-0.169.0-rollout.jsonl'));
  });

  it('holds 1 person prompt, 1 turn, 1 action with exit code 0 and its output, 1 answer, 2 token usages', () => {
    expect(result.counts).toMatchObject({
      prompts: 1,
      turns: 1,
      actions: 1,
      results: 1,
      outputs: 1,
      reasoning: 0,
      tokenUsage: 2,
      unknown: 0,
      compactions: 0,
      interruptions: 0,
    });
    expect(ofType(events, 'message').map((m) => m.text)).toEqual(['run the greeting']);
    const [action] = ofType(events, 'agent.action');
    expect([action!.tool, action!.input, action!.call_id]).toEqual([
      'exec_command',
      { cmd: 'echo hello-from-codex' },
      'call_fake1',
    ]);
    const [res] = ofType(events, 'agent.action_result');
    expect([res!.status, res!.exit_code, res!.output, res!.action_id]).toEqual([
      'ok',
      0,
      'hello-from-codex\n',
      action!.id,
    ]);
    expect(ofType(events, 'agent.output').map((e) => e.text)).toEqual(['Done: the greeting was printed.']);
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['completed']);
    expect(result.counts.skipped).toEqual({
      'event_msg/task_started': 1,
      'response_item/message (prompt copy)': 1,
      'event_msg/item_completed (CommandExecution)': 1,
      'event_msg/token_count': 2,
      'response_item/message (answer copy)': 1,
      'event_msg/task_complete': 1,
    });
    expect(result.problems).toEqual([]);
  });

  it('keeps the environment context and developer message as codex notes, not prompts', () => {
    const codex = ofType(events, 'note').filter((n) => n.author === 'codex' && kindOf(n) === 'meta');
    expect(codex.map((n) => String(n.text).split('\n')[0])).toEqual([
      'developer message: <skills_instructions>',
      'context: <environment_context>',
    ]);
    const kept = ofType(events, 'note')
      .filter((n) => n.author === 'hansard-import')
      .map((n) => {
        const line = JSON.parse(String(n.text));
        return line.type === 'event_msg' ? `event_msg/${line.payload.type}` : line.type;
      });
    expect(kept).toEqual([
      'session_meta',
      'world_state',
      'turn_context',
      'event_msg/thread_settings_applied',
    ]);
  });

  it("records each response's token usage with its figures", () => {
    const usage = ofType(events, 'note').filter((n) => kindOf(n) === 'token_usage');
    expect(usage.map((n) => n.text)).toEqual([
      'token usage: input 50 (cached 0), output 12 (reasoning 0), total 62',
      'token usage: input 50 (cached 0), output 12 (reasoning 0), total 62',
    ]);
    expect(usage[1]!.extra).toMatchObject({
      usage_source: 'codex_total',
      model: 'gpt-fake', // the turn_context's
      response_id: 'resp_2',
      thread_token_usage: { input_tokens: 100, output_tokens: 24, total_tokens: 124 },
    });
  });

  it('verifies clean', async () => {
    const v = await verify(result.dir);
    expect(v.report.summary.errors).toBe(0);
    expect(v.code).toBe(0);
  });
});

describe('marks and turn ends', () => {
  it('marks reasoning summaries as thinking and kept lines as meta or unknown_record', async () => {
    const { events } = await importFile(SYNTHETIC);
    const notes = ofType(events, 'note');
    expect(notes.map(kindOf)).toEqual(['meta', 'meta', 'thinking', 'token_usage']);
    expect(notes[2]!.extra).toMatchObject({ codex_type: 'reasoning_summary' });
  });

  it('turn_aborted cancels the calls still waiting and ends the turn interrupted', async () => {
    const { result, events } = await importRows([
      row('event_msg', { type: 'user_message', message: 'build it' }),
      row('response_item', {
        type: 'function_call',
        name: 'shell',
        arguments: '{"command":["make"]}',
        call_id: 'c1',
      }),
      row('event_msg', { type: 'turn_aborted', reason: 'interrupted' }),
      row('event_msg', { type: 'user_message', message: 'stop, do this instead' }),
      row('response_item', {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'ok' }],
      }),
    ]);
    const results = ofType(events, 'agent.action_result');
    expect(results.map((r) => [r.status, r.action_id])).toEqual([
      ['cancelled', ofType(events, 'agent.action')[0]!.id],
    ]);
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['interrupted', 'completed']);
    expect(result.counts).toMatchObject({ prompts: 2, turns: 2, actions: 1, results: 1, interruptions: 1 });
    expect((await verify(result.dir)).report.summary.errors).toBe(0);
  });

  it('takes response_item user messages as the prompts when the rollout has no user_message event', async () => {
    const { result, events } = await importRows([
      row('response_item', { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'hi' }] }),
      row('response_item', {
        type: 'message',
        role: 'assistant',
        content: [{ type: 'output_text', text: 'hello' }],
      }),
    ]);
    expect(ofType(events, 'message').map((m) => m.text)).toEqual(['hi']);
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['completed']);
    expect(result.counts).toMatchObject({ prompts: 1, outputs: 1, notes: 0 });
  });

  it('reports an output whose call is not in the file, keeping its call id as action_id', async () => {
    const { result, events } = await importRows([
      row('event_msg', { type: 'user_message', message: 'go' }),
      row('response_item', {
        type: 'function_call_output',
        call_id: 'ghost',
        output: 'Exit code: 3\nOutput:\nx',
      }),
    ]);
    expect(result.problems).toEqual([
      {
        line: 2,
        message: 'function_call_output "ghost" answers no call before it',
        kind: 'orphan_result',
      },
    ]);
    expect(ofType(events, 'agent.action_result')[0]).toMatchObject({ action_id: 'ghost', exit_code: 3 });
  });
});

describe('toolOutput', () => {
  it('reads both output shapes and leaves other text without an exit code', () => {
    expect(toolOutput('{"output":"x","metadata":{"exit_code":2}}')).toEqual({ output: 'x', exitCode: 2 });
    expect(toolOutput('Exit code: 0\nWall time: 1 seconds\nOutput:\nok\n')).toEqual({
      output: 'ok\n',
      exitCode: 0,
    });
    expect(toolOutput('plain')).toEqual({ output: 'plain', exitCode: null });
  });

  it('reads the unified-exec shape (0.169.0) from its header only', () => {
    const head = 'Chunk ID: fc3b21\nWall time: 0.1 seconds\n';
    expect(toolOutput(`${head}Process exited with code 7\nOriginal token count: 5\nOutput:\nboom\n`)).toEqual(
      {
        output: 'boom\n',
        exitCode: 7,
      },
    );
    // A command that prints the phrase itself does not set the exit code: it is below `Output:`.
    const forged = `${head}Output:\nProcess exited with code 0\n`;
    expect(toolOutput(forged)).toEqual({ output: forged, exitCode: null });
    // Free text that merely contains the phrase is not a header.
    const prose = 'I think the Process exited with code 0\nOutput:\nx';
    expect(toolOutput(prose)).toEqual({ output: prose, exitCode: null });
  });

  it('takes the exit code of a call whose output does not state it from its CommandExecution item', async () => {
    const { events } = await importRows([
      row('event_msg', {
        type: 'item_completed',
        item: { type: 'UserMessage', content: [{ type: 'text', text: 'go' }] },
      }),
      row('response_item', { type: 'function_call', name: 'exec_command', arguments: '{}', call_id: 'c1' }),
      row('event_msg', {
        type: 'item_completed',
        item: { type: 'CommandExecution', id: 'c1', exit_code: 4 },
      }),
      row('response_item', { type: 'function_call_output', call_id: 'c1', output: 'no header here' }),
    ]);
    expect(ofType(events, 'agent.action_result').map((r) => [r.status, r.exit_code])).toEqual([['error', 4]]);
  });
});

/**
 * The Claude Code stream-json importer (issue 10, `hansard import claude-code FILE` on
 * `claude -p --output-format stream-json --verbose` output): the real capture in
 * test/fixtures/real/hcn-harnesses-claude.ndjson, and hand-made streams for a failing tool call, a
 * subagent, a stream cut off mid-turn, an error result, a malformed line and an unknown record.
 */
import { join, resolve } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type ClaudeStreamImportResult,
  importClaudeCodeStream,
  NO_PROMPT_NOTICE,
} from '../../lib/importers/claude-code-stream.js';
import { runHansard } from '../support/cli.js';
import { tmpDirs } from '../support/tmp.js';
import { type Ev, marked, ofType, readBack, readSession, verify, writeStream } from './stream-helpers.js';

const ROOT = resolve(import.meta.dirname, '../..');
const REAL = join(ROOT, 'test/fixtures/real/hcn-harnesses-claude.ndjson');
const scratch = tmpDirs('hansard-claude-stream-');

const SID = '9d1c0c9e-0000-4000-8000-000000000001';
const init = {
  type: 'system',
  subtype: 'init',
  session_id: SID,
  model: 'claude-test',
  tools: ['Bash', 'Task'],
};
const ts = (s: number) => `2026-08-21T05:55:${String(s).padStart(2, '0')}.000Z`;
const assistant = (content: unknown[], s: number, parent: string | null = null) => ({
  type: 'assistant',
  message: { role: 'assistant', content, stop_reason: null },
  parent_tool_use_id: parent,
  session_id: SID,
  timestamp: ts(s),
});
const user = (content: unknown[] | string, s: number, parent: string | null = null) => ({
  type: 'user',
  message: { role: 'user', content },
  parent_tool_use_id: parent,
  session_id: SID,
  timestamp: ts(s),
});
const success = { type: 'result', subtype: 'success', is_error: false, num_turns: 2, session_id: SID };

async function importLines(lines: (object | string)[]) {
  const path = writeStream(scratch.make(), 'stream.ndjson', lines);
  const result = await importClaudeCodeStream(path, scratch.make());
  return { result, events: await readBack(result.path) };
}

describe('the real capture (claude 2.1.238, one reply "alpha")', () => {
  // Read off the file by hand (12 lines): 1 system/init, 2 system/status, 3 rate_limit_event, 4-7 and
  // 9-11 seven stream_event deltas (message_start, content_block_start, 2 text_delta, content_block_stop,
  // message_delta, message_stop), 8 the one `assistant` record (a text block "alpha"), 12 result/success.
  // So: no `user` record (0 person prompts: `-p` does not print it), 1 turn, 0 tool_use (0 actions, 0
  // results), 1 output, no parent_tool_use_id set (0 subagent writers), no compact_boundary (0
  // compactions); notes: init and rate_limit_event (meta), the message's usage and result (token_usage).
  let result: ClaudeStreamImportResult;
  let events: Ev[];
  beforeAll(async () => {
    result = await importClaudeCodeStream(REAL, scratch.make());
    events = await readBack(result.path);
  });

  it('holds 0 prompts, 1 turn, 0 actions, 0 results, 1 output, 0 subagent writers, 0 compactions', async () => {
    expect(result.counts).toMatchObject({
      prompts: 0,
      turns: 1,
      actions: 0,
      results: 0,
      outputs: 1,
      notes: 4,
      compactions: 0,
      subagentWriters: 0,
      tokenUsage: 2,
      unknown: 0,
    });
    expect(ofType(events, 'message')).toHaveLength(0);
    expect(ofType(events, 'agent.output').map((e) => e.text)).toEqual(['alpha']);
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['completed']);
    expect((await readSession(result.dir)).length).toBe(1);
    expect(result.problems).toEqual([]);
  });

  it('keeps init and the rate-limit record as meta notes, the result as token usage, the deltas counted', () => {
    const meta = marked(events, 'meta');
    expect(meta.map((n) => JSON.parse(n.text as string).type)).toEqual(['system', 'rate_limit_event']);
    expect(JSON.parse(meta[0]!.text as string).claude_code_version).toBe('2.1.238');
    const usage = marked(events, 'token_usage');
    expect(usage.map((n) => n.text)).toEqual([
      // the message's usage as its message_delta left it (claude-code-usage.test.ts says the rest)
      'usage claude-opus-5: input 2 (cache read 16016, cache write 6142), output 5',
      'result success: 1 turns, 2913 ms (API 3290 ms), cost $0.070505; tokens: input 2 (cache read 16016, cache write 6142), output 5',
    ]);
    expect(usage[1]!.extra).toMatchObject({ total_cost_usd: 0.070505, num_turns: 1, is_error: false });
    expect(usage[1]!.extra).not.toHaveProperty('result'); // the answer text is the output already
    expect(result.counts.skipped).toEqual({
      'system/status': 1,
      'stream_event/message_start': 1,
      'stream_event/content_block_start': 1,
      'stream_event/content_block_delta': 2,
      'stream_event/content_block_stop': 1,
      'stream_event/message_delta': 1,
      'stream_event/message_stop': 1,
    });
    expect(result.result).toEqual({ subtype: 'success', isError: false });
  });

  it("says the prompt is absent instead of inventing one; stamps the stream's own time", () => {
    expect(result.promptRecorded).toBe(false);
    expect(result.notices).toEqual([NO_PROMPT_NOTICE]);
    expect(ofType(events, 'turn.start')[0]!.context_message_ids).toBeNull();
    expect(events[0]!.ts).toBe('2026-08-21T05:55:35.382000Z');
    expect(events[0]!.meta).toMatchObject({ claude_session_id: '183164b0-885f-4d09-945f-4b0c51f82c81' });
  });

  it('verifies clean', async () => {
    const v = await verify(result.dir);
    expect(v.summary).toMatchObject({ errors: 0, warnings: 0 });
    expect(v.code).toBe(0);
  });
});

describe('hand-made streams', () => {
  it('a failing tool call: is_error → an error result paired by call id', async () => {
    const { result, events } = await importLines([
      init,
      assistant([{ type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'false' } }], 1),
      user([{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Exit code 1', is_error: true }], 2),
      assistant([{ type: 'text', text: 'it failed' }], 3),
      success,
    ]);
    const [action] = ofType(events, 'agent.action');
    expect(action).toMatchObject({ tool: 'Bash', call_id: 'toolu_1' });
    expect(ofType(events, 'agent.action_result')).toEqual([
      expect.objectContaining({ action_id: action!.id, status: 'error', error: 'Exit code 1' }),
    ]);
    expect(result.counts).toMatchObject({ prompts: 0, turns: 1, actions: 1, results: 1, outputs: 1 });
    expect((await verify(result.dir)).summary).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('subagents go to their own writers, each linked to the call its parent_tool_use_id names', async () => {
    const task = (id: string) => ({ type: 'tool_use', id, name: 'Task', input: { prompt: `do ${id}` } });
    const { result, events } = await importLines([
      init,
      assistant([task('toolu_A'), task('toolu_B')], 1),
      user('do toolu_A', 2, 'toolu_A'),
      assistant([{ type: 'text', text: 'A done' }], 3, 'toolu_A'),
      user('do toolu_B', 4, 'toolu_B'),
      assistant([{ type: 'text', text: 'B done' }], 5, 'toolu_B'),
      user(
        [
          { type: 'tool_result', tool_use_id: 'toolu_A', content: 'A done' },
          { type: 'tool_result', tool_use_id: 'toolu_B', content: 'B done' },
        ],
        6,
      ),
      success,
    ]);
    expect(result.counts).toMatchObject({ prompts: 0, subagentWriters: 2, actions: 2, results: 2 });
    const byAction = new Map(ofType(events, 'agent.action').map((a) => [a.call_id, a.id]));
    const segments = (await readSession(result.dir)).filter(
      (s) => s[0]!.meta && (s[0]!.meta as Ev).subagent_id,
    );
    const links = segments.map((s) => {
      const meta = s[0]!.meta as Record<string, unknown>;
      return [meta.subagent_id, meta.parent_action_id, ofType(s, 'agent.output').map((e) => e.text)];
    });
    expect(links.sort()).toEqual([
      ['toolu_A', byAction.get('toolu_A'), ['A done']],
      ['toolu_B', byAction.get('toolu_B'), ['B done']],
    ]);
    expect((await verify(result.dir)).summary).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('a subagent whose parent_tool_use_id names no call seen is unlinked and takes no waiting call (issue 25.3)', async () => {
    const task = (id: string) => ({ type: 'tool_use', id, name: 'Task', input: { prompt: `do ${id}` } });
    const { result, events } = await importLines([
      init,
      assistant([task('toolu_A')], 1),
      user('do something else', 2, 'toolu_GONE'),
      assistant([{ type: 'text', text: 'other done' }], 3, 'toolu_GONE'),
      user('do toolu_A', 4, 'toolu_A'),
      assistant([{ type: 'text', text: 'A done' }], 5, 'toolu_A'),
      user([{ type: 'tool_result', tool_use_id: 'toolu_A', content: 'A done' }], 6),
      success,
    ]);
    expect(result.counts).toMatchObject({ subagentWriters: 2 });
    const actionA = ofType(events, 'agent.action')[0]!.id;
    const subs = (await readSession(result.dir)).filter((s) => s[0]!.meta && (s[0]!.meta as Ev).subagent_id);
    const byId = new Map(subs.map((s) => [(s[0]!.meta as Ev).subagent_id, s]));
    expect((byId.get('toolu_GONE')![0]!.meta as Ev).parent_action_id).toBeNull();
    expect(
      byId.get('toolu_GONE')!.filter((e) => e.type === 'note' && (e.extra as Ev)?.unlinked_subagent === true),
    ).toHaveLength(1);
    expect((byId.get('toolu_A')![0]!.meta as Ev).parent_action_id).toBe(actionA);
  });

  it('a stream cut off mid-turn: the waiting call is cancelled and the turn interrupted', async () => {
    const { result, events } = await importLines([
      init,
      assistant([{ type: 'tool_use', id: 'toolu_9', name: 'Bash', input: { command: 'sleep 99' } }], 1),
    ]);
    expect(result.result).toBeNull();
    expect(ofType(events, 'agent.action_result')).toEqual([
      expect.objectContaining({ status: 'cancelled', error: 'the stream ended before its result record' }),
    ]);
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['interrupted']);
    expect(result.counts).toMatchObject({ turns: 1, actions: 1, results: 1, interruptions: 1 });
    expect((await verify(result.dir)).summary).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('an error result fails the turn and is kept as an error note', async () => {
    const { events } = await importLines([
      init,
      assistant([{ type: 'text', text: 'working' }], 1),
      { ...success, subtype: 'error_max_turns', is_error: true, errors: ['reached max turns'] },
    ]);
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['failed']);
    expect(marked(events, 'error').map((n) => n.text)).toEqual([
      'run ended with error_max_turns: reached max turns',
    ]);
  });

  it('a replayed user message is the prompt; a compact_boundary is a compaction, not a prompt', async () => {
    const boundary = {
      type: 'system',
      subtype: 'compact_boundary',
      session_id: SID,
      compact_metadata: { trigger: 'auto', pre_tokens: 150000 },
    };
    const { result, events } = await importLines([
      init,
      user('fix the build', 1),
      assistant([{ type: 'text', text: 'fixed' }], 2),
      success,
      boundary,
      user('now test it', 3),
      assistant([{ type: 'text', text: 'tested' }], 4),
      success,
    ]);
    expect(ofType(events, 'message').map((m) => m.text)).toEqual(['fix the build', 'now test it']);
    expect(result).toMatchObject({ promptRecorded: true, notices: [] });
    const [c] = marked(events, 'compaction');
    expect(c!.extra).toMatchObject({ compactMetadata: { trigger: 'auto', pre_tokens: 150000 } });
    expect(result.counts).toMatchObject({ prompts: 2, turns: 2, compactions: 1, outputs: 2 });
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['completed', 'completed']);
    expect((await verify(result.dir)).summary).toMatchObject({ errors: 0, warnings: 0 });
  });

  it('a malformed line is reported with its line number and the rest is imported', async () => {
    const { result, events } = await importLines([
      init,
      assistant([{ type: 'text', text: 'before' }], 1),
      '{"type":"assistant","message":',
      assistant([{ type: 'text', text: 'after' }], 2),
      success,
    ]);
    expect(result.problems).toEqual([{ line: 3, message: 'line is not valid JSON', kind: 'kept_as_note' }]);
    expect(ofType(events, 'agent.output').map((e) => e.text)).toEqual(['before', 'after']);
    expect(marked(events, 'unknown_record').map((n) => n.text)).toEqual(['{"type":"assistant","message":']);
    expect((await verify(result.dir)).summary.errors).toBe(0);
  });

  it('an unknown record type is kept exactly as an unknown_record note and counted', async () => {
    const future = { type: 'future_thing', session_id: SID, detail: { n: 1 } };
    const { result, events } = await importLines([
      init,
      future,
      assistant([{ type: 'text', text: 'x' }], 1),
      success,
    ]);
    expect(marked(events, 'unknown_record').map((n) => n.text)).toEqual([JSON.stringify(future)]);
    expect(result.counts.unknown).toBe(1);
    expect(result.problems).toEqual([]);
  });
});

describe('the commands', () => {
  it('hansard import claude-code FILE tells stream-json from a transcript and imports it, saying the prompt is absent', async () => {
    const out = scratch.make();
    const r = await runHansard(['import', 'claude-code', REAL, '--out', out], { cwd: ROOT });
    expect(r.code).toBe(0);
    expect(r.err).toContain(
      'imported Claude Code stream-json: 0 prompts, 1 turn, 0 actions, 0 results, 1 output',
    );
    expect(r.err).toContain(`note: ${NO_PROMPT_NOTICE}`);
    const j = await runHansard(['import', 'claude-code', REAL, '--out', out, '--json'], { cwd: ROOT });
    expect(JSON.parse(j.out)).toMatchObject({ promptRecorded: false, counts: { outputs: 1, turns: 1 } });
    // a transcript still goes to the transcript importer
    const t = await runHansard(
      [
        'import',
        'claude-code',
        join(ROOT, 'test/fixtures/real/ccl-representative_messages.jsonl'),
        '--out',
        out,
      ],
      { cwd: ROOT },
    );
    expect([t.code, t.err.startsWith('imported 4 prompts')]).toEqual([0, true]);
  });

  it('import hcn of this file and import codex of it name hansard import claude-code', async () => {
    const out = scratch.make();
    const hcn = await runHansard(['import', 'hcn', REAL, '--out', out], { cwd: ROOT });
    expect(hcn.code).toBe(2);
    expect(hcn.err).toContain('import it with `hansard import claude-code FILE`');
    const codex = await runHansard(['import', 'codex', REAL, '--out', out], { cwd: ROOT });
    expect(codex.code).toBe(2);
    expect(codex.err).toContain('import it with `hansard import claude-code');
  });
});

/**
 * The Codex rollout importer on every kind of rollout line current Codex releases write (issue 25 item 4;
 * docs/import.md "Codex"): case 34 (a compaction mid-turn) through `hansard import codex FILE`, then
 * compactions in their other shapes, reasoning content, web searches, patch application, command and MCP
 * outcomes, images, tool search, turn context and the bookkeeping kinds. Payloads follow openai/codex
 * `codex-rs/protocol` (`ResponseItem`, `EventMsg`) and `codex-rs/history` (`RolloutItemWire`).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type CodexImportResult, importCodexRollout } from '../../lib/importers/codex.js';
import { decodeEvent, type LogEvent, readSegmentFile } from '../../lib/log/index.js';
import { runHansard } from '../support/cli.js';
import { tmpDirs } from '../support/tmp.js';

const scratch = tmpDirs('hansard-codex-kinds-');

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
const extraOf = (e: Ev) => (e.extra ?? {}) as Record<string, unknown>;
const marked = (events: Ev[], kind: string) =>
  events.filter((e) => e.type === 'note' && extraOf(e).import_kind === kind);

let tick = Date.parse('2026-11-02T09:00:00Z');
const line = (type: string, payload: Record<string, unknown>) => {
  tick += 1000;
  return { timestamp: new Date(tick).toISOString(), type, payload };
};
const item = (payload: Record<string, unknown>) => line('response_item', payload);
const event = (payload: Record<string, unknown>) => line('event_msg', payload);
const userText = (text: string) => ({
  type: 'message',
  role: 'user',
  content: [{ type: 'input_text', text }],
});
/** A person's prompt as Codex writes it: the response_item, then its user_message copy. */
const prompt = (text: string) => [
  item(userText(text)),
  event({ type: 'user_message', message: text, images: [] }),
];
const answer = (text: string) => [
  item({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text }] }),
  event({ type: 'agent_message', message: text }),
];
const done = (text: string) => event({ type: 'task_complete', last_agent_message: text });

async function importRows(rows: unknown[]): Promise<{ result: CodexImportResult; events: Ev[] }> {
  const file = join(scratch.make(), 'rollout.jsonl');
  writeFileSync(file, `${rows.map((r) => JSON.stringify(r)).join('\n')}\n`);
  const result = await importCodexRollout(file, scratch.make());
  return { result, events: await readBack(result.path) };
}

describe('34: a Codex compaction mid-turn, through hansard import codex', () => {
  it('is one compaction note, the second turn stays one turn, and the repeated prompts are not new ones', async () => {
    const root = scratch.make();
    const r = await runHansard(
      [
        'import',
        'codex',
        join(process.cwd(), 'test/fixtures/cases/34-codex-compacted-item.jsonl'),
        '--out',
        'out',
        '--json',
      ],
      { cwd: root, env: {} },
    );
    expect(r.code).toBe(0);
    const result = JSON.parse(r.out) as CodexImportResult;
    expect(result.counts).toMatchObject({
      prompts: 2,
      turns: 2,
      actions: 2,
      results: 2,
      outputs: 2,
      compactions: 1,
      unknown: 0,
    });
    const events = await readBack(result.path);
    expect(ofType(events, 'message').map((m) => m.text)).toEqual([
      'count the SKUs in data/stock.csv',
      'now list the SKUs with zero stock',
    ]);
    const [note] = marked(events, 'compaction');
    expect(note!.author).toBe('codex');
    expect(String(note!.text)).toMatch(/^Another language model started to solve this problem/);
    expect(extraOf(note!)).toMatchObject({
      codex_type: 'compacted',
      replacement_history_items: 3,
      repeated_prompts: 2,
    });
    // The second turn: one turn.start before the compaction, and the call and answer after it are in it.
    const turns = ofType(events, 'turn.start').map((t) => t.turn_id);
    expect(turns).toHaveLength(2);
    const afterCompaction = events.slice(events.indexOf(note!));
    expect(ofType(afterCompaction, 'turn.start')).toEqual([]);
    expect(ofType(afterCompaction, 'agent.action').map((a) => [a.turn_id, a.call_id])).toEqual([
      [turns[1], 'call_34_awk'],
    ]);
    expect(ofType(afterCompaction, 'agent.output').map((a) => a.turn_id)).toEqual([turns[1]]);
    expect(ofType(events, 'turn.end').map((t) => [t.turn_id, t.status])).toEqual([
      [turns[0], 'completed'],
      [turns[1], 'completed'],
    ]);
    expect(result.counts.skipped['context_compacted (same compaction)']).toBe(1);
    // The fresh turn_context after the compaction is a meta note, as every turn_context is.
    expect(marked(events, 'meta').filter((n) => String(n.text).includes('"turn_context"'))).toHaveLength(2);
    const v = await runHansard(['verify', result.dir], { cwd: root, env: {} });
    expect(v.code).toBe(0);
  });
});

describe('compactions in their other shapes', () => {
  it('takes a non-empty message as the summary and a lone context_compacted as a compaction', async () => {
    const { result, events } = await importRows([
      ...prompt('refactor the parser'),
      line('compacted', { message: 'The user asked to refactor the parser; lexer.rs is done.' }),
      event({ type: 'context_compacted' }),
      ...answer('Refactored.'),
      done('Refactored.'),
      ...prompt('and the tests'),
      event({ type: 'context_compacted' }),
      ...answer('Tests pass.'),
      done('Tests pass.'),
    ]);
    expect(result.counts).toMatchObject({ prompts: 2, turns: 2, compactions: 2, unknown: 0 });
    expect(marked(events, 'compaction').map((n) => n.text)).toEqual([
      'The user asked to refactor the parser; lexer.rs is done.',
      'context compacted',
    ]);
  });

  it('counts two compactions one after another as two', async () => {
    const { result } = await importRows([
      ...prompt('go'),
      line('compacted', { message: 'first summary' }),
      event({ type: 'context_compacted' }),
      line('compacted', { message: 'second summary' }),
      event({ type: 'context_compacted' }),
      ...answer('ok'),
      done('ok'),
    ]);
    expect(result.counts.compactions).toBe(2);
    expect(result.counts.skipped['context_compacted (same compaction)']).toBe(2);
  });

  it('records a server-side compaction (encrypted compaction item, empty message) once', async () => {
    const enc = 'gAAAAABp-encrypted-summary';
    const { result, events } = await importRows([
      ...prompt('fix the flaky test'),
      item({ type: 'compaction', encrypted_content: enc }),
      line('compacted', {
        message: '',
        replacement_history: [userText('fix the flaky test'), { type: 'compaction', encrypted_content: enc }],
      }),
      event({ type: 'context_compacted' }),
      ...answer('Fixed.'),
      done('Fixed.'),
    ]);
    expect(result.counts).toMatchObject({ prompts: 1, turns: 1, compactions: 1, unknown: 0 });
    expect(String(marked(events, 'compaction')[0]!.text)).toBe(
      `context compacted (the summary is encrypted, ${enc.length} chars)`,
    );
  });

  it('never takes a repeated prompt for a new one in a rollout without user_message events', async () => {
    const { result, events } = await importRows([
      item(userText('count the lines')),
      ...answer('42'),
      item(userText('now the words')),
      line('compacted', {
        message: '',
        replacement_history: [
          userText('count the lines'),
          userText('now the words'),
          userText('summary: 42 lines'),
        ],
      }),
      ...answer('300'),
    ]);
    expect(ofType(events, 'message').map((m) => m.text)).toEqual(['count the lines', 'now the words']);
    expect(result.counts).toMatchObject({ turns: 2, compactions: 1 });
    expect(marked(events, 'compaction')[0]!.text).toBe('summary: 42 lines');
  });
});

describe('reasoning', () => {
  it('keeps raw reasoning content (no summary) as a thinking note and drops its event copy', async () => {
    const { result, events } = await importRows([
      ...prompt('why is it slow'),
      item({
        type: 'reasoning',
        summary: [],
        content: [{ type: 'reasoning_text', text: 'The loop re-reads the file each pass.' }],
        encrypted_content: null,
      }),
      event({ type: 'agent_reasoning_raw_content', text: 'The loop re-reads the file each pass.' }),
      ...answer('It re-reads the file.'),
      done('It re-reads the file.'),
    ]);
    expect(marked(events, 'thinking').map((n) => [n.text, extraOf(n).codex_type])).toEqual([
      ['reasoning: The loop re-reads the file each pass.', 'reasoning_content'],
    ]);
    expect(result.counts).toMatchObject({ reasoning: 1, unknown: 0 });
  });
});

describe('web search', () => {
  it('is an action and its result; the web_search_end copy is not written again', async () => {
    const action = { type: 'search', query: 'node 20 fetch timeout' };
    const { result, events } = await importRows([
      ...prompt('look it up'),
      item({ type: 'web_search_call', status: 'completed', action }),
      event({ type: 'web_search_end', call_id: 'ws_1', query: 'node 20 fetch timeout', action }),
      item({
        type: 'web_search_call',
        status: 'failed',
        action: { type: 'open_page', url: 'https://nodejs.org/api' },
      }),
      ...answer('Use AbortSignal.timeout.'),
      done('Use AbortSignal.timeout.'),
    ]);
    expect(result.counts).toMatchObject({ actions: 2, results: 2, unknown: 0 });
    const actions = ofType(events, 'agent.action');
    expect(actions.map((a) => [a.tool, a.input])).toEqual([
      ['web_search', action],
      ['web_search', { type: 'open_page', url: 'https://nodejs.org/api' }],
    ]);
    const results = ofType(events, 'agent.action_result');
    expect(results.map((r) => [r.action_id, r.status])).toEqual([
      [actions[0]!.id, 'ok'],
      [actions[1]!.id, 'error'],
    ]);
    expect(result.counts.skipped['event_msg/web_search_end (copy)']).toBe(1);
  });
});

describe('patch application, commands and MCP calls', () => {
  it('marks a patch that did not apply as an error, from patch_apply_end, and one that did as ok', async () => {
    const patch = '*** Begin Patch\n*** Update File: app.py\n@@\n-x = 1\n+x = 2\n*** End Patch\n';
    const { result, events } = await importRows([
      ...prompt('bump x'),
      item({
        type: 'custom_tool_call',
        status: 'completed',
        call_id: 'call_p1',
        name: 'apply_patch',
        input: patch,
      }),
      event({
        type: 'patch_apply_end',
        call_id: 'call_p1',
        turn_id: '1',
        stdout: '',
        stderr: 'Failed to find expected lines in app.py',
        success: false,
        changes: {},
      }),
      item({
        type: 'custom_tool_call_output',
        call_id: 'call_p1',
        output: 'apply_patch verification failed: Failed to find expected lines in app.py',
      }),
      item({
        type: 'custom_tool_call',
        status: 'completed',
        call_id: 'call_p2',
        name: 'apply_patch',
        input: patch,
      }),
      event({
        type: 'patch_apply_end',
        call_id: 'call_p2',
        turn_id: '1',
        stdout: 'Success. Updated the following files:\nM app.py\n',
        stderr: '',
        success: true,
        changes: {
          '/home/user/app.py': { update: { unified_diff: '@@\n-x = 1\n+x = 2\n', move_path: null } },
        },
      }),
      item({
        type: 'custom_tool_call_output',
        call_id: 'call_p2',
        output:
          '{"output":"Success. Updated the following files:\\nM app.py\\n","metadata":{"exit_code":0,"duration_seconds":0.0}}',
      }),
      ...answer('Bumped.'),
      done('Bumped.'),
    ]);
    expect(ofType(events, 'agent.action').map((a) => [a.tool, a.input])).toEqual([
      ['apply_patch', patch],
      ['apply_patch', patch],
    ]);
    expect(ofType(events, 'agent.action_result').map((r) => [r.status, r.error, r.exit_code])).toEqual([
      ['error', 'patch not applied', null],
      ['ok', null, 0],
    ]);
    expect(result.counts.skipped['event_msg/patch_apply_end']).toBe(2);
  });

  it('takes a command exit code from exec_command_end and an MCP error from mcp_tool_call_end', async () => {
    const { events } = await importRows([
      ...prompt('run it'),
      item({
        type: 'function_call',
        name: 'shell',
        arguments: '{"command":["bash","-lc","false"]}',
        call_id: 'call_x',
      }),
      event({
        type: 'exec_command_end',
        call_id: 'call_x',
        turn_id: '1',
        command: ['bash', '-lc', 'false'],
        cwd: '/home/user',
        parsed_cmd: [],
        source: 'agent',
        stdout: '',
        stderr: '',
        aggregated_output: '',
        exit_code: 1,
        duration: { secs: 0, nanos: 2000000 },
        formatted_output: '',
      }),
      item({ type: 'function_call_output', call_id: 'call_x', output: '' }),
      item({
        type: 'function_call',
        name: 'search',
        namespace: 'docs',
        arguments: '{"q":"retry"}',
        call_id: 'call_m',
      }),
      event({
        type: 'mcp_tool_call_end',
        call_id: 'call_m',
        invocation: { server: 'docs', tool: 'search', arguments: { q: 'retry' } },
        duration: { secs: 1, nanos: 0 },
        result: { Err: 'tool call failed: timeout' },
      }),
      item({ type: 'function_call_output', call_id: 'call_m', output: 'tool call failed: timeout' }),
      ...answer('Both failed.'),
      done('Both failed.'),
    ]);
    expect(ofType(events, 'agent.action').map((a) => a.tool)).toEqual(['shell', 'docs.search']);
    expect(ofType(events, 'agent.action_result').map((r) => [r.status, r.error, r.exit_code])).toEqual([
      ['error', 'exit code 1', 1],
      ['error', 'MCP tool error: tool call failed: timeout', null],
    ]);
  });
});

describe('images and tool search', () => {
  it('records an image generation as an action and result without copying the image, its end event as a copy', async () => {
    const png =
      'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';
    const { result, events } = await importRows([
      ...prompt('draw a red bicycle'),
      item({
        type: 'image_generation_call',
        id: 'ig_1',
        status: 'completed',
        revised_prompt: 'a red bicycle',
        result: png,
      }),
      event({
        type: 'image_generation_end',
        call_id: 'ig_1',
        status: 'completed',
        revised_prompt: 'a red bicycle',
        result: png,
        saved_path: '/home/user/.codex/images/ig_1.png',
      }),
      ...answer('Here it is.'),
      done('Here it is.'),
    ]);
    expect(ofType(events, 'agent.action').map((a) => [a.tool, a.input, a.call_id])).toEqual([
      ['image_generation', { revised_prompt: 'a red bicycle' }, 'ig_1'],
    ]);
    expect(ofType(events, 'agent.action_result').map((r) => r.output)).toEqual([
      { image_base64_chars: png.length },
    ]);
    expect(JSON.stringify(events)).not.toContain(png);
    expect(result.counts.skipped['event_msg/image_generation_end (copy)']).toBe(1);
  });

  it('pairs a tool_search_call with its tool_search_output', async () => {
    const { result, events } = await importRows([
      ...prompt('add a meeting'),
      item({
        type: 'tool_search_call',
        call_id: 'ts_1',
        status: 'completed',
        execution: 'client',
        arguments: { query: 'calendar' },
      }),
      item({
        type: 'tool_search_output',
        call_id: 'ts_1',
        status: 'completed',
        execution: 'client',
        tools: [{ name: 'calendar.create_event' }],
      }),
      ...answer('Found the calendar tool.'),
      done('Found the calendar tool.'),
    ]);
    const [a] = ofType(events, 'agent.action');
    expect([a!.tool, a!.input]).toEqual([
      'tool_search',
      { execution: 'client', arguments: { query: 'calendar' } },
    ]);
    expect(ofType(events, 'agent.action_result').map((r) => [r.action_id, r.status, r.output])).toEqual([
      [a!.id, 'ok', [{ name: 'calendar.create_event' }]],
    ]);
    expect(result.problems).toEqual([]);
  });
});

describe('every other kind current Codex persists', () => {
  // One real-shaped line of each kind docs/import.md lists as kept (meta) or dropped (skipped).
  const kept = [
    line('world_state', { cwd: '/home/user', git: { branch: 'main' } }),
    line('inter_agent_communication_metadata', { trigger_turn: true }),
    line('retained_context', { type: 'delivered_assistant_message', acceptance_order: 3 }),
    line('realtime_item', { type: 'transcript', text: 'hello' }),
    item({
      type: 'agent_message',
      author: '/root/worker',
      recipient: '/root',
      content: [{ type: 'input_text', text: 'tests pass' }],
    }),
    item({ type: 'additional_tools', role: 'system', tools: [{ name: 'extra' }] }),
    item({ type: 'configuration_update', reasoning: { effort: 'high' } }),
    event({ type: 'thread_settings_applied', model: 'gpt-5.2-codex', model_provider: 'openai' }),
    event({ type: 'thread_goal_updated', goal: 'ship the fix' }),
    event({ type: 'thread_context_usage_updated', used_tokens: 1200, context_window: 272000 }),
    event({ type: 'thread_skills_updated', skills: [] }),
    event({
      type: 'guardian_assessment',
      id: 'g1',
      status: 'approved',
      risk_level: 'low',
      rationale: 'read-only',
    }),
    event({ type: 'model_reroute', from_model: 'gpt-5.2-codex', to_model: 'gpt-5.1-codex' }),
    event({ type: 'sub_agent_activity', kind: 'started', agent_path: '/root/worker' }),
    event({ type: 'collab_agent_spawn_end', call_id: 'c1', agent_path: '/root/worker', status: 'ok' }),
    event({ type: 'collab_agent_interaction_end', call_id: 'c2', status: 'ok' }),
    event({ type: 'collab_waiting_end', call_id: 'c3', status: 'ok' }),
    event({ type: 'collab_close_end', call_id: 'c4', status: 'ok' }),
    event({ type: 'collab_resume_end', call_id: 'c5', status: 'ok' }),
  ];
  const dropped = [
    event({
      type: 'exec_command_begin',
      call_id: 'call_a',
      turn_id: '1',
      command: ['ls'],
      cwd: '/home/user',
      parsed_cmd: [],
    }),
    event({ type: 'patch_apply_begin', call_id: 'call_b', turn_id: '1', auto_approved: true, changes: {} }),
    event({
      type: 'mcp_tool_call_begin',
      call_id: 'call_c',
      invocation: { server: 'docs', tool: 'search', arguments: {} },
    }),
    event({ type: 'web_search_begin', call_id: 'ws_2' }),
    event({ type: 'image_generation_begin', call_id: 'ig_2' }),
    event({ type: 'view_image_tool_call', call_id: 'call_d', path: '/home/user/shot.png' }),
    event({
      type: 'dynamic_tool_call_request',
      call_id: 'call_e',
      turn_id: '1',
      tool: 'lookup',
      arguments: {},
    }),
    event({
      type: 'dynamic_tool_call_response',
      call_id: 'call_e',
      turn_id: '1',
      tool: 'lookup',
      success: true,
    }),
  ];

  it('keeps each bookkeeping kind exactly as a meta note and drops each telemetry kind, counted', async () => {
    const { result, events } = await importRows([
      ...prompt('go'),
      ...kept,
      ...dropped,
      ...answer('done'),
      done('done'),
    ]);
    expect(result.counts.unknown).toBe(0);
    const meta = marked(events, 'meta').map((n) => n.text);
    for (const r of kept) expect(meta).toContain(JSON.stringify(r));
    for (const r of dropped) expect(result.counts.skipped[`event_msg/${String(r.payload.type)}`]).toBe(1);
    expect(result.counts).toMatchObject({ prompts: 1, turns: 1, actions: 0, outputs: 1 });
  });
});

describe('turns, context and bookkeeping', () => {
  it('ends a turn on turn_complete (the v2 name of task_complete) and skips turn_started', async () => {
    const { result, events } = await importRows([
      event({ type: 'turn_started', turn_id: 't1', model_context_window: 272000 }),
      ...prompt('hello'),
      ...answer('hi'),
      event({ type: 'turn_complete', turn_id: 't1', last_agent_message: 'hi' }),
      item(userText('<environment_context>\n  <cwd>/home/user</cwd>\n</environment_context>')),
    ]);
    expect(result.counts).toMatchObject({ unknown: 0, turns: 1 });
    expect(result.counts.skipped).toMatchObject({
      'event_msg/turn_complete': 1,
      'event_msg/turn_started': 1,
    });
    expect(ofType(events, 'turn.end').map((t) => t.status)).toEqual(['completed']);
  });

  it('keeps injected instructions sent as user_message events with a kind (Codex before 0.40) as context, not prompts', async () => {
    const { events } = await importRows([
      event({
        type: 'user_message',
        message: '<user_instructions>\nUse pnpm.\n</user_instructions>',
        kind: 'user_instructions',
      }),
      event({
        type: 'user_message',
        message: '<environment_context>\n<cwd>/home/user</cwd>\n</environment_context>',
        kind: 'environment_context',
      }),
      event({ type: 'user_message', message: 'install deps', kind: 'plain' }),
      ...answer('Installed.'),
    ]);
    expect(ofType(events, 'message').map((m) => m.text)).toEqual(['install deps']);
    expect(marked(events, 'meta').map((n) => String(n.text).split('\n')[0])).toEqual([
      'context: <user_instructions>',
      'context: <environment_context>',
    ]);
  });

  it('keeps bookkeeping lines, items and events as meta notes, errors and warnings as such, a plan as a plan', async () => {
    const rows = [
      ...prompt('undo that'),
      line('turn_context', {
        cwd: '/home/user',
        approval_policy: 'on-request',
        sandbox_policy: { type: 'workspace-write' },
        model: 'gpt-5.2-codex',
        summary: 'auto',
      }),
      line('inter_agent_communication', {
        author: '/root',
        recipient: '/root/worker',
        content: 'check the tests',
      }),
      line('security_risk_score', { score: 2 }),
      item({
        type: 'ghost_snapshot',
        ghost_commit: {
          id: '6f1c0d2e',
          parent: 'a1b2c3d4',
          preexisting_untracked_files: [],
          preexisting_untracked_dirs: [],
        },
      }),
      event({ type: 'thread_rolled_back', num_turns: 1 }),
      event({ type: 'undo_completed', success: true, message: null }),
      event({
        type: 'thread_name_updated',
        thread_id: '01990000-0000-7000-8000-000000000001',
        thread_name: 'undo work',
      }),
      event({
        type: 'entered_review_mode',
        target: { type: 'uncommittedChanges' },
        user_facing_hint: 'current changes',
      }),
      event({ type: 'exited_review_mode', review_output: null }),
      event({ type: 'error', message: 'stream disconnected before completion' }),
      event({ type: 'warning', message: 'model rerouted' }),
      event({
        type: 'item_completed',
        thread_id: 't',
        turn_id: '1',
        item: { type: 'Plan', id: 'p1', text: '1. revert\n2. test' },
      }),
      ...answer('Undone.'),
      done('Undone.'),
    ];
    const { result, events } = await importRows(rows);
    expect(result.counts.unknown).toBe(0);
    const meta = marked(events, 'meta').map((n) => n.text);
    for (const r of [rows[2], rows[3], rows[4], rows[5], rows[6], rows[7], rows[8], rows[9], rows[10]])
      expect(meta).toContain(JSON.stringify(r));
    expect(meta).toContain('plan: 1. revert\n2. test');
    expect(marked(events, 'error').map((n) => n.text)).toEqual(['stream disconnected before completion']);
    expect(marked(events, 'warning').map((n) => n.text)).toEqual(['model rerouted']);
    expect(ofType(events, 'turn.start')).toHaveLength(1);
  });
});

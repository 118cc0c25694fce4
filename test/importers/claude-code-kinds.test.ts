/**
 * The Claude Code importer on each kind of record that looks like a person but is not (or is, though
 * it does not look like it): interrupt and rejection markers, meta and command records, a prompt of
 * only an image, a queued message, a rewind, two subagents (issue 10 item 1; docs/import.md).
 */
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { type ImportResult, importClaudeCodeTranscript } from '../../lib/importers/index.js';
import { verifySession } from '../../lib/log/analyse/verify.js';
import { decodeEvent, type LogEvent, readSegmentFile, sessionDirSources } from '../../lib/log/index.js';
import { tmpDirs } from '../support/tmp.js';

const scratch = tmpDirs('hansard-cc-kinds-');

type Ev = LogEvent & Record<string, unknown>;

async function readAll(path: string): Promise<Ev[]> {
  const events: Ev[] = [];
  for await (const item of readSegmentFile(path)) {
    if (item.kind === 'problem') throw new Error(`segment problem: ${item.problem.message}`);
    events.push(decodeEvent(item.event) as Ev);
  }
  return events;
}

/** Imports records (written as JSON lines); returns the main writer's events and the session's codes. */
async function importRecords(records: Record<string, unknown>[]): Promise<{
  result: ImportResult;
  events: Ev[];
  segments: number;
  codes: string[];
}> {
  const dir = scratch.make();
  const file = join(dir, 't.jsonl');
  writeFileSync(file, `${records.map((r) => JSON.stringify(r)).join('\n')}\n`);
  const result = await importClaudeCodeTranscript(file, join(dir, 'out'));
  const report = await verifySession(sessionDirSources(result.dir));
  return {
    result,
    events: await readAll(result.path),
    segments: readdirSync(result.dir).filter((n) => n.endsWith('.jsonl')).length,
    codes: report.problems.map((p) => p.code),
  };
}

let clock = Date.parse('2026-03-01T10:00:00Z');
let n = 0;
/** A record with a fresh uuid chained to `parent` (default: none). */
const rec = (type: string, more: Record<string, unknown>, parent: string | null = null) => {
  clock += 1000;
  n += 1;
  return { type, uuid: `r${n}`, parentUuid: parent, timestamp: new Date(clock).toISOString(), ...more };
};
const user = (content: unknown, more: Record<string, unknown> = {}) =>
  rec('user', { message: { role: 'user', content }, ...more });
const assistant = (
  content: unknown[],
  stop: string | null = 'end_turn',
  more: Record<string, unknown> = {},
) => rec('assistant', { message: { role: 'assistant', content, stop_reason: stop }, ...more });
const toolUse = (id: string, name = 'Bash') => ({ type: 'tool_use', id, name, input: { command: 'ls' } });
const toolResult = (id: string, content: unknown, is_error = false) => ({
  type: 'tool_result',
  tool_use_id: id,
  content,
  is_error,
});

const ofType = (events: Ev[], type: string) => events.filter((e) => e.type === type);
const kinds = (events: Ev[]) =>
  ofType(events, 'note').map((e) => (e.extra as Record<string, unknown>).import_kind ?? null);

describe('markers that end an action or a turn', () => {
  it('an interrupt marker cancels the waiting action, interrupts the turn, and is no prompt', async () => {
    const { result, events, codes } = await importRecords([
      user('run the tests'),
      assistant([toolUse('toolu_1')], 'tool_use'),
      user([{ type: 'text', text: '[Request interrupted by user for tool use]' }]),
      user('try again'),
    ]);
    expect(ofType(events, 'message').map((m) => m.text)).toEqual(['run the tests', 'try again']);
    expect(ofType(events, 'agent.action_result')).toMatchObject([{ status: 'cancelled' }]);
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['interrupted', 'completed']);
    expect(kinds(events)).toEqual(['interrupt']);
    expect(result.counts).toMatchObject({ prompts: 2, turns: 2, results: 1, interruptions: 1 });
    expect(codes).toEqual([]);
  });

  it('a rejected tool call is a cancelled result and an interrupted turn', async () => {
    const rejection =
      "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.";
    const { events, codes } = await importRecords([
      user('delete the build dir'),
      assistant([toolUse('toolu_1')], 'tool_use'),
      user([toolResult('toolu_1', rejection, true)]),
      user('no, keep it'),
    ]);
    expect(ofType(events, 'agent.action_result')).toMatchObject([{ status: 'cancelled', error: rejection }]);
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['interrupted', 'completed']);
    expect(ofType(events, 'message')).toHaveLength(2);
    expect(codes).toEqual([]);
  });
});

describe('records that are not the person speaking', () => {
  it('meta and command records are marked notes, not prompts, and open no turn', async () => {
    const { events, result } = await importRecords([
      user('Caveat: The messages below were generated by the user while running local commands.', {
        isMeta: true,
      }),
      user('<command-name>/clear</command-name>\n<command-message>clear</command-message>'),
      user('<local-command-stdout></local-command-stdout>'),
      user('hello'),
      assistant([{ type: 'text', text: 'hi' }]),
    ]);
    expect(kinds(events)).toEqual(['meta', 'command', 'command']);
    expect(ofType(events, 'message').map((m) => m.text)).toEqual(['hello']);
    expect(result.counts).toMatchObject({ prompts: 1, turns: 1 });
  });
});

describe('what the person typed that does not look like text', () => {
  it('a prompt of only an image is the person prompt, naming the block without its bytes', async () => {
    const { events } = await importRecords([
      user([{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgoAAAA' } }]),
      assistant([{ type: 'text', text: 'a cat' }]),
    ]);
    expect(ofType(events, 'message').map((m) => m.text)).toEqual(['[image: image/png]']);
    expect(ofType(events, 'turn.start')).toHaveLength(1);
    expect(JSON.stringify(events)).not.toContain('iVBORw0KGgo');
  });

  it('a message queued while the agent worked is a message, and the turn goes on', async () => {
    const { events, codes } = await importRecords([
      user('refactor it'),
      assistant([toolUse('toolu_1')], 'tool_use'),
      rec('attachment', { attachment: { type: 'queued_command', prompt: 'also rename foo' } }),
      user([toolResult('toolu_1', 'ok')]),
      assistant([{ type: 'text', text: 'done, and renamed' }]),
    ]);
    expect(ofType(events, 'message').map((m) => m.text)).toEqual(['refactor it', 'also rename foo']);
    expect(ofType(events, 'turn.start')).toHaveLength(1);
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['completed']);
    expect(codes).toEqual([]);
  });
});

describe('a rewind', () => {
  it('keeps the abandoned branch and marks where the person went back', async () => {
    const u1 = user('write a haiku');
    const a1 = assistant([{ type: 'text', text: 'old pond' }], 'end_turn', { parentUuid: u1.uuid });
    const u2 = user('make it about frogs', { parentUuid: a1.uuid });
    const a2 = assistant([{ type: 'text', text: 'frog jumps' }], 'end_turn', { parentUuid: u2.uuid });
    const u3 = user('make it about the moon', { parentUuid: a1.uuid });
    const a3 = assistant([{ type: 'text', text: 'autumn moon' }], 'end_turn', { parentUuid: u3.uuid });
    const { events, result } = await importRecords([u1, a1, u2, a2, u3, a3]);
    expect(ofType(events, 'message')).toHaveLength(3);
    expect(ofType(events, 'agent.output').map((e) => e.text)).toEqual([
      'old pond',
      'frog jumps',
      'autumn moon',
    ]);
    const marks = ofType(events, 'note');
    expect(marks).toHaveLength(1);
    expect(marks[0]!.extra).toMatchObject({
      import_kind: 'abandoned_branch',
      parent_uuid: a1.uuid,
      abandoned_from: u2.uuid,
      resumed_at: u3.uuid,
    });
    expect(events.indexOf(marks[0]!)).toBeLessThan(
      events.findIndex((e) => e.text === 'make it about the moon'),
    );
    expect(result.counts.turns).toBe(3);
  });

  it('does not take parallel tool results that share a parent for a rewind', async () => {
    const u1 = user('list both dirs');
    const a1 = assistant([toolUse('toolu_1'), toolUse('toolu_2')], 'tool_use', { parentUuid: u1.uuid });
    const r1 = user([toolResult('toolu_1', 'a')], { parentUuid: a1.uuid });
    const r2 = user([toolResult('toolu_2', 'b')], { parentUuid: a1.uuid });
    const { events } = await importRecords([u1, a1, r1, r2]);
    expect(ofType(events, 'note')).toHaveLength(0);
  });
});

describe('two subagents', () => {
  it('each gets its own writer, linked to its own Task call (the one given its prompt); the main turn goes on', async () => {
    const side = (agentId: string, r: ReturnType<typeof rec>) => ({ ...r, isSidechain: true, agentId });
    const task = (id: string, prompt: string) => ({
      type: 'tool_use',
      id,
      name: 'Task',
      input: { description: prompt, prompt, subagent_type: 'general-purpose' },
    });
    const { result, events, segments, codes } = await importRecords([
      user('look in both repos'),
      assistant([task('toolu_A', 'search repo A'), task('toolu_B', 'search repo B')], 'tool_use'),
      side('agA', user('search repo A')),
      side('agA', assistant([{ type: 'text', text: 'A: found' }])),
      side('agB', user('search repo B')),
      side('agB', assistant([{ type: 'text', text: 'B: found' }])),
      user([toolResult('toolu_A', 'A: found'), toolResult('toolu_B', 'B: found')]),
      assistant([{ type: 'text', text: 'both found' }]),
    ]);
    expect(segments).toBe(3);
    expect(result.counts).toMatchObject({ prompts: 1, subagentWriters: 2, actions: 2, results: 2 });
    expect(ofType(events, 'turn.start')).toHaveLength(1);
    expect(ofType(events, 'agent.action_result')).toHaveLength(2);
    const subs = await Promise.all(
      readdirSync(result.dir)
        .filter((f) => f !== `${result.w}.jsonl`)
        .map((f) => readAll(join(result.dir, f))),
    );
    const actionOf = new Map(ofType(events, 'agent.action').map((a) => [a.call_id, a.id]));
    const links = Object.fromEntries(
      subs.map((s) => s[0]!.meta as Record<string, unknown>).map((m) => [m.subagent_id, m.parent_action_id]),
    );
    expect(links).toEqual({ agA: actionOf.get('toolu_A'), agB: actionOf.get('toolu_B') });
    expect(codes).toEqual([]);
  });
});

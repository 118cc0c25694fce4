/**
 * The Claude Code transcript importer (DESIGN §6 `hansard import claude-code`): the real fixture from
 * claude-code-log read back as a v3 segment, and small hand-made transcripts for each mapping rule.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type ImportResult, importClaudeCodeTranscript } from '../../lib/importers/index.js';
import { decodeEvent, formatTs, type LogEvent, parseTs, readSegmentFile } from '../../lib/log/index.js';
import { tmpDirs } from '../support/tmp.js';

const FIXTURE = 'test/fixtures/real/ccl-representative_messages.jsonl';

const scratch = tmpDirs('hansard-cc-import-');
const tmp = () => scratch.make();

/** Just enough of a transcript record for the test to count on its own. */
interface TranscriptRecord {
  type: string;
  timestamp?: string;
  message?: { content: string | Array<{ type: string }> };
}

type Ev = LogEvent & Record<string, unknown>;

/** Reads a segment back; fails the test on any line the reader could not take as an event. */
async function readBack(path: string): Promise<Ev[]> {
  const events: Ev[] = [];
  for await (const item of readSegmentFile(path)) {
    if (item.kind === 'problem') throw new Error(`segment problem: ${item.problem.message}`);
    events.push(decodeEvent(item.event) as Ev);
  }
  return events;
}

/** Imports a hand-made transcript (objects are written as JSON, strings as they are). */
async function importLines(
  lines: Array<Record<string, unknown> | string>,
): Promise<{ result: ImportResult; events: Ev[] }> {
  const dir = tmp();
  const file = join(dir, 'transcript.jsonl');
  writeFileSync(file, `${lines.map((l) => (typeof l === 'string' ? l : JSON.stringify(l))).join('\n')}\n`);
  const result = await importClaudeCodeTranscript(file, join(dir, 'out'));
  return { result, events: await readBack(result.path) };
}

const ofType = (events: Ev[], type: string) => events.filter((e) => e.type === type);

let clock = Date.parse('2025-01-01T00:00:00Z');
const nextTs = () => {
  clock += 1000;
  return new Date(clock).toISOString();
};
const user = (content: unknown) => ({
  type: 'user',
  timestamp: nextTs(),
  message: { role: 'user', content },
});
const assistant = (content: unknown[], stop_reason: string | null = 'end_turn') => ({
  type: 'assistant',
  timestamp: nextTs(),
  message: { role: 'assistant', content, stop_reason },
});

describe('importing the real claude-code-log transcript', () => {
  const out = tmp();
  let result: ImportResult;
  let events: Ev[];
  beforeAll(async () => {
    result = await importClaudeCodeTranscript(FIXTURE, out);
    events = await readBack(result.path);
  });
  const text = readFileSync(FIXTURE, 'utf8');
  const lines = text.split('\n');
  const records = lines.map((l) => JSON.parse(l) as TranscriptRecord);
  const blocks = (r: TranscriptRecord): Array<{ type: string }> =>
    r.message && Array.isArray(r.message.content) ? r.message.content : [];
  const isPrompt = (r: TranscriptRecord) =>
    r.type === 'user' && (typeof r.message?.content === 'string' || blocks(r).some((b) => b.type === 'text'));

  it('reads the last line although the file has no final newline', () => {
    expect(text.endsWith('\n')).toBe(false);
    expect(lines.at(-1)).toContain('"type": "summary"');
    expect(ofType(events, 'note').some((n) => n.text === lines.at(-1))).toBe(true);
  });

  it('writes one turn.start per prompt, one action per tool_use, one result per tool_result', () => {
    const prompts = records.filter(isPrompt).length;
    const toolUses = records.flatMap(blocks).filter((b) => b.type === 'tool_use').length;
    const toolResults = records.flatMap(blocks).filter((b) => b.type === 'tool_result').length;
    expect(prompts).toBe(4);
    expect(toolUses).toBe(2);
    expect(ofType(events, 'message')).toHaveLength(prompts);
    expect(ofType(events, 'turn.start')).toHaveLength(prompts);
    expect(ofType(events, 'turn.end')).toHaveLength(prompts);
    expect(ofType(events, 'agent.action')).toHaveLength(toolUses);
    expect(ofType(events, 'agent.action_result')).toHaveLength(toolResults);
    expect(result.counts).toEqual({
      prompts,
      turns: prompts,
      actions: toolUses,
      results: toolResults,
      outputs: records
        .flatMap((r) => (r.type === 'assistant' ? blocks(r) : []))
        .filter((b) => b.type === 'text').length,
      // the summary line, and one token_usage note per assistant message (each has its own id here)
      notes: 1 + records.filter((r) => r.type === 'assistant').length,
      compactions: 0,
      interruptions: 0,
      tokenUsage: records.filter((r) => r.type === 'assistant').length,
      subagentWriters: 0,
      unlinkedSubagents: 0,
    });
    expect(result.problems).toEqual([]);
  });

  it('links every result to an existing action by the tool call id', () => {
    const actions = new Map(ofType(events, 'agent.action').map((a) => [a.id, a]));
    for (const r of ofType(events, 'agent.action_result')) {
      expect(actions.has(r.action_id as string)).toBe(true);
      expect(r.status).toBe('ok');
    }
    expect([...actions.values()].map((a) => [a.tool, a.call_id])).toEqual([
      ['Edit', 'tool_001'],
      ['Bash', 'tool_002'],
    ]);
  });

  it('opens each turn right after its prompt, naming that message as its context', () => {
    events.forEach((e, i) => {
      if (e.type !== 'turn.start') return;
      const before = events[i - 1]!;
      expect(before.type).toBe('message');
      expect(e.context_message_ids).toEqual([before.id]);
      expect(e.id).toBe(e.turn_id);
    });
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual([
      'completed',
      'completed',
      'completed',
      'completed',
    ]);
  });

  it('stamps events with the transcript time, mono counted from its first record', () => {
    const sourceTimes = new Set(
      records.flatMap((r) => (r.timestamp ? [formatTs(parseTs(r.timestamp)!.micros)] : [])),
    );
    expect(ofType(events, 'message')[0]!.ts).toBe('2025-06-14T10:00:00.000000Z');
    expect(events[0]!.type).toBe('writer.start');
    expect(events[0]!.ts).toBe('2025-06-14T10:00:00.000000Z');
    expect(events[0]!.mono).toBe(0);
    for (const e of events) expect(sourceTimes.has(e.ts)).toBe(true);
    const t0 = parseTs(records[0]!.timestamp!)!.micros;
    for (const e of events) expect(e.mono).toBe((parseTs(e.ts)!.micros - t0) / 1e6);
    // the summary line has no timestamp: it takes the previous record's
    expect(events.at(-2)!.ts).toBe('2025-06-14T10:04:00.000000Z');
  });

  it('keeps the summary line as a note holding its original text', () => {
    const notes = ofType(events, 'note').filter(
      (n) => (n.extra as Record<string, unknown>).import_kind !== 'token_usage',
    );
    expect(notes).toHaveLength(1);
    expect(notes[0]!.author).toBe('hansard-import');
    expect(notes[0]!.text).toBe(lines.at(-1));
  });

  it('ends the segment with writer.end, seq contiguous, no torn line', () => {
    const raw = readFileSync(result.path, 'utf8');
    expect(raw.endsWith('\n')).toBe(true);
    expect(raw.split('\n').slice(0, -1)).toHaveLength(events.length);
    expect(events.at(-1)!.type).toBe('writer.end');
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.every((e) => e.sid === result.sid && e.w === result.w)).toBe(true);
    expect(result.path).toBe(join(out, result.sid, `${result.w}.jsonl`));
    expect(events[0]!.meta).toMatchObject({ agent: 'claude-code', app: 'hansard import claude-code' });
  });
});

describe('importing hand-made transcripts', () => {
  it('does not take a user record of only tool_result blocks as a prompt', async () => {
    const { result, events } = await importLines([
      user('list the files'),
      assistant([{ type: 'tool_use', id: 'call_1', name: 'Bash', input: { command: 'ls' } }], 'tool_use'),
      user([{ type: 'tool_result', tool_use_id: 'call_1', content: 'a.txt\nb.txt', is_error: false }]),
      assistant([{ type: 'text', text: 'Two files.' }]),
    ]);
    expect(ofType(events, 'message')).toHaveLength(1);
    expect(ofType(events, 'turn.start')).toHaveLength(1);
    const [action] = ofType(events, 'agent.action');
    const [res] = ofType(events, 'agent.action_result');
    expect(action).toMatchObject({
      tool: 'Bash',
      input: { command: 'ls' },
      call_id: 'call_1',
      caused_by: null,
    });
    expect(res).toMatchObject({ action_id: action!.id, status: 'ok', output: 'a.txt\nb.txt', error: null });
    expect(ofType(events, 'agent.output')[0]).toMatchObject({ text: 'Two files.', caused_by: null });
    expect(ofType(events, 'turn.end')[0]!.status).toBe('completed');
    expect(result.problems).toEqual([]);
  });

  it('records an is_error tool_result as status error with the content as the error text', async () => {
    const { events } = await importLines([
      user([{ type: 'text', text: 'run it' }]),
      assistant([{ type: 'tool_use', id: 'call_e', name: 'Bash', input: { command: 'false' } }], 'tool_use'),
      user([
        {
          type: 'tool_result',
          tool_use_id: 'call_e',
          content: [{ type: 'text', text: 'exit 1' }],
          is_error: true,
        },
      ]),
    ]);
    const [res] = ofType(events, 'agent.action_result');
    expect(res).toMatchObject({ status: 'error', output: null, error: 'exit 1', exit_code: null });
    // the turn's last assistant record stopped for a tool: the turn did not complete
    expect(ofType(events, 'turn.end')[0]!.status).toBe('interrupted');
  });

  it('keeps an unknown content block as a note of its JSON, and thinking as a claude-code note', async () => {
    const odd = { type: 'server_tool_use', id: 'srv_1', name: 'web_search', input: { q: 'x' } };
    const { result, events } = await importLines([
      user('search'),
      assistant([{ type: 'thinking', thinking: 'look it up', signature: 'sig' }, odd]),
    ]);
    const notes = ofType(events, 'note');
    expect(notes.map((n) => [n.author, n.text])).toEqual([
      ['claude-code', 'thinking: look it up'],
      ['hansard-import', JSON.stringify(odd)],
    ]);
    expect(result.counts.notes).toBe(2);
  });

  it('notes a line that is not JSON, reports it, and goes on reading', async () => {
    const { result, events } = await importLines([
      user('first'),
      '{"type": "assistant", "message": {"content": [',
      user('second'),
    ]);
    expect(result.problems).toEqual([{ line: 2, message: 'line is not valid JSON', kind: 'kept_as_note' }]);
    expect(ofType(events, 'note').map((n) => n.text)).toEqual([
      '{"type": "assistant", "message": {"content": [',
    ]);
    expect(ofType(events, 'message').map((m) => m.text)).toEqual(['first', 'second']);
    expect(events.at(-1)!.type).toBe('writer.end');
  });

  it('opens a turn with no context for a tool_use before any prompt', async () => {
    const { events } = await importLines([
      assistant([{ type: 'tool_use', id: 'call_0', name: 'Read', input: {} }], null),
      user('now this'),
    ]);
    expect(events.map((e) => e.type)).toEqual([
      'writer.start',
      'turn.start',
      'agent.action',
      'turn.end',
      'message',
      'turn.start',
      'turn.end',
      'writer.end',
    ]);
    expect(events[1]!.context_message_ids).toBeNull();
    expect(events[3]!.status).toBe('completed'); // no stop_reason recorded
  });

  it('writes a result that answers no action with its own tool_use_id as action_id, and reports it', async () => {
    const { result, events } = await importLines([
      user('hi'),
      user([{ type: 'tool_result', tool_use_id: 'nowhere', content: 'x' }]),
    ]);
    expect(ofType(events, 'agent.action_result')[0]).toMatchObject({ action_id: 'nowhere', status: 'ok' });
    expect(result.problems).toHaveLength(1);
    expect(result.problems[0]!.line).toBe(2);
  });

  it('joins several text blocks of one prompt with a blank line, under the given user id', async () => {
    const dir = tmp();
    const file = join(dir, 't.jsonl');
    writeFileSync(
      file,
      JSON.stringify(
        user([
          { type: 'text', text: 'one' },
          { type: 'text', text: 'two' },
        ]),
      ),
    );
    const result = await importClaudeCodeTranscript(file, dir, { userId: 'priya', agent: 'cc' });
    const events = await readBack(result.path);
    expect(ofType(events, 'message')[0]).toMatchObject({ user_id: 'priya', text: 'one\n\ntwo' });
    expect(events[0]!.meta).toMatchObject({ agent: 'cc' });
  });
});

/**
 * Claude Code's token usage as the importers record it (issue 27 item 1; the contract is
 * lib/log/format/usage-note.ts, `usage_source: 'claude_message'` / `'claude_result'`; docs/import.md
 * "Token usage"): one `token_usage` note per assistant message id with its last record's figures, in the
 * turn of the message, on the writer of the agent that sent it; `<synthetic>` placeholders none. The
 * inputs are test/fixtures/usage/ (shaped as Claude Code 2.1 writes them) and the real stream-json capture.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { importClaudeCodeStream, importClaudeCodeTranscript } from '../../lib/importers/index.js';
import { tmpDirs } from '../support/tmp.js';
import { type Ev, marked, ofType, readBack, readSession, verify } from './stream-helpers.js';

const scratch = tmpDirs('hansard-cc-usage-');
const FIX = 'test/fixtures/usage';
const STREAMED = `${FIX}/claude-streamed.jsonl`;
const SUBAGENT = `${FIX}/claude-subagent/8e1f2a3b-4c5d-4e6f-9a7b-0c1d2e3f4a5b.jsonl`;
const SUBAGENT_FILE = `${FIX}/claude-subagent/8e1f2a3b-4c5d-4e6f-9a7b-0c1d2e3f4a5b/subagents/agent-a9c1e2f.jsonl`;
const STREAM_JSON = `${FIX}/claude-stream-json-streamed.ndjson`;
const REAL_STREAM = 'test/fixtures/real/hcn-harnesses-claude.ndjson';
const REAL_TRANSCRIPT = 'test/fixtures/real/ccl-representative_messages.jsonl';

// biome-ignore lint/suspicious/noExplicitAny: the test reads the fixtures' records field by field
type Rec = Record<string, any>;
const records = (path: string): Rec[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Rec);
/** The usage object of the record with `uuid` in `path`, as the file holds it. */
const usageOf = (path: string, uuid: string) => records(path).find((r) => r.uuid === uuid)!.message.usage;
const usageNotes = (events: Ev[]) => marked(events, 'token_usage');
const tsOf = (iso: string) => `${iso.replace('Z', '')}000Z`;

describe('a transcript whose message is streamed as three records (output 1, 40, 212)', async () => {
  const r = await importClaudeCodeTranscript(STREAMED, scratch.make());
  const events = await readBack(r.path);

  it('writes one note per message id, with the last record figures and its request id', () => {
    expect(usageNotes(events).map((n) => n.extra)).toEqual([
      {
        import_kind: 'token_usage',
        usage_source: 'claude_message',
        message_id: 'msg_01StreamA',
        model: 'claude-opus-4-5-20251101',
        usage: usageOf(STREAMED, 'a3'),
        request_id: 'req_01StreamA',
      },
      {
        import_kind: 'token_usage',
        usage_source: 'claude_message',
        message_id: 'msg_01StreamB',
        model: 'claude-opus-4-5-20251101',
        usage: usageOf(STREAMED, 'a4'),
        request_id: 'req_01StreamB',
        cost_usd: 0.0143, // the record's own costUSD, kept beside (never instead of) the figures
      },
    ]);
    expect(usageOf(STREAMED, 'a3').output_tokens).toBe(212);
    expect(usageNotes(events)[0]!.text).toBe(
      'usage claude-opus-4-5-20251101: input 2 (cache read 16016, cache write 6142), output 212',
    );
    expect(r.counts.tokenUsage).toBe(2);
  });

  it('puts the note in the turn of its message, after its last record, stamped with that record', () => {
    const at = (e: Ev) => events.indexOf(e);
    const [noteA, noteB] = usageNotes(events);
    const [start1, start2] = ofType(events, 'turn.start');
    const [end1] = ofType(events, 'turn.end');
    const action = ofType(events, 'agent.action')[0]!;
    const result = ofType(events, 'agent.action_result')[0]!;
    expect(at(start1!)).toBeLessThan(at(action));
    expect(at(action)).toBeLessThan(at(noteA!)); // after the tool_use record's own event
    expect(at(noteA!)).toBeLessThan(at(result));
    expect(at(noteB!)).toBeLessThan(at(end1!));
    expect(at(end1!)).toBeLessThan(at(start2!));
    expect(noteA!.ts).toBe(tsOf('2026-03-02T09:00:05.300Z'));
    expect(noteB!.ts).toBe(tsOf('2026-03-02T09:00:12.400Z'));
  });

  it('writes no note for the <synthetic> placeholder (an API error: no call, usage all zero)', () => {
    const synthetic = records(STREAMED).find((x) => x.message?.model === '<synthetic>')!;
    expect(synthetic.message.usage.output_tokens).toBe(0);
    // its text is still recorded as the agent's output; no usage note names it
    expect(ofType(events, 'agent.output').some((o) => String(o.text).startsWith('API Error: 529'))).toBe(
      true,
    );
    expect(usageNotes(events).map((n) => (n.extra as Rec).message_id)).not.toContain(synthetic.message.id);
    expect(usageNotes(events).every((n) => (n.extra as Rec).model !== '<synthetic>')).toBe(true);
  });

  it('leaves the session valid: no time going back', async () => {
    const v = await verify(r.dir);
    expect(v.summary).toMatchObject({ errors: 0, warnings: 0 });
  });
});

describe('a subagent with its own file (<session>/subagents/agent-<id>.jsonl)', async () => {
  const r = await importClaudeCodeTranscript(SUBAGENT, scratch.make());
  const segments = await readSession(r.dir);
  const main = segments.find((s) => s[0]!.w === r.w)!;
  const sub = segments.find((s) => s[0]!.w !== r.w)!;

  it("writes the subagent's messages on its writer, the main agent's on the main writer", () => {
    expect(segments).toHaveLength(2);
    expect(sub[0]!.meta).toMatchObject({ subagent_id: 'a9c1e2f', parent_writer: r.w });
    expect(usageNotes(main).map((n) => (n.extra as Rec).message_id)).toEqual(['msg_01Main1', 'msg_01Main2']);
    expect(usageNotes(sub).map((n) => n.extra)).toEqual([
      {
        import_kind: 'token_usage',
        usage_source: 'claude_message',
        message_id: 'msg_01Sub1',
        model: 'claude-haiku-4-5-20251001',
        usage: usageOf(SUBAGENT_FILE, 's3'), // its last record: output 48, not the first's 3
        request_id: 'req_01Sub1',
      },
      {
        import_kind: 'token_usage',
        usage_source: 'claude_message',
        message_id: 'msg_01Sub2',
        model: 'claude-haiku-4-5-20251001',
        usage: usageOf(SUBAGENT_FILE, 's5'),
        request_id: 'req_01Sub2',
      },
    ]);
    expect((usageNotes(sub)[0]!.extra as Rec).usage.output_tokens).toBe(48);
    expect(r.counts.tokenUsage).toBe(4);
  });

  it("does not record the Task result's own usage total (the subagent's messages are recorded)", () => {
    const all = segments.flat();
    expect(usageNotes(all)).toHaveLength(4);
    expect(usageNotes(all).some((n) => (n.extra as Rec).usage.output_tokens === 30 && n.w === r.w)).toBe(
      false,
    );
  });

  it('leaves the session valid', async () => {
    expect((await verify(r.dir)).summary).toMatchObject({ errors: 0, warnings: 0 });
  });

  it("puts each subagent note inside the subagent's turn", () => {
    const start = sub.findIndex((e) => e.type === 'turn.start');
    const end = sub.findIndex((e) => e.type === 'turn.end');
    for (const n of usageNotes(sub)) {
      expect(sub.indexOf(n)).toBeGreaterThan(start);
      expect(sub.indexOf(n)).toBeLessThan(end);
    }
  });
});

describe('the real claude-code-log transcript', async () => {
  const r = await importClaudeCodeTranscript(REAL_TRANSCRIPT, scratch.make());
  const events = await readBack(r.path);

  it('records each assistant message once, its usage and requestId exactly', () => {
    const assistants = records(REAL_TRANSCRIPT).filter((x) => x.type === 'assistant');
    expect(usageNotes(events).map((n) => n.extra)).toEqual(
      assistants.map((a) => ({
        import_kind: 'token_usage',
        usage_source: 'claude_message',
        message_id: a.message.id,
        model: a.message.model,
        usage: a.message.usage,
        request_id: a.requestId,
      })),
    );
  });
});

describe('stream-json: a message streamed as three assistant records, a subagent, the result', async () => {
  const r = await importClaudeCodeStream(STREAM_JSON, scratch.make());
  const segments = await readSession(r.dir);
  const main = segments.find((s) => s[0]!.w === r.w)!;
  const sub = segments.find((s) => s[0]!.w !== r.w)!;
  const recs = records(STREAM_JSON);
  const byUuid = (n: string) => recs.find((x) => x.uuid === `0c5e1d2a-0000-4000-8000-${n}`)!;

  it('writes one note per message id with the last figures, the result note marked claude_result', () => {
    const notes = usageNotes(main);
    expect(notes.map((n) => (n.extra as Rec).usage_source)).toEqual([
      'claude_message',
      'claude_message',
      'claude_result',
    ]);
    expect(notes[0]!.extra).toEqual({
      import_kind: 'token_usage',
      usage_source: 'claude_message',
      message_id: 'msg_01Plan',
      model: 'claude-opus-5',
      usage: byUuid('000000000004').message.usage,
      request_id: 'req_01Plan',
    });
    expect((notes[0]!.extra as Rec).usage.output_tokens).toBe(212);
    expect((notes[1]!.extra as Rec).message_id).toBe('msg_01Done');
    const result = recs.at(-1)!;
    expect(notes[2]!.extra).toEqual({
      import_kind: 'token_usage',
      claude_type: 'result',
      usage_source: 'claude_result',
      subtype: 'success',
      is_error: false,
      num_turns: 3,
      duration_ms: 5400,
      duration_api_ms: 4900,
      total_cost_usd: 0.0412,
      usage: result.usage,
      modelUsage: result.modelUsage,
      stop_reason: 'end_turn',
      terminal_reason: 'completed',
      session_id: result.session_id,
      permission_denials: 0,
    });
    expect(r.counts.tokenUsage).toBe(5);
  });

  it("writes the subagent's messages (parent_tool_use_id) on its writer, inside its turn", () => {
    expect(usageNotes(sub).map((n) => n.extra)).toEqual([
      {
        import_kind: 'token_usage',
        usage_source: 'claude_message',
        message_id: 'msg_01Sub',
        model: 'claude-haiku-4-5-20251001',
        usage: byUuid('000000000006').message.usage,
        request_id: 'req_01Sub',
      },
      {
        import_kind: 'token_usage',
        usage_source: 'claude_message',
        message_id: 'msg_01Sub2',
        model: 'claude-haiku-4-5-20251001',
        usage: byUuid('000000000008').message.usage,
        request_id: 'req_01Sub2',
      },
    ]);
    const end = sub.findIndex((e) => e.type === 'turn.end');
    for (const n of usageNotes(sub)) expect(sub.indexOf(n)).toBeLessThan(end);
  });

  it('leaves the session valid', async () => {
    expect((await verify(r.dir)).summary).toMatchObject({ errors: 0, warnings: 0 });
  });

  it("puts the main messages' notes before the result's and the turn's end", () => {
    const notes = usageNotes(main);
    const end = main.findIndex((e) => e.type === 'turn.end');
    expect(main.indexOf(notes[0]!)).toBeLessThan(main.indexOf(notes[2]!));
    expect(main.indexOf(notes[1]!)).toBeLessThan(main.indexOf(notes[2]!));
    expect(main.indexOf(notes[2]!)).toBeLessThan(end);
  });
});

describe('stream-json with partial messages (the real capture): the message_delta has the last figures', async () => {
  const r = await importClaudeCodeStream(REAL_STREAM, scratch.make());
  const events = await readBack(r.path);
  const recs = records(REAL_STREAM);
  const assistant = recs.find((x) => x.type === 'assistant')!;
  const delta = recs.find((x) => x.type === 'stream_event' && x.event.type === 'message_delta')!;

  it("records the assistant record's usage updated by the delta's (output 1 → 5), saying so", () => {
    expect(assistant.message.usage.output_tokens).toBe(1);
    expect(delta.event.usage.output_tokens).toBe(5);
    const note = usageNotes(events)[0]!;
    expect(note.extra).toEqual({
      import_kind: 'token_usage',
      usage_source: 'claude_message',
      message_id: 'msg_011CeFNqCeiemaYZWSHbwv6z',
      model: 'claude-opus-5',
      usage: { ...assistant.message.usage, ...delta.event.usage },
      request_id: 'req_011CeFNqBUmxPa4KX4KLr8d1',
      usage_from: 'message_delta',
    });
    expect(note.text).toBe('usage claude-opus-5: input 2 (cache read 16016, cache write 6142), output 5');
    // the same figures the run's result reports for it
    const result = recs.find((x) => x.type === 'result')!;
    expect((note.extra as Rec).usage.output_tokens).toBe(result.usage.output_tokens);
  });
});

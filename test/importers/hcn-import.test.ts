/**
 * hcn streams recorded as sessions (issue 10 item 3, seed 002, lib/importers/hcn.ts): the real captures in
 * test/fixtures/real/hcn-*.ndjson and hand-made streams for each mapping rule. Counts stated here are read
 * off the fixtures by hand (e.g. hcn-bare-claude: 9 progress, 2 token, identity, one assistant message,
 * done clean exit 0 → one turn, one output).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { HcnFormatError, HcnRecorder, type HcnRecordResult } from '../../lib/importers/hcn.js';
import { decodeEvent, type LogEvent, readSegmentFile } from '../../lib/log/index.js';
import { runHansard } from '../support/cli.js';
import { tmpDirs } from '../support/tmp.js';

const REAL = 'test/fixtures/real';
const scratch = tmpDirs('hansard-hcn-import-');

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
const marked = (events: Ev[], kind: string) =>
  events.filter((e) => e.type === 'note' && (e.extra as Record<string, unknown>).import_kind === kind);

/** Records `text` line by line (as `hansard import hcn` does, through `push`) and reads the segment back. */
async function record(
  text: string,
  opts: { prompt?: string; chunk?: number } = {},
): Promise<{ r: HcnRecordResult; events: Ev[] }> {
  const rec = new HcnRecorder({ outDir: scratch.make(), app: 'test', prompt: opts.prompt ?? null });
  const bytes = Buffer.from(text);
  const step = opts.chunk ?? bytes.length;
  for (let i = 0; i < bytes.length; i += step) rec.push(bytes.subarray(i, i + step));
  const r = rec.finish();
  if (r === null) throw new Error('nothing recorded');
  return { r, events: await readBack(r.path) };
}
const recordFile = (name: string) => record(readFileSync(join(REAL, name), 'utf8'));
const lines = (...objs: unknown[]) =>
  `${objs.map((o) => (typeof o === 'string' ? o : JSON.stringify(o))).join('\n')}\n`;

/** `hansard verify DIR --json`: its report. */
async function verifySession(
  dir: string,
): Promise<{ problems: Array<{ code: string; severity: string }>; summary: { infos: number } }> {
  const run = await runHansard(['verify', dir, '--json'], { cwd: process.cwd() });
  return JSON.parse(run.out);
}

async function expectClean(dir: string): Promise<void> {
  const v = await verifySession(dir);
  expect(v.problems.filter((p) => p.severity !== 'info')).toEqual([]);
  expect(v.summary.infos).toBe(0); // every segment ends with writer.end
}

describe('the real hcn --json captures', () => {
  it('hcn-bare-claude: 0 prompts, 1 turn, 0 actions, 0 results, 1 output, 0 subagent writers, 0 compactions; done clean', async () => {
    const { r, events } = await recordFile('hcn-bare-claude.ndjson');
    expect(r.format).toBe('hcn-json');
    expect(r.counts).toMatchObject({
      prompts: 0,
      turns: 1,
      actions: 0,
      results: 0,
      outputs: 1,
      compactions: 0,
      subagentWriters: 0,
      coverageGaps: 0,
      unknown: 0,
    });
    expect(r.counts.skipped).toEqual({ progress: 9, token: 2 });
    expect(ofType(events, 'agent.output').map((e) => e.text)).toEqual(['OK']); // not doubled by the tokens
    const identity = marked(events, 'meta');
    expect(identity).toHaveLength(1);
    expect((identity[0]!.extra as Record<string, unknown>).hcn_session_id).toBe(
      '83118d2a-5899-4b01-b37c-a0e61a8ac94f',
    );
    const end = ofType(events, 'turn.end');
    expect(end.map((e) => [e.status, (e.extra as Record<string, unknown>).hcn_cause])).toEqual([
      ['completed', 'clean'],
    ]);
    expect(r.done).toEqual({ exitCode: 0, cause: 'clean' });
    expect(r.interrupted).toBe(false);
    expect(r.problems).toEqual([]);
    await expectClean(r.dir);
  });

  it('hcn-bare-codex: 0 prompts, 1 turn, 0 actions, 0 results, 1 output; done clean', async () => {
    const { r, events } = await recordFile('hcn-bare-codex.ndjson');
    expect(r.counts).toMatchObject({
      prompts: 0,
      turns: 1,
      actions: 0,
      results: 0,
      outputs: 1,
      compactions: 0,
    });
    expect(r.counts.skipped).toEqual({});
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['completed']);
    expect(r.problems).toEqual([]);
    await expectClean(r.dir);
  });
});

describe('the observer stream (hcn docs/observer.md example: started, identity, skipped, no done)', () => {
  it('started opens the writer, skipped is a coverage gap, EOF without done interrupts the turn', async () => {
    const { r, events } = await recordFile('hcn-observer-doc-example.ndjson');
    expect(r.format).toBe('observer');
    expect(r.counts).toMatchObject({
      prompts: 0,
      turns: 1,
      actions: 0,
      results: 0,
      outputs: 0,
      compactions: 0,
    });
    expect(r.counts.coverageGaps).toBe(1);
    const start = events[0]!;
    expect(start.type).toBe('writer.start');
    expect(start.ts).toBe('2026-09-28T03:00:00.000000Z');
    expect(start.meta).toMatchObject({
      agent: 'claude',
      hcn_invocation_id: '0f0e0d0c-1111-4222-8333-444455556666',
      hcn_version: '0.8.0',
    });
    const gap = marked(events, 'coverage_gap');
    expect(gap.map((e) => (e.extra as Record<string, unknown>).hcn_reason)).toEqual(['oversize']);
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['interrupted']);
    expect(r.interrupted).toBe(true);
    expect(r.done).toBeNull();
    expect(ofType(events, 'writer.end')[0]!.reason).toMatch(/without done/);
    await expectClean(r.dir);
  });

  it('with the run events and its done: the turn ends by the done cause, events stamped with their at', async () => {
    const doc = readFileSync(join(REAL, 'hcn-observer-doc-example.ndjson'), 'utf8');
    const at = '2026-09-28T03:00:09.000Z';
    const { r, events } = await record(
      doc +
        lines(
          { record: 'event', at, event: { kind: 'tool', name: 'shell', input: { cmd: 'ls' }, callId: 'c1' } },
          {
            record: 'event',
            at,
            event: { kind: 'tool-result', callId: 'c1', result: { exitCode: 2 }, isError: true },
          },
          { record: 'event', at, event: { kind: 'message', role: 'assistant', text: 'done' } },
          {
            record: 'event',
            at: '2026-09-28T03:00:10.000Z',
            event: { kind: 'done', exitCode: 1, cause: 'failed' },
          },
        ),
    );
    expect(r.counts).toMatchObject({ turns: 1, actions: 1, results: 1, outputs: 1 });
    const res = ofType(events, 'agent.action_result')[0]!;
    expect([res.status, res.exit_code, res.action_id]).toEqual([
      'error',
      2,
      ofType(events, 'agent.action')[0]!.id,
    ]);
    const end = ofType(events, 'turn.end')[0]!;
    expect([end.status, end.ts, (end.extra as Record<string, unknown>).hcn_exit_code]).toEqual([
      'failed',
      '2026-09-28T03:00:10.000000Z',
      1,
    ]);
    expect(r.interrupted).toBe(false);
    await expectClean(r.dir);
  });
});

describe('mapping rules (hand-made hcn --json streams)', () => {
  it('tools pair by callId, or by name when there is none; compaction counts compacted only; notes are marked', async () => {
    const { r, events } = await record(
      lines(
        { kind: 'identity', sessionId: 's1', authority: 'harness-minted', capabilities: {} },
        { kind: 'tool', name: 'read', input: { path: 'a' }, callId: 'x' },
        { kind: 'tool', name: 'shell', input: 'ls' },
        { kind: 'tool-result', name: 'shell', result: 'a b' },
        { kind: 'tool-result', callId: 'x', result: 'text of a' },
        { kind: 'compaction', state: 'started', trigger: 'auto' },
        { kind: 'compaction', state: 'compacted', trigger: 'auto', tokensBefore: 100, tokensAfter: 10 },
        { kind: 'usage', scope: 'turn', inputTokens: 5 },
        { kind: 'warning', message: 'verify the id' },
        { kind: 'error', message: 'denied', denial: { tool: 'Bash', reason: '' } },
        { kind: 'limit', code: 'usage-limit', message: 'wall' },
        { kind: 'question', question: 'which?', options: ['a', 'b'], recommended: 'a' },
        { kind: 'done', exitCode: 0, cause: 'awaiting-input' },
      ),
      { prompt: 'read a and list' },
    );
    expect(r.counts).toMatchObject({ prompts: 1, turns: 1, actions: 2, results: 2, compactions: 1 });
    const actions = ofType(events, 'agent.action');
    const results = ofType(events, 'agent.action_result');
    expect(results.map((e) => e.action_id)).toEqual([actions[1]!.id, actions[0]!.id]);
    expect(actions.map((a) => a.call_id)).toEqual(['x', null]);
    expect(ofType(events, 'turn.start')[0]!.context_message_ids).toEqual([ofType(events, 'message')[0]!.id]);
    for (const k of ['token_usage', 'warning', 'error', 'limit', 'question'])
      expect(marked(events, k)).toHaveLength(1);
    expect(marked(events, 'compaction')).toHaveLength(1);
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['awaiting_input']);
    expect(r.problems).toEqual([]);
    await expectClean(r.dir);
  });

  it('a killed run cancels waiting calls and ends the turn interrupted', async () => {
    const { r, events } = await record(
      lines(
        { kind: 'tool', name: 'shell', input: 'sleep 99', callId: 'k' },
        { kind: 'failure', class: 'timeout', retryable: false, message: 'wall clock' },
        { kind: 'done', exitCode: null, cause: 'killed' },
      ),
    );
    expect(ofType(events, 'agent.action_result').map((e) => e.status)).toEqual(['cancelled']);
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['interrupted']);
    expect(marked(events, 'failure')).toHaveLength(1);
    expect(r.counts.interruptions).toBe(1);
    expect(r.interrupted).toBe(false); // it had its done
    await expectClean(r.dir);
  });

  it('EOF without done: the waiting call is cancelled and the turn interrupted', async () => {
    const { r, events } = await record(lines({ kind: 'tool', name: 'shell', input: 'make' }));
    expect(ofType(events, 'agent.action_result').map((e) => [e.status, e.error])).toEqual([
      ['cancelled', 'the hcn stream ended without done'],
    ]);
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['interrupted']);
    expect(r.interrupted).toBe(true);
    await expectClean(r.dir);
  });

  it('a malformed line is reported with its number and kept; unknown kinds are kept; the rest is recorded', async () => {
    const { r, events } = await record(
      lines(
        { kind: 'message', role: 'assistant', text: 'one' },
        '{"kind":"message","role":',
        { kind: 'telepathy', level: 9 },
        { kind: 'tool', input: 'no name' },
        { kind: 'tool-result', callId: 'nobody', result: 1 },
        { kind: 'message', role: 'assistant', text: 'twö — ✓' },
        { kind: 'done', exitCode: 0, cause: 'clean' },
      ),
      { chunk: 7 }, // lines and multi-byte characters split across chunks
    );
    expect(r.problems).toEqual([
      { line: 2, message: 'line is not valid JSON', kind: 'kept_as_note' },
      { line: 4, message: expect.stringMatching(/^tool event: name/), kind: 'kept_as_note' },
      { line: 5, message: 'tool-result "nobody" answers no tool call before it', kind: 'orphan_result' },
    ]);
    expect(r.counts.unknown).toBe(3);
    expect(marked(events, 'unknown_record').map((e) => e.text)).toEqual([
      '{"kind":"message","role":',
      '{"kind":"telepathy","level":9}',
      '{"kind":"tool","input":"no name"}',
    ]);
    expect(ofType(events, 'agent.output').map((e) => e.text)).toEqual(['one', 'twö — ✓']);
    // the orphan result keeps its call id (verify names it); nothing else is wrong
    const v = await verifySession(r.dir);
    expect(v.problems.map((p) => p.code)).toEqual(['dangling_reference']);
  });

  it('an hcn session stream: each turn is a turn, closed ends the record', async () => {
    const { r, events } = await record(
      lines(
        { kind: 'session', sessionId: 'h1', harness: 'pi', hcn: '0.9.8', questions: 'ask', origin: 'fresh' },
        { kind: 'turn', turnId: 'h1:turn-1', id: 'a' },
        { kind: 'message', role: 'assistant', text: 'first' },
        { kind: 'done', exitCode: 0, cause: 'clean' },
        { kind: 'turn', turnId: 'h1:turn-2', id: 'b' },
        { kind: 'message', role: 'assistant', text: 'second' },
        { kind: 'closed', exitCode: 1, cause: 'crash' },
      ),
    );
    expect(r.counts).toMatchObject({ turns: 2, outputs: 2 });
    expect(ofType(events, 'turn.end').map((e) => e.status)).toEqual(['completed', 'interrupted']);
    expect(r.done).toEqual({ exitCode: 1, cause: 'crash' });
    await expectClean(r.dir);
  });

  it('writes each event as its line arrives (a killed recorder leaves what was seen)', async () => {
    const rec = new HcnRecorder({ outDir: scratch.make(), app: 'test' });
    rec.push(Buffer.from(lines({ kind: 'message', role: 'assistant', text: 'seen' }).slice(0, -1)));
    expect(rec.writer).toBeNull(); // no newline yet: the line is not complete
    rec.push(Buffer.from('\n{"kind":"tool","name":"sh'));
    const path = rec.writer!.path;
    expect(readFileSync(path, 'utf8')).toContain('"text":"seen"');
    expect(readFileSync(path, 'utf8')).not.toContain('"tool":"sh"');
    rec.abort();
  });

  it("refuses a harness's own output by name, writing nothing", () => {
    for (const [file, format] of [
      ['hcn-harnesses-claude.ndjson', 'claude-stream-json'],
      ['hcn-harnesses-codex-tool.ndjson', 'codex-exec-json'],
    ] as const) {
      const out = scratch.make();
      const rec = new HcnRecorder({ outDir: out, app: 'test' });
      const first = readFileSync(join(REAL, file), 'utf8').split('\n')[0]!;
      expect(() => rec.line(first)).toThrow(HcnFormatError);
      expect(rec.format).toBe(format);
      expect(rec.writer).toBeNull();
      expect(readdirSync(out)).toEqual([]);
    }
  });
});

/**
 * Codex's token usage as the importers record it (issue 27 item 1; contract lib/log/format/usage-note.ts,
 * `usage_source: 'codex_total'`): every `token_count` of a rollout and every `turn.completed` of an exec
 * stream is one note holding Codex's figures as written, the running total included, with the model in
 * effect; a total repeated without advancing is recorded as it is (the counting rule, not the importer,
 * knows it is a copy). Inputs: test/fixtures/usage/ (shaped as Codex writes them) and the real captures.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { importCodexExec, importCodexRollout } from '../../lib/importers/index.js';
import { tmpDirs } from '../support/tmp.js';
import { type Ev, marked, ofType, readBack, verify, writeStream } from './stream-helpers.js';

const scratch = tmpDirs('hansard-codex-usage-');
const ROLLOUT = 'test/fixtures/usage/codex-rollout-repeated-total.jsonl';
const EXEC = 'test/fixtures/usage/codex-exec-two-turns.ndjson';

// biome-ignore lint/suspicious/noExplicitAny: the test reads the fixtures' records field by field
type Rec = Record<string, any>;
const records = (path: string): Rec[] =>
  readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l) as Rec);
const usageNotes = (events: Ev[]) => marked(events, 'token_usage');
/** Which turn (1-based, by turn.start) each event is in; 0 before the first. */
const turnOf = (events: Ev[], e: Ev) =>
  events.slice(0, events.indexOf(e)).filter((x) => x.type === 'turn.start').length;

describe('a rollout whose token_count repeats the running total without advancing it', async () => {
  const r = await importCodexRollout(ROLLOUT, scratch.make());
  const events = await readBack(r.path);
  const counts = records(ROLLOUT).filter(
    (x) => x.type === 'event_msg' && x.payload.type === 'token_count' && x.payload.info !== null,
  );

  it('records every token_count with its figures as written and the model of its turn_context', () => {
    expect(counts).toHaveLength(6);
    const models = ['gpt-5.1-codex', 'gpt-5.1-codex', 'gpt-5.1-codex', 'gpt-5.1-codex'];
    models.push('gpt-5.1-codex-max', 'gpt-5.1-codex-max'); // the second turn_context changed it
    expect(usageNotes(events).map((n) => n.extra)).toEqual(
      counts.map((c, i) => ({
        import_kind: 'token_usage',
        codex_type: 'token_usage',
        usage_source: 'codex_total',
        model: models[i],
        usage: c.payload.info.last_token_usage,
        thread_token_usage: c.payload.info.total_token_usage,
      })),
    );
    expect(r.counts.tokenUsage).toBe(6);
  });

  it('keeps the copies where Codex wrote them: two in turn 1, the repeat at turn 2 start in turn 2', () => {
    const notes = usageNotes(events);
    const totals = notes.map((n) => (n.extra as Rec).thread_token_usage.total_tokens);
    expect(totals).toEqual([1800, 1800, 3700, 3700, 3700, 5860]);
    expect(notes.map((n) => turnOf(events, n))).toEqual([1, 1, 1, 1, 2, 2]);
    // the importer sums nothing: the copies are there for the counting rule to see as copies
    const figures = (n: Ev) => {
      const { usage, thread_token_usage } = n.extra as Rec;
      return { usage, thread_token_usage };
    };
    expect(figures(notes[4]!)).toEqual(figures(notes[3]!));
    expect(figures(notes[1]!)).toEqual(figures(notes[0]!));
  });

  it('writes nothing for a token_count with no figures (a rate-limit ping)', () => {
    const pings = records(ROLLOUT).filter(
      (x) => x.payload?.type === 'token_count' && x.payload.info === null,
    );
    expect(pings).toHaveLength(1);
    expect(r.counts.skipped['event_msg/token_count']).toBe(1);
  });

  it('verifies clean', async () => {
    expect((await verify(r.dir)).summary).toMatchObject({ errors: 0, warnings: 0 });
  });
});

describe('the model in effect', () => {
  const line = (type: string, payload: Rec, s: number) => ({
    timestamp: `2025-11-04T16:00:${String(s).padStart(2, '0')}.000Z`,
    type,
    payload,
  });
  const count = (s: number) =>
    line(
      'event_msg',
      {
        type: 'token_count',
        info: {
          total_token_usage: { input_tokens: s * 100, output_tokens: s, total_tokens: s * 101 },
          last_token_usage: { input_tokens: 100, output_tokens: 1, total_tokens: 101 },
          model_context_window: 272000,
        },
        rate_limits: null,
      },
      s,
    );
  const prompt = (text: string, s: number) => line('event_msg', { type: 'user_message', message: text }, s);
  const models = async (lines: Rec[]) => {
    const dir = scratch.make();
    const r = await importCodexRollout(writeStream(dir, 'rollout.jsonl', lines), dir);
    return usageNotes(await readBack(r.path)).map((n) => (n.extra as Rec).model);
  };

  it("is session_meta's when no turn_context names one, and null when nothing does", async () => {
    expect(
      await models([
        line('session_meta', { id: 'x', model: 'gpt-5-codex', model_provider: 'openai' }, 0),
        prompt('hi', 1),
        count(2),
      ]),
    ).toEqual(['gpt-5-codex']);
    expect(await models([line('session_meta', { id: 'x' }, 0), prompt('hi', 1), count(2)])).toEqual([null]);
  });

  it("follows turn_context, a later session_meta not replacing it, and a model_reroute's to_model", async () => {
    expect(
      await models([
        line('session_meta', { id: 'x', model: 'gpt-5-codex' }, 0),
        line('turn_context', { cwd: '/p', model: 'gpt-5.1-codex' }, 1),
        prompt('hi', 2),
        count(3),
        line('session_meta', { id: 'x', model: 'gpt-5-codex' }, 4),
        count(5),
        line(
          'event_msg',
          { type: 'model_reroute', from_model: 'gpt-5.1-codex', to_model: 'gpt-5.1-codex-mini' },
          6,
        ),
        count(7),
      ]),
    ).toEqual(['gpt-5.1-codex', 'gpt-5.1-codex', 'gpt-5.1-codex-mini']);
  });
});

describe('the real Codex 0.169.0 rollout (token_usage_record lines)', async () => {
  const FILE = 'test/fixtures/real-client/codex-0.169.0-rollout.jsonl';
  const r = await importCodexRollout(FILE, scratch.make());
  const events = await readBack(r.path);

  it('records each token_usage_record as written, with usage_source and the model in effect', () => {
    const recs = records(FILE).filter((x) => x.type === 'token_usage_record');
    expect(recs).toHaveLength(2);
    expect(usageNotes(events).map((n) => n.extra)).toEqual(
      recs.map((x) => ({
        import_kind: 'token_usage',
        codex_type: 'token_usage',
        usage_source: 'codex_total',
        model: 'gpt-fake',
        usage: x.payload.usage,
        turn_token_usage: x.payload.turn_token_usage,
        thread_token_usage: x.payload.thread_token_usage,
        response_id: x.payload.response_id,
      })),
    );
  });
});

describe('codex exec --json: two turns, each turn.completed holding the thread total', async () => {
  const r = await importCodexExec(EXEC, scratch.make());
  const events = await readBack(r.path);
  const done = records(EXEC).filter((x) => x.type === 'turn.completed');

  it('records each turn.completed usage under usage and thread_token_usage, as written, model unknown', () => {
    expect(usageNotes(events).map((n) => n.extra)).toEqual(
      done.map((d) => ({
        import_kind: 'token_usage',
        codex_type: 'turn.completed',
        usage_source: 'codex_total',
        model: null,
        usage: d.usage,
        thread_token_usage: d.usage,
      })),
    );
    // cumulative: the second is the thread's total, larger than the first, not that turn's own
    expect(done[1]!.usage.input_tokens).toBeGreaterThan(done[0]!.usage.input_tokens);
    expect(usageNotes(events)[1]!.text).toBe(
      'token usage (thread total): input 24731 (cached 21504), output 240 (reasoning 64)',
    );
    expect(r.counts.tokenUsage).toBe(2);
  });

  it('puts each note in its own turn, before that turn ends', () => {
    const ends = ofType(events, 'turn.end');
    usageNotes(events).forEach((n, i) => {
      expect(turnOf(events, n)).toBe(i + 1);
      expect(events.indexOf(n)).toBeLessThan(events.indexOf(ends[i]!));
    });
  });

  it('takes a model an event names', async () => {
    const dir = scratch.make();
    const lines = records(EXEC).slice(0, 7);
    lines[1] = { ...lines[1], model: 'gpt-5.1-codex' };
    const x = await importCodexExec(writeStream(dir, 'exec.ndjson', lines), dir);
    expect(usageNotes(await readBack(x.path)).map((n) => (n.extra as Rec).model)).toEqual(['gpt-5.1-codex']);
  });
});

describe('the real codex exec --json capture (test/fixtures/real/hcn-harnesses-codex-tool.ndjson)', async () => {
  const FILE = 'test/fixtures/real/hcn-harnesses-codex-tool.ndjson';
  const r = await importCodexExec(FILE, scratch.make());
  const events = await readBack(r.path);

  it('records its turn.completed usage as written, under usage and thread_token_usage', () => {
    const [done] = records(FILE).filter((x) => x.type === 'turn.completed');
    expect(usageNotes(events).map((n) => n.extra)).toEqual([
      {
        import_kind: 'token_usage',
        codex_type: 'turn.completed',
        usage_source: 'codex_total',
        model: null,
        usage: done!.usage,
        thread_token_usage: done!.usage,
      },
    ]);
  });
});

/**
 * The counting rules of issue 27 item 1 (lib/log/analyse/usage/fold.ts, docs/usage.md), each on
 * real-shaped records: Claude Code's per-message usage (the figures of
 * test/fixtures/real/hcn-harnesses-claude.ndjson), Codex's running totals, hcn's scopes (seed 002),
 * unknown turns, people, and that folding chunk by chunk (the state through JSON, as ingest stores it)
 * gives what one pass over the whole segment gives.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  type FoldState,
  foldEvent,
  newFoldState,
  PRICE_DATA,
  reportOf,
  type UsageDelta,
} from '../../../lib/log/analyse/usage/index.js';

const W = 'w_01JAAAAAAAAAAAAAAAAAAAAAAA';
let seq = 0;
let clock = Date.parse('2026-11-30T10:00:00Z');

/** A line object as a writer writes it (envelope, type, fields, extra keys at the top level). */
function ev(type: string, fields: Record<string, unknown>, ts?: string): Record<string, unknown> {
  seq += 1;
  clock += 1000;
  return {
    v: 3,
    sid: 's_x',
    w: W,
    seq,
    id: `e_${seq}`,
    ts: ts ?? new Date(clock).toISOString(),
    mono: seq,
    type,
    ...fields,
  };
}
const start = (agent = 'claude-code') => ev('writer.start', { writer_id: W, meta: { agent } });
const msg = (id: string, user: string) => ({ ...ev('message', { user_id: user, text: 'hi' }), id });
const turn = (id: string, ctx: string[] | null = null) =>
  ev('turn.start', { turn_id: id, context_message_ids: ctx });
const end = (id: string) => ev('turn.end', { turn_id: id, status: 'completed' });
const claude = (message_id: string, model: string, usage: Record<string, unknown>, cost_usd?: number) =>
  ev('note', {
    author: 'claude-code',
    text: 'usage',
    import_kind: 'token_usage',
    usage_source: 'claude_message',
    message_id,
    model,
    usage,
    ...(cost_usd === undefined ? {} : { cost_usd }),
  });
const codex = (total: Record<string, number>, model = 'gpt-5') =>
  ev('note', {
    author: 'codex',
    text: 'usage',
    import_kind: 'token_usage',
    usage_source: 'codex_total',
    model,
    thread_token_usage: total,
  });
const hcn = (fields: Record<string, unknown>) =>
  ev('note', { author: 'hcn', text: 'usage', import_kind: 'token_usage', usage_source: 'hcn', ...fields });

function fold(events: Record<string, unknown>[]): UsageDelta[] {
  const s = newFoldState();
  const out: UsageDelta[] = [];
  for (const e of events) foldEvent(s, W, e, out);
  return out;
}

/** The fields of a stream-json line these tests read. */
interface RealRecord {
  type?: string;
  message?: { id?: string; usage?: Record<string, unknown> };
  modelUsage?: Record<string, { costUSD?: number }>;
}

/** The first assistant record of the real stream-json capture: its usage, and Claude Code's own cost of it. */
const real = readFileSync(new URL('../../fixtures/real/hcn-harnesses-claude.ndjson', import.meta.url), 'utf8')
  .split('\n')
  .filter((l) => l.startsWith('{'))
  .map((l) => JSON.parse(l) as RealRecord);
const assistant = real.find(
  (r) => r.type === 'assistant' && r.message?.id === 'msg_011CeFNqCeiemaYZWSHbwv6z',
)!;
const result = real.find((r) => r.type === 'result')!;

describe('Claude Code messages', () => {
  it('counts a streamed message once, with its last figures, in hansard’s input convention', () => {
    const u = assistant.message!.usage!; // input 2, cache write 6142 (1 h), cache read 16016, output 1
    const r = reportOf(
      fold([
        start(),
        turn('t1'),
        claude(assistant.message!.id!, 'claude-opus-5', { ...u, output_tokens: 1 }),
        claude(assistant.message!.id!, 'claude-opus-5', { ...u, output_tokens: 3 }),
        claude(assistant.message!.id!, 'claude-opus-5', { ...u, output_tokens: 5 }),
        end('t1'),
      ]),
    );
    // Anthropic's input_tokens (2) is the uncached part: all input is 2 + 6142 + 16016 = 22160.
    expect(r.total).toMatchObject({
      input_tokens: 22_160,
      output_tokens: 5,
      cache_read_tokens: 16_016,
      cache_write_tokens: 6_142,
      records: 1,
      turns: 1,
      unknown_turns: 0,
    });
    // At claude-opus-5's list prices (genai-prices 0.1.8: $5/M input, $10/M 1-hour cache write,
    // $0.50/M cache read, $25/M output): 2×5 + 6142×10 + 16016×0.5 + 5×25 = 10 + 61,420 + 8,008 + 125
    // = 69,563 micro-dollars: exactly the costUSD Claude Code itself reported for this model in the
    // same run's result record (modelUsage["claude-opus-5[1m]"].costUSD = 0.069563).
    expect(r.total.cost_micros).toBe(69_563);
    expect(result.modelUsage!['claude-opus-5[1m]']!.costUSD).toBe(0.069563);
    expect(r.by_model).toEqual([expect.objectContaining({ model: 'claude-opus-5', cost_micros: 69_563 })]);
  });

  it('keeps the vendor’s own cost beside the list price, never added to it', () => {
    const r = reportOf(
      fold([
        start(),
        turn('t1'),
        claude('msg_a', 'claude-sonnet-4-5', { input_tokens: 1000, output_tokens: 100 }, 0.0045),
      ]),
    );
    // 1000 × $3/M + 100 × $15/M = 3,000 + 1,500 micro-dollars
    expect(r.total.cost_micros).toBe(4_500);
    expect(r.total.reported_cost_usd).toBe(0.0045);
    const result = ev('note', {
      author: 'claude-code',
      text: 'result',
      import_kind: 'token_usage',
      claude_type: 'result',
      total_cost_usd: 0.5,
      usage: { input_tokens: 999_999, output_tokens: 999_999 },
    });
    const r2 = reportOf(fold([start(), turn('t1'), result]));
    expect(r2.total).toMatchObject({ input_tokens: 0, output_tokens: 0, reported_cost_usd: 0.5, records: 0 });
  });

  it('a run’s result counts only the models no message named, its latest figures once', () => {
    const res = (haikuIn: number) =>
      ev('note', {
        author: 'claude-code',
        text: 'result',
        import_kind: 'token_usage',
        usage_source: 'claude_result',
        total_cost_usd: 0.1,
        modelUsage: {
          'claude-sonnet-4-5[1m]': {
            inputTokens: 1000,
            outputTokens: 100,
            canonicalModel: 'claude-sonnet-4-5',
          },
          'claude-haiku-4-5-20251001': {
            inputTokens: haikuIn,
            outputTokens: 10,
            canonicalModel: 'claude-haiku-4-5',
          },
        },
      });
    const r = reportOf(
      fold([
        start(),
        turn('t1'),
        claude('m', 'claude-sonnet-4-5', { input_tokens: 1000, output_tokens: 100 }),
        res(500),
        res(800),
      ]),
    );
    // sonnet from its message only; haiku from the last result (800 in, 10 out): 800 × $1 + 10 × $5 per M
    expect(r.by_model.map((m) => [m.model, m.input_tokens, m.records])).toEqual([
      ['claude-sonnet-4-5', 1000, 1],
      ['claude-haiku-4-5-20251001', 800, 1],
    ]);
    expect(r.by_model[1]!.cost_micros).toBe(850);
    expect(r.total.reported_cost_usd).toBe(0.1); // the run's latest total, not the sum of two
  });

  it('an unknown model or a model-less record is counted in tokens and named unpriced', () => {
    const r = reportOf(
      fold([start(), turn('t1'), claude('m1', 'no-such-model-9', { input_tokens: 10, output_tokens: 1 })]),
    );
    expect(r.total).toMatchObject({ input_tokens: 10, records: 1, unpriced_records: 1, cost_usd: null });
  });
});

describe('Codex running totals', () => {
  it('counts the advance of the total; a copy is skipped and never lands in the next turn', () => {
    const deltas = fold([
      start('codex'),
      turn('t1'),
      codex({ input_tokens: 1000, cached_input_tokens: 800, output_tokens: 0 }),
      codex({ input_tokens: 1000, cached_input_tokens: 800, output_tokens: 0 }), // a copy
      end('t1'),
      turn('t2'),
      codex({ input_tokens: 1000, cached_input_tokens: 800, output_tokens: 0 }), // re-emitted at the next turn
      codex({ input_tokens: 2500, cached_input_tokens: 1800, output_tokens: 300 }),
      codex({ input_tokens: 3000, cached_input_tokens: 1800, output_tokens: 300 }),
      end('t2'),
    ]);
    const r = reportOf(deltas, 'turn');
    // OpenAI's input includes the cached part: all input 3000, of which 1800 read from cache.
    expect(r.total).toMatchObject({
      input_tokens: 3000,
      cache_read_tokens: 1800,
      output_tokens: 300,
      turns: 2,
      unknown_turns: 0,
    });
    expect(r.groups!.map((g) => [g.key, g.input_tokens, g.records])).toEqual([
      ['t1', 1000, 1],
      ['t2', 2000, 2],
    ]);
    // gpt-5: uncached (3000 − 1800) × $1.25/M + 1800 × $0.125/M + 300 × $10/M = 1,500 + 225 + 3,000
    expect(r.total.cost_micros).toBe(4_725);
  });

  it('a total below the last one starts a new running total', () => {
    const r = reportOf(
      fold([
        start('codex'),
        turn('t1'),
        codex({ input_tokens: 500, output_tokens: 5 }),
        codex({ input_tokens: 200, output_tokens: 2 }),
      ]),
    );
    expect(r.total).toMatchObject({ input_tokens: 700, output_tokens: 7 });
  });
});

describe('hcn usage (seed 002)', () => {
  it('session snapshots: the latest per model, never a sum', () => {
    const r = reportOf(
      fold([
        start('hcn'),
        turn('t1'),
        hcn({
          scope: 'session',
          model: 'gpt-5',
          inputTokens: 100,
          outputTokens: 10,
          cacheReadTokens: 40,
          inputIncludesCache: true,
        }),
        turn('t2'),
        hcn({
          scope: 'session',
          model: 'gpt-5',
          inputTokens: 250,
          outputTokens: 30,
          cacheReadTokens: 90,
          inputIncludesCache: true,
        }),
        hcn({
          scope: 'session',
          model: 'gpt-5',
          inputTokens: 250,
          outputTokens: 30,
          cacheReadTokens: 90,
          inputIncludesCache: true,
        }),
      ]),
    );
    expect(r.total).toMatchObject({
      input_tokens: 250,
      output_tokens: 30,
      cache_read_tokens: 90,
      unknown_turns: 0,
    });
  });

  it('a wider scope replaces what a narrower one counted; missing figures stay unknown', () => {
    const r = reportOf(
      fold([
        start('hcn'),
        turn('t1'),
        hcn({
          scope: 'turn',
          model: 'claude-sonnet-4-5',
          inputTokens: 10,
          outputTokens: 5,
          inputIncludesCache: false,
        }),
        hcn({
          scope: 'session',
          model: 'claude-sonnet-4-5',
          inputTokens: 30,
          outputTokens: 6,
          inputIncludesCache: false,
          costUsd: 0.01,
        }),
        hcn({ scope: 'turn', model: 'claude-sonnet-4-5', inputTokens: 99, outputTokens: 99 }), // overlaps: not counted
      ]),
    );
    expect(r.total).toMatchObject({ input_tokens: 30, output_tokens: 6, reported_cost_usd: 0.01 });
    const partial = reportOf(
      fold([start('hcn'), turn('t1'), hcn({ scope: 'message', model: 'x', outputTokens: 5 })]),
    );
    expect(partial.total).toMatchObject({
      output_tokens: 5,
      partial_records: 1,
      unpriced_records: 1,
      cost_usd: null,
    });
  });

  it('cache counts with no inputIncludesCache leave input unknown', () => {
    const r = reportOf(
      fold([
        start('hcn'),
        turn('t1'),
        hcn({ scope: 'turn', inputTokens: 10, outputTokens: 1, cacheReadTokens: 5 }),
      ]),
    );
    expect(r.total).toMatchObject({ input_tokens: 0, cache_read_tokens: 5, partial_records: 1 });
  });
});

describe('unknown turns and people', () => {
  it('a turn no source reported usage for is unknown in every total', () => {
    const r = reportOf(
      fold([
        start(),
        msg('m_1', 'priya'),
        turn('t1', ['m_1']),
        claude('a', 'claude-sonnet-4-5', { input_tokens: 1, output_tokens: 1 }),
        end('t1'),
        msg('m_2', 'sam'),
        turn('t2', ['m_2']),
        end('t2'),
      ]),
      'person',
    );
    expect(r.total).toMatchObject({ turns: 2, unknown_turns: 1 });
    expect(r.groups!.map((g) => [g.key, g.turns, g.unknown_turns, g.records])).toEqual([
      ['priya', 1, 0, 1],
      ['sam', 1, 1, 0],
    ]);
    const none = reportOf(fold([start(), turn('t1'), end('t1')]));
    expect(none.total).toMatchObject({ cost_usd: null, unknown_turns: 1 });
  });

  it('usage written after turn.end belongs to that turn, not the next', () => {
    const r = reportOf(
      fold([
        start(),
        turn('t1'),
        end('t1'),
        claude('a', 'claude-sonnet-4-5', { input_tokens: 7, output_tokens: 1 }),
        turn('t2'),
      ]),
      'turn',
    );
    expect(r.groups!.map((g) => [g.key, g.input_tokens, g.unknown_turns])).toEqual([
      ['t1', 7, 0],
      ['t2', 0, 1],
    ]);
  });
});

describe('figures that are not counts', () => {
  it('a fraction, a string, a negative or an absurd count is unknown, never summed', () => {
    const r = reportOf(
      fold([
        start(),
        turn('t1'),
        claude('a', 'claude-sonnet-4-5', { input_tokens: 1e300, output_tokens: 5 }),
        claude('b', 'claude-sonnet-4-5', { input_tokens: '7', output_tokens: -1 }),
        claude('c', 'claude-sonnet-4-5', { input_tokens: 2.5, output_tokens: 3 }, 1e300),
      ]),
    );
    // only the outputs 5 and 3 are counts; inputs unknown, so no list price; the absurd cost not kept
    expect(r.total).toMatchObject({
      input_tokens: 0,
      output_tokens: 8,
      records: 2,
      partial_records: 2,
      unpriced_records: 2,
      cost_usd: null,
      reported_cost_usd: null,
    });
    expect(Number.isSafeInteger(r.total.output_tokens)).toBe(true);
  });
});

describe('the model’s own words', () => {
  it('a declared writer’s usage notes count nothing: its turns stay unknown', () => {
    const declared = ev('writer.start', {
      writer_id: W,
      meta: { agent: 'claude-code', provenance: 'declared' },
    });
    const r = reportOf(
      fold([
        declared,
        turn('t1'),
        claude('a', 'claude-sonnet-4-5', { input_tokens: 9e6, output_tokens: 9e6 }),
      ]),
    );
    expect(r.total).toMatchObject({
      input_tokens: 0,
      records: 0,
      turns: 1,
      unknown_turns: 1,
      cost_usd: null,
    });
  });
});

describe('kept as it arrives = recomputed', () => {
  it('folding chunk by chunk through a stored state gives the one-pass result', () => {
    const events = [
      start(),
      msg('m_1', 'priya'),
      turn('t1', ['m_1']),
      claude('a', 'claude-sonnet-4-5', { input_tokens: 1, output_tokens: 1 }),
      claude('a', 'claude-sonnet-4-5', { input_tokens: 1, output_tokens: 9 }),
      claude('b', 'claude-sonnet-4-5', { input_tokens: 300_000, output_tokens: 2 }), // the 200 k tier
      end('t1'),
      turn('t2', ['m_1']),
      codex({ input_tokens: 50, output_tokens: 5 }),
      codex({ input_tokens: 50, output_tokens: 5 }),
      codex({ input_tokens: 80, output_tokens: 9 }),
      hcn({ scope: 'turn', model: 'gpt-5', inputTokens: 3, outputTokens: 1, inputIncludesCache: true }),
      hcn({ scope: 'session', model: 'gpt-5', inputTokens: 9, outputTokens: 2, inputIncludesCache: true }),
      end('t2'),
      turn('t3'),
    ];
    const whole = reportOf(fold(events));
    for (let trial = 0; trial < 50; trial++) {
      let state: FoldState = newFoldState();
      const out: UsageDelta[] = [];
      let i = 0;
      while (i < events.length) {
        const n = 1 + Math.floor(Math.random() * 4);
        for (const e of events.slice(i, i + n)) foldEvent(state, W, e, out);
        i += n;
        state = JSON.parse(JSON.stringify(state)) as FoldState; // as ingest stores it between chunks
      }
      expect(reportOf(out)).toEqual(whole);
    }
    expect(whole.total).toMatchObject({ turns: 3, unknown_turns: 1, records: 5 });
  });
});

describe('the price data named beside every figure', () => {
  it('is the installed genai-prices package, whose version is its data’s', () => {
    const pkg = JSON.parse(
      readFileSync(
        new URL('../../../node_modules/@pydantic/genai-prices/package.json', import.meta.url),
        'utf8',
      ),
    ) as { version: string };
    expect(PRICE_DATA).toBe(`@pydantic/genai-prices ${pkg.version}`);
    expect(reportOf([]).price_data).toBe(PRICE_DATA);
  });
});

describe('a fold state stays small whatever the lines hold', () => {
  it('names, models, ids and keys of a megabyte are cut: the stored state stays under 64 KiB', () => {
    const big = 'é'.repeat(1 << 20);
    const s = newFoldState();
    const out: UsageDelta[] = [];
    foldEvent(s, W, ev('writer.start', { writer_id: W, meta: { agent: big } }), out);
    for (let i = 0; i < 100; i++) {
      foldEvent(s, W, { ...msg(`${big}${i}`, `${big}${i}`) }, out);
      foldEvent(s, W, turn(`${big}${i}`, [`${big}${i}`]), out);
      foldEvent(s, W, claude(`${big}${i}`, `${big}${i}`, { input_tokens: 1, output_tokens: 1 }), out);
      foldEvent(
        s,
        W,
        hcn({ scope: 'session', model: `${big}${i}`, inputTokens: i + 1, outputTokens: 1 }),
        out,
      );
    }
    expect(JSON.stringify(s).length).toBeLessThan(64 * 1024);
    expect(out.every((d) => (d.person ?? '').length <= 64 && (d.model ?? '').length <= 100)).toBe(true);
  });
});

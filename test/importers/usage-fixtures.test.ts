/**
 * Totals over the imported fixtures match a hand-computed table (issue 27 "Done when"): each fixture is
 * imported by the real importer into a session directory, and its segments folded by the counting rules
 * (lib/log/analyse/usage/, docs/usage.md), as `hansard usage DIR` does. Prices: genai-prices 0.1.8.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  importClaudeCodeStream,
  importClaudeCodeTranscript,
  importCodexRollout,
} from '../../lib/importers/index.js';
import { foldSessionDir, reportOf, type UsageReport } from '../../lib/log/analyse/usage/index.js';

const out = mkdtempSync(join(tmpdir(), 'hansard-usage-fixtures-'));
afterAll(() => rmSync(out, { recursive: true, force: true }));

const fixture = (p: string) => new URL(`../fixtures/${p}`, import.meta.url).pathname;

async function usageOf(imported: Promise<{ dir: string }>): Promise<UsageReport> {
  const { deltas } = await foldSessionDir((await imported).dir);
  return reportOf(deltas);
}

describe('totals over the imported fixtures', () => {
  it('Claude Code transcript (real/ccl-representative_messages.jsonl)', async () => {
    const r = await usageOf(
      importClaudeCodeTranscript(fixture('real/ccl-representative_messages.jsonl'), out),
    );
    // five assistant messages of claude-3-sonnet-20240229, no cache:
    //   input 25 + 45 + 78 + 25 + 45 = 218; output 120 + 85 + 95 + 35 + 110 = 445
    //   list price ($3/M in, $15/M out): 218 × 3 + 445 × 15 = 654 + 6,675 = 7,329 µ$
    // four prompts open four turns; the last prompt has no answer in the file: one unknown turn.
    expect(r.total).toMatchObject({
      input_tokens: 218,
      output_tokens: 445,
      cache_read_tokens: 0,
      cache_write_tokens: 0,
      cost_micros: 7_329,
      records: 5,
      turns: 4,
      unknown_turns: 1,
      reported_cost_usd: null,
    });
    expect(r.by_model.map((m) => m.model)).toEqual(['claude-3-sonnet-20240229']);
  });

  it('Claude Code stream-json (real/hcn-harnesses-claude.ndjson): the list price equals the vendor’s own cost', async () => {
    const r = await usageOf(importClaudeCodeStream(fixture('real/hcn-harnesses-claude.ndjson'), out));
    // one claude-opus-5 message: input 2 + cache write 6,142 (1 h) + cache read 16,016 = 22,160; output 5
    //   2 × $5 + 6,142 × $10 + 16,016 × $0.50 + 5 × $25 (per M) = 10 + 61,420 + 8,008 + 125 = 69,563 µ$
    // and a call of Claude Code's own that no message shows, only the result's modelUsage
    // (claude-haiku-4-5-20251001: 897 in, 9 out): 897 × $1 + 9 × $5 (per M) = 897 + 45 = 942 µ$
    // total 70,505 µ$: the run's own total_cost_usd, $0.070505, kept beside (never added).
    expect(r.total).toMatchObject({
      input_tokens: 22_160 + 897,
      output_tokens: 5 + 9,
      cache_read_tokens: 16_016,
      cache_write_tokens: 6_142,
      cost_micros: 70_505,
      reported_cost_usd: 0.070505,
      records: 2,
      turns: 1,
      unknown_turns: 0,
    });
    expect(r.by_model.map((m) => [m.model, m.cost_micros])).toEqual([
      ['claude-opus-5', 69_563],
      ['claude-haiku-4-5-20251001', 942],
    ]);
  });

  it('Codex 0.169.0 rollout (real-client/codex-0.169.0-rollout.jsonl): running totals, a model without a price', async () => {
    const r = await usageOf(importCodexRollout(fixture('real-client/codex-0.169.0-rollout.jsonl'), out));
    // two responses of 50 in / 12 out; the thread total goes 62 → 124 tokens (token_count repeats it)
    expect(r.total).toMatchObject({
      input_tokens: 100,
      output_tokens: 24,
      records: 2,
      unpriced_records: 2,
      cost_usd: null,
      turns: 1,
      unknown_turns: 0,
    });
    expect(r.by_model.map((m) => m.model)).toEqual(['gpt-fake']);
  });

  it('Codex rollout with tools (synthetic/codex-rollout-tools.jsonl)', async () => {
    const r = await usageOf(importCodexRollout(fixture('synthetic/codex-rollout-tools.jsonl'), out));
    // one thread total of 5,200 in / 310 out, in the first of two turns
    expect(r.total).toMatchObject({
      input_tokens: 5_200,
      output_tokens: 310,
      records: 1,
      turns: 2,
      unknown_turns: 1,
    });
  });
});

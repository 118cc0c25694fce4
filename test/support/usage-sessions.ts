/**
 * Two sessions of token usage written by the real library writer, as the capture hook and the importers
 * record usage (`token_usage` notes, lib/log/format/usage-note.ts), and their usage computed by hand: what
 * the usage suites upload and compare with (test/http/usage.test.ts, test/store/usage-backends.test.ts).
 *
 * Prices: @pydantic/genai-prices 0.1.8 (per million tokens) —
 *   claude-sonnet-4-5: input $3, cache write (5 min) $3.75, cache read $0.30, output $15;
 *   gpt-5: input $1.25, cached input $0.125, output $10.
 */
import { newId, openSession } from '../../lib/log/index.js';
import { type LocalSegment, readLocal } from './segments.js';

/** Times of the sessions: today (UTC) at 10:00, a second apart (the budget counts this month). */
const base = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate(), 10);
export const TODAY = new Date(base).toISOString().slice(0, 10);
let tick = 0;
const at = () => (base + ++tick * 1000) * 1000;

const usageNote = (source: string, fields: Record<string, unknown>) => ({
  at: at(),
  extra: { import_kind: 'token_usage', usage_source: source, ...fields },
});

/**
 * A Claude Code-shaped session as the capture hook writes it: priya's prompt, a turn whose message
 * msg_A is streamed as three records (output 1, 40, 212), a tool call, a second message msg_B; then
 * sam's prompt and a turn with no usage (an unknown turn).
 */
export function claudeSession(root: string, sid = newId('s')): LocalSegment {
  const s = openSession(root, { sid, agent: 'claude-code', host: 'test-host', pid: 1 });
  const m1 = s.message({ user_id: 'priya', text: 'fix the flaky test' }, { at: at() });
  const t1 = s.turnStart({ context_message_ids: [m1.id] }, { at: at() });
  const usageA = { input_tokens: 10, cache_creation_input_tokens: 1000, cache_read_input_tokens: 5000 };
  for (const output_tokens of [1, 40, 212]) {
    const n = usageNote('claude_message', {
      message_id: 'msg_A',
      model: 'claude-sonnet-4-5',
      usage: { ...usageA, output_tokens },
    });
    s.note({ author: 'claude-code', text: 'token usage' }, n);
  }
  const a = s.action({ turn_id: t1.id, tool: 'Bash', input: { command: 'npm test' } }, { at: at() });
  s.actionResult({ action_id: a.id, status: 'ok', output: 'passed', exit_code: 0 }, { at: at() });
  s.note(
    { author: 'claude-code', text: 'token usage' },
    usageNote('claude_message', {
      message_id: 'msg_B',
      model: 'claude-sonnet-4-5',
      usage: {
        input_tokens: 20,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 6000,
        output_tokens: 100,
      },
    }),
  );
  s.output({ turn_id: t1.id, text: 'The test is fixed.' }, { at: at() });
  s.turnEnd({ turn_id: t1.id, status: 'completed' }, { at: at() });
  const m2 = s.message({ user_id: 'sam', text: 'and the docs?' }, { at: at() });
  const t2 = s.turnStart({ context_message_ids: [m2.id] }, { at: at() });
  s.turnEnd({ turn_id: t2.id, status: 'completed' }, { at: at() });
  s.end({ reason: 'done' }, { at: at() });
  return readLocal({ sid: s.sid, w: s.w, dir: s.dir, path: s.path });
}

/**
 * A Codex-shaped session: each token_count carries the thread's running total; the total is repeated
 * without advancing after the answer and again at the next turn's start (copies).
 */
export function codexSession(root: string): LocalSegment {
  const s = openSession(root, { sid: newId('s'), agent: 'codex', host: 'test-host', pid: 2 });
  const total = (input_tokens: number, cached_input_tokens: number, output_tokens: number) =>
    s.note(
      { author: 'codex', text: 'token usage' },
      usageNote('codex_total', {
        model: 'gpt-5',
        thread_token_usage: {
          input_tokens,
          cached_input_tokens,
          output_tokens,
          total_tokens: input_tokens + output_tokens,
        },
      }),
    );
  const m1 = s.message({ user_id: 'priya', text: 'rename the module' }, { at: at() });
  const t1 = s.turnStart({ context_message_ids: [m1.id] }, { at: at() });
  total(1000, 200, 50);
  total(1000, 200, 50); // a copy: skipped
  s.turnEnd({ turn_id: t1.id, status: 'completed' }, { at: at() });
  const m2 = s.message({ user_id: 'priya', text: 'now the tests' }, { at: at() });
  const t2 = s.turnStart({ context_message_ids: [m2.id] }, { at: at() });
  total(1000, 200, 50); // a copy at the next turn's start: skipped, never landed in this turn
  total(2500, 1200, 130);
  s.turnEnd({ turn_id: t2.id, status: 'completed' }, { at: at() });
  s.end({ reason: 'done' }, { at: at() });
  return readLocal({ sid: s.sid, w: s.w, dir: s.dir, path: s.path });
}

/**
 * The Claude session by hand (hansard's input includes cache reads and writes: docs/usage.md):
 *   msg_A (its last record): input 10 + 1,000 + 5,000 = 6,010; cache write 1,000; cache read 5,000; output 212
 *     cost 10 × 3 + 1,000 × 3.75 + 5,000 × 0.30 + 212 × 15 = 30 + 3,750 + 1,500 + 3,180 = 8,460 µ$
 *   msg_B: input 20 + 0 + 6,000 = 6,020; cache read 6,000; output 100
 *     cost 20 × 3 + 6,000 × 0.30 + 100 × 15 = 60 + 1,800 + 1,500 = 3,360 µ$
 *   total: input 12,030; output 312; cache read 11,000; cache write 1,000; 11,820 µ$; 2 records;
 *   2 turns, 1 unknown (sam's); priya's turn holds both messages.
 */
export const CLAUDE = {
  input_tokens: 12_030,
  output_tokens: 312,
  cache_read_tokens: 11_000,
  cache_write_tokens: 1_000,
  cost_micros: 11_820,
  cost_usd: 0.01182,
  reported_cost_usd: null,
  records: 2,
  unpriced_records: 0,
  partial_records: 0,
  turns: 2,
  unknown_turns: 1,
};

/**
 * The Codex session by hand (OpenAI's input already includes the cached part):
 *   first total 1,000 in (200 cached) / 50 out: 800 × 1.25 + 200 × 0.125 + 50 × 10 = 1,000 + 25 + 500 = 1,525 µ$
 *   two copies skipped; the advance to 2,500 (1,200) / 130 is 1,500 in (1,000 cached) / 80 out:
 *     500 × 1.25 + 1,000 × 0.125 + 80 × 10 = 625 + 125 + 800 = 1,550 µ$
 *   total: input 2,500; cache read 1,200; output 130; 3,075 µ$; 2 records; 2 turns, none unknown.
 */
export const CODEX = {
  input_tokens: 2_500,
  output_tokens: 130,
  cache_read_tokens: 1_200,
  cache_write_tokens: 0,
  cost_micros: 3_075,
  cost_usd: 0.003075,
  reported_cost_usd: null,
  records: 2,
  unpriced_records: 0,
  partial_records: 0,
  turns: 2,
  unknown_turns: 0,
};

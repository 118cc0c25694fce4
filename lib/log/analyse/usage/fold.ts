/**
 * The counting rules of token usage (issue 27 item 1, docs/usage.md), as a fold over ONE writer's events
 * in seq order. It turns the writer's `token_usage` notes (lib/log/format/usage-note.ts) and turns into
 * signed deltas (`UsageDelta`) that a total adds up: a later record that replaces an earlier one yields a
 * retraction of the earlier figures and the new ones. Ingest folds each chunk from the state it saved
 * after the previous one (lib/service/usage/); `hansard usage` and `--recompute` fold whole segments; both
 * call this, so a total kept as the data arrived equals the total recomputed from the segments.
 *
 * Rules, per source:
 * - `claude_message`: one record per assistant message id; a record repeating one of the writer's last
 *   `RECENT_MAX` message ids replaces it (a streamed message is written several times with a growing
 *   output count: the last figures count, once).
 * - `claude_result`: a run's own report; its cost is kept as the vendor's reported cost. Its tokens are
 *   counted only for the models of its `modelUsage` that no message of the writer names (Claude Code's
 *   own calls to a smaller model), one record per model, the latest result's figures.
 * - `codex_total`: Codex's running total of the thread; what a record adds is the advance of the total
 *   over the last one counted. A record whose total did not advance is a copy (skipped, and never landed
 *   in the next turn); a total below the last one starts a new running total (counted whole).
 * - `hcn` (seed 002): one scope per writer, the widest it reported: `session` (cumulative snapshots, per
 *   model, the advance counted as for Codex), else `turn` (the latest per turn and model), else
 *   `message`/`tool`/`compaction` (each counted; a repeated `callId` replaces). When a wider scope first
 *   appears, what the narrower one counted is retracted (in the current turn). Missing figures are unknown.
 * - Every turn (`turn.start`) counts; a turn no usage record lands in is an unknown turn. A usage record
 *   outside a turn belongs to the writer's last turn (none: to no turn).
 * - A writer whose `writer.start` declares `meta.provenance: declared` (the model's own words, as MCP
 *   capture writes them: lib/log/format/provenance.ts) counts no usage: its turns stay unknown.
 * - A turn's person is the `user_id` of its first context message that this writer wrote (the capture
 *   hook and the importers write the person's prompt in the agent's writer); otherwise unattributed.
 */
import { nameForm } from '../../format/names.js';
import { provenanceOf } from '../../format/provenance.js';
import { cutText } from '../../format/text-cut.js';
import { parseTs } from '../../format/time.js';
import { type UsageSource, usageSourceOf } from '../../format/usage-note.js';
import {
  advanced,
  FIGURE_KEYS,
  fromAnthropic,
  fromHcn,
  fromOpenAI,
  minus,
  negate,
  sameFigures,
  type UsageFigures,
} from './figures.js';
import { listPrice, type PriceProvider, usdToMicros } from './price.js';

/** Replaceable records remembered per writer (Claude message ids, hcn turn and call keys). */
export const RECENT_MAX = 32;
/** Models whose hcn session snapshots a writer keeps. */
export const HCN_MODELS_MAX = 32;
/** Message ids remembered per writer to name a turn's person. */
export const PEOPLE_MAX = 64;

/** One signed change to the totals; a total is the sum of its deltas. */
export interface UsageDelta {
  w: string;
  /** the turn the usage belongs to; null: none (a record before any turn) */
  turn_id: string | null;
  /** the record's time (µs since the epoch); 0 when no time was readable */
  at: number;
  /** UTC day `YYYY-MM-DD` of `at`, or `unknown` */
  day: string;
  agent: string | null;
  /** the `user_id` whose message the turn answers; null: unattributed */
  person: string | null;
  model: string | null;
  source: UsageSource | null;
  /** token figures added (negative: retracted); null for a delta of turns only */
  figures: UsageFigures | null;
  /** list price added, micro-dollars; null when these figures have no list price */
  cost_micros: number | null;
  /** usage records added (+1, or -1 for a retraction) */
  records: number;
  /** records without a list price added (+1/-1) */
  unpriced: number;
  /** a cost the vendor reported itself, micro-dollars (kept beside ours, never added to it) */
  reported_cost_micros: number | null;
  /** turns added */
  turns: number;
  /** turns without usage added (+1 when a turn starts, -1 when its first usage lands) */
  unknown_turns: number;
}

/** A counted record that a later one may replace. */
interface Counted {
  key: string;
  model: string | null;
  figures: UsageFigures;
  cost_micros: number | null;
  reported_cost_micros: number | null;
  turn_id: string | null;
  person: string | null;
  at: number;
}

/** A writer's fold state between chunks: JSON, bounded (the ingest path stores it with the writer). */
export interface FoldState {
  v: 1;
  agent: string | null;
  /** the writer says its events are the model's own words (`meta.provenance: declared`): its usage records count for nothing */
  declared?: boolean;
  /** Claude models this writer's messages named (without a context mark), at most `HCN_MODELS_MAX` */
  claude_models?: string[];
  /** the last `claude_result` total cost counted as reported, micro-dollars */
  claude_reported?: number;
  /** the writer's last turn (open or ended) */
  turn: { id: string; person: string | null; open: boolean; has_usage: boolean } | null;
  /** [message id, user_id] of the writer's last `PEOPLE_MAX` messages */
  people: [string, string][];
  recent: Counted[];
  /** Codex: the running total last counted */
  codex: UsageFigures | null;
  /** hcn: the scope counted, its session snapshots by model, what it counted by model */
  hcn_scope: 'session' | 'turn' | 'message' | null;
  hcn_snap: Record<string, UsageFigures>;
  hcn_counted: Record<string, Counted>;
  /** the last readable ts (µs), for records whose own does not parse */
  last_at: number;
}

/** A fresh writer's state. */
export function newFoldState(): FoldState {
  return {
    v: 1,
    agent: null,
    turn: null,
    people: [],
    recent: [],
    codex: null,
    hcn_scope: null,
    hcn_snap: {},
    hcn_counted: {},
    last_at: 0,
  };
}

const HCN_RANK = { message: 1, turn: 2, session: 3 } as const;

/** Longest agent or person name kept, in UTF-16 units (as the board's summaries keep them). */
export const NAME_CHARS = 64;
/** Longest model name, turn id or record key kept: the state and a writer's buckets stay small whatever a line holds. */
export const KEY_CHARS = 100;

/** A non-empty string cut to `max` units on a character boundary, else null. */
function str(v: unknown, max = KEY_CHARS): string | null {
  return typeof v === 'string' && v !== '' ? cutText(v, max) : null;
}

/** A person's or agent's name as totals keep it: NFC, cut to `NAME_CHARS` (lib/store/session-summary.ts). */
function name(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? cutText(nameForm(v), NAME_CHARS) : null;
}

function obj(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/** UTC day of µs since the epoch; `unknown` for 0. */
export function dayOf(at: number): string {
  return at > 0 ? new Date(Math.floor(at / 1000)).toISOString().slice(0, 10) : 'unknown';
}

function providerOf(source: UsageSource, e: Record<string, unknown>, model: string | null): PriceProvider {
  if (source === 'claude_message' || source === 'claude_result') return 'anthropic';
  if (source === 'codex_total') return 'openai';
  const h = str(e.harness)?.toLowerCase() ?? '';
  if (h.startsWith('claude') || model?.startsWith('claude')) return 'anthropic';
  if (h.startsWith('codex')) return 'openai';
  return null;
}

/**
 * Folds one event (a v3 line's object as written: `type`, envelope, fields, unknown fields at the top
 * level) of writer `w` into `s`, appending what it changes to `out`. Events of one writer must come in
 * seq order. Never throws on odd input: what is not a count is unknown.
 */
export function foldEvent(s: FoldState, w: string, e: Record<string, unknown>, out: UsageDelta[]): void {
  const parsed = typeof e.ts === 'string' ? parseTs(e.ts) : null;
  const at = parsed ? parsed.micros : s.last_at;
  if (parsed) s.last_at = parsed.micros;
  switch (e.type) {
    case 'writer.start':
      s.agent = name(obj(e.meta).agent) ?? s.agent;
      if (provenanceOf(e.meta) === 'declared') s.declared = true;
      return;
    case 'message': {
      const id = str(e.id);
      const who = name(e.user_id);
      if (id && who) {
        s.people.push([id, who]);
        if (s.people.length > PEOPLE_MAX) s.people.splice(0, s.people.length - PEOPLE_MAX);
      }
      return;
    }
    case 'turn.start': {
      const id = str(e.turn_id) ?? str(e.id) ?? '';
      const ctx = Array.isArray(e.context_message_ids) ? e.context_message_ids : [];
      let person: string | null = null;
      for (const m of ctx) {
        const hit = s.people.find(([mid]) => mid === m);
        if (hit) {
          person = hit[1];
          break;
        }
      }
      s.turn = { id, person, open: true, has_usage: false };
      out.push(mark(s, w, at, 1, 1));
      return;
    }
    case 'turn.end':
      if (s.turn && s.turn.id === e.turn_id) s.turn.open = false;
      return;
    case 'note': {
      const source = usageSourceOf(e);
      // Usage is a machine record of the runtime: a writer of the model's own words cannot make it.
      if (source && !s.declared) usageRecord(s, w, source, e, at, out);
      return;
    }
    default:
      return;
  }
}

/** A delta of turns only. */
function mark(s: FoldState, w: string, at: number, turns: number, unknown: number): UsageDelta {
  return {
    w,
    turn_id: s.turn?.id ?? null,
    at,
    day: dayOf(at),
    agent: s.agent,
    person: s.turn?.person ?? null,
    model: null,
    source: null,
    figures: null,
    cost_micros: null,
    records: 0,
    unpriced: 0,
    reported_cost_micros: null,
    turns,
    unknown_turns: unknown,
  };
}

/** The turn a usage record lands in; its first usage makes it known. */
function landIn(s: FoldState, w: string, at: number, out: UsageDelta[]): void {
  if (s.turn && !s.turn.has_usage) {
    s.turn.has_usage = true;
    out.push(mark(s, w, at, 0, -1));
  }
}

function counted(
  s: FoldState,
  key: string,
  model: string | null,
  f: UsageFigures,
  cost: number | null,
  reported: number | null,
  at: number,
): Counted {
  return {
    key,
    model,
    figures: f,
    cost_micros: cost,
    reported_cost_micros: reported,
    turn_id: s.turn?.id ?? null,
    person: s.turn?.person ?? null,
    at,
  };
}

/** The delta that adds (sign 1) or retracts (sign -1) a counted record, in its own turn and day. */
function deltaOf(s: FoldState, w: string, source: UsageSource, c: Counted, sign: 1 | -1): UsageDelta {
  return {
    w,
    turn_id: c.turn_id,
    at: c.at,
    day: dayOf(c.at),
    agent: s.agent,
    person: c.person,
    model: c.model,
    source,
    figures: sign === 1 ? c.figures : negate(c.figures),
    cost_micros: c.cost_micros === null ? null : sign * c.cost_micros,
    records: sign,
    unpriced: c.cost_micros === null ? sign : 0,
    reported_cost_micros: c.reported_cost_micros === null ? null : sign * c.reported_cost_micros,
    turns: 0,
    unknown_turns: 0,
  };
}

function price(
  source: UsageSource,
  e: Record<string, unknown>,
  model: string | null,
  f: UsageFigures,
  at: number,
): number | null {
  return listPrice(
    f,
    model,
    providerOf(source, e, model),
    new Date(at > 0 ? Math.floor(at / 1000) : Date.now()),
  ).micros;
}

/** Counts a keyed record, replacing the one of the same key among the writer's recent ones. */
function replaceable(s: FoldState, w: string, source: UsageSource, c: Counted, out: UsageDelta[]): void {
  const i = s.recent.findIndex((r) => r.key === c.key);
  if (i !== -1) {
    const old = s.recent[i]!;
    if (
      sameFigures(old.figures, c.figures) &&
      old.model === c.model &&
      old.reported_cost_micros === c.reported_cost_micros
    )
      return;
    s.recent.splice(i, 1);
    out.push(deltaOf(s, w, source, old, -1));
    // the replacement stays where the first record landed (its turn and day)
    c = { ...c, turn_id: old.turn_id, person: old.person, at: old.at };
  }
  s.recent.push(c);
  if (s.recent.length > RECENT_MAX) s.recent.splice(0, s.recent.length - RECENT_MAX);
  out.push(deltaOf(s, w, source, c, 1));
}

function usageRecord(
  s: FoldState,
  w: string,
  source: UsageSource,
  e: Record<string, unknown>,
  at: number,
  out: UsageDelta[],
): void {
  const model = str(e.model);
  if (source === 'claude_message') {
    const f = fromAnthropic(e.usage);
    if (!f) return;
    landIn(s, w, at, out);
    if (model !== null) {
      s.claude_models ??= [];
      const m = claudeModel(model);
      if (!s.claude_models.includes(m)) s.claude_models.push(m);
      if (s.claude_models.length > HCN_MODELS_MAX) s.claude_models.shift();
    }
    const key = `claude:${str(e.message_id) ?? str(e.id) ?? ''}`;
    const c = counted(s, key, model, f, price(source, e, model, f, at), usdToMicros(e.cost_usd), at);
    replaceable(s, w, source, c, out);
    return;
  }
  if (source === 'claude_result') {
    // a later result's total is the run's so far: it replaces the one before
    const reported = usdToMicros(e.total_cost_usd);
    if (reported !== null && reported !== (s.claude_reported ?? null)) {
      landIn(s, w, at, out);
      const d = reported - (s.claude_reported ?? 0);
      s.claude_reported = reported;
      out.push({ ...mark(s, w, at, 0, 0), model, source, reported_cost_micros: d });
    }
    resultOnlyModels(s, w, e, at, out);
    return;
  }
  if (source === 'codex_total') {
    codexRecord(s, w, e, model, at, out);
    return;
  }
  hcnRecord(s, w, e, model, at, out);
}

/** A model name as Claude Code writes it in `modelUsage` (`claude-opus-5[1m]`), without its context mark. */
function claudeModel(m: string): string {
  return m.replace(/\[[^\]]*\]$/, '');
}

/**
 * The models of a run's `modelUsage` that no message of the writer names (Claude Code's own calls: a
 * title, a summary, a check by a smaller model) are counted from the run's own figures, one record per
 * model (a later result replaces it: its figures are the run's so far). The models the messages name are
 * counted from the messages, never twice.
 */
function resultOnlyModels(
  s: FoldState,
  w: string,
  e: Record<string, unknown>,
  at: number,
  out: UsageDelta[],
): void {
  const mu = obj(e.modelUsage);
  for (const [raw, v] of Object.entries(mu).slice(0, HCN_MODELS_MAX)) {
    const u = obj(v);
    const model = str(claudeModel(raw));
    if (model === null) continue;
    const canonical = str(u.canonicalModel);
    const seen = s.claude_models ?? [];
    if (seen.includes(model) || (canonical !== null && seen.some((m) => m.startsWith(canonical)))) continue;
    const f = fromAnthropic({
      input_tokens: u.inputTokens,
      output_tokens: u.outputTokens,
      cache_creation_input_tokens: u.cacheCreationInputTokens,
      cache_read_input_tokens: u.cacheReadInputTokens,
    });
    if (!f) continue;
    landIn(s, w, at, out);
    const c = counted(s, `claude-run:${model}`, model, f, price('claude_message', e, model, f, at), null, at);
    replaceable(s, w, 'claude_result', c, out);
  }
}

function codexRecord(
  s: FoldState,
  w: string,
  e: Record<string, unknown>,
  model: string | null,
  at: number,
  out: UsageDelta[],
): void {
  const total = fromOpenAI(e.thread_token_usage);
  if (total === null) {
    // one response's own figures, no running total: each record is one response
    const f = fromOpenAI(e.usage) ?? fromOpenAI(e.last_token_usage);
    if (!f) return;
    landIn(s, w, at, out);
    out.push(
      deltaOf(
        s,
        w,
        'codex_total',
        counted(s, '', model, f, price('codex_total', e, model, f, at), null, at),
        1,
      ),
    );
    return;
  }
  const prev = s.codex;
  let add: UsageFigures;
  if (prev === null) add = total;
  else if (advanced(prev, total)) add = minus(total, prev);
  else if (FIGURE_KEYS.some((k) => total[k] !== null && prev[k] !== null && total[k]! < prev[k]!))
    add = total;
  else return; // a copy of the last total: skipped, never landed in this (the next) turn
  s.codex = total;
  landIn(s, w, at, out);
  out.push(
    deltaOf(
      s,
      w,
      'codex_total',
      counted(s, '', model, add, price('codex_total', e, model, add, at), null, at),
      1,
    ),
  );
}

function hcnRecord(
  s: FoldState,
  w: string,
  e: Record<string, unknown>,
  model: string | null,
  at: number,
  out: UsageDelta[],
): void {
  const scope = e.scope === 'session' ? 'session' : e.scope === 'turn' ? 'turn' : 'message';
  const f = fromHcn(e);
  const reported = usdToMicros(e.costUsd);
  if (!f && reported === null) return;
  // Snapshots are kept per model: a writer naming more models than any run uses is not counted past them.
  if (
    scope === 'session' &&
    !((model ?? '') in s.hcn_snap) &&
    Object.keys(s.hcn_snap).length >= HCN_MODELS_MAX
  )
    return;
  if (s.hcn_scope !== null && HCN_RANK[scope] < HCN_RANK[s.hcn_scope]) return; // a narrower scope overlaps
  if (s.hcn_scope !== null && HCN_RANK[scope] > HCN_RANK[s.hcn_scope]) {
    // a wider scope appeared: what the narrower one counted is retracted, here
    for (const c of Object.values(s.hcn_counted))
      out.push(
        deltaOf(s, w, 'hcn', { ...c, turn_id: s.turn?.id ?? null, person: s.turn?.person ?? null, at }, -1),
      );
    s.hcn_counted = {};
    s.recent = s.recent.filter((r) => !r.key.startsWith('hcn:'));
  }
  s.hcn_scope = scope;
  landIn(s, w, at, out);
  const figures = f ?? {
    input_tokens: null,
    output_tokens: null,
    cache_read_tokens: null,
    cache_write_tokens: null,
    cache_write_1h_tokens: 0,
  };
  const mk = model ?? '';
  let add = figures;
  let addReported = reported;
  if (scope === 'session') {
    const prev = s.hcn_snap[mk];
    if (prev && !advanced(prev, figures)) {
      if (sameFigures(prev, figures)) return;
      if (!FIGURE_KEYS.some((k) => figures[k] !== null && prev[k] !== null && figures[k]! < prev[k]!)) return;
    } else if (prev) add = minus(figures, prev);
    s.hcn_snap[mk] = figures;
    const before = s.hcn_counted[mk];
    addReported = reported === null ? null : reported - (before?.reported_cost_micros ?? 0);
  }
  const c = counted(
    s,
    scope === 'turn' ? `hcn:${s.turn?.id ?? ''}:${mk}` : `hcn:${str(e.callId) ?? `${at}:${mk}`}`,
    model,
    add,
    price('hcn', e, model, add, at),
    addReported,
    at,
  );
  if (scope === 'session') {
    out.push(deltaOf(s, w, 'hcn', c, 1));
    s.hcn_counted[mk] = sumCounted(s.hcn_counted[mk], c);
    return;
  }
  const before = s.recent.find((r) => r.key === c.key);
  replaceable(s, w, 'hcn', c, out);
  // What a wider scope would retract, per model: past `HCN_MODELS_MAX` models in one sum (the state
  // stays small whatever a writer names; a retraction then names no model).
  const ck = mk in s.hcn_counted || Object.keys(s.hcn_counted).length < HCN_MODELS_MAX ? mk : OTHER_MODELS;
  const sum = s.hcn_counted[ck];
  const was = before && sum ? subCounted(sum, before) : sum;
  s.hcn_counted[ck] = sumCounted(was, ck === mk ? c : { ...c, model: null });
}

/** The `hcn_counted` key of the models past `HCN_MODELS_MAX`. */
const OTHER_MODELS = '\u0000other';

function addNull(a: number | null, b: number | null): number | null {
  return a === null ? b : b === null ? a : a + b;
}

function sumCounted(a: Counted | undefined, b: Counted): Counted {
  if (!a) return { ...b };
  const f = (x: number | null, y: number | null) => (x === null || y === null ? null : x + y);
  return {
    ...a,
    figures: {
      input_tokens: f(a.figures.input_tokens, b.figures.input_tokens),
      output_tokens: f(a.figures.output_tokens, b.figures.output_tokens),
      cache_read_tokens: f(a.figures.cache_read_tokens, b.figures.cache_read_tokens),
      cache_write_tokens: f(a.figures.cache_write_tokens, b.figures.cache_write_tokens),
      cache_write_1h_tokens: a.figures.cache_write_1h_tokens + b.figures.cache_write_1h_tokens,
    },
    cost_micros: a.cost_micros === null || b.cost_micros === null ? null : a.cost_micros + b.cost_micros,
    reported_cost_micros: addNull(a.reported_cost_micros, b.reported_cost_micros),
  };
}

function subCounted(a: Counted, b: Counted): Counted {
  return sumCounted(a, {
    ...b,
    figures: negate(b.figures),
    cost_micros: b.cost_micros === null ? null : -b.cost_micros,
    reported_cost_micros: b.reported_cost_micros === null ? null : -b.reported_cost_micros,
  });
}

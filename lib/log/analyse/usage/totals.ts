/**
 * Totals of usage deltas (lib/log/analyse/usage/fold.ts), whole or grouped by turn, writer, agent, person,
 * model or day (issue 27 item 3): the shapes `hansard usage --json`, `GET /v1/sessions/{sid}/usage` and
 * `GET /v1/usage` answer with. Money is integer micro-dollars inside; `cost_usd` is derived from them.
 */
import { FIGURE_KEYS } from './figures.js';
import { type FoldState, foldEvent, newFoldState, type UsageDelta } from './fold.js';
import { COST_BASIS, MICROS_PER_USD, PRICE_DATA } from './price.js';

/** Additive counters of usage: what a store keeps per group (all integers, sums of deltas). */
export interface UsageCounters {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** list price of the priced records, micro-dollars */
  cost_micros: number;
  /** what vendors reported themselves, micro-dollars (never added to `cost_micros`) */
  reported_cost_micros: number;
  /** usage records counted */
  records: number;
  /** of those, records with no list price (no model, a model the table lacks, unknown figures) */
  unpriced_records: number;
  /** of those, records with a figure the source did not report */
  partial_records: number;
  /** records that carried a vendor-reported cost */
  reported_records: number;
  turns: number;
  /** turns no usage record landed in */
  unknown_turns: number;
}

/** The counter names, in the order stores keep them. */
export const COUNTER_KEYS = [
  'input_tokens',
  'output_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'cost_micros',
  'reported_cost_micros',
  'records',
  'unpriced_records',
  'partial_records',
  'reported_records',
  'turns',
  'unknown_turns',
] as const satisfies readonly (keyof UsageCounters)[];

/** All-zero counters. */
export function zeroCounters(): UsageCounters {
  return Object.fromEntries(COUNTER_KEYS.map((k) => [k, 0])) as unknown as UsageCounters;
}

/** Adds one delta to `c` (in place) and returns `c`. */
export function addDelta(c: UsageCounters, d: UsageDelta): UsageCounters {
  if (d.figures) {
    for (const k of FIGURE_KEYS) c[k] += d.figures[k] ?? 0;
    if (FIGURE_KEYS.some((k) => d.figures![k] === null)) c.partial_records += d.records;
  }
  c.cost_micros += d.cost_micros ?? 0;
  c.records += d.records;
  c.unpriced_records += d.unpriced;
  if (d.reported_cost_micros !== null) {
    c.reported_cost_micros += d.reported_cost_micros;
    c.reported_records += d.reported_cost_micros >= 0 ? 1 : -1;
  }
  c.turns += d.turns;
  c.unknown_turns += d.unknown_turns;
  return c;
}

/** Adds `b` into `a` (in place) and returns `a`. */
export function addCounters(a: UsageCounters, b: Partial<UsageCounters>): UsageCounters {
  for (const k of COUNTER_KEYS) a[k] += b[k] ?? 0;
  return a;
}

/** A total as answered: counters, and the cost in dollars with what it rests on. */
export interface UsageTotal {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  /** list-price cost in USD; null when no record of it has a list price (unknown, not zero) */
  cost_usd: number | null;
  cost_micros: number | null;
  /** the vendors' own cost reports, USD; null when none reported one */
  reported_cost_usd: number | null;
  records: number;
  unpriced_records: number;
  partial_records: number;
  turns: number;
  unknown_turns: number;
}

/** Counters as an answer's total: unknown stays null. */
export function totalOf(c: UsageCounters): UsageTotal {
  const priced = c.records - c.unpriced_records;
  const costKnown = priced > 0 || (c.records === 0 && c.unknown_turns === 0);
  return {
    input_tokens: c.input_tokens,
    output_tokens: c.output_tokens,
    cache_read_tokens: c.cache_read_tokens,
    cache_write_tokens: c.cache_write_tokens,
    cost_usd: costKnown ? c.cost_micros / MICROS_PER_USD : null,
    cost_micros: costKnown ? c.cost_micros : null,
    reported_cost_usd: c.reported_records > 0 ? c.reported_cost_micros / MICROS_PER_USD : null,
    records: c.records,
    unpriced_records: c.unpriced_records,
    partial_records: c.partial_records,
    turns: c.turns,
    unknown_turns: c.unknown_turns,
  };
}

/** What a total may be grouped by (`--by`, `group_by`). */
export const GROUP_BY = ['turn', 'writer', 'agent', 'person', 'model', 'day'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

/** The group a delta belongs to; null: not in any group of that kind (a turn-only delta has no model). */
export function groupKey(d: UsageDelta, by: GroupBy): string | null {
  switch (by) {
    case 'turn':
      return d.turn_id ?? '(no turn)';
    case 'writer':
      return d.w;
    case 'agent':
      return d.agent ?? '(unnamed)';
    case 'person':
      return d.person ?? '(unattributed)';
    case 'model':
      // a turn-only delta has no model, nor has a run's reported cost that names none
      if (d.figures === null) return d.reported_cost_micros === null ? null : d.model;
      return d.model ?? '(unknown model)';
    case 'day':
      return d.day;
  }
}

/** Deltas summed per group, in first-seen order. */
export function groupCounters(deltas: Iterable<UsageDelta>, by: GroupBy): Map<string, UsageCounters> {
  const out = new Map<string, UsageCounters>();
  for (const d of deltas) {
    const k = groupKey(d, by);
    if (k === null) continue;
    let c = out.get(k);
    if (!c) {
      c = zeroCounters();
      out.set(k, c);
    }
    addDelta(c, d);
  }
  return out;
}

/** One session's (or directory's) usage as answered (`hansard usage --json`, `GET /v1/sessions/{sid}/usage`). */
export interface UsageReport {
  total: UsageTotal;
  by_model: (UsageTotal & { model: string })[];
  /** present when grouped: `--by` / `group_by` */
  by?: GroupBy;
  groups?: (UsageTotal & { key: string })[];
  price_data: string;
  cost_basis: string;
}

/** The report of `deltas`: the total, by model, and grouped when `by` is given. */
export function reportOf(deltas: readonly UsageDelta[], by?: GroupBy): UsageReport {
  const total = zeroCounters();
  for (const d of deltas) addDelta(total, d);
  const byModel = [...groupCounters(deltas, 'model')].map(([model, c]) => ({ model, ...totalOf(c) }));
  const r: UsageReport = {
    total: totalOf(total),
    by_model: byModel,
    price_data: PRICE_DATA,
    cost_basis: COST_BASIS,
  };
  if (by) {
    r.by = by;
    r.groups = [...groupCounters(deltas, by)].map(([key, c]) => ({ key, ...totalOf(c) }));
  }
  return r;
}

/**
 * Folds a session's events (line objects as written, in merged or any order that keeps each writer's seq
 * order) into deltas, one fold state per writer. Returns the deltas and the states (what ingest would have
 * stored after the last event of each writer).
 */
export function foldEvents(events: Iterable<Record<string, unknown>>): {
  deltas: UsageDelta[];
  states: Map<string, FoldState>;
} {
  const states = new Map<string, FoldState>();
  const deltas: UsageDelta[] = [];
  for (const e of events) {
    const w = typeof e.w === 'string' ? e.w : '';
    let s = states.get(w);
    if (!s) {
      s = newFoldState();
      states.set(w, s);
    }
    foldEvent(s, w, e, deltas);
  }
  return { deltas, states };
}

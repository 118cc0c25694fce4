/**
 * Token figures in one convention (issue 27, docs/usage.md "One convention"), and the conversions from
 * each provider's own.
 *
 * hansard's `input_tokens` is ALL input of a request: uncached, cache reads and cache writes together,
 * with `cache_read_tokens` and `cache_write_tokens` the parts of it that were read from or written to a
 * prompt cache. That is OpenAI's convention and the one `@pydantic/genai-prices` prices, so counts and
 * prices never disagree about what "input" means. Anthropic's own `input_tokens` is only the uncached
 * part (`fromAnthropic` adds the cache figures back); OpenAI's and Codex's already include the cached
 * part (`fromOpenAI` keeps it). Output includes reasoning tokens (both providers bill them as output).
 *
 * A figure is `null` when the source did not report it: unknown, never zero.
 */

/** One usage record's token counts, hansard's convention (above). */
export interface UsageFigures {
  /** every input token of the request(s), cache reads and writes included */
  input_tokens: number | null;
  /** output tokens, reasoning included */
  output_tokens: number | null;
  /** the part of `input_tokens` read from a prompt cache */
  cache_read_tokens: number | null;
  /** the part of `input_tokens` written to a prompt cache */
  cache_write_tokens: number | null;
  /** the part of `cache_write_tokens` written for an hour (Anthropic prices it apart); 0 when not reported */
  cache_write_1h_tokens: number;
}

/** The figure names a total sums, in display order. */
export const FIGURE_KEYS = [
  'input_tokens',
  'output_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
] as const;
export type FigureKey = (typeof FIGURE_KEYS)[number];

/** All-zero figures (a known zero). */
export function zeroFigures(): UsageFigures {
  return {
    input_tokens: 0,
    output_tokens: 0,
    cache_read_tokens: 0,
    cache_write_tokens: 0,
    cache_write_1h_tokens: 0,
  };
}

/**
 * Most tokens one record may count (10^12): far past any model's context. Sums stay exact integers up to
 * 2^53 (9,007 records at this bound, billions of real ones) and fit every store (DynamoDB numbers have 38
 * digits).
 */
export const MAX_RECORD_TOKENS = 1e12;

/**
 * A whole number of tokens from 0 to `MAX_RECORD_TOKENS`, else null: a count a source wrote as a string,
 * a fraction, NaN, -1 or 1e300 is not a count, and stays unknown rather than poisoning every total.
 */
export function count(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= MAX_RECORD_TOKENS ? v : null;
}

function obj(v: unknown): Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
}

/**
 * Anthropic's `usage` object (Messages API, as Claude Code records it on each assistant message):
 * `input_tokens` (uncached only), `cache_creation_input_tokens`, `cache_read_input_tokens`,
 * `cache_creation.ephemeral_1h_input_tokens`, `output_tokens`. Null when neither input nor output is a count.
 */
export function fromAnthropic(raw: unknown): UsageFigures | null {
  const u = obj(raw);
  const input = count(u.input_tokens);
  const output = count(u.output_tokens);
  if (input === null && output === null) return null;
  const write = count(u.cache_creation_input_tokens) ?? 0;
  const read = count(u.cache_read_input_tokens) ?? 0;
  const hour = Math.min(count(obj(u.cache_creation).ephemeral_1h_input_tokens) ?? 0, write);
  return {
    input_tokens: input === null ? null : input + write + read,
    output_tokens: output,
    cache_read_tokens: read,
    cache_write_tokens: write,
    cache_write_1h_tokens: hour,
  };
}

/**
 * OpenAI's and Codex's usage (`input_tokens` including `cached_input_tokens`, `output_tokens` including
 * `reasoning_output_tokens`, Codex's `cache_write_input_tokens` where written). OpenAI has no separate
 * cache-write figure: 0 when absent. Null when neither input nor output is a count.
 */
export function fromOpenAI(raw: unknown): UsageFigures | null {
  const u = obj(raw);
  const input = count(u.input_tokens);
  const output = count(u.output_tokens);
  if (input === null && output === null) return null;
  return {
    input_tokens: input,
    output_tokens: output,
    cache_read_tokens: count(u.cached_input_tokens) ?? 0,
    cache_write_tokens: count(u.cache_write_input_tokens) ?? 0,
    cache_write_1h_tokens: 0,
  };
}

/**
 * hcn's `usage` event (seed 002 "Tool results and usage"): `inputIncludesCache: true` means the cache
 * counts overlap `inputTokens` (Codex), `false` that they are separate (added here), absent that the
 * relationship is unknown: then input is unknown whenever a cache count is there. Absent counts stay null.
 */
export function fromHcn(e: Record<string, unknown>): UsageFigures | null {
  const input = count(e.inputTokens);
  const output = count(e.outputTokens);
  const read = count(e.cacheReadTokens);
  const write = count(e.cacheWriteTokens);
  if (input === null && output === null && read === null && write === null) return null;
  let all: number | null = null;
  if (input !== null) {
    if (e.inputIncludesCache === true) all = input;
    else if (e.inputIncludesCache === false) all = input + (read ?? 0) + (write ?? 0);
    else all = read === null && write === null ? input : null;
  }
  return {
    input_tokens: all,
    output_tokens: output,
    cache_read_tokens: read,
    cache_write_tokens: write,
    cache_write_1h_tokens: 0,
  };
}

/** `a - b` figure by figure (null where either is null): what a later record adds to an earlier one. */
export function minus(a: UsageFigures, b: UsageFigures): UsageFigures {
  const d = (x: number | null, y: number | null) => (x === null || y === null ? null : x - y);
  return {
    input_tokens: d(a.input_tokens, b.input_tokens),
    output_tokens: d(a.output_tokens, b.output_tokens),
    cache_read_tokens: d(a.cache_read_tokens, b.cache_read_tokens),
    cache_write_tokens: d(a.cache_write_tokens, b.cache_write_tokens),
    cache_write_1h_tokens: a.cache_write_1h_tokens - b.cache_write_1h_tokens,
  };
}

/** `-f` (a retraction of figures counted before). */
export function negate(f: UsageFigures): UsageFigures {
  return minus(zeroFigures(), f);
}

/** True when `a` and `b` hold the same figures. */
export function sameFigures(a: UsageFigures, b: UsageFigures): boolean {
  return FIGURE_KEYS.every((k) => a[k] === b[k]) && a.cache_write_1h_tokens === b.cache_write_1h_tokens;
}

/** True when no known figure of `a` is above the same figure of `b` and one is below (b advanced past a). */
export function advanced(prev: UsageFigures, next: UsageFigures): boolean {
  let more = false;
  for (const k of FIGURE_KEYS) {
    const x = prev[k];
    const y = next[k];
    if (x === null || y === null) continue;
    if (y < x) return false;
    if (y > x) more = true;
  }
  return more;
}

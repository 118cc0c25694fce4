/**
 * List-price cost of token figures, from the maintained price table of `@pydantic/genai-prices` (issue 27
 * item 2; DESIGN §6d): dated and tiered prices, cache read and write prices, its data bundled in the
 * package (no network). Money is integer micro-dollars (1 USD = 1,000,000); every figure is a list-price
 * equivalent, what the tokens would cost at the provider's published API price on the day they were
 * used, not what anyone paid (a subscription is billed otherwise).
 */
import { calcPrice } from '@pydantic/genai-prices';
import type { UsageFigures } from './figures.js';

/**
 * The price data's version, named beside every cost (the package bundles its data; its version is the
 * data's). test/log/usage/price.test.ts checks it against the installed package.
 */
export const PRICE_DATA = '@pydantic/genai-prices 0.1.8';

/** What a cost rests on, in every answer that carries one. */
export const COST_BASIS = 'list price equivalent (API prices; subscriptions are billed otherwise)';

/** Micro-dollars per US dollar. */
export const MICROS_PER_USD = 1_000_000;

/** The list price of one usage record, or why there is none. */
export type Priced =
  | { micros: number; price_model: string; provider: string }
  | { micros: null; unpriced: 'no_model' | 'unknown_model' | 'unknown_figures' | 'inconsistent_figures' };

/** Providers by the source that reported the usage (genai-prices' provider ids). */
export type PriceProvider = 'anthropic' | 'openai' | null;

const cache = new Map<string, Priced>();

/**
 * The list price of `f` for `model` on `at`'s date, in integer micro-dollars (rounded to the nearest).
 * `provider` narrows the table (null: genai-prices matches the model name across providers). Unknown
 * figures (`null` input or output) are not priced: a guess would look like a fact. Never throws.
 */
export function listPrice(f: UsageFigures, model: string | null, provider: PriceProvider, at: Date): Priced {
  if (model === null || model === '') return { micros: null, unpriced: 'no_model' };
  if (f.input_tokens === null || f.output_tokens === null)
    return { micros: null, unpriced: 'unknown_figures' };
  const usage: Record<string, number> = {
    input_tokens: f.input_tokens,
    output_tokens: f.output_tokens,
    cache_read_tokens: f.cache_read_tokens ?? 0,
    cache_write_tokens: f.cache_write_tokens ?? 0,
  };
  if (f.cache_write_1h_tokens > 0) usage.cache_write_1h_tokens = f.cache_write_1h_tokens;
  const day = at.toISOString().slice(0, 10);
  const key = `${provider}|${model}|${day}|${Object.values(usage).join(',')}`;
  const hit = cache.get(key);
  if (hit) return hit;
  let out: Priced;
  try {
    const r = calcPrice(usage, model, { ...(provider ? { providerId: provider } : {}), timestamp: at });
    out = r
      ? {
          micros: Math.round(r.total_price * MICROS_PER_USD),
          price_model: r.model.id,
          provider: r.provider.id,
        }
      : { micros: null, unpriced: 'unknown_model' };
  } catch {
    // genai-prices refuses figures that contradict each other (cache reads above input): not priced.
    out = { micros: null, unpriced: 'inconsistent_figures' };
  }
  if (cache.size > 10_000) cache.clear();
  cache.set(key, out);
  return out;
}

/** Most dollars one record may report (a million): past it, a figure is not a cost but a fault. */
export const MAX_RECORD_USD = 1e6;

/**
 * A US-dollar amount a vendor reported, as integer micro-dollars; null when it is not a number from 0 to
 * `MAX_RECORD_USD` (a string, NaN, a negative or an absurd figure stays unknown).
 */
export function usdToMicros(v: unknown): number | null {
  return typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_RECORD_USD
    ? Math.round(v * MICROS_PER_USD)
    : null;
}

/**
 * The rate-limit capability (issue 5, STYLE §8): one interface, a no-op, an in-process token bucket for
 * local mode (`memory.ts`) and a fixed-window counter in the DynamoDB state table for AWS (`dynamo.ts`).
 * `lib/http` asks it once per authenticated request, keyed by the token id, and answers 429
 * `rate_limited` with `Retry-After` when it says no. Why these two backends: `docs/adr/0003-rate-limits.md`.
 */
import { z } from 'zod';

/**
 * How many requests a key may make: `limit` per `window_seconds`. `burst` is how many the in-process
 * bucket lets through at once after a quiet spell (default `limit`); the fixed-window counter has no
 * separate burst (it allows `limit` at any moment of a window).
 */
export const RateLimitConfig = z.strictObject({
  limit: z.number().int().min(1).max(1_000_000).default(600),
  window_seconds: z.number().int().min(1).max(86_400).default(60),
  burst: z.number().int().min(1).max(1_000_000).optional(),
});
export type RateLimitConfig = z.infer<typeof RateLimitConfig>;
export type RateLimitConfigInput = z.input<typeof RateLimitConfig>;

/** The answer for one request. */
export interface RateLimitDecision {
  allowed: boolean;
  /** the configured `limit` and `window_seconds` (for the 429's details) */
  limit: number;
  window_seconds: number;
  /** requests left now (0 when refused) */
  remaining: number;
  /** whole seconds until a refused key may try again, at least 1; 0 when allowed */
  retry_after_seconds: number;
}

export interface RateLimiter {
  /**
   * Counts a request of `key` (a root token id) and says whether it may go ahead. A refused request is
   * not counted.
   * @param cost how many requests' worth this one takes, 1 by default (minting a token costs more);
   *   at most `limit` is charged, so no request is refused forever
   * @param perMinute the limit of this key in requests a minute instead of the configured `limit` (the
   *   token's tenant's own, issue 17.3), scaled to the limiter's window (`perMinuteLimit`); at least 1
   * @throws RateLimiterError when the limiter's backend cannot answer (the caller decides what to do)
   */
  limit(key: string, cost?: number, perMinute?: number): Promise<RateLimitDecision>;
}

/**
 * The limit per `window_seconds` of a rate of `perMinute` requests a minute (rounded, at least 1), or
 * `config.limit` when none is given: what a limiter holds a key to.
 */
export function perMinuteLimit(config: RateLimitConfig, perMinute: number | undefined): number {
  if (perMinute === undefined) return config.limit;
  return Math.max(1, Math.round((perMinute * config.window_seconds) / 60));
}

/** The limiter's backend failed (e.g. DynamoDB unreachable); `cause` is the backend's error. */
export class RateLimiterError extends Error {
  override name = 'RateLimiterError';
}

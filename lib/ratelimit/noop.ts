/** A `RateLimiter` that lets everything through: `createApp`'s default, and tests that do not limit. */
import type { RateLimitDecision, RateLimiter } from './interface.js';

export class NoopRateLimiter implements RateLimiter {
  async limit(_key: string, _cost?: number, _perMinute?: number): Promise<RateLimitDecision> {
    return {
      allowed: true,
      limit: Number.POSITIVE_INFINITY,
      window_seconds: 0,
      remaining: Number.POSITIVE_INFINITY,
      retry_after_seconds: 0,
    };
  }
}

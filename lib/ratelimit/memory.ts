/**
 * `MemoryRateLimiter`: a token bucket per key in this process (local mode: one `hansard serve`). Each key's
 * bucket holds up to `burst` requests (default `limit`) and refills at `limit / window_seconds` per
 * second, so a steady client gets `limit` per window and an idle one may send a burst. State is lost on
 * restart, which for one local server only means a fresh allowance.
 */
import {
  RateLimitConfig,
  type RateLimitConfigInput,
  type RateLimitDecision,
  type RateLimiter,
} from './interface.js';

/**
 * A bucket in integer units, so that refills are exact: one request costs `window_seconds * 1000` units,
 * and every ms adds `limit` units (`limit` requests per window), up to `burst` requests' worth.
 */
interface Bucket {
  units: number;
  /** when `units` was last brought up to date, in ms */
  at: number;
}

/** Above this many keys, buckets that have refilled completely are dropped (they equal a new bucket). */
const SWEEP_AT = 10_000;

/**
 * @example
 * const limiter = new MemoryRateLimiter({ limit: 600, window_seconds: 60 });
 * const d = await limiter.limit(caller.id); // d.allowed, d.retry_after_seconds
 */
export class MemoryRateLimiter implements RateLimiter {
  readonly config: RateLimitConfig;
  /** units of one request, and of a full bucket */
  private readonly cost: number;
  private readonly capacity: number;
  private readonly now: () => number;
  private readonly buckets = new Map<string, Bucket>();

  /**
   * @param config see `RateLimitConfig` (zod-checked: throws a ZodError for a bad one)
   * @param opts.now the clock in whole ms since the epoch; tests move it by hand
   */
  constructor(config: RateLimitConfigInput = {}, opts: { now?: () => number } = {}) {
    this.config = RateLimitConfig.parse(config);
    this.cost = this.config.window_seconds * 1000;
    this.capacity = (this.config.burst ?? this.config.limit) * this.cost;
    this.now = opts.now ?? Date.now;
  }

  async limit(key: string, cost = 1): Promise<RateLimitDecision> {
    const now = this.now();
    const bucket = this.refill(key, now);
    const { limit, window_seconds } = this.config;
    // Never more than a full bucket: a request that costs more could never pass.
    const units = Math.min(Math.max(1, Math.ceil(cost)) * this.cost, this.capacity);
    if (bucket.units >= units) {
      bucket.units -= units;
      const remaining = Math.floor(bucket.units / this.cost);
      return { allowed: true, limit, window_seconds, remaining, retry_after_seconds: 0 };
    }
    const waitMs = (units - bucket.units) / limit;
    return {
      allowed: false,
      limit,
      window_seconds,
      remaining: 0,
      retry_after_seconds: Math.max(1, Math.ceil(waitMs / 1000)),
    };
  }

  /** The key's bucket, refilled for the time since it was last used (a new key's is full). */
  private refill(key: string, now: number): Bucket {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= SWEEP_AT) this.sweep(now);
      bucket = { units: this.capacity, at: now };
      this.buckets.set(key, bucket);
      return bucket;
    }
    // A clock that steps back gives nothing back and takes nothing away.
    const elapsed = Math.max(0, now - bucket.at);
    bucket.units = Math.min(this.capacity, bucket.units + elapsed * this.config.limit);
    bucket.at = Math.max(bucket.at, now);
    return bucket;
  }

  private sweep(now: number): void {
    for (const [key, b] of this.buckets) {
      if (b.units + Math.max(0, now - b.at) * this.config.limit >= this.capacity) this.buckets.delete(key);
    }
  }
}

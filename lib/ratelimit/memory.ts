/**
 * `MemoryRateLimiter`: a token bucket per key in this process (local mode: one `hansard serve`). Each key's
 * bucket holds up to `burst` requests (default `limit`) and refills at `limit / window_seconds` per
 * second, so a steady client gets `limit` per window and an idle one may send a burst; a key asked with
 * a limit of its own (its tenant's, issue 17.3) gets a bucket of that size, refilled at that rate. State
 * is lost on restart, which for one local server only means a fresh allowance.
 */
import {
  perMinuteLimit,
  RateLimitConfig,
  type RateLimitConfigInput,
  type RateLimitDecision,
  type RateLimiter,
} from './interface.js';

/**
 * A bucket in integer units, so that refills are exact: one request costs `window_seconds * 1000` units,
 * and every ms adds `limit` units (`limit` requests per window), up to `burst` requests' worth. A key's
 * limit may change between requests (its tenant's was set, issue 17.3): the units stay (a request costs
 * the same units at any limit), refills go at the new rate, and a smaller bucket keeps no more than it holds.
 */
interface Bucket {
  units: number;
  /** when `units` was last brought up to date, in ms */
  at: number;
  /** the key's limit (requests per window) and bucket size (units) at its last request: for the sweep */
  limit: number;
  capacity: number;
}

/** Above this many keys, buckets that have refilled completely are dropped (they equal a new bucket). */
const SWEEP_AT = 10_000;

/**
 * @example
 * const limiter = new MemoryRateLimiter({ limit: 600, window_seconds: 60 });
 * const d = await limiter.limit(caller.id); // d.allowed, d.retry_after_seconds
 * const t = await limiter.limit(caller.id, 1, 60); // held to 60 a minute (its tenant's own)
 */
export class MemoryRateLimiter implements RateLimiter {
  readonly config: RateLimitConfig;
  /** units of one request */
  private readonly cost: number;
  /** bursts as a share of the limit (1 unless `burst` is configured): a per-key limit bursts alike */
  private readonly burstRatio: number;
  private readonly now: () => number;
  private readonly buckets = new Map<string, Bucket>();

  /**
   * @param config see `RateLimitConfig` (zod-checked: throws a ZodError for a bad one)
   * @param opts.now the clock in whole ms since the epoch; tests move it by hand
   */
  constructor(config: RateLimitConfigInput = {}, opts: { now?: () => number } = {}) {
    this.config = RateLimitConfig.parse(config);
    this.cost = this.config.window_seconds * 1000;
    this.burstRatio = (this.config.burst ?? this.config.limit) / this.config.limit;
    this.now = opts.now ?? Date.now;
  }

  async limit(key: string, cost = 1, perMinute?: number): Promise<RateLimitDecision> {
    const now = this.now();
    const limit = perMinuteLimit(this.config, perMinute);
    const capacity = Math.max(1, Math.round(limit * this.burstRatio)) * this.cost;
    const bucket = this.refill(key, now, limit, capacity);
    const { window_seconds } = this.config;
    // Never more than a full bucket: a request that costs more could never pass.
    const units = Math.min(Math.max(1, Math.ceil(cost)) * this.cost, capacity);
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

  /** The key's bucket, refilled at `limit` for the time since it was last used (a new key's is full). */
  private refill(key: string, now: number, limit: number, capacity: number): Bucket {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= SWEEP_AT) this.sweep(now);
      bucket = { units: capacity, at: now, limit, capacity };
      this.buckets.set(key, bucket);
      return bucket;
    }
    // A clock that steps back gives nothing back and takes nothing away.
    const elapsed = Math.max(0, now - bucket.at);
    bucket.units = Math.min(capacity, bucket.units + elapsed * limit);
    bucket.at = Math.max(bucket.at, now);
    bucket.limit = limit;
    bucket.capacity = capacity;
    return bucket;
  }

  private sweep(now: number): void {
    for (const [key, b] of this.buckets) {
      if (b.units + Math.max(0, now - b.at) * b.limit >= b.capacity) this.buckets.delete(key);
    }
  }
}

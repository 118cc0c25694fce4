/**
 * `MemoryRateLimiter` (lib/ratelimit/memory.ts), the token bucket of local mode, on a hand-moved clock:
 * the allowance, the burst, exact refills and Retry-After, keys apart, and a bad config refused.
 */
import { describe, expect, it } from 'vitest';
import { MemoryRateLimiter, NoopRateLimiter } from '../../lib/ratelimit/index.js';

/** A limiter on a clock the test moves, and `take(n)`: the decisions of n requests of one key. */
function limiterAt(config: ConstructorParameters<typeof MemoryRateLimiter>[0]) {
  const clock = { now: 1_000_000 };
  const limiter = new MemoryRateLimiter(config, { now: () => clock.now });
  const take = async (n: number, key = 'tok_A') => {
    const out = [];
    for (let i = 0; i < n; i++) out.push(await limiter.limit(key));
    return out;
  };
  return { clock, limiter, take };
}

describe('MemoryRateLimiter', () => {
  it('allows `limit` requests at once, then refuses with the wait for one more', async () => {
    const { take } = limiterAt({ limit: 5, window_seconds: 10 });
    const first = await take(5);
    expect(first.map((d) => d.allowed)).toEqual([true, true, true, true, true]);
    expect(first.map((d) => d.remaining)).toEqual([4, 3, 2, 1, 0]);
    expect(await take(1)).toEqual([
      { allowed: false, limit: 5, window_seconds: 10, remaining: 0, retry_after_seconds: 2 },
    ]);
  });

  it('refills at limit per window exactly: after Retry-After one request passes, not two', async () => {
    const { clock, take } = limiterAt({ limit: 3, window_seconds: 60 });
    await take(3);
    clock.now += 19_999;
    expect((await take(1))[0]).toMatchObject({ allowed: false, retry_after_seconds: 1 });
    clock.now += 1;
    expect((await take(2)).map((d) => d.allowed)).toEqual([true, false]);
    clock.now += 3600_000;
    // Never more than a full bucket, however long the quiet.
    expect((await take(4)).map((d) => d.allowed)).toEqual([true, true, true, false]);
  });

  it('lets a burst larger than the steady rate through after a quiet spell', async () => {
    const { clock, take } = limiterAt({ limit: 60, window_seconds: 60, burst: 10 });
    expect((await take(11)).filter((d) => d.allowed)).toHaveLength(10);
    clock.now += 1000;
    expect((await take(2)).map((d) => d.allowed)).toEqual([true, false]);
  });

  it('keeps keys apart, and does not count refused requests', async () => {
    const { clock, take } = limiterAt({ limit: 2, window_seconds: 2 });
    await take(2, 'tok_A');
    for (let i = 0; i < 50; i++) await take(1, 'tok_A');
    expect((await take(2, 'tok_B')).map((d) => d.allowed)).toEqual([true, true]);
    clock.now += 1000;
    expect((await take(1, 'tok_A'))[0]!.allowed).toBe(true);
  });

  it('charges a request of cost n as n requests, refuses it whole, and never asks more than a full bucket', async () => {
    const { clock, limiter } = limiterAt({ limit: 30, window_seconds: 60 });
    expect(await limiter.limit('tok_A', 10)).toMatchObject({ allowed: true, remaining: 20 });
    expect(await limiter.limit('tok_A', 10)).toMatchObject({ allowed: true, remaining: 10 });
    expect(await limiter.limit('tok_A')).toMatchObject({ allowed: true, remaining: 9 });
    // 9 left: a cost of 10 is refused (nothing taken), with the wait for the one missing; 1 still passes.
    expect(await limiter.limit('tok_A', 10)).toMatchObject({ allowed: false, retry_after_seconds: 2 });
    expect(await limiter.limit('tok_A')).toMatchObject({ allowed: true, remaining: 8 });
    clock.now += 3600_000;
    // A cost above the limit takes the whole bucket rather than being refused forever.
    expect(await limiter.limit('tok_A', 1000)).toMatchObject({ allowed: true, remaining: 0 });
  });

  it("holds a key asked with a rate of its own (its tenant's) to that rate, others to the configured one", async () => {
    const { clock, limiter } = limiterAt({ limit: 600, window_seconds: 60 });
    const own = async (n: number, perMinute: number, key = 'tok_T') => {
      const out = [];
      for (let i = 0; i < n; i++) out.push(await limiter.limit(key, 1, perMinute));
      return out;
    };
    const five = await own(6, 5);
    expect(five.map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
    // a bucket of 5, refilled at 5 a minute: one more in 12 s
    expect(five[5]).toEqual({
      allowed: false,
      limit: 5,
      window_seconds: 60,
      remaining: 0,
      retry_after_seconds: 12,
    });
    // another key at the configured rate is not touched by it
    const others = [];
    for (let i = 0; i < 20; i++) others.push(await limiter.limit('tok_D'));
    expect(others.every((d) => d.allowed && d.limit === 600)).toBe(true);
    clock.now += 12_000;
    expect((await own(2, 5)).map((d) => d.allowed)).toEqual([true, false]);
    // The tenant's rate raised: the empty bucket refills at the new rate (600 a minute: 10 a second).
    clock.now += 1_000;
    const raised = await own(11, 600);
    expect(raised.filter((d) => d.allowed)).toHaveLength(10);
    expect(raised[0]).toMatchObject({ limit: 600 });
    // And lowered again: a full bucket of 600 keeps only a bucket of 5.
    clock.now += 3600_000;
    expect((await own(6, 5)).map((d) => d.allowed)).toEqual([true, true, true, true, true, false]);
  });

  it('scales a per-minute rate to its window, at least one request', async () => {
    const { limiter } = limiterAt({ limit: 10, window_seconds: 10 });
    // 120 a minute in a 10 s window: 20
    expect(await limiter.limit('tok_A', 1, 120)).toMatchObject({ allowed: true, limit: 20, remaining: 19 });
    expect(await limiter.limit('tok_B', 1, 1)).toMatchObject({ allowed: true, limit: 1, remaining: 0 });
    expect(await limiter.limit('tok_B', 1, 1)).toMatchObject({ allowed: false, limit: 1 });
  });

  it('gives nothing back when the clock steps backwards', async () => {
    const { clock, take } = limiterAt({ limit: 1, window_seconds: 10 });
    await take(1);
    clock.now -= 60_000;
    expect((await take(1))[0]).toMatchObject({ allowed: false, retry_after_seconds: 10 });
  });

  it('defaults to 600 a minute, and refuses a bad config', () => {
    expect(new MemoryRateLimiter().config).toEqual({ limit: 600, window_seconds: 60 });
    expect(() => new MemoryRateLimiter({ limit: 0 })).toThrow();
    expect(() => new MemoryRateLimiter({ window_seconds: 1.5 })).toThrow();
    expect(() => new MemoryRateLimiter({ limit: 5, extra: 1 } as never)).toThrow();
  });

  it('stays small: buckets that have refilled are dropped when many keys were seen', async () => {
    const { clock, limiter, take } = limiterAt({ limit: 1, window_seconds: 1 });
    for (let i = 0; i < 10_000; i++) await take(1, `tok_${i}`);
    clock.now += 1000;
    await take(1, 'tok_new');
    expect((limiter as unknown as { buckets: Map<string, unknown> }).buckets.size).toBe(1);
  });
});

describe('NoopRateLimiter', () => {
  it('allows everything', async () => {
    const noop = new NoopRateLimiter();
    for (let i = 0; i < 1000; i++) expect((await noop.limit('tok_A')).allowed).toBe(true);
  });
});

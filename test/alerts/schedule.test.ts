/** The retry schedule (lib/service/alerts/schedule.ts): doubling from 30 s to 1 h, equal jitter, a day. */
import { describe, expect, it } from 'vitest';
import { nextTry, RETRY_BASE_MS, RETRY_CAP_MS, retryDelayMs } from '../../lib/service/alerts/schedule.js';

describe('retryDelayMs', () => {
  it('doubles from 30 s, capped at 1 h, between half and all of it', () => {
    expect(retryDelayMs(1, 0)).toBe(RETRY_BASE_MS / 2);
    expect(retryDelayMs(1, 0.999999)).toBeCloseTo(RETRY_BASE_MS, -1);
    expect(retryDelayMs(2, 0)).toBe(RETRY_BASE_MS);
    expect(retryDelayMs(3, 0)).toBe(2 * RETRY_BASE_MS);
    expect(retryDelayMs(20, 0)).toBe(RETRY_CAP_MS / 2);
    expect(retryDelayMs(20, 0.999999)).toBeLessThanOrEqual(RETRY_CAP_MS);
  });
});

describe('nextTry', () => {
  const day = 86_400_000;
  it('is within the day, the last try at its end, then null (dead letter)', () => {
    const first = '2026-12-07T00:00:00.000Z';
    expect(nextTry(first, 1, new Date('2026-12-07T00:00:01.000Z'), day, 0)).toBe('2026-12-07T00:00:16.000Z');
    expect(nextTry(first, 30, new Date('2026-12-07T23:59:00.000Z'), day, 0)).toBe('2026-12-08T00:00:00.000Z');
    expect(nextTry(first, 31, new Date('2026-12-08T00:00:00.000Z'), day, 0)).toBeNull();
  });

  it('takes 15 to 30 tries to reach a day with the cap', () => {
    let at = Date.parse('2026-12-07T00:00:00.000Z');
    let n = 0;
    for (let next: string | null = ''; next !== null; n++) {
      next = nextTry('2026-12-07T00:00:00.000Z', n + 1, new Date(at), day, 0.5);
      if (next) at = Date.parse(next);
    }
    expect(n).toBeGreaterThan(15);
    expect(n).toBeLessThan(40);
  });
});

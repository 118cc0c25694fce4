/**
 * The board's relative times (lib/board/components.tsx `ago`, shown by `When` on the overview, the
 * alerts, audit and tokens pages): the past as `12 min ago`, and the future (a token's expiry) as
 * `in 30 days`, never `just now` for a time a month away; a time a few seconds ahead (clock skew) is
 * `just now`. Fixed instants: no clock is read.
 */
import { describe, expect, it } from 'vitest';
import { ago } from '../../lib/board/components.js';

const NOW = '2026-12-07T12:00:00.000Z';
const at = (ms: number) => new Date(Date.parse(NOW) + ms).toISOString();
const MIN = 60_000;
const H = 60 * MIN;
const D = 24 * H;

describe('ago', () => {
  it('says the past as before: just now, minutes, hours, days ago', () => {
    expect(ago(at(-30_000), NOW)).toBe('just now');
    expect(ago(at(-12 * MIN), NOW)).toBe('12 min ago');
    expect(ago(at(-3 * H), NOW)).toBe('3 h ago');
    expect(ago(at(-4 * D), NOW)).toBe('4 d ago');
  });

  it('says the future as "in …", to the nearest unit: a token expiring in a month is "in 30 days"', () => {
    expect(ago(at(30 * D), NOW)).toBe('in 30 days');
    // minted a moment before the page was drawn: still 30 days
    expect(ago(at(30 * D - 5_000), NOW)).toBe('in 30 days');
    expect(ago(at(2 * D + 3 * H), NOW)).toBe('in 2 days');
    expect(ago(at(3 * H), NOW)).toBe('in 3 hours');
    expect(ago(at(47 * H), NOW)).toBe('in 47 hours');
    expect(ago(at(12 * MIN), NOW)).toBe('in 12 minutes');
    expect(ago(at(MIN), NOW)).toBe('in 1 minute');
  });

  it('reads a few seconds ahead (clock skew) as just now', () => {
    expect(ago(at(20_000), NOW)).toBe('just now');
    expect(ago(NOW, NOW)).toBe('just now');
  });
});

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatTs, nowMicros, parseTs } from '../../lib/log/format/time.js';

const TS_FORMAT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/;

/** µs since the epoch of a UTC date, computed independently of parseTs. */
const utcMicros = (iso: string, micro = 0): number => Date.parse(iso) * 1000 + micro;

describe('parseTs and formatTs', () => {
  it.each([
    '2026-08-12T20:44:44.089961Z',
    '1970-01-01T00:00:00.000000Z',
    '1970-01-01T00:00:00.000001Z',
    '1999-12-31T23:59:59.999999Z',
    '2000-02-29T12:00:00.500000Z',
    '1969-12-31T23:59:59.999999Z',
  ])('round-trips %s at microsecond precision', (ts) => {
    const p = parseTs(ts);
    expect(p).not.toBeNull();
    expect(p!.hasZone).toBe(true);
    expect(formatTs(p!.micros)).toBe(ts);
  });

  it('formats any instant from 1700 to 2250 as YYYY-MM-DDTHH:MM:SS.ffffffZ and parses it back exactly', () => {
    fc.assert(
      fc.property(fc.integer({ min: -8_520_000_000_000_000, max: 8_800_000_000_000_000 }), (micros) => {
        const ts = formatTs(micros);
        expect(ts).toMatch(TS_FORMAT);
        expect(parseTs(ts)).toEqual({ micros, hasZone: true });
      }),
      { numRuns: 2000 },
    );
  });

  it('reads the seed example ts as the instant it denotes', () => {
    expect(parseTs('2026-08-12T20:44:44.089961Z')).toEqual({
      micros: utcMicros('2026-08-12T20:44:44.089Z', 961),
      hasZone: true,
    });
  });

  it.each([
    ['2026-08-12T22:44:44.089961+02:00', '2026-08-12T20:44:44.089961Z'],
    ['2026-08-12T22:44:44.089961+0200', '2026-08-12T20:44:44.089961Z'],
    ['2026-08-12T15:14:44.089961-05:30', '2026-08-12T20:44:44.089961Z'],
    ['2026-08-13T00:44:44.089961+04:00', '2026-08-12T20:44:44.089961Z'],
    ['2026-08-12T20:44:44.089961+00:00', '2026-08-12T20:44:44.089961Z'],
    ['2026-08-12t20:44:44.089961z', '2026-08-12T20:44:44.089961Z'],
    ['2026-08-12 20:44:44.089961Z', '2026-08-12T20:44:44.089961Z'],
  ])('applies the offset of %s (same instant as %s)', (withOffset, utc) => {
    const p = parseTs(withOffset);
    expect(p).not.toBeNull();
    expect(p!.hasZone).toBe(true);
    expect(p!.micros).toBe(parseTs(utc)!.micros);
    expect(formatTs(p!.micros)).toBe(utc);
  });

  it('reads a ts without an offset as UTC and says it had no zone', () => {
    expect(parseTs('2026-08-12T20:44:44.089961')).toEqual({
      micros: parseTs('2026-08-12T20:44:44.089961Z')!.micros,
      hasZone: false,
    });
  });

  it('pads fewer than six fractional digits and truncates (not rounds) more than six', () => {
    const base = utcMicros('2026-08-12T20:44:44Z');
    expect(parseTs('2026-08-12T20:44:44Z')!.micros).toBe(base);
    expect(parseTs('2026-08-12T20:44:44.5Z')!.micros).toBe(base + 500_000);
    expect(parseTs('2026-08-12T20:44:44.089Z')!.micros).toBe(base + 89_000);
    expect(parseTs('2026-08-12T20:44:44.123456789Z')!.micros).toBe(base + 123_456);
    expect(parseTs('2026-08-12T20:44:44.9999999Z')!.micros).toBe(base + 999_999);
  });

  it('reads years before 100 as those years, not as 19xx', () => {
    const p = parseTs('0050-03-01T00:00:00.000000Z');
    expect(p).not.toBeNull();
    const year50 = new Date(0);
    year50.setUTCFullYear(50, 2, 1);
    expect(p!.micros).toBe(year50.getTime() * 1000);
    expect(formatTs(p!.micros)).toBe('0050-03-01T00:00:00.000000Z');
  });

  it.each([
    ['February 30', '2026-02-30T00:00:00.000000Z'],
    ['February 29 of a common year', '2025-02-29T00:00:00.000000Z'],
    ['April 31', '2026-04-31T00:00:00.000000Z'],
    ['month 13', '2026-13-01T00:00:00.000000Z'],
    ['month 00', '2026-00-01T00:00:00.000000Z'],
    ['day 00', '2026-08-00T00:00:00.000000Z'],
    ['day 32', '2026-08-32T00:00:00.000000Z'],
    ['hour 24', '2026-08-12T24:00:00.000000Z'],
    ['minute 60', '2026-08-12T20:60:00.000000Z'],
    ['a date without a time', '2026-08-12'],
    ['a time without a date', '20:44:44.089961Z'],
    ['an empty string', ''],
    ['garbage', 'not a timestamp'],
    ['a zone name', '2026-08-12T20:44:44.089961 UTC'],
    ['trailing text', '2026-08-12T20:44:44.089961Zjunk'],
    ['ten fractional digits', '2026-08-12T20:44:44.0899610000Z'],
    ['a number of milliseconds', '1786567484089'],
  ])('returns null for %s', (_what, ts) => {
    expect(parseTs(ts)).toBeNull();
  });
});

describe('formatTs', () => {
  it('truncates a fractional microsecond instead of writing it into the string', () => {
    expect(formatTs(1.5)).toBe('1970-01-01T00:00:00.000001Z');
    expect(formatTs(1_786_567_484_089_961.5)).toBe('2026-08-12T20:44:44.089961Z');
  });
});

describe('nowMicros', () => {
  it('is an integer close to Date.now()', () => {
    const before = Date.now() * 1000;
    const n = nowMicros();
    const after = Date.now() * 1000 + 999;
    expect(Number.isInteger(n)).toBe(true);
    expect(n).toBeGreaterThanOrEqual(before);
    expect(n).toBeLessThanOrEqual(after);
  });

  it('never goes backwards while the wall clock does not', () => {
    let last = nowMicros();
    let backwards = 0;
    for (let i = 0; i < 1_000_000; i++) {
      const n = nowMicros();
      if (n < last) backwards += 1;
      last = n;
    }
    expect(backwards).toBe(0);
  });
});

describe('parseTs fast path for the writers own form', () => {
  it('agrees with Date to the microsecond for any instant that µs numbers hold exactly (years 1700 to 2250)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.UTC(1700, 0, 1), max: Date.UTC(2250, 0, 1) }),
        fc.integer({ min: 0, max: 999 }),
        (ms, us) => {
          const micros = ms * 1000 + us;
          const ts = formatTs(micros);
          expect(ts).toHaveLength(27);
          expect(parseTs(ts)).toEqual({ micros, hasZone: true });
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('refuses impossible dates in the canonical form', () => {
    for (const ts of [
      '2026-02-29T00:00:00.000000Z',
      '2026-04-31T00:00:00.000000Z',
      '2026-13-01T00:00:00.000000Z',
      '2026-01-01T24:00:00.000000Z',
      '2026-01-01T00:60:00.000000Z',
    ]) {
      expect(parseTs(ts)).toBeNull();
    }
    expect(parseTs('2024-02-29T12:00:00.000001Z')).not.toBeNull();
  });
});

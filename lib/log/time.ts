/**
 * Timestamps of the v3 format (DESIGN §3): writers emit RFC 3339 UTC with `Z` and 6 fractional digits;
 * readers keep the string and order by the instant it denotes, in microseconds since the epoch.
 */

const TS_PATTERN =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?(Z|z|[+-]\d{2}:?\d{2})?$/;

/** What a reader makes of a `ts` string. */
export interface ParsedTs {
  /** microseconds since the Unix epoch (UTC) */
  micros: number;
  /** false when the string carried no offset and was read as UTC (verify reports `ts_no_timezone`) */
  hasZone: boolean;
}

/**
 * Parses an RFC 3339 timestamp to microseconds since the epoch. Digits past the sixth fractional one are
 * dropped (truncated, not rounded). Returns `null` for anything that is not such a timestamp or not a real
 * calendar instant; never throws.
 */
export function parseTs(ts: string): ParsedTs | null {
  const fast = parseCanonical(ts);
  if (fast !== null) return { micros: fast, hasZone: true };
  const m = TS_PATTERN.exec(ts);
  if (!m) return null;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 60) return null;
  // Not Date.UTC: it reads years 0–99 as 1900–1999.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, Math.min(second, 59));
  const ms = date.getTime();
  // The Date silently rolls 31 February over into March: refuse it.
  if (date.getUTCDate() !== day) return null;
  const micro = frac ? Number(frac.slice(0, 6).padEnd(6, '0')) : 0;
  let offsetMin = 0;
  if (zone && zone !== 'Z' && zone !== 'z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    offsetMin = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4)));
  }
  return { micros: (ms - offsetMin * 60_000) * 1000 + micro, hasZone: zone !== undefined };
}

/** Formats microseconds since the epoch as `YYYY-MM-DDTHH:MM:SS.ffffffZ`, the form our writers emit. */
export function formatTs(micros: number): string {
  const whole = Math.floor(micros); // a fractional µs is dropped, never written into the string
  const ms = Math.floor(whole / 1000);
  const frac = String(whole - ms * 1000).padStart(3, '0');
  const iso = new Date(ms).toISOString(); // 2026-08-12T20:44:44.089Z
  return `${iso.slice(0, 23)}${frac}Z`;
}

let lastNow = 0;

/**
 * The wall clock in microseconds since the epoch; the sub-millisecond part comes from the high-resolution
 * timer. The two clocks do not tick over together, so within one millisecond of the wall clock the result
 * is held at the last value returned: it goes backwards only when the wall clock itself does.
 */
export function nowMicros(): number {
  const ms = Date.now();
  const sub = Math.floor((performance.now() % 1) * 1000);
  let micros = ms * 1000 + sub;
  if (micros < lastNow && Math.floor(lastNow / 1000) === ms) micros = lastNow;
  lastNow = micros;
  return micros;
}

const canonicalMs = new Map<string, number>();

/**
 * The writers' own form, `YYYY-MM-DDTHH:MM:SS.ffffffZ`, without a regex: the replay parses one per event.
 * The instant of the whole second is cached for the next event in the same second. Returns null for any
 * other form (the general parser then decides).
 */
function parseCanonical(ts: string): number | null {
  if (
    ts.length !== 27 ||
    ts.charCodeAt(26) !== 90 /* Z */ ||
    ts.charCodeAt(19) !== 46 /* . */ ||
    ts.charCodeAt(10) !== 84 /* T */
  ) {
    return null;
  }
  let micro = 0;
  for (let i = 20; i < 26; i++) {
    const d = ts.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return null;
    micro = micro * 10 + d;
  }
  const second = ts.slice(0, 19);
  let ms = canonicalMs.get(second);
  if (ms === undefined) {
    if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$/.test(second)) return null;
    const parsed = parseTs(`${second}Z`); // the general path validates the calendar
    if (parsed === null) return null;
    ms = parsed.micros / 1000;
    if (canonicalMs.size > 4096) canonicalMs.clear();
    canonicalMs.set(second, ms);
  }
  return ms * 1000 + micro;
}

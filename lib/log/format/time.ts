/**
 * Timestamps of the v3 format (DESIGN §3): writers emit RFC 3339 UTC with `Z` and 6 fractional digits;
 * readers keep the string and order by the instant it denotes, in microseconds since the epoch.
 * Microseconds as a JS number are exact from about 1685 to 2255; outside that range, instants keep their
 * order to within a few microseconds.
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

/**
 * The writers' own form, `YYYY-MM-DDTHH:MM:SS.ffffffZ`, read digit by digit without a regex or a
 * string copy: the replay parses one per event. Returns null for any other form or an impossible date
 * (the general parser then decides).
 */
function parseCanonical(ts: string): number | null {
  if (
    ts.length !== 27 ||
    ts.charCodeAt(4) !== 45 ||
    ts.charCodeAt(7) !== 45 ||
    ts.charCodeAt(10) !== 84 ||
    ts.charCodeAt(13) !== 58 ||
    ts.charCodeAt(16) !== 58 ||
    ts.charCodeAt(19) !== 46 ||
    ts.charCodeAt(26) !== 90
  ) {
    return null;
  }
  const y = digits(ts, 0, 4);
  const mo = digits(ts, 5, 2);
  const d = digits(ts, 8, 2);
  const h = digits(ts, 11, 2);
  const mi = digits(ts, 14, 2);
  const s = digits(ts, 17, 2);
  const micro = digits(ts, 20, 6);
  const micros = civilMicros(y, mo, d, h, mi, s, micro);
  return Number.isNaN(micros) ? null : micros;
}

/**
 * Microseconds since the epoch of the UTC calendar instant `y-mo-d h:mi:s` + `micro` µs (the fields as the
 * writers' form spells them: a 4-digit year, seconds 0–59, `micro` 0–999999), or NaN when the fields are no
 * real instant (a month 13, 31 February, a field given as -1 for "not digits"). The date arithmetic of
 * `parseCanonical` and of the replay's byte scan (lib/log/format/envelope-scan.ts), one copy for both.
 */
export function civilMicros(
  y: number,
  mo: number,
  d: number,
  h: number,
  mi: number,
  s: number,
  micro: number,
): number {
  if (
    y < 0 ||
    mo < 1 ||
    mo > 12 ||
    d < 1 ||
    h < 0 ||
    h > 23 ||
    mi < 0 ||
    mi > 59 ||
    s < 0 ||
    s > 59 ||
    micro < 0
  ) {
    return Number.NaN;
  }
  if (d > daysInMonth(y, mo)) return Number.NaN;
  return (daysFromCivil(y, mo, d) * 86400 + h * 3600 + mi * 60 + s) * 1000000 + micro;
}

/** The number the decimal digits ts[at, at+n) spell, or -1 when one is not a digit. */
function digits(ts: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = ts.charCodeAt(i) - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

function daysInMonth(y: number, m: number): number {
  if (m === 2) return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0 ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
function daysFromCivil(y0: number, m: number, d: number): number {
  const y = m <= 2 ? y0 - 1 : y0;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

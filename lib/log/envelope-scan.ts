/**
 * The replay's fast path over one line (issue 16): what the merge needs of a line — whether it is an event,
 * its `ts` in µs, whether it is a `correction`, its `id` when asked — read from the line's bytes without
 * building the parsed object.
 *
 * The verdict must be exactly `parseLine`'s (lib/log/codec.ts): a line is an event iff `parseLine` gives
 * `ok: true`, and then `tsMicros` is the event's `tsMicros` (null → NaN here) and `id`/`isCorrection` its
 * envelope's. The scan validates the whole line as JSON (grammar, no control character in a string, depth
 * ≤ `MAX_LINE_DEPTH`) and checks the top-level envelope keys; where a cheap check cannot decide (an escape in a
 * top-level key or in an envelope value, a duplicated envelope key, a number in `v`/`seq`/`mono` that is not
 * plain digits), it falls back to `parseLine` for that line only. The differential tests in
 * test/log/envelope-scan*.test.ts hold the two to the same verdict on every line they generate.
 *
 * CONTRACT (issue 16): `scanLine` and `LineScan` are the interface the fast reader and merge build on; the
 * body may be replaced by a faster one, never the behaviour.
 */
import { parseLine } from './codec.js';

/** What `scanLine` read of a line. One object is reused for every line (no allocation per line). */
export interface LineScan {
  /** the line is an event (parseLine would give ok: true); false: a quarantined line (a problem) */
  ok: boolean;
  /** the instant of `ts` in µs since the epoch; NaN when the line is not an event or `ts` is no timestamp */
  tsMicros: number;
  /** `type` is exactly "correction" (only meaningful when ok) */
  isCorrection: boolean;
  /** the event's `id` (only filled when `scanLine` was asked for it with `wantId`, and ok) */
  id: string | undefined;
}

/** A fresh `LineScan` to pass to `scanLine` (reuse it for every line). */
export function newLineScan(): LineScan {
  return { ok: false, tsMicros: Number.NaN, isCorrection: false, id: undefined };
}

/**
 * Scans the complete line `buf[start, end)` (its bytes without the newline; the caller has checked that
 * the enclosing block is valid UTF-8, or passes `utf8Checked: false` to have this line checked) and
 * fills `out`. Returns `out.ok`. Never throws on content.
 *
 * @param wantId also fill `out.id` (the replay with corrections needs it for every event; the raw and
 *   plain NDJSON replays do not, and skip the string)
 */
export function scanLine(
  buf: Uint8Array,
  start: number,
  end: number,
  out: LineScan,
  wantId = false,
  _utf8Checked = true,
): boolean {
  // Reference implementation (the contract's behaviour): the full parse. To be replaced by the scan.
  const p = parseLine(buf.subarray(start, end), 1, 0, true);
  if (!p.ok) {
    out.ok = false;
    out.tsMicros = Number.NaN;
    out.isCorrection = false;
    out.id = undefined;
    return false;
  }
  out.ok = true;
  out.tsMicros = p.event.tsMicros ?? Number.NaN;
  out.isCorrection = p.event.type === 'correction';
  out.id = wantId ? p.event.id : undefined;
  return true;
}

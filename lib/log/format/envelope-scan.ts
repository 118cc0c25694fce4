/**
 * The replay's fast path over one line (issue 16): what the merge needs of a line — whether it is an event,
 * its `ts` in µs, whether it is a `correction`, its `id` when asked — read from the line's bytes without
 * building the parsed object.
 *
 * The verdict must be exactly `parseLine`'s (lib/log/format/codec.ts): a line is an event iff `parseLine` gives
 * `ok: true`, and then `tsMicros` is the event's `tsMicros` (null → NaN here) and `id`/`isCorrection` its
 * envelope's. The scan validates the whole line as JSON (grammar, no control character in a string, depth
 * ≤ `MAX_LINE_DEPTH`) and checks the top-level envelope keys; where a cheap check cannot decide (an escape in a
 * top-level key or in an envelope value, a duplicated envelope key, a number in `v`/`seq`/`mono` that is not
 * plain digits), it falls back to `parseLine` for that line only. The differential tests in
 * test/log/envelope-scan*.test.ts hold the two to the same verdict on every line they generate.
 *
 * Why the scan is exactly parseLine's verdict: parseLine decodes valid UTF-8 (isUtf8), quarantines a text
 * longer than 2 × MAX_LINE_DEPTH nested deeper than MAX_LINE_DEPTH, then takes JSON.parse's verdict, a
 * top-level object and `envelopeProblem`'s types (JSON.parse keeps a duplicated key's last value). A valid
 * JSON text nested deeper than 512 has at least 513 openers and 513 closers, so it is always longer than
 * 1,024 UTF-16 units: the length guard never lets one through, and "valid JSON nested at most 512 deep" is
 * the whole rule. V8's JSON.parse is RFC 8259's grammar (whitespace: space, tab, LF, CR; no raw control
 * character in a string; escapes `\"\\/bfnrt` and `\u` with four hex digits, lone surrogates allowed), which
 * the scan checks over bytes: in valid UTF-8 a byte below 0x80 is always that ASCII character, so a quote or
 * a backslash is never part of a multi-byte character, and a byte of 0x80 or more outside a string is
 * always an error. An envelope key is ASCII, so a key without escapes names it iff its bytes are the name.
 * A plain integer literal of at most 15 digits is an integer; any number literal is a number (an
 * overflowing one is Infinity, still a number for `mono`).
 *
 * CONTRACT (issue 16): `scanLine` and `LineScan` are the interface the fast reader and merge build on; the
 * body may be replaced by a faster one, never the behaviour.
 */
import { isUtf8 } from 'node:buffer';
import { parseLine } from './codec.js';
import { envelopeKey, escapedEnvelopeKey, INT, MISSING, NUM, OTHER, STR, STR_ESC } from './envelope-keys.js';
import { STR_STOP, scanNumber, scanned, scanString, skipValue, skipWs, useWords } from './json-scan.js';
import { civilMicros, parseTs } from './time.js';

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
  /**
   * Where the `id` string's text lies in the scanned buffer, `buf[idAt, idEnd)`, when it has no escape
   * (its bytes are then its UTF-8 text); -1 when the line is no event, the id has an escape or the line
   * was decided by the full parse. Filled whether or not `wantId` was asked: it costs nothing.
   */
  idAt: number;
  idEnd: number;
}

/** A fresh `LineScan` to pass to `scanLine` (reuse it for every line). */
export function newLineScan(): LineScan {
  return { ok: false, tsMicros: Number.NaN, isCorrection: false, id: undefined, idAt: -1, idEnd: -1 };
}

/**
 * Scans the complete line `buf[start, end)` (its bytes without the newline; the caller has checked that
 * the enclosing block is valid UTF-8, or passes `utf8Checked: false` to have this line checked) and
 * fills `out`. Returns `out.ok`. Never throws on content.
 *
 * Allocates nothing for an event whose `ts`, `type` (and `id`, when asked) have no escape and whose `v` and
 * `seq` are plain integers, except the `id` string when asked; `ts` in the writers' form
 * `YYYY-MM-DDTHH:MM:SS.ffffffZ` is read from the bytes, any other `ts` is decoded and given to `parseTs`.
 * Other lines the scan cannot decide alone are handed to `parseLine` whole (the tests count how rarely).
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
  if (!_utf8Checked && !isUtf8(buf.subarray(start, end))) return notEvent(out);
  useWords(buf);
  let i = skipWs(buf, start, end);
  // Anything but an object is never an event, valid JSON or not.
  if (i >= end || buf[i] !== 0x7b) return notEvent(out);
  i = skipWs(buf, i + 1, end);
  if (i >= end || buf[i] === 0x7d) return notEvent(out); // {} has no envelope (or is not closed)
  let v = MISSING;
  let sid = MISSING;
  let w = MISSING;
  let seq = MISSING;
  let id = MISSING;
  let idAt = 0;
  let idEnd = 0;
  let ts = MISSING;
  let tsAt = 0;
  let tsEnd = 0;
  let mono = MISSING;
  let type = MISSING;
  let typeAt = 0;
  let typeEnd = 0;
  for (;;) {
    if (buf[i] !== 0x22) return notEvent(out);
    const keyAt = i + 1;
    // The plain run inline (a call per string costs more than a short key's bytes), the rest by scanString.
    let j = keyAt;
    while (j < end && STR_STOP[buf[j]!] === 0) j++;
    let keyEscaped = false;
    if (j < end && buf[j] === 0x22) i = j + 1;
    else {
      i = scanString(buf, j, end);
      keyEscaped = scanned.escaped;
    }
    if (i < 0) return notEvent(out);
    const key = keyEscaped ? escapedEnvelopeKey(buf, keyAt, i - 1) : envelopeKey(buf, keyAt, i - 1 - keyAt);
    i = skipWs(buf, i, end);
    if (i >= end || buf[i] !== 0x3a) return notEvent(out);
    i = skipWs(buf, i + 1, end);
    if (i >= end) return notEvent(out);
    const c = buf[i]!;
    const valueAt = i + 1;
    let kind: number;
    if (c === 0x22) {
      i = scanString(buf, valueAt, end);
      kind = scanned.escaped ? STR_ESC : STR;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      i = scanNumber(buf, i, end);
      kind = scanned.plainInteger ? INT : NUM;
    } else {
      i = skipValue(buf, i, end);
      kind = OTHER;
    }
    if (i < 0) return notEvent(out);
    switch (key) {
      case 1:
        v = kind;
        break;
      case 2:
        sid = kind;
        break;
      case 3:
        w = kind;
        break;
      case 4:
        seq = kind;
        break;
      case 5:
        id = kind;
        idAt = valueAt;
        idEnd = i - 1;
        break;
      case 6:
        ts = kind;
        tsAt = valueAt;
        tsEnd = i - 1;
        break;
      case 7:
        mono = kind;
        break;
      case 8:
        type = kind;
        typeAt = valueAt;
        typeEnd = i - 1;
        break;
    }
    i = skipWs(buf, i, end);
    if (i >= end) return notEvent(out);
    const sep = buf[i];
    if (sep === 0x2c) {
      i = skipWs(buf, i + 1, end);
      if (i >= end) return notEvent(out);
    } else if (sep === 0x7d) {
      if (skipWs(buf, i + 1, end) !== end) return notEvent(out);
      break;
    } else return notEvent(out);
  }
  // The line is valid JSON, an object nested at most MAX_LINE_DEPTH deep. Now its envelope.
  if (sid !== STR && sid !== STR_ESC) return notEvent(out);
  if (w !== STR && w !== STR_ESC) return notEvent(out);
  if (id !== STR && id !== STR_ESC) return notEvent(out);
  if (ts !== STR && ts !== STR_ESC) return notEvent(out);
  if (type !== STR && type !== STR_ESC) return notEvent(out);
  if (mono !== INT && mono !== NUM) return notEvent(out);
  if (v !== INT && v !== NUM) return notEvent(out);
  if (seq !== INT && seq !== NUM) return notEvent(out);
  if (v === NUM || seq === NUM || ts === STR_ESC || type === STR_ESC || (wantId && id === STR_ESC))
    return reference(buf, start, end, out, wantId);
  out.ok = true;
  out.tsMicros = canonicalTs(buf, tsAt, tsEnd);
  if (Number.isNaN(out.tsMicros)) out.tsMicros = parseTs(utf8(buf, tsAt, tsEnd))?.micros ?? Number.NaN;
  out.isCorrection = isCorrectionType(buf, typeAt, typeEnd);
  out.id = wantId ? utf8(buf, idAt, idEnd) : undefined;
  out.idAt = id === STR ? idAt : -1;
  out.idEnd = id === STR ? idEnd : -1;
  return true;
}

function notEvent(out: LineScan): false {
  out.ok = false;
  out.tsMicros = Number.NaN;
  out.isCorrection = false;
  out.id = undefined;
  out.idAt = -1;
  out.idEnd = -1;
  return false;
}

/** The contract's behaviour, from the full parse: for the lines the scan cannot decide alone. */
function reference(buf: Uint8Array, start: number, end: number, out: LineScan, wantId: boolean): boolean {
  fallbacks++;
  const p = parseLine(buf.subarray(start, end), 1, 0, true);
  if (!p.ok) return notEvent(out);
  out.ok = true;
  out.tsMicros = p.event.tsMicros ?? Number.NaN;
  out.isCorrection = p.event.type === 'correction';
  out.id = wantId ? p.event.id : undefined;
  out.idAt = -1;
  out.idEnd = -1;
  return true;
}

let fallbacks = 0;

/** How many lines `scanLine` has handed to `parseLine` since the process started (tests and bench/scan-line.ts). */
export function scanFallbacks(): number {
  return fallbacks;
}

/**
 * `parseTs`'s reading of the writers' form `YYYY-MM-DDTHH:MM:SS.ffffffZ` (lib/log/format/time.ts parseCanonical,
 * here over bytes; the date arithmetic is time.ts's `civilMicros`), or NaN when `buf[at, end)` is not that
 * form or not a real date (the caller then asks `parseTs`, which decides the rest exactly as it would for
 * the line).
 */
function canonicalTs(buf: Uint8Array, at: number, end: number): number {
  if (
    end - at !== 27 ||
    buf[at + 4] !== 45 ||
    buf[at + 7] !== 45 ||
    buf[at + 10] !== 84 ||
    buf[at + 13] !== 58 ||
    buf[at + 16] !== 58 ||
    buf[at + 19] !== 46 ||
    buf[at + 26] !== 90
  )
    return Number.NaN;
  const y = digits(buf, at, 4);
  const mo = digits(buf, at + 5, 2);
  const d = digits(buf, at + 8, 2);
  const h = digits(buf, at + 11, 2);
  const mi = digits(buf, at + 14, 2);
  const s = digits(buf, at + 17, 2);
  const micro = digits(buf, at + 20, 6);
  return civilMicros(y, mo, d, h, mi, s, micro);
}

function digits(buf: Uint8Array, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = buf[i]! - 48;
    if (c < 0 || c > 9) return -1;
    v = v * 10 + c;
  }
  return v;
}

/** Whether the unescaped string `buf[at, end)` is `correction`. */
function isCorrectionType(buf: Uint8Array, at: number, end: number): boolean {
  return (
    end - at === 10 &&
    buf[at] === 0x63 &&
    buf[at + 1] === 0x6f &&
    buf[at + 2] === 0x72 &&
    buf[at + 3] === 0x72 &&
    buf[at + 4] === 0x65 &&
    buf[at + 5] === 0x63 &&
    buf[at + 6] === 0x74 &&
    buf[at + 7] === 0x69 &&
    buf[at + 8] === 0x6f &&
    buf[at + 9] === 0x6e
  );
}

/** Node's Buffer has the decoder without toString's argument handling (a third of an id's cost). */
interface Utf8Slicer {
  utf8Slice?: (start: number, end: number) => string;
}

/** The text of valid UTF-8 `buf[at, end)` (no copy of the bytes when `buf` is a Buffer). */
function utf8(buf: Uint8Array, at: number, end: number): string {
  const slice = (buf as Utf8Slicer).utf8Slice;
  if (slice !== undefined && Buffer.isBuffer(buf)) return slice.call(buf, at, end);
  if (Buffer.isBuffer(buf)) return buf.toString('utf8', at, end);
  return Buffer.from(buf.buffer, buf.byteOffset + at, end - at).toString('utf8');
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/**
 * FNV-1a (32 bits) of the bytes `buf[at, end)`: the replay's filter for ids some correction names
 * (`CorrectionIndex.mayTarget`), so that an event's id is turned into a string only when it may be one.
 * For an id without escapes its bytes are its UTF-8 text, so this equals `hashIdText` of that text.
 */
export function hashIdBytes(buf: Uint8Array, at: number, end: number): number {
  let h = FNV_OFFSET;
  for (let i = at; i < end; i++) h = Math.imul(h ^ buf[i]!, FNV_PRIME);
  return h >>> 0;
}

/** `hashIdBytes` of the UTF-8 encoding of `text`. */
export function hashIdText(text: string): number {
  const b = Buffer.from(text, 'utf8');
  return hashIdBytes(b, 0, b.length);
}

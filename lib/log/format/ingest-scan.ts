/**
 * Ingest's fast path over one line of a chunk (issue 16.3): what `ingestChunk` needs of a line that is an
 * event — its `seq`, whether its `sid` and `w` are the path's, where its `type` and `ts` are — from the
 * line's bytes, without building the parsed object.
 *
 * `scanIngestLine` answers `true` only for a line `parseLine` (lib/log/format/codec.ts) takes as an event, with
 * the same `seq`, `sid`, `w` and `type`; it validates the whole line as JSON the way `scanLine`
 * (lib/log/format/envelope-scan.ts) does, with the same scanners (lib/log/format/json-scan.ts), and the same argument
 * for why that is `parseLine`'s verdict. It answers `false` for every other line, and also for the lines
 * it does not decide alone (a top-level key or an envelope string with an escape, a `v` or `seq` that is
 * not plain digits, a `seq` of more than 15 digits, a `ts` not a plain string): the caller then parses the
 * line as before. The differential tests (test/service/ingest-lines*.test.ts) hold ingest's verdicts with
 * this scan to those of `parseLine` on every line they generate.
 */
import { envelopeKey, INT, MISSING, NUM, OTHER, STR, STR_ESC } from './envelope-keys.js';
import { STR_STOP, scanNumber, scanned, scanString, skipValue, skipWs, useWords } from './json-scan.js';

/** What `scanIngestLine` read of an event line. One object, reused for every line. */
export interface IngestLineScan {
  /** the line's `seq` (an integer) */
  seq: number;
  /** `sid` is the bytes of the path's session id */
  sidMatches: boolean;
  /** `w` is the bytes of the path's writer id */
  wMatches: boolean;
  /** `type`'s text is `buf[typeAt, typeEnd)` (no escape: its bytes are its UTF-8 text) */
  typeAt: number;
  typeEnd: number;
  /** `ts`'s text is `buf[tsAt, tsEnd)` (no escape: its bytes are its UTF-8 text) */
  tsAt: number;
  tsEnd: number;
}

/** A fresh `IngestLineScan` (reuse it for every line). */
export function newIngestLineScan(): IngestLineScan {
  return { seq: 0, sidMatches: false, wMatches: false, typeAt: 0, typeEnd: 0, tsAt: 0, tsEnd: 0 };
}

/**
 * Scans the complete line `buf[start, end)` (without its newline; `buf` known to be valid UTF-8). True
 * when it is an event decided by the scan, with `out` filled; false otherwise (the caller parses it).
 * @param sid the path's session id as bytes (ASCII); `w` the writer id
 */
export function scanIngestLine(
  buf: Uint8Array,
  start: number,
  end: number,
  sid: Uint8Array,
  w: Uint8Array,
  out: IngestLineScan,
): boolean {
  useWords(buf);
  let i = skipWs(buf, start, end);
  if (i >= end || buf[i] !== 0x7b) return false;
  i = skipWs(buf, i + 1, end);
  if (i >= end || buf[i] === 0x7d) return false;
  let v = MISSING;
  let sidKind = MISSING;
  let sidAt = 0;
  let sidEnd = 0;
  let wKind = MISSING;
  let wAt = 0;
  let wEnd = 0;
  let seq = MISSING;
  let seqAt = 0;
  let seqEnd = 0;
  let id = MISSING;
  let ts = MISSING;
  let tsAt = 0;
  let tsEnd = 0;
  let mono = MISSING;
  let type = MISSING;
  let typeAt = 0;
  let typeEnd = 0;
  for (;;) {
    if (buf[i] !== 0x22) return false;
    const keyAt = i + 1;
    let j = keyAt;
    while (j < end && STR_STOP[buf[j]!] === 0) j++;
    // A key with an escape may spell an envelope name: the full parse decides.
    if (j >= end || buf[j] !== 0x22) return false;
    const key = envelopeKey(buf, keyAt, j - keyAt);
    i = skipWs(buf, j + 1, end);
    if (i >= end || buf[i] !== 0x3a) return false;
    i = skipWs(buf, i + 1, end);
    if (i >= end) return false;
    const c = buf[i]!;
    const valueAt = i;
    let kind: number;
    if (c === 0x22) {
      i = scanString(buf, i + 1, end);
      kind = scanned.escaped ? STR_ESC : STR;
    } else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      i = scanNumber(buf, i, end);
      kind = scanned.plainInteger ? INT : NUM;
    } else {
      i = skipValue(buf, i, end);
      kind = OTHER;
    }
    if (i < 0) return false;
    switch (key) {
      case 1:
        v = kind;
        break;
      case 2:
        sidKind = kind;
        sidAt = valueAt + 1;
        sidEnd = i - 1;
        break;
      case 3:
        wKind = kind;
        wAt = valueAt + 1;
        wEnd = i - 1;
        break;
      case 4:
        seq = kind;
        seqAt = valueAt;
        seqEnd = i;
        break;
      case 5:
        id = kind;
        break;
      case 6:
        ts = kind;
        tsAt = valueAt + 1;
        tsEnd = i - 1;
        break;
      case 7:
        mono = kind;
        break;
      case 8:
        type = kind;
        typeAt = valueAt + 1;
        typeEnd = i - 1;
        break;
    }
    i = skipWs(buf, i, end);
    if (i >= end) return false;
    const sep = buf[i];
    if (sep === 0x2c) {
      i = skipWs(buf, i + 1, end);
      if (i >= end) return false;
    } else if (sep === 0x7d) {
      if (skipWs(buf, i + 1, end) !== end) return false;
      break;
    } else return false;
  }
  // Valid JSON, an object nested at most MAX_LINE_DEPTH deep. An event iff its envelope has the types
  // parseLine asks for; only plain forms are decided here.
  if (v !== INT || seq !== INT || sidKind !== STR || wKind !== STR || ts !== STR || type !== STR)
    return false;
  if (id !== STR && id !== STR_ESC) return false;
  if (mono !== INT && mono !== NUM) return false;
  const seqValue = plainInt(buf, seqAt, seqEnd);
  if (seqValue === null) return false;
  out.seq = seqValue;
  out.sidMatches = bytesEqual(buf, sidAt, sidEnd, sid);
  out.wMatches = bytesEqual(buf, wAt, wEnd, w);
  out.tsAt = tsAt;
  out.tsEnd = tsEnd;
  out.typeAt = typeAt;
  out.typeEnd = typeEnd;
  return true;
}

/**
 * The value of the integer literal `buf[at, end)` (an optional `-`, then digits, as scanNumber found it)
 * when it has at most 15 digits, so that it is exact; else null (JSON.parse's rounding of longer ones is
 * the full parse's to give). `-0` is -0, as JSON.parse reads it.
 */
function plainInt(buf: Uint8Array, at: number, end: number): number | null {
  const negative = buf[at] === 0x2d;
  const from = negative ? at + 1 : at;
  if (end - from > 15) return null;
  let value = 0;
  for (let k = from; k < end; k++) value = value * 10 + (buf[k]! - 0x30);
  return negative ? -value : value;
}

/** Whether `buf[at, end)` holds exactly the bytes of `want`. */
export function bytesEqual(buf: Uint8Array, at: number, end: number, want: Uint8Array): boolean {
  if (end - at !== want.length) return false;
  for (let k = 0; k < want.length; k++) if (buf[at + k] !== want[k]) return false;
  return true;
}

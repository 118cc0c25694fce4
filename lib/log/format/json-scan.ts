/**
 * JSON's grammar (RFC 8259, as V8's JSON.parse reads it) over the bytes of valid UTF-8, without decoding
 * and without allocating: the validating half of `scanLine` (lib/log/format/envelope-scan.ts, issue 16).
 *
 * In valid UTF-8 a byte below 0x80 is always that ASCII character (never part of a multi-byte one), so a
 * quote, a backslash or a control character is found by its byte, and any byte of 0x80 or more outside a
 * string is an error (JSON's whitespace is space, tab, LF and CR only). Each scanner takes `buf`, the
 * index of its token's first byte and the line's `end`, never reads at or past `end`, and returns the
 * index after the token or -1 when the bytes are not that token.
 */
import { MAX_LINE_DEPTH } from './codec.js';

/** Side results of the last `scanString` / `scanNumber` (one object, not one per call). */
export const scanned = {
  /** the string had an escape: its text is not its bytes */
  escaped: false,
  /** the number was plain digits (an optional `-`, no fraction or exponent) of at most 308: an integer */
  plainInteger: true,
};

/** Bytes that end the plain run of a string: `"`, `\`, and the control characters JSON forbids raw. */
export const STR_STOP = new Uint8Array(256);
for (let c = 0; c < 0x20; c++) STR_STOP[c] = 1;
STR_STOP[0x22] = 1;
STR_STOP[0x5c] = 1;
/** The characters a single-character escape may name: `" \ / b f n r t`. */
const ESC_CHAR = new Uint8Array(256);
for (const c of '"\\/bfnrt') ESC_CHAR[c.charCodeAt(0)] = 1;
const HEX = new Uint8Array(256);
for (const c of '0123456789abcdefABCDEF') HEX[c.charCodeAt(0)] = 1;
/** Whether a container at each depth is an object (1) or an array (0); depth 1 is the line's object. */
const STACK = new Uint8Array(MAX_LINE_DEPTH + 2);

// A string's plain run is read 4 bytes at a time through an Int32Array over the line's buffer, made once
// per buffer (`useWords`). The test that a word holds a byte below 0x20, a quote or a backslash does not
// depend on the byte order.
let wordsOf: Uint8Array | null = null;
let words: Int32Array<ArrayBufferLike> = new Int32Array(0);
/** Word k covers buf[4k - wordShift, 4k - wordShift + 4). */
let wordShift = 0;

/** Lets `scanString` read `buf` a word at a time (a view made only when `buf` changes). */
export function useWords(buf: Uint8Array): void {
  if (wordsOf === buf) return;
  wordShift = buf.byteOffset & 3;
  words = new Int32Array(buf.buffer, buf.byteOffset - wordShift, (buf.byteLength + wordShift) >> 2);
  wordsOf = buf;
}

/** A buffer's word view, made once and handed back with `setWords` (see `wordViewOf`). */
export interface WordView {
  readonly buf: Uint8Array;
  readonly words: Int32Array<ArrayBufferLike>;
  readonly shift: number;
}

/**
 * The view `useWords` would make for `buf`, for a caller that scans the lines of many buffers in turns
 * (the replay's merge of 2,000 writers switches buffers at every line: a view made per line was an
 * allocation per line). Pass it to `setWords` before scanning a line of `buf`.
 */
export function wordViewOf(buf: Uint8Array): WordView {
  const shift = buf.byteOffset & 3;
  return {
    buf,
    words: new Int32Array(buf.buffer, buf.byteOffset - shift, (buf.byteLength + shift) >> 2),
    shift,
  };
}

/** Makes `view` the one `scanString` reads (then `useWords(view.buf)` keeps it). */
export function setWords(view: WordView): void {
  wordsOf = view.buf;
  words = view.words;
  wordShift = view.shift;
}

/** Whether a byte of the word is below 0x20, `"` (0x22) or `\` (0x5c) (the classic SWAR zero-byte tests). */
function specialIn(x: number): boolean {
  const q = x ^ 0x22222222;
  const b = x ^ 0x5c5c5c5c;
  return ((((x - 0x20202020) & ~x) | ((q - 0x01010101) & ~q) | ((b - 0x01010101) & ~b)) & 0x80808080) !== 0;
}

export function skipWs(buf: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const c = buf[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return i;
    i++;
  }
  return i;
}

/** From just after an opening quote: the index after the closing quote, or -1. Sets `scanned.escaped`. */
export function scanString(buf: Uint8Array, i: number, end: number): number {
  scanned.escaped = false;
  const shift = wordShift;
  const w = words;
  for (;;) {
    while (i < end && STR_STOP[buf[i]!] === 0) {
      i++;
      if (((i + shift) & 3) === 0) {
        let k = (i + shift) >> 2;
        const last = (end + shift) >> 2;
        while (k < last && !specialIn(w[k]!)) k++;
        i = (k << 2) - shift;
      }
    }
    if (i >= end) return -1;
    const c = buf[i];
    if (c === 0x22) return i + 1;
    if (c !== 0x5c) return -1; // a raw control character
    scanned.escaped = true;
    if (++i >= end) return -1;
    const e = buf[i];
    if (e === 0x75) {
      if (i + 4 >= end || !HEX[buf[i + 1]!] || !HEX[buf[i + 2]!] || !HEX[buf[i + 3]!] || !HEX[buf[i + 4]!])
        return -1;
      i += 5;
    } else if (ESC_CHAR[e!]) i++;
    else return -1;
  }
}

/** From a `-` or a digit: the index after the number, or -1. Sets `scanned.plainInteger`. */
export function scanNumber(buf: Uint8Array, i: number, end: number): number {
  if (buf[i] === 0x2d) i++;
  const digitsAt = i;
  if (i >= end) return -1;
  const c = buf[i]!;
  if (c === 0x30) i++;
  else if (c >= 0x31 && c <= 0x39) {
    i++;
    while (i < end && isDigit(buf[i]!)) i++;
  } else return -1;
  scanned.plainInteger = i - digitsAt <= 308;
  if (i < end && buf[i] === 0x2e) {
    scanned.plainInteger = false;
    i = digitRun(buf, i + 1, end);
    if (i < 0) return -1;
  }
  if (i < end && (buf[i] === 0x65 || buf[i] === 0x45)) {
    scanned.plainInteger = false;
    i++;
    if (i < end && (buf[i] === 0x2b || buf[i] === 0x2d)) i++;
    i = digitRun(buf, i, end);
  }
  return i;
}

/** One or more digits from `i`: the index after them, or -1 when there is none. */
function digitRun(buf: Uint8Array, i: number, end: number): number {
  const at = i;
  while (i < end && isDigit(buf[i]!)) i++;
  return i > at ? i : -1;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

/** `true`, `false` or `null` at `i`: the index after it, or -1. */
export function scanLiteral(buf: Uint8Array, i: number, end: number): number {
  const c = buf[i];
  if (c === 0x74)
    return i + 3 < end && buf[i + 1] === 0x72 && buf[i + 2] === 0x75 && buf[i + 3] === 0x65 ? i + 4 : -1;
  if (c === 0x6e)
    return i + 3 < end && buf[i + 1] === 0x75 && buf[i + 2] === 0x6c && buf[i + 3] === 0x6c ? i + 4 : -1;
  if (c === 0x66)
    return i + 4 < end &&
      buf[i + 1] === 0x61 &&
      buf[i + 2] === 0x6c &&
      buf[i + 3] === 0x73 &&
      buf[i + 4] === 0x65
      ? i + 5
      : -1;
  return -1;
}

/** A key, its colon and the whitespace after, from `i`: the index of the value, or -1. */
function scanKey(buf: Uint8Array, i: number, end: number): number {
  if (i >= end || buf[i] !== 0x22) return -1;
  i = scanString(buf, i + 1, end);
  if (i < 0) return -1;
  i = skipWs(buf, i, end);
  if (i >= end || buf[i] !== 0x3a) return -1;
  return skipWs(buf, i + 1, end);
}

/**
 * A value of the line's object (depth 1) from its first byte: the index after it, or -1 when it is not
 * JSON or nests deeper than MAX_LINE_DEPTH. Iterative (no recursion per level).
 */
export function skipValue(buf: Uint8Array, i: number, end: number): number {
  let c = buf[i]!;
  if (c !== 0x7b && c !== 0x5b) return scanLiteral(buf, i, end);
  let depth = 1;
  let expectValue = true;
  for (;;) {
    if (expectValue) {
      if (i >= end) return -1;
      c = buf[i]!;
      if (c === 0x7b || c === 0x5b) {
        if (++depth > MAX_LINE_DEPTH) return -1;
        const obj = c === 0x7b;
        STACK[depth] = obj ? 1 : 0;
        i = skipWs(buf, i + 1, end);
        if (i >= end) return -1;
        if (buf[i] === (obj ? 0x7d : 0x5d)) {
          i++;
          if (--depth === 1) return i;
          expectValue = false;
          continue;
        }
        if (obj) {
          i = scanKey(buf, i, end);
          if (i < 0) return -1;
        }
        continue;
      }
      if (c === 0x22) i = scanString(buf, i + 1, end);
      else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) i = scanNumber(buf, i, end);
      else i = scanLiteral(buf, i, end);
      if (i < 0) return -1;
      expectValue = false;
    }
    i = skipWs(buf, i, end);
    if (i >= end) return -1;
    c = buf[i]!;
    if (c === 0x2c) {
      i = skipWs(buf, i + 1, end);
      if (STACK[depth] === 1) {
        i = scanKey(buf, i, end);
        if (i < 0) return -1;
      }
      expectValue = true;
    } else if (c === (STACK[depth] === 1 ? 0x7d : 0x5d)) {
      i++;
      if (--depth === 1) return i;
    } else return -1;
  }
}

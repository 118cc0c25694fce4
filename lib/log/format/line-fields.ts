/**
 * The fields the text replay shows, read from an event line's bytes without `JSON.parse` of the whole
 * line (issue 16: parsing each line was the largest cost of the text replay after the merge). For a line
 * the envelope scan already took as an event (valid UTF-8, valid JSON, an object: lib/log/format/envelope-scan.ts),
 * `readLineFields` walks the top-level object once and gives the values of the keys the text line and the
 * attribution read, exactly as `JSON.parse(line)[key]` would be: the last of duplicate keys wins, a string
 * without escapes is its bytes decoded, anything else is `JSON.parse` of the value's own text (small).
 * `input` and `output` objects whose text is what `JSON.stringify` would write again come as `RawJson`,
 * so the text line shows them without parsing and serializing them.
 *
 * Gives up (returns null, the caller parses the line) on a top-level key with an escape (it may spell a
 * wanted key) and on types other than the common ones (`FAST_TYPES`), whose lines show other fields.
 */

/** A JSON value's text that `JSON.stringify(JSON.parse(text))` gives back unchanged. */
export class RawJson {
  constructor(readonly text: string) {}
}

/** The fields `readLineFields` gives; a key the line does not have is undefined. */
export interface LineFields {
  type: string;
  id: string;
  w: string;
  ts: string;
  user_id: unknown;
  text: unknown;
  turn_id: unknown;
  context_message_ids: unknown;
  tool: unknown;
  input: unknown;
  caused_by: unknown;
  action_id: unknown;
  status: unknown;
  exit_code: unknown;
  error: unknown;
  output: unknown;
  author: unknown;
}

/** Types whose text line and attribution read only `LineFields`. */
const FAST_TYPES = [
  'message',
  'turn.start',
  'turn.end',
  'agent.action',
  'agent.action_result',
  'agent.output',
  'note',
];
const FAST_TYPE_BYTES = FAST_TYPES.map((t) => Buffer.from(`"${t}"`, 'latin1'));

/** The fast type whose quoted name is `buf[s, e)` (no escape in it), as a constant string, or null. */
function fastType(buf: Buffer, s: number, e: number): string | null {
  for (let k = 0; k < FAST_TYPE_BYTES.length; k++) {
    const t = FAST_TYPE_BYTES[k]!;
    if (t.length === e - s && sameBytes(buf, s, e, t, 0)) return FAST_TYPES[k]!;
  }
  return null;
}

/** Whether `buf[s, e)` holds the characters of `last` (ASCII), so a writer's id is made once a run. */
function sameText(buf: Buffer, s: number, e: number, last: string): boolean {
  if (last.length !== e - s) return false;
  for (let k = 0; k < last.length; k++) {
    const c = buf[s + k]!;
    // a byte of a multi-byte character is no UTF-16 unit of the same value
    if (c >= 0x80 || c !== last.charCodeAt(k)) return false;
  }
  return true;
}
let lastW = '';

const KEYS = [
  'type',
  'id',
  'w',
  'ts',
  'user_id',
  'text',
  'turn_id',
  'context_message_ids',
  'tool',
  'input',
  'caused_by',
  'action_id',
  'status',
  'exit_code',
  'error',
  'output',
  'author',
] as const;
const INPUT = KEYS.indexOf('input');
const OUTPUT = KEYS.indexOf('output');
const KEY_BYTES = KEYS.map((k) => Buffer.from(k, 'latin1'));
/** slots of the keys of each length */
const BY_LENGTH: number[][] = [];
KEYS.forEach((k, slot) => {
  BY_LENGTH[k.length] = [...(BY_LENGTH[k.length] ?? []), slot];
});

const starts = new Int32Array(KEYS.length);
const ends = new Int32Array(KEYS.length);
const escaped = new Uint8Array(KEYS.length);

/** Node's Buffer decodes without toString's argument handling. */
interface Utf8Slicer {
  utf8Slice(start: number, end: number): string;
}

/**
 * The wanted fields of the event line `buf[start, end)` (no newline), or null when the caller must
 * `JSON.parse` the line. `buf` must hold a line the envelope scan took as an event. The object given is
 * the same one each call, filled again: read it before the next call and keep no reference to it.
 */
export function readLineFields(buf: Buffer, start: number, end: number): LineFields | null {
  ends.fill(-1);
  let i = skipWs(buf, start, end) + 1; // the object's `{`
  for (;;) {
    i = skipWs(buf, i, end);
    if (buf[i] === 0x7d) break;
    if (buf[i] === 0x2c) i = skipWs(buf, i + 1, end);
    // A key: its bytes up to the closing quote; with an escape it may spell any key.
    const ks = i + 1;
    let ke = ks;
    while (buf[ke] !== 0x22) {
      if (buf[ke] === 0x5c) return null;
      ke++;
    }
    const slot = slotOf(buf, ks, ke);
    i = skipWs(buf, ke + 1, end) + 1; // the colon
    i = skipWs(buf, i, end);
    const vs = i;
    i = skipValue(buf, i, end);
    if (slot >= 0) {
      starts[slot] = vs;
      ends[slot] = i;
      escaped[slot] = lastEscaped ? 1 : 0;
    }
  }
  // The type as one of the constant names (no string made), or a type this reader does not serve.
  const type = ends[0]! >= 0 && escaped[0] === 0 ? fastType(buf, starts[0]!, ends[0]!) : null;
  if (type === null) return null;
  const f = FIELDS;
  f.type = type;
  f.id = value(buf, 1) as string;
  // Lines of one writer mostly come in runs of a few: its id is made again only when it changes.
  if (escaped[2] === 0 && sameText(buf, starts[2]! + 1, ends[2]! - 1, lastW)) f.w = lastW;
  else {
    f.w = value(buf, 2) as string;
    lastW = f.w;
  }
  f.ts = value(buf, 3) as string;
  f.user_id = value(buf, 4);
  f.text = value(buf, 5);
  f.turn_id = value(buf, 6);
  f.context_message_ids = value(buf, 7);
  f.tool = value(buf, 8);
  f.input = value(buf, INPUT);
  f.caused_by = value(buf, 10);
  f.action_id = value(buf, 11);
  f.status = value(buf, 12);
  f.exit_code = value(buf, 13);
  f.error = value(buf, 14);
  f.output = value(buf, OUTPUT);
  f.author = value(buf, 16);
  return f;
}

/** The one object `readLineFields` fills (its caller reads it before the next line, and keeps no reference). */
const FIELDS: LineFields = {
  type: '',
  id: '',
  w: '',
  ts: '',
  user_id: undefined,
  text: undefined,
  turn_id: undefined,
  context_message_ids: undefined,
  tool: undefined,
  input: undefined,
  caused_by: undefined,
  action_id: undefined,
  status: undefined,
  exit_code: undefined,
  error: undefined,
  output: undefined,
  author: undefined,
};

function slotOf(buf: Buffer, ks: number, ke: number): number {
  const slots = BY_LENGTH[ke - ks];
  if (slots === undefined) return -1;
  for (let k = 0; k < slots.length; k++) {
    const key = KEY_BYTES[slots[k]!]!;
    let j = 0;
    while (j < key.length && buf[ks + j] === key[j]) j++;
    if (j === key.length) return slots[k]!;
  }
  return -1;
}

/** The value in `slot` as JSON.parse gives it. */
function value(buf: Buffer, slot: number): unknown {
  const e = ends[slot]!;
  if (e < 0) return undefined;
  const s = starts[slot]!;
  const c = buf[s];
  if (c === 0x22 && escaped[slot] === 0) return (buf as unknown as Utf8Slicer).utf8Slice(s + 1, e - 1);
  if (c === 0x6e) return null;
  const text = (buf as unknown as Utf8Slicer).utf8Slice(s, e);
  if ((slot === INPUT || slot === OUTPUT) && (c === 0x7b || c === 0x5b) && canonical(buf, s, e))
    return new RawJson(text);
  return JSON.parse(text);
}

function skipWs(buf: Buffer, i: number, end: number): number {
  while (i < end) {
    const c = buf[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return i;
    i++;
  }
  return i;
}

/** whether the last string `skipValue` passed had an escape */
let lastEscaped = false;

/** The index after the (valid) JSON value at `i`; sets `lastEscaped` for a string. */
function skipValue(buf: Buffer, i: number, end: number): number {
  const c = buf[i];
  if (c === 0x22) return skipString(buf, i + 1);
  if (c !== 0x7b && c !== 0x5b) {
    // a number or a literal: up to the next delimiter
    while (i < end) {
      const d = buf[i];
      if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x09 || d === 0x0a || d === 0x0d)
        break;
      i++;
    }
    return i;
  }
  let depth = 0;
  while (i < end) {
    const d = buf[i];
    if (d === 0x22) {
      i = skipString(buf, i + 1);
      continue;
    }
    if (d === 0x7b || d === 0x5b) depth++;
    else if ((d === 0x7d || d === 0x5d) && --depth === 0) return i + 1;
    i++;
  }
  return i;
}

/** From just after an opening quote: the index after the closing one. */
function skipString(buf: Buffer, i: number): number {
  lastEscaped = false;
  for (;;) {
    const d = buf[i];
    if (d === 0x22) return i + 1;
    if (d === 0x5c) {
      lastEscaped = true;
      i += 2;
    } else i++;
  }
}

/** Keys of one object more than this are not checked for duplicates: such a value is parsed instead. */
const MAX_KEYS = 16;
const keyStarts = new Int32Array(MAX_KEYS * 64);
const keyEnds = new Int32Array(MAX_KEYS * 64);

/**
 * Whether the (valid) JSON container `buf[s, e)` is what `JSON.stringify(JSON.parse(…))` writes: no
 * whitespace between tokens, no escape in any string, numbers only as plain integers of at most 15
 * digits (not `-0`), and in each object no key twice and no key starting with a digit (V8 puts array-index
 * keys first). Anything else: false (the caller parses and serializes). At most 64 levels are checked.
 */
function canonical(buf: Buffer, s: number, e: number): boolean {
  // per depth: how many keys seen so far (depth 0 is the container itself)
  const counts: number[] = [];
  const isObject: boolean[] = [];
  let depth = -1;
  let expectKey = false;
  let i = s;
  while (i < e) {
    const c = buf[i]!;
    if (c === 0x22) {
      const qs = i + 1;
      let q = qs;
      while (buf[q] !== 0x22) {
        if (buf[q] === 0x5c) return false;
        q++;
      }
      if (expectKey) {
        const first = buf[qs]!;
        if (first >= 0x30 && first <= 0x39) return false;
        const n = counts[depth]!;
        if (n >= MAX_KEYS) return false;
        const base = depth * MAX_KEYS;
        for (let k = 0; k < n; k++) {
          const ks = keyStarts[base + k]!;
          if (keyEnds[base + k]! - ks === q - qs && sameBytes(buf, qs, q, buf, ks)) return false;
        }
        keyStarts[base + n] = qs;
        keyEnds[base + n] = q;
        counts[depth] = n + 1;
        expectKey = false;
      }
      i = q + 1;
      continue;
    }
    if (c === 0x7b || c === 0x5b) {
      if (++depth >= 64) return false;
      counts[depth] = 0;
      isObject[depth] = c === 0x7b;
      expectKey = c === 0x7b;
    } else if (c === 0x7d || c === 0x5d) {
      depth--;
      expectKey = false;
    } else if (c === 0x2c) expectKey = isObject[depth] === true;
    else if (c === 0x3a) expectKey = false;
    else if (c === 0x2d || (c >= 0x30 && c <= 0x39)) {
      const ns = i;
      if (c === 0x2d) i++;
      const ds = i;
      while (i < e && buf[i]! >= 0x30 && buf[i]! <= 0x39) i++;
      const digits = i - ds;
      if (digits === 0 || digits > 15 || (digits > 1 && buf[ds] === 0x30)) return false;
      if (c === 0x2d && digits === 1 && buf[ds] === 0x30) return false;
      const d = buf[i];
      if (d === 0x2e || d === 0x65 || d === 0x45) return false;
      if (i === ns) return false;
      continue;
    } else if (c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d) return false;
    i++;
  }
  return true;
}

/** Whether `a[as, ae)` holds the bytes of `b` from `bs` on. */
function sameBytes(a: Buffer, as: number, ae: number, b: Buffer, bs: number): boolean {
  for (let k = 0; k < ae - as; k++) if (a[as + k] !== b[bs + k]) return false;
  return true;
}

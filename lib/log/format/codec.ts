/**
 * Lines ⇄ events (seed 001, DESIGN §3 "Serialization").
 *
 * `parseLine` turns one line of a segment into a `RecordedEvent` (the line's bytes plus its envelope) or a
 * `LineProblem`; it never throws. `decodeEvent` gives the typed view of a recorded event, and
 * `serializeEvent` writes an event back as one line, keys in the format's order: envelope, `type`, the
 * type's fields, `redacted`, `truncated` when present, then `extra` in the order read. Parsing then
 * serializing a line of a known type written in that order gives the same bytes.
 */
import { isUtf8 } from 'node:buffer';
import {
  ENVELOPE_FIELDS,
  type Envelope,
  FIELD_ORDER,
  isKnownType,
  type LogEvent,
  OPTIONAL_TRAILING_FIELDS,
  TYPE_FIELDS,
} from './events.js';
import { cutText } from './text-cut.js';
import { parseTs } from './time.js';

/** An event as read from a segment: its envelope, its parsed object and the exact line it came from. */
export interface RecordedEvent extends Envelope {
  type: string;
  /** the whole parsed JSON object, keys in the order written */
  obj: Record<string, unknown>;
  /** the line as written, without its newline */
  raw: string;
  /** the instant `ts` denotes, in µs since the epoch; null when `ts` is not a timestamp */
  tsMicros: number | null;
  /** 1-based line number in the segment */
  line: number;
  /** byte offset of the line's first byte in the segment */
  offset: number;
}

/** Codes a reader gives to lines it cannot take as events (DESIGN §5: quarantined, never fatal). */
export type LineProblemCode = 'truncated_line' | 'malformed_line';

/** A line that is not an event: stored and shown by raw replay, skipped by the merge, reported by verify. */
export interface LineProblem {
  code: LineProblemCode;
  line: number;
  offset: number;
  message: string;
  /** the line's text (lossy UTF-8), at most 200 characters, for messages */
  excerpt: string;
  /** the line's bytes as written, without the newline (raw replay gives them back) */
  bytes: Uint8Array;
  /** false for a last line with no newline: its writer may still be writing it */
  complete: boolean;
}

export type ParsedLine = { ok: true; event: RecordedEvent } | { ok: false; problem: LineProblem };

/**
 * Parses one line (bytes without the newline). `complete` is false for a last line with no newline: a
 * writer may still be writing it, so it is `truncated_line` whatever it holds.
 * Envelope checks are written out by hand rather than with zod: this is the replay hot path (see
 * `docs/benchmarks.md`); the typed decode (`decodeEvent`) uses the zod schemas.
 */
export function parseLine(bytes: Uint8Array, line: number, offset: number, complete = true): ParsedLine {
  if (!complete)
    return lineProblem(
      'truncated_line',
      `line ${line} has no newline: it is incomplete`,
      bytes,
      line,
      offset,
      false,
    );
  // isUtf8 (simdutf) then a plain decode is several times faster than a fatal TextDecoder per line.
  if (!isUtf8(bytes))
    return lineProblem('malformed_line', `line ${line} is not valid UTF-8`, bytes, line, offset, true);
  const text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  return parseLineText(text, line, offset, bytes, 0, bytes.length);
}

/**
 * Like `parseLine` for a complete line already decoded from valid UTF-8 (the reader decodes a whole
 * chunk at once). The line's bytes are `buf[start, start + length)`, cut out only when the line is a
 * problem (no closure per line: this is the replay's hot path). `retain` keeps the parsed object on the
 * event (see `Recorded`).
 */
export function parseLineText(
  text: string,
  line: number,
  offset: number,
  buf: Uint8Array,
  start: number,
  length: number,
  retain = true,
): ParsedLine {
  if (text.length > 2 * MAX_LINE_DEPTH && nestedDeeperThan(text, MAX_LINE_DEPTH)) {
    return lineProblem(
      'malformed_line',
      `line ${line} is nested more than ${MAX_LINE_DEPTH} levels deep`,
      buf.subarray(start, start + length),
      line,
      offset,
      true,
    );
  }
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch {
    // A line that starts like an object but does not close is most likely torn by a crash.
    const torn = text.startsWith('{') && !text.trimEnd().endsWith('}');
    return lineProblem(
      torn ? 'truncated_line' : 'malformed_line',
      torn
        ? `line ${line} is cut short: a JSON object that never closes (torn by a crash mid-write?)`
        : `line ${line} is not valid JSON`,
      buf.subarray(start, start + length),
      line,
      offset,
      true,
    );
  }
  if (typeof obj !== 'object' || obj === null || Array.isArray(obj)) {
    return lineProblem(
      'malformed_line',
      `line ${line} is not a JSON object`,
      buf.subarray(start, start + length),
      line,
      offset,
      true,
    );
  }
  const o = obj as Record<string, unknown>;
  const missing = envelopeProblem(o);
  if (missing)
    return lineProblem(
      'malformed_line',
      `line ${line} ${missing}`,
      buf.subarray(start, start + length),
      line,
      offset,
      true,
    );
  const ts = o.ts as string;
  const parsed = parseTs(ts);
  return {
    ok: true,
    event: new Recorded(o, text, parsed ? parsed.micros : null, line, offset, retain),
  };
}

/**
 * How deeply a line's JSON may nest. A deeper line is quarantined like any malformed one: nothing
 * downstream (serializing, validating, formatting) could walk it without running out of stack.
 */
export const MAX_LINE_DEPTH = 512;

/** Whether the JSON text nests arrays and objects more than `max` deep (strings skipped; one pass). */
function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text.charCodeAt(i);
    if (inString) {
      if (ch === 0x5c) i++;
      else if (ch === 0x22) inString = false;
    } else if (ch === 0x22) inString = true;
    else if (ch === 0x7b || ch === 0x5b) {
      if (++depth > max) return true;
    } else if (ch === 0x7d || ch === 0x5d) depth--;
  }
  return false;
}

/**
 * A recorded event. Its parsed object is kept only when asked (`retain`); otherwise `obj` parses `raw`
 * again on first use. The NDJSON replay needs only the envelope and the raw line, and not keeping a
 * million parsed trees alive is what holds its memory flat (docs/benchmarks.md).
 */
class Recorded implements RecordedEvent {
  readonly v: number;
  readonly sid: string;
  readonly w: string;
  readonly seq: number;
  readonly id: string;
  readonly ts: string;
  readonly mono: number;
  readonly type: string;
  private parsed: Record<string, unknown> | null;

  constructor(
    o: Record<string, unknown>,
    readonly raw: string,
    readonly tsMicros: number | null,
    readonly line: number,
    readonly offset: number,
    retain: boolean,
  ) {
    this.v = o.v as number;
    this.sid = o.sid as string;
    this.w = o.w as string;
    this.seq = o.seq as number;
    this.id = o.id as string;
    this.ts = o.ts as string;
    this.mono = o.mono as number;
    this.type = o.type as string;
    this.parsed = retain ? o : null;
  }

  get obj(): Record<string, unknown> {
    this.parsed ??= JSON.parse(this.raw) as Record<string, unknown>;
    return this.parsed;
  }
}

function lineProblem(
  code: LineProblemCode,
  message: string,
  bytes: Uint8Array,
  line: number,
  offset: number,
  complete: boolean,
): ParsedLine {
  return {
    ok: false,
    problem: {
      code,
      line,
      offset,
      message,
      excerpt: cutText(Buffer.from(bytes.subarray(0, 600)).toString('utf8'), 200),
      bytes,
      complete,
    },
  };
}

/** Why an object is not an event envelope, or null when it is one. */
function envelopeProblem(o: Record<string, unknown>): string | null {
  if (!Number.isInteger(o.v)) return 'has no integer "v"';
  if (typeof o.sid !== 'string') return 'has no string "sid"';
  if (typeof o.w !== 'string') return 'has no string "w"';
  if (!Number.isInteger(o.seq)) return 'has no integer "seq"';
  if (typeof o.id !== 'string') return 'has no string "id"';
  if (typeof o.ts !== 'string') return 'has no string "ts"';
  if (typeof o.mono !== 'number') return 'has no number "mono"';
  if (typeof o.type !== 'string') return 'has no string "type"';
  return null;
}

/** The envelope's names and `type`: never a type field or an `extra` one. */
const RESERVED: ReadonlySet<string> = new Set<string>([...ENVELOPE_FIELDS, 'type']);
const FIELD_SETS = new Map<string, ReadonlySet<string>>();
/** `FIELD_ORDER[type]` as a set, made once per type (decodeEvent runs for every corrected event). */
function fieldSet(type: keyof typeof FIELD_ORDER): ReadonlySet<string> {
  let set = FIELD_SETS.get(type);
  if (!set) {
    set = new Set<string>(FIELD_ORDER[type]);
    FIELD_SETS.set(type, set);
  }
  return set;
}

/**
 * The typed, lenient view of a recorded event (or of any object with a valid envelope). Known types get
 * their fields with defaults for what is missing; unknown fields go to `extra` in read order. An unknown
 * type, or a known type whose fields have the wrong types, becomes an `UnknownEvent` with every field in
 * `extra`, so nothing is lost. Never throws.
 */
export function decodeEvent(source: RecordedEvent | Record<string, unknown>): LogEvent {
  const o = 'obj' in source && 'raw' in source ? (source as RecordedEvent).obj : source;
  const type = o.type as string;
  const env = {
    v: o.v as number,
    sid: o.sid as string,
    w: o.w as string,
    seq: o.seq as number,
    id: o.id as string,
    ts: o.ts as string,
    mono: o.mono as number,
  };
  const reserved = RESERVED;
  if (isKnownType(type)) {
    const schema = TYPE_FIELDS[type];
    const fieldNames = fieldSet(type);
    const input: Record<string, unknown> = {};
    for (const k of fieldNames) if (Object.hasOwn(o, k)) input[k] = o[k];
    const result = schema.safeParse(input);
    const truncated = o.truncated;
    const truncatedOk =
      truncated === undefined || (Array.isArray(truncated) && truncated.every((x) => typeof x === 'string'));
    if (result.success && truncatedOk) {
      const extra: Record<string, unknown> = {};
      for (const k of Object.keys(o)) {
        if (!reserved.has(k) && !fieldNames.has(k) && k !== 'truncated') setOwn(extra, k, o[k]);
      }
      const ev = { ...env, type, ...result.data, extra } as LogEvent;
      if (truncated !== undefined) ev.truncated = truncated as string[];
      return ev;
    }
  }
  const extra: Record<string, unknown> = {};
  for (const k of Object.keys(o)) if (!reserved.has(k)) setOwn(extra, k, o[k]);
  return { ...env, type, extra, unknown: true };
}

/**
 * One event as one line of JSON, without the newline, keys in the format's order (DESIGN §3).
 * Throws `TypeError` only for values JSON cannot hold (a BigInt, a cycle).
 */
export function serializeEvent(ev: LogEvent): string {
  const out: Record<string, unknown> = {};
  for (const k of ENVELOPE_FIELDS) out[k] = ev[k];
  out.type = ev.type;
  const fields = ev as unknown as Record<string, unknown>;
  if (!('unknown' in ev) && isKnownType(ev.type)) {
    for (const k of FIELD_ORDER[ev.type]) out[k] = fields[k];
    for (const k of OPTIONAL_TRAILING_FIELDS) if (fields[k] !== undefined) out[k] = fields[k];
  }
  for (const [k, v] of Object.entries(ev.extra)) if (!Object.hasOwn(out, k)) setOwn(out, k, v);
  return JSON.stringify(out);
}

/**
 * `obj[k] = v` as an own, enumerable property, also for the key `__proto__`, which plain assignment would
 * take as the object's prototype: a line may carry that key, and an unknown field is never dropped.
 */
function setOwn(obj: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__')
    Object.defineProperty(obj, k, { value: v, enumerable: true, writable: true, configurable: true });
  else obj[k] = v;
}

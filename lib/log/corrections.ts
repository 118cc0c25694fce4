/**
 * Corrections: the effective view of a session, with provenance (seed 001 "Corrections are appended,
 * never rewritten"; DESIGN §3 "Corrections").
 *
 * A `correction` event `{target_id, field, value, reason}` changes field `field` of the event whose `id`
 * is `target_id` to `value`, in the *effective* view only: the lines on disk never change, and raw replay
 * gives them as written. Rules:
 *
 * - Only a field of the target's known type is correctable (`FIELD_ORDER[type]`, `redacted` included).
 *   Envelope fields (`v, sid, w, seq, id, ts, mono`), `type`, `truncated` and `extra` fields are never
 *   correctable, nor is any field of an event this build cannot decode as a known type (an `UnknownEvent`):
 *   "a correction may change what an event says, never what it is". Such a correction changes nothing and
 *   is reported as `correction_forbidden_field`.
 * - A value that is not valid for the field (e.g. `status: 5`, `caused_by: "m_…"`) would make the event
 *   undecodable, so it changes nothing either and is reported as `correction_invalid_value`. The value
 *   applied is the field schema's output (it equals the value given, except that `writer.start`'s `meta`
 *   gets its defaults filled in).
 * - A correction whose target is not in the session changes nothing: `correction_target_missing`.
 * - Corrections of one event apply in merged order `(ts, w, seq)`: for one field the last one wins, and
 *   every correction that changed the event is in its provenance, in merged order, each with the value it
 *   replaced (`was`). `null` and `[]` are different values here as everywhere.
 * - Corrections act as written: correcting a correction event changes how it reads in the effective view,
 *   not what it did to its own target. (So there are no chains or cycles to resolve.)
 * - When several events share the target id (a session verify reports for `duplicate_id`), each of them
 *   is corrected.
 *
 * Two ways in:
 * - `applyCorrections(events)`: in memory, for library users with the merged events at hand.
 * - `CorrectionIndex.scan(segments)` + `index.apply(event)` per event: the streaming form the replay uses.
 *   Pass 1 (`scan`) reads the segments' bytes and keeps only the corrections (memory grows with the number
 *   of corrections, not with the session); pass 2 is the ordinary merge, which applies them to each target
 *   as it passes, even a target that comes before its corrections in merged order (the normal case).
 */
import { decodeEvent, parseLine, serializeEvent } from './codec.js';
import { hashIdText } from './envelope-scan.js';
import {
  ENVELOPE_FIELDS,
  FIELD_ORDER,
  isKnownType,
  isType,
  type KnownEvent,
  type LogEvent,
  TYPE_FIELDS,
} from './events.js';
import { readSegmentBatches } from './reader.js';
import type { ReplaySegment } from './replay.js';
import { openSegmentBlocks } from './segment-blocks.js';

/** A decoded `correction` event. */
export type CorrectionEvent = Extract<KnownEvent, { type: 'correction' }>;

/** One correction that changed an event: replay writes these as the event's `"corrected"` list. */
export interface CorrectionProvenance {
  /** the id of the correction event */
  by: string;
  field: string;
  /** the field's value before this correction (after any earlier correction of it) */
  was: unknown;
  reason: string;
}

/** An event of the effective view; `corrected` is present only when at least one correction changed it. */
export type EffectiveEvent = LogEvent & { corrected?: CorrectionProvenance[] };

export type CorrectionProblemCode =
  | 'correction_target_missing'
  | 'correction_forbidden_field'
  | 'correction_invalid_value';

/**
 * A correction that changed nothing, in the verify problem shape. `w` and `seq` are the correction's own.
 * Severity is `warning` for every code (as in verify's table): the log is still readable as written.
 */
export interface CorrectionProblem {
  severity: 'warning' | 'error';
  code: CorrectionProblemCode;
  w: string;
  seq: number;
  message: string;
}

/** Fields no correction may change, whatever the target's type. */
const NEVER_CORRECTABLE: ReadonlySet<string> = new Set<string>([...ENVELOPE_FIELDS, 'type']);

/**
 * True when a correction may change `field` of `ev`: a field of its known type (`FIELD_ORDER`), never an
 * envelope field, `type`, `truncated`, an `extra` field, or any field of an `UnknownEvent`.
 */
export function isCorrectable(ev: LogEvent, field: string): boolean {
  if (NEVER_CORRECTABLE.has(field) || 'unknown' in ev || !isKnownType(ev.type)) return false;
  return FIELD_ORDER[ev.type].includes(field);
}

/**
 * The effective view of `events` (given in merged order, e.g. decoded from `mergeSegments`): every event,
 * in the same order, with the session's corrections folded in. Events no correction changed are returned
 * as the same objects; a changed one is a new object carrying `corrected`. The inputs are not modified.
 * Problems come in the merged order of the corrections they are about. Never throws.
 */
export function applyCorrections(events: Iterable<LogEvent>): {
  events: EffectiveEvent[];
  problems: CorrectionProblem[];
} {
  const all = [...events];
  const index = CorrectionIndex.fromEvents(all);
  const out = all.map((ev) => {
    if (ev.type === 'correction') index.passed(ev.id);
    return index.apply(ev);
  });
  return { events: out, problems: index.problems() };
}

/**
 * One line of the effective replay for an event a correction changed: `serializeEvent` of the effective
 * event, then a last key `"corrected":[{"by","field","was","reason"},…]` (DESIGN §3). For an event with no
 * `corrected`, just `serializeEvent`. (If the line already had a field named `corrected`, it stays in
 * `extra` and the provenance key follows it, so a reader that keeps the last duplicate key sees the
 * provenance.)
 */
export function effectiveLine(ev: EffectiveEvent): string {
  const line = serializeEvent(ev);
  if (!ev.corrected || ev.corrected.length === 0) return line;
  const marks = ev.corrected.map((c) => ({ by: c.by, field: c.field, was: c.was, reason: c.reason }));
  return `${line.slice(0, -1)},"corrected":${JSON.stringify(marks)}}`;
}

/**
 * The corrections of a session, grouped by target in merged order, ready to apply to each event as it
 * passes (pass 2 of the replay). Problems are collected as targets pass; `problems()` at the end adds the
 * corrections whose target never passed.
 */
export class CorrectionIndex {
  /** corrections by target id, each list in merged order */
  private readonly byTarget: Map<string, CorrectionEvent[]>;
  private readonly count: number;
  /** target ids some event had */
  private readonly seenTargets = new Set<string>();
  /** problem of each correction (at most one), by correction id */
  private readonly found = new Map<string, CorrectionProblem>();
  /** merged position of each correction event as it passed */
  private readonly position = new Map<string, number>();

  /** bit `hashIdText(id) & mask` set for every target id: `mayTarget`'s filter */
  private readonly filter: Uint8Array;
  private readonly mask: number;

  private constructor(byTarget: Map<string, CorrectionEvent[]>, count: number) {
    this.byTarget = byTarget;
    this.count = count;
    // About 64 bits a target (a false positive in ~1 of 64 lookups costs one id string), at least 4 KiB.
    let bits = 32768;
    while (bits < byTarget.size * 64 && bits < 2 ** 30) bits *= 2;
    this.mask = bits - 1;
    this.filter = new Uint8Array(bits >> 3);
    for (const id of byTarget.keys()) {
      const b = hashIdText(id) & this.mask;
      this.filter[b >> 3]! |= 1 << (b & 7);
    }
  }

  /** An index of the corrections among `events`, which are in merged order. */
  static fromEvents(events: Iterable<LogEvent>): CorrectionIndex {
    const byTarget = new Map<string, CorrectionEvent[]>();
    let count = 0;
    for (const ev of events) {
      if (!isType(ev, 'correction')) continue;
      count += 1;
      const list = byTarget.get(ev.target_id);
      if (list) list.push(ev);
      else byTarget.set(ev.target_id, [ev]);
    }
    return new CorrectionIndex(byTarget, count);
  }

  /**
   * Pass 1 of the replay: the corrections of a session's segments, read from their bytes, in merged order.
   *
   * Cheap by construction: it never splits the segments into lines or parses them. It searches each chunk
   * for the bytes `"correction"` and parses only the complete lines that hold them (with `parseLine`, the
   * merge's own parser, so a line counts here exactly when the merge takes it). A type written with a JSON
   * escape (`"\u0063orrection"`) is not found; no writer does that to an ASCII word.
   *
   * Order within one segment is file order. Only when one target has corrections from several segments is
   * their merge key needed, the writer's running maximum ts at each of them; that segment is then read
   * again with the merge's parser up to its last such correction, so the order is exactly the merge's.
   * Memory: the corrections, plus one line at a time. I/O errors of `open()` propagate.
   *
   * `signal` stops the scan: it rejects with the signal's reason (an `AbortError`). When it rejects for
   * any reason, every segment it opened has been closed first, the concurrent scans' included.
   */
  static async scan(segments: readonly ReplaySegment[], signal?: AbortSignal): Promise<CorrectionIndex> {
    // A few segments at a time: their reads overlap (the file system's thread pool has 4), and only a few
    // scan buffers are in memory at once. Results keep (segment, offset) order.
    const perSegment: Found[][] = segments.map(() => []);
    // One scan failing (or the caller aborting) stops the others at their next chunk, and the scan
    // settles only once all have stopped: no read is left running after it rejects.
    signal?.throwIfAborted();
    const stop = new AbortController();
    const onAbort = () => stop.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    // Blocks of 1 MiB from the merge's own reader (a file segment by positional reads into a reused
    // buffer, no stream machinery), at most SCAN_CONCURRENCY segments open.
    const blocks = openSegmentBlocks(segments, {
      budgetBytes: segments.length * SCAN_CHUNK_BYTES,
      maxOpen: SCAN_CONCURRENCY,
      signal: stop.signal,
    });
    let next = 0;
    const worker = async () => {
      for (let src = next++; src < segments.length; src = next++) {
        stop.signal.throwIfAborted();
        const seg = segments[src]!;
        const out = perSegment[src]!;
        const reader = blocks.readers[src]!;
        try {
          await findCandidateLines(reader, stop.signal, (line, offset) => {
            const p = parseLine(line, 0, offset, true);
            if (!p.ok || p.event.type !== 'correction') return;
            const ev = decodeEvent(p.event);
            if (isType(ev, 'correction')) out.push({ ev, src, w: seg.w, offset, key: 0 });
          });
        } finally {
          await reader.close();
        }
      }
    };
    try {
      const runs = Array.from({ length: Math.min(SCAN_CONCURRENCY, segments.length) }, () =>
        worker().catch((err: unknown) => {
          stop.abort(err);
          throw err;
        }),
      );
      const settled = await Promise.allSettled(runs);
      if (stop.signal.aborted) throw stop.signal.reason;
      const failed = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      await blocks.closeAll();
    }
    const found = perSegment.flat();
    const groups = new Map<string, Found[]>();
    for (const f of found) {
      const list = groups.get(f.ev.target_id);
      if (list) list.push(f);
      else groups.set(f.ev.target_id, [f]);
    }
    // Targets corrected from several segments need merge keys; `found` is already in (segment, offset) order.
    const needKeys = new Map<number, Found[]>();
    const mixed: Found[][] = [];
    for (const list of groups.values()) {
      if (list.every((f) => f.src === list[0]!.src)) continue;
      mixed.push(list);
      for (const f of list) {
        const l = needKeys.get(f.src);
        if (l) l.push(f);
        else needKeys.set(f.src, [f]);
      }
    }
    for (const [src, list] of needKeys) await assignMergeKeys(segments[src]!, list, signal);
    for (const list of mixed) list.sort(mergeOrder);
    const byTarget = new Map<string, CorrectionEvent[]>();
    for (const [target, list] of groups) {
      byTarget.set(
        target,
        list.map((f) => f.ev),
      );
    }
    return new CorrectionIndex(byTarget, found.length);
  }

  /** How many corrections the session has. */
  get size(): number {
    return this.count;
  }

  /** True when some correction names `id` as its target. */
  targets(id: string): boolean {
    return this.byTarget.has(id);
  }

  /**
   * False when no correction names an id of hash `idHash` (`hashIdBytes`/`hashIdText` of the id's UTF-8):
   * the replay asks this of every event before it makes the id a string for `targets`. True may be a
   * false positive (about 1 in 64 ids); false is always right.
   */
  mayTarget(idHash: number): boolean {
    const b = idHash & this.mask;
    return (this.filter[b >> 3]! & (1 << (b & 7))) !== 0;
  }

  /**
   * Notes that the correction event `id` passed, so that `problems()` can put problems in merged order.
   * Call it for every correction event, in merged order.
   */
  passed(id: string): void {
    if (!this.position.has(id)) this.position.set(id, this.position.size);
  }

  /**
   * Folds the corrections of `ev` into it (call it for every event, in merged order). Returns `ev` itself
   * when no correction changed it, else a new event with `corrected`. Problems found are kept for
   * `problems()`.
   */
  apply(ev: LogEvent): EffectiveEvent {
    const list = this.byTarget.get(ev.id);
    if (!list) return ev;
    this.seenTargets.add(ev.id);
    let out: (LogEvent & Record<string, unknown>) | null = null;
    const marks: CorrectionProvenance[] = [];
    for (const c of list) {
      const verdict = check(ev, c);
      if (!verdict.ok) {
        if (!this.found.has(c.id)) this.found.set(c.id, problem(c, verdict.code, verdict.message));
        continue;
      }
      out ??= { ...ev } as LogEvent & Record<string, unknown>;
      marks.push({ by: c.id, field: c.field, was: out[c.field], reason: c.reason });
      out[c.field] = verdict.value;
    }
    if (!out) return ev;
    return Object.assign(out, { corrected: marks }) as EffectiveEvent;
  }

  /**
   * Why the correction `id` changed nothing, when that is already known: its target has passed (`apply`)
   * and refused it. Undefined while its target has not passed yet, or when it was applied.
   */
  problemOf(id: string): CorrectionProblem | undefined {
    return this.found.get(id);
  }

  /**
   * Every correction that changed nothing: the ones found by `apply`, and, once every event has passed,
   * those whose target never did (`correction_target_missing`). In the merged order of the corrections
   * (as noted by `passed`; any not noted come last, by writer and seq).
   */
  problems(): CorrectionProblem[] {
    const out: { at: number; p: CorrectionProblem }[] = [];
    const at = (id: string) => this.position.get(id) ?? Number.POSITIVE_INFINITY;
    for (const [target, list] of this.byTarget) {
      for (const c of list) {
        const p = this.seenTargets.has(target)
          ? this.found.get(c.id)
          : problem(
              c,
              'correction_target_missing',
              `correction ${c.id} (${c.w} seq ${c.seq}) names ${target}, which is not in this session; nothing was changed`,
            );
        if (p) out.push({ at: at(c.id), p });
      }
    }
    out.sort((a, b) => {
      if (a.at !== b.at) return a.at < b.at ? -1 : 1;
      if (a.p.w !== b.p.w) return a.p.w < b.p.w ? -1 : 1;
      return a.p.seq - b.p.seq;
    });
    return out.map((x) => x.p);
  }
}

type Verdict = { ok: true; value: unknown } | { ok: false; code: CorrectionProblemCode; message: string };

/** Whether correction `c` may change `target`, and the value it sets. */
function check(target: LogEvent, c: CorrectionEvent): Verdict {
  const what = `correction ${c.id} (${c.w} seq ${c.seq}) of ${c.field} of ${target.id}`;
  const forbidden = (why: string): Verdict => ({
    ok: false,
    code: 'correction_forbidden_field',
    message: `${what}: ${why}; nothing was changed`,
  });
  if ((ENVELOPE_FIELDS as readonly string[]).includes(c.field)) {
    return forbidden(`${c.field} is an envelope field, never correctable`);
  }
  if (c.field === 'type') return forbidden('the type is never correctable');
  if (c.field === 'truncated') return forbidden('truncated records what the writer cut, never correctable');
  if ('unknown' in target || !isKnownType(target.type)) {
    return forbidden(`${target.type} is not a type this build decodes, so none of its fields is correctable`);
  }
  if (!FIELD_ORDER[target.type].includes(c.field)) {
    return forbidden(`${c.field} is not a field of ${target.type} (extra fields are never correctable)`);
  }
  const schema = (TYPE_FIELDS[target.type].shape as Record<string, SafeParser>)[c.field]!;
  const r = schema.safeParse(c.value);
  if (!r.success) {
    return {
      ok: false,
      code: 'correction_invalid_value',
      message: `${what}: ${JSON.stringify(c.value)} is not a valid ${c.field} of ${target.type}; nothing was changed`,
    };
  }
  return { ok: true, value: r.data };
}

interface SafeParser {
  safeParse(v: unknown): { success: true; data: unknown } | { success: false };
}

function problem(c: CorrectionEvent, code: CorrectionProblemCode, message: string): CorrectionProblem {
  return { severity: 'warning', code, w: c.w, seq: c.seq, message };
}

/** A correction found by pass 1, with where it is (segment index, byte offset) and its merge key. */
interface Found {
  ev: CorrectionEvent;
  src: number;
  /** the segment's writer id (the merge's tie-break) */
  w: string;
  offset: number;
  /** the writer's running maximum ts (µs) at this line, as the merge computes it (set only when needed) */
  key: number;
}

/** The merge's order: key, then writer id, then segment index, then file order. */
function mergeOrder(a: Found, b: Found): number {
  if (a.key !== b.key) return a.key < b.key ? -1 : 1;
  if (a.w !== b.w) return a.w < b.w ? -1 : 1;
  if (a.src !== b.src) return a.src - b.src;
  return a.offset - b.offset;
}

/** Reads a segment again with the merge's parser, and sets each found correction's merge key. */
async function assignMergeKeys(seg: ReplaySegment, list: Found[], signal?: AbortSignal): Promise<void> {
  const byOffset = new Map(list.map((f) => [f.offset, f]));
  const last = Math.max(...list.map((f) => f.offset));
  let maxTs = Number.NEGATIVE_INFINITY;
  for await (const batch of readSegmentBatches(seg.open(undefined, signal))) {
    signal?.throwIfAborted();
    for (const item of batch) {
      if (item.kind !== 'event') continue;
      const ts = item.event.tsMicros;
      if (ts !== null && ts > maxTs) maxTs = ts;
      const f = byOffset.get(item.event.offset);
      if (f) f.key = maxTs;
      if (item.event.offset >= last) return;
    }
  }
}

const NL = 0x0a;
/** Pass 1 does little per byte, so it is bound by reads: it asks for large chunks. */
const SCAN_CHUNK_BYTES = 1024 * 1024;
/** Segments scanned at once in the corrections pass. */
const SCAN_CONCURRENCY = 4;
const NEEDLE = Buffer.from('"correction"');

function asBuffer(chunk: Uint8Array): Buffer {
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

/**
 * Calls `onLine(bytes, offset)` for every complete line (ended by a newline) of a byte stream that holds
 * `"correction"`, with the line's bytes (no newline) and the byte offset of its first byte — the same
 * bytes and offset `splitLines` gives. Lines without the needle are never cut out or copied. Throws the
 * reason of `signal` at the next chunk once it is aborted (the source is then closed by `for await`).
 */
async function findCandidateLines(
  reader: { next(): Promise<Uint8Array | null> },
  signal: AbortSignal,
  onLine: (bytes: Buffer, offset: number) => void,
): Promise<void> {
  // A block is the reader's until its next `next()`: what is kept across blocks (a cut line) is copied,
  // and `onLine` gets a copy of its line.
  let carry: Buffer[] = [];
  let carryLen = 0;
  let base = 0; // offset of the current block's first byte
  for (let chunk = await reader.next(); chunk !== null; chunk = await reader.next()) {
    signal.throwIfAborted();
    const buf = asBuffer(chunk);
    let start = 0;
    if (carryLen > 0) {
      const nl = buf.indexOf(NL);
      if (nl === -1) {
        carry.push(Buffer.from(buf));
        carryLen += buf.length;
        base += buf.length;
        continue;
      }
      const line = Buffer.concat([...carry, buf.subarray(0, nl)], carryLen + nl);
      if (line.includes(NEEDLE)) onLine(line, base - carryLen);
      carry = [];
      carryLen = 0;
      start = nl + 1;
    }
    const lastNl = buf.lastIndexOf(NL);
    if (lastNl >= start) {
      let p = start;
      for (;;) {
        const h = buf.indexOf(NEEDLE, p);
        if (h === -1 || h > lastNl) break;
        const ls = buf.lastIndexOf(NL, h) + 1;
        const le = buf.indexOf(NL, h);
        onLine(Buffer.from(buf.subarray(ls, le)), base + ls);
        p = le + 1;
      }
      start = lastNl + 1;
    }
    if (start < buf.length) {
      carry.push(Buffer.from(buf.subarray(start)));
      carryLen += buf.length - start;
    }
    base += buf.length;
  }
  // What is left has no newline: a line still being written, which the merge leaves out too.
}

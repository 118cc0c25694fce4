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

import { serializeEvent } from '../format/codec.js';
import { hashIdText } from '../format/envelope-scan.js';
import {
  ENVELOPE_FIELDS,
  FIELD_ORDER,
  isKnownType,
  isType,
  type LogEvent,
  TYPE_FIELDS,
} from '../format/events.js';
import type { ReplaySegment } from '../read/session-dir.js';
import { type Correction, keepCorrection, scanCorrections } from './correction-scan.js';
import { IdTable, Int32Column } from './id-table.js';

export type { CorrectionEvent } from './correction-scan.js';

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
 *
 * Memory (issue 16): per correction its writer, seq, field, value and reason in columns, its id and its
 * target's interned (`IdTable`), and an int32 or two per target and per correction id: no decoded event,
 * no object per correction and no string-keyed Map (~1.1 KB a correction before, ~170 bytes now).
 */
export class CorrectionIndex {
  /**
   * The corrections by number n, grouped by target (targets in order of their first correction found),
   * each group in merged order, as columns: per correction its writer, seq, field, value and reason (a
   * writer id and a field name are one string each for the index); its id and its target's are interned.
   */
  private readonly ws: string[];
  private readonly seqs: Float64Array;
  private readonly fields: string[];
  private readonly values: unknown[];
  private readonly reasons: string[];
  /** target ids, numbered in group order; group t is the corrections `start[t]` ≤ n < `start[t + 1]` */
  private readonly targetIds = new IdTable();
  private readonly start: Int32Array;
  /** per correction n: its target's number */
  private readonly targetOf: Int32Array;
  /** per target: 1 once an event of that id passed `apply` */
  private readonly seenTargets: Uint8Array;
  /** correction ids; per correction, its id's number */
  private readonly corrIds = new IdTable();
  private readonly idKey: Int32Array;
  /** per correction id number: its merged position as noted by `passed`, -1 until then */
  private readonly position = new Int32Column(-1);
  private positions = 0;
  /** problem of each correction id (at most one, the first found), by its number */
  private readonly found = new Map<number, CorrectionProblem>();

  /** bit `hashIdText(id) & mask` set for every target id: `mayTarget`'s filter */
  private readonly filter: Uint8Array;
  private readonly mask: number;

  private constructor(groups: Map<string, Correction[]>, count: number) {
    this.ws = new Array(count);
    this.seqs = new Float64Array(count);
    this.fields = new Array(count);
    this.values = new Array(count);
    this.reasons = new Array(count);
    this.targetOf = new Int32Array(count);
    this.start = new Int32Array(groups.size + 1);
    this.seenTargets = new Uint8Array(groups.size);
    this.idKey = new Int32Array(count);
    // About 64 bits a target (a false positive in ~1 of 64 lookups costs one id string), at least 4 KiB.
    let bits = 32768;
    while (bits < groups.size * 64 && bits < 2 ** 30) bits *= 2;
    this.mask = bits - 1;
    this.filter = new Uint8Array(bits >> 3);
    let n = 0;
    for (const [target, cs] of groups) {
      const t = this.targetIds.add(target);
      this.start[t] = n;
      for (const c of cs) {
        this.idKey[n] = this.corrIds.add(c.id);
        this.targetOf[n] = t;
        this.ws[n] = c.w;
        this.seqs[n] = c.seq;
        this.fields[n] = c.field;
        this.values[n] = c.value;
        this.reasons[n] = c.reason;
        n++;
      }
      const b = hashIdText(target) & this.mask;
      this.filter[b >> 3]! |= 1 << (b & 7);
    }
    this.start[groups.size] = n;
  }

  /** An index of the corrections among `events`, which are in merged order. */
  static fromEvents(events: Iterable<LogEvent>): CorrectionIndex {
    const groups = new Map<string, Correction[]>();
    const shared = new Map<string, string>();
    let count = 0;
    for (const ev of events) {
      if (!isType(ev, 'correction')) continue;
      count += 1;
      const c = keepCorrection(ev, shared);
      const list = groups.get(c.target_id);
      if (list) list.push(c);
      else groups.set(c.target_id, [c]);
    }
    return new CorrectionIndex(groups, count);
  }

  /**
   * Pass 1 of the replay: the corrections of a session's segments, read from their bytes, in merged order
   * (`scanCorrections`, lib/log/replay/correction-scan.ts: only the lines holding `"correction"` are parsed).
   * Memory: the corrections, plus one line at a time. I/O errors of `open()` propagate.
   *
   * `signal` stops the scan: it rejects with the signal's reason (an `AbortError`). When it rejects for
   * any reason, every segment it opened has been closed first, the concurrent scans' included.
   */
  static async scan(segments: readonly ReplaySegment[], signal?: AbortSignal): Promise<CorrectionIndex> {
    const { groups, count } = await scanCorrections(segments, signal);
    return new CorrectionIndex(groups, count);
  }

  /** How many corrections the session has. */
  get size(): number {
    return this.seqs.length;
  }

  /** Correction n as `check` and `problem` read it (made when its target passes, or at the end). */
  private correction(n: number): Correction {
    return {
      id: this.corrIds.text(this.idKey[n]!),
      w: this.ws[n]!,
      seq: this.seqs[n]!,
      target_id: this.targetIds.text(this.targetOf[n]!),
      field: this.fields[n]!,
      value: this.values[n],
      reason: this.reasons[n]!,
    };
  }

  /** True when some correction names `id` as its target. */
  targets(id: string): boolean {
    return this.targetIds.find(id) >= 0;
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
    // An id no correction of the index has (a correction line that did not decode) needs no place.
    const k = this.corrIds.find(id);
    if (k >= 0 && this.position.get(k) < 0) this.position.set(k, this.positions++);
  }

  /**
   * Folds the corrections of `ev` into it (call it for every event, in merged order). Returns `ev` itself
   * when no correction changed it, else a new event with `corrected`. Problems found are kept for
   * `problems()`.
   */
  apply(ev: LogEvent): EffectiveEvent {
    const t = this.targetIds.find(ev.id);
    if (t < 0) return ev;
    this.seenTargets[t] = 1;
    let out: (LogEvent & Record<string, unknown>) | null = null;
    const marks: CorrectionProvenance[] = [];
    for (let n = this.start[t]!; n < this.start[t + 1]!; n++) {
      const c = this.correction(n);
      const verdict = check(ev, c);
      if (!verdict.ok) {
        const k = this.idKey[n]!;
        if (!this.found.has(k)) this.found.set(k, problem(c, verdict.code, verdict.message));
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
    const k = this.corrIds.find(id);
    return k < 0 ? undefined : this.found.get(k);
  }

  /**
   * Every correction that changed nothing: the ones found by `apply`, and, once every event has passed,
   * those whose target never did (`correction_target_missing`). In the merged order of the corrections
   * (as noted by `passed`; any not noted come last, by writer and seq).
   */
  problems(): CorrectionProblem[] {
    const out: { at: number; p: CorrectionProblem }[] = [];
    for (let t = 0; t + 1 < this.start.length; t++) {
      for (let n = this.start[t]!; n < this.start[t + 1]!; n++) {
        const k = this.idKey[n]!;
        const p =
          this.seenTargets[t] === 1
            ? this.found.get(k)
            : problem(
                this.correction(n),
                'correction_target_missing',
                `correction ${this.corrIds.text(k)} (${this.ws[n]} seq ${this.seqs[n]}) names ${this.targetIds.text(t)}, which is not in this session; nothing was changed`,
              );
        const at = this.position.get(k);
        if (p) out.push({ at: at < 0 ? Number.POSITIVE_INFINITY : at, p });
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
function check(target: LogEvent, c: Correction): Verdict {
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

function problem(c: Correction, code: CorrectionProblemCode, message: string): CorrectionProblem {
  return { severity: 'warning', code, w: c.w, seq: c.seq, message };
}

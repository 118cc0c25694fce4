/**
 * The CorrectionIndex as it was before it kept corrections compact (lib/log/replay/corrections.ts at 3124e37: each
 * correction as its whole decoded event, string-keyed Maps and Sets), kept as the reference that
 * test/log/corrections-compact.test.ts checks the compact one against. Not used by the library.
 */

import { hashIdText } from '../../lib/log/format/envelope-scan.js';
import {
  ENVELOPE_FIELDS,
  FIELD_ORDER,
  isKnownType,
  isType,
  type LogEvent,
  TYPE_FIELDS,
} from '../../lib/log/format/events.js';
import type {
  CorrectionEvent,
  CorrectionProblem,
  CorrectionProblemCode,
  CorrectionProvenance,
  EffectiveEvent,
} from '../../lib/log/replay/corrections.js';

export class OracleCorrectionIndex {
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
  static fromEvents(events: Iterable<LogEvent>): OracleCorrectionIndex {
    const byTarget = new Map<string, CorrectionEvent[]>();
    let count = 0;
    for (const ev of events) {
      if (!isType(ev, 'correction')) continue;
      count += 1;
      const list = byTarget.get(ev.target_id);
      if (list) list.push(ev);
      else byTarget.set(ev.target_id, [ev]);
    }
    return new OracleCorrectionIndex(byTarget, count);
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

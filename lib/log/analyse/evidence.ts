/**
 * Declared evidence checked against what a session recorded (seed 000 "Read declared evidence", issue 12
 * item 2, issue 24 items 1 and 2, docs/status.md "What a verdict rests on"). An agent's status report may
 * declare evidence items (`{type, ref, result}`); for `command` and `test` items this finds the recorded
 * `agent.action` the ref names and its `agent.action_result`, and gives a verdict:
 *
 * - `supported`: an observed result agrees with the claim. A pass (`passed`, `completed`, `exit:0`) needs a
 *   recorded status `ok` with exit code 0; a failure (`failed`, `exit:N`) a recorded non-zero exit code (N
 *   itself for `exit:N`); `interrupted` / `cancelled` a result of that status.
 * - `unsupported`: no observed action matches, its result is missing, its observed results disagree (a
 *   second result never overrides the first), the result conflicts with the claim, or the action or its
 *   result was changed by a correction from another writer (`contested`); `reason` says which.
 * - `unchecked`: `file` and `commit` items (the transcript does not record them).
 *
 * Only observed writers count (lib/log/format/provenance.ts): a writer whose provenance is `declared` (what the
 * model itself handed over, e.g. MCP `capture_subagent_messages`) or `unknown` neither supports nor refutes
 * a claim; the reason says when such a writer recorded a match that was not counted. Every check names what
 * it rests on (`rests_on`: the result's writer, its agent, provenance and uploading token's label, the action
 * and its exit code). Ref matching: lib/log/analyse/evidence-match.ts. Among actions matching equally well, the
 * last one recorded no later than the report (with `CLOCK_SKEW_MICROS` of slack: writers' clocks are not
 * the server's). Feed it the effective events (corrections applied, each changed event with its
 * `corrected` provenance). Declared events are never written into the transcript: this only reads it.
 */
import type { RecordedEvent } from '../format/codec.js';
import { isObserved, type Provenance, provenanceOf } from '../format/provenance.js';
import { commandMatch, commandOf, isActionId, isRuntimeCallId, normalRef } from './evidence-match.js';

export { commandOf } from './evidence-match.js';

/** What a check concludes about one evidence item. */
export type Verdict = 'supported' | 'unsupported' | 'unchecked';

/** How the ref found its action (`null`: it found none). */
export type MatchBasis = 'id' | 'call_id' | 'command' | 'command_prefix';

/** One evidence item as declared (seed 000): the fields a check reads. */
export interface DeclaredEvidence {
  type: string;
  ref: string;
  result: string;
}

/** Who put a writer on record: its provenance, agent, and the token that uploaded it (server-side). */
export interface WriterOrigin {
  provenance: Provenance;
  agent: string | null;
  token_id: string | null;
  token_label: string | null;
  /**
   * the server saw chunks of it from another token than its first's (the writer index's `mixed_tokens`):
   * bytes someone else appended, so none of its events count, whatever its provenance
   */
  mixed_tokens?: boolean;
}

/** A writer's origin as given to `EvidenceIndex`: a null provenance is read from its `writer.start`. */
export interface GivenOrigin {
  provenance: Provenance | null;
  agent: string | null;
  token_id: string | null;
  token_label: string | null;
  mixed_tokens?: boolean;
}

/** The recorded result a verdict rests on, and who recorded it. */
export interface RestsOn {
  /** the writer of the result (of the action, when it has no counted result) */
  w: string;
  agent: string | null;
  provenance: Provenance;
  /** the token that uploaded that writer, as the server knew it (null locally, or for an older writer) */
  token_id: string | null;
  token_label: string | null;
  action_id: string;
  /** the command the action ran, as its own writer recorded it (null when its input names none) */
  command: string | null;
  /** the result event's id, or null when the action has no counted result */
  result_id: string | null;
  status: string | null;
  exit_code: number | null;
}

/** A correction from another writer that changed the matched action or its result. */
export interface ContestedChange {
  /** the correction event's id */
  by: string;
  /** the correcting writer and its provenance */
  w: string;
  provenance: Provenance;
  /** the event it changed (the action or its result) */
  target_id: string;
  field: string;
  /** the value before the correction */
  was: unknown;
  /** the value after it */
  value: unknown;
}

/** The verdict on one evidence item, with what it was based on. */
export interface EvidenceCheck {
  verdict: Verdict;
  /** a sentence for a person: why this verdict */
  reason: string;
  /** the recorded action the ref matched, or null */
  action_id: string | null;
  matched_by: MatchBasis | null;
  /** the matched result's exit code, or null (no result, or none recorded) */
  exit_code: number | null;
  /** the result (or action) the verdict rests on; null when no observed action matched */
  rests_on: RestsOn | null;
  /** corrections from other writers of the matched action or its result (then it supports nothing) */
  contested: ContestedChange[];
}

/** How much later than the report an action's `ts` may be and still count as before it: 60 s. */
export const CLOCK_SKEW_MICROS = 60_000_000;

const PASS = new Set(['passed', 'completed', 'exit:0']);
const STOPPED = new Set(['interrupted', 'cancelled']);

/** A correction applied to an event: `corrected` as the effective view gives it. */
interface Applied {
  by: string;
  field: string;
  was: unknown;
  /** the field's value after this correction (the next one's `was`, or the effective value) */
  value: unknown;
}

interface RecordedResult {
  id: string;
  w: string;
  status: string;
  exitCode: number | null;
  corrected: Applied[];
}

interface RecordedAction {
  id: string;
  w: string;
  callId: string | null;
  /** the command it ran, blanks collapsed, or null when its input names none */
  command: string | null;
  tsMicros: number;
  corrected: Applied[];
  /** every observed result recorded for it, in merged order */
  results: RecordedResult[];
  /** results from writers that are not observed: never counted, named in the reason */
  uncounted: RecordedResult[];
}

const UNKNOWN_ORIGIN: WriterOrigin = {
  provenance: 'unknown',
  agent: null,
  token_id: null,
  token_label: null,
};

/**
 * The actions and results of one merged transcript, fed in merged order (`add`), then asked about
 * evidence items (`check`). Memory: one small record per action.
 *
 * `origins` gives each writer's origin as the server's writer index keeps it (provenance read from its first
 * chunk, the uploading token); a writer it does not name takes its provenance from its `writer.start` as
 * written (before any correction of `meta`).
 */
export class EvidenceIndex {
  private readonly actions: RecordedAction[] = [];
  private readonly byId = new Map<string, RecordedAction>();
  private readonly byCallId = new Map<string, RecordedAction>();
  /** actions of writers that are not observed: named in the reason when they alone match */
  private readonly uncountedActions: RecordedAction[] = [];
  /** results whose action came later in merged order (or never): by the id they name */
  private readonly early = new Map<string, RecordedResult[]>();
  private readonly origins = new Map<string, WriterOrigin>();
  /** origins given whose provenance is to be read from the writer's `writer.start` */
  private readonly pending = new Map<string, GivenOrigin>();
  /** the writer of each correction event, by its id */
  private readonly correctionWriters = new Map<string, string>();

  constructor(origins?: ReadonlyMap<string, GivenOrigin>) {
    for (const [w, o] of origins ?? []) {
      if (o.provenance === null) this.pending.set(w, o);
      else this.origins.set(w, { ...o, provenance: o.provenance });
    }
  }

  /** Who recorded writer `w` (`unknown` for a writer never seen). */
  origin(w: string): WriterOrigin {
    const given = this.pending.get(w);
    return this.origins.get(w) ?? (given ? { ...given, provenance: 'unknown' } : UNKNOWN_ORIGIN);
  }

  /** Takes one recorded event; anything but writer.start, actions, results and corrections is ignored. */
  add(ev: RecordedEvent): void {
    const o = ev.obj;
    const corrected = appliedOf(o);
    if (ev.type === 'writer.start') {
      if (!this.origins.has(ev.w)) {
        // The meta as written: a correction may change what meta says, never who recorded the writer.
        const meta = corrected.find((c) => c.field === 'meta')?.was ?? o.meta;
        const agent = (meta as { agent?: unknown } | null)?.agent;
        const given = this.pending.get(ev.w);
        this.origins.set(ev.w, {
          provenance: provenanceOf(meta),
          agent: given ? given.agent : typeof agent === 'string' ? agent : null,
          token_id: given?.token_id ?? null,
          token_label: given?.token_label ?? null,
          mixed_tokens: given?.mixed_tokens ?? false,
        });
      }
    } else if (ev.type === 'correction' && typeof o.id === 'string') {
      this.correctionWriters.set(o.id, ev.w);
    } else if (ev.type === 'agent.action' && typeof o.id === 'string') {
      // Results may name any call id; a ref names one only in a runtime's form (`find`).
      const callId = typeof o.call_id === 'string' && o.call_id !== '' ? o.call_id : null;
      const a: RecordedAction = {
        id: o.id,
        w: ev.w,
        callId,
        command: commandOf(o.input),
        tsMicros: ev.tsMicros ?? 0,
        corrected,
        results: [],
        uncounted: [],
      };
      const early = this.early.get(a.id) ?? [];
      if (callId !== null) early.push(...(this.early.get(callId) ?? []));
      if (!this.counts(ev.w)) {
        this.uncountedActions.push(a);
        return;
      }
      this.actions.push(a);
      if (!this.byId.has(a.id)) this.byId.set(a.id, a);
      if (callId !== null && !this.byCallId.has(callId)) this.byCallId.set(callId, a);
      for (const r of early) this.attach(a, r);
    } else if (ev.type === 'agent.action_result' && typeof o.action_id === 'string') {
      const r: RecordedResult = {
        id: typeof o.id === 'string' ? o.id : '',
        w: ev.w,
        status: typeof o.status === 'string' ? o.status : 'ok',
        exitCode: Number.isInteger(o.exit_code) ? (o.exit_code as number) : null,
        corrected,
      };
      const a = this.byId.get(o.action_id) ?? this.byCallId.get(o.action_id);
      if (a) this.attach(a, r);
      else this.early.set(o.action_id, [...(this.early.get(o.action_id) ?? []), r]);
    }
  }

  private attach(a: RecordedAction, r: RecordedResult): void {
    (this.counts(r.w) ? a.results : a.uncounted).push(r);
  }

  /** True when writer `w`'s events count: observed provenance, and no chunk appended by another token. */
  private counts(w: string): boolean {
    const o = this.origin(w);
    return isObserved(o.provenance) && o.mixed_tokens !== true;
  }

  /** `w (provenance)` for a reason, with why it is not counted when that is the appended chunks. */
  private named(w: string): string {
    const o = this.origin(w);
    return `${w} (${o.provenance}${o.mixed_tokens && isObserved(o.provenance) ? ', with chunks appended by another token' : ''})`;
  }

  /** The verdict on `e`, declared in a report made at `reportedAtMicros`. */
  check(e: DeclaredEvidence, reportedAtMicros: number): EvidenceCheck {
    if (e.type !== 'command' && e.type !== 'test') {
      return none(
        'unchecked',
        `${e.type} references are not recorded in the transcript, so they are not checked`,
      );
    }
    const found = this.find(e, reportedAtMicros);
    if (found === 'later') {
      return none('unsupported', `the only observed action matching "${e.ref}" came after the report`);
    }
    if (found === null) return none('unsupported', this.noMatchReason(e, reportedAtMicros));
    const { action: a, basis } = found;
    const first = a.results[0];
    const contested = this.contestedOf(a);
    const base = {
      action_id: a.id,
      matched_by: basis,
      exit_code: first?.exitCode ?? null,
      rests_on: this.restsOn(a, first),
      contested,
    };
    const verdict = (ok: boolean, reason: string): EvidenceCheck => ({
      ...base,
      verdict: ok ? 'supported' : 'unsupported',
      reason,
    });
    if (!first) return verdict(false, `action ${a.id} has no observed result${this.uncountedNote(a)}`);
    if (contested.length > 0) {
      const what = contested
        .map(
          (c) =>
            `${c.field} of ${c.target_id} from ${shownValue(c.was)} to ${shownValue(c.value)} by ${c.w} (${c.provenance}, correction ${c.by})`,
        )
        .join('; ');
      return verdict(
        false,
        `action ${a.id} or its result was changed by a correction from another writer (${what}), so it supports nothing`,
      );
    }
    const shown = (r: RecordedResult) =>
      r.exitCode === null ? `status ${r.status}` : `status ${r.status}, exit code ${r.exitCode}`;
    if (a.results.some((r) => r.status !== first.status || r.exitCode !== first.exitCode)) {
      return verdict(
        false,
        `action ${a.id} has conflicting results (${a.results.map(shown).join('; then ')})`,
      );
    }
    const { status, exitCode } = first;
    const by = `action ${a.id} recorded by ${first.w} (${this.origin(first.w).provenance})`;
    // A writer's correction of its own result counts, and says so: a reader can tell a flipped result.
    const own = first.corrected
      .filter((c) => c.field === 'exit_code' || c.field === 'status')
      .map((c) => `${c.field} ${shownValue(c.was)} → ${shownValue(c.value)}, correction ${c.by}`);
    const recorded =
      (exitCode === null ? `no exit code (status ${status})` : `exit code ${exitCode}`) +
      (own.length > 0 ? ` (as corrected by its own writer: ${own.join('; ')})` : '');
    if (PASS.has(e.result) && basis === 'command_prefix') {
      // Arguments may change what runs (`npm test --script-shell=true`, `make check -n`, a filter that
      // selects no test): a pass of the command with them is no pass of the command the ref names.
      return verdict(
        false,
        `claimed ${e.result} of "${e.ref}"; ${by} ran \`${this.commandOf(a)}\`, with arguments that may change what runs: name its call id (${a.callId ?? a.id})`,
      );
    }
    if (PASS.has(e.result)) {
      const why = status !== 'ok' && exitCode === 0 ? ` but status ${status}` : '';
      return verdict(exitCode === 0 && status === 'ok', `claimed ${e.result}; ${by}: ${recorded}${why}`);
    }
    const exit = /^exit:(-?\d+)$/.exec(e.result);
    if (exit) return verdict(exitCode === Number(exit[1]), `claimed ${e.result}; ${by}: ${recorded}`);
    if (e.result === 'failed') {
      return verdict(exitCode !== null && exitCode !== 0, `claimed failed; ${by}: ${recorded}`);
    }
    if (STOPPED.has(e.result)) {
      return verdict(
        status === 'cancelled' || status === 'interrupted',
        `claimed ${e.result}; ${by}: status ${status}`,
      );
    }
    return verdict(false, `"${e.result}" is a result of a file, not of a ${e.type}`);
  }

  /** What the verdict on `a` rests on: its first counted result, or the action alone. */
  private restsOn(a: RecordedAction, r: RecordedResult | undefined): RestsOn {
    const w = r?.w ?? a.w;
    const origin = this.origin(w);
    // What its own writer recorded: a field another writer corrected reads as it was before that.
    const recorded = (field: string, effective: unknown) => {
      const foreign = r?.corrected.find(
        (c) => c.field === field && (this.correctionWriters.get(c.by) ?? '?') !== r.w,
      );
      return foreign ? foreign.was : effective;
    };
    const status = recorded('status', r?.status ?? null);
    const exitCode = recorded('exit_code', r?.exitCode ?? null);
    return {
      w,
      agent: origin.agent,
      provenance: origin.provenance,
      token_id: origin.token_id,
      token_label: origin.token_label,
      action_id: a.id,
      command: this.commandOf(a),
      result_id: r?.id ?? null,
      status: typeof status === 'string' ? status : null,
      exit_code: Number.isInteger(exitCode) ? (exitCode as number) : null,
    };
  }

  /** The corrections of `a` and its counted results made by another writer than the event's own. */
  private contestedOf(a: RecordedAction): ContestedChange[] {
    const out: ContestedChange[] = [];
    const scan = (target: string, owner: string, applied: Applied[]) => {
      for (const c of applied) {
        // A correction whose writer is not known (it did not pass) is not the event's own either.
        const w = this.correctionWriters.get(c.by) ?? '?';
        if (w === owner) continue;
        out.push({
          by: c.by,
          w,
          provenance: this.origin(w).provenance,
          target_id: target,
          field: c.field,
          was: c.was,
          value: c.value,
        });
      }
    };
    scan(a.id, a.w, a.corrected);
    for (const r of a.results) scan(r.id, r.w, r.corrected);
    return out;
  }

  /** A note on results of `a` that were recorded by writers that are not observed, or ''. */
  private uncountedNote(a: RecordedAction): string {
    const ws = [...new Set(a.uncounted.map((r) => r.w))];
    if (ws.length === 0) return '';
    const named = ws.map((w) => this.named(w)).join(', ');
    return `; a result from ${named} ${notCounted(ws.map((w) => this.origin(w)))}`;
  }

  /** Why nothing matched: with the writers whose matching actions were not counted, when there are. */
  private noMatchReason(e: DeclaredEvidence, reportedAtMicros: number): string {
    const ref = normalRef(e.ref);
    const ws = new Set<string>();
    for (const a of this.uncountedActions) {
      const byRef = (isActionId(e.ref) && a.id === e.ref) || (isRuntimeCallId(e.ref) && a.callId === e.ref);
      if (
        (byRef || (a.command !== null && commandMatch(a.command, ref))) &&
        a.tsMicros <= reportedAtMicros + CLOCK_SKEW_MICROS
      ) {
        ws.add(a.w);
      }
    }
    // A one-word ref names no command by prefix (`npm` would name `npm --version`): say how to name one.
    const oneWord =
      !ref.includes(' ') && this.actions.some((a) => a.command?.startsWith(`${ref} `))
        ? ': one word names no command by its first word; name the whole command (no options) or its call id'
        : '';
    const base = `no observed action matches "${e.ref}"${oneWord}`;
    if (ws.size === 0) return base;
    const named = [...ws].map((w) => this.named(w)).join(', ');
    return `${base}: a matching action of ${named} ${notCounted([...ws].map((w) => this.origin(w)))}`;
  }

  /**
   * Field `field` of `a` as its own writer recorded it: the value before the first correction by another
   * writer, else `effective` (a writer's own corrections stand). Refs are matched on this, so another writer
   * can neither hide the action a ref names nor make another one match it (it is contested instead).
   */
  private ownRecorded<T>(a: RecordedAction, field: string, effective: T): T | unknown {
    const foreign = a.corrected.find(
      (c) => c.field === field && (this.correctionWriters.get(c.by) ?? '?') !== a.w,
    );
    return foreign ? foreign.was : effective;
  }

  /** The command `a` ran, as its own writer recorded it (`ownRecorded` of its input). */
  private commandOf(a: RecordedAction): string | null {
    if (!a.corrected.some((c) => c.field === 'input')) return a.command;
    const input = this.ownRecorded(a, 'input', undefined);
    return input === undefined ? a.command : commandOf(input);
  }

  private find(
    e: DeclaredEvidence,
    reportedAtMicros: number,
  ): { action: RecordedAction; basis: MatchBasis } | 'later' | null {
    if (isActionId(e.ref)) {
      const a = this.byId.get(e.ref);
      if (a) return { action: a, basis: 'id' };
    }
    if (isRuntimeCallId(e.ref)) {
      // the call id its own writer recorded: another writer's correction neither gives nor takes one
      const a = this.actions.find((x) => this.ownRecorded(x, 'call_id', x.callId) === e.ref);
      if (a) return { action: a, basis: 'call_id' };
    }
    const ref = normalRef(e.ref);
    let later = false;
    for (const level of ['command', 'command_prefix'] as const) {
      let best: RecordedAction | null = null;
      for (const a of this.actions) {
        const command = this.commandOf(a);
        if (command === null || commandMatch(command, ref) !== level) continue;
        if (a.tsMicros > reportedAtMicros + CLOCK_SKEW_MICROS) later = true;
        else best = a;
      }
      if (best) return { action: best, basis: level };
    }
    return later ? 'later' : null;
  }
}

/** Why uncounted writers support nothing, in words: the agent's own word, unknown origin, or appended bytes. */
function notCounted(origins: WriterOrigin[]): string {
  const kinds = new Set(
    origins.map((o) =>
      isObserved(o.provenance) ? 'appended' : o.provenance === 'declared' ? 'declared' : 'unknown',
    ),
  );
  const words = {
    declared: "the agent's own word",
    unknown: 'of unknown origin',
    appended: 'not its own record (another token appended to it)',
  } as const;
  const what = (['declared', 'unknown', 'appended'] as const)
    .filter((k) => kinds.has(k))
    .map((k) => words[k]);
  return `is ${what.join(' or ')}, which supports nothing`;
}

/** A corrected value in a reason: JSON (a string quoted), `null` for none. */
function shownValue(v: unknown): string {
  return v === undefined ? 'null' : JSON.stringify(v);
}

function none(verdict: Verdict, reason: string): EvidenceCheck {
  return {
    verdict,
    reason,
    action_id: null,
    matched_by: null,
    exit_code: null,
    rests_on: null,
    contested: [],
  };
}

/**
 * The `corrected` list of an effective event `obj` (replay's provenance), or [] when it has none, each
 * with the value it set: the next correction of the same field's `was`, else the field's effective value.
 */
function appliedOf(obj: Record<string, unknown>): Applied[] {
  const v = obj.corrected;
  if (!Array.isArray(v)) return [];
  const list = v.filter(
    (c): c is Omit<Applied, 'value'> =>
      typeof c === 'object' && c !== null && typeof c.by === 'string' && typeof c.field === 'string',
  );
  return list.map((c, i) => {
    const next = list.slice(i + 1).find((d) => d.field === c.field);
    return { by: c.by, field: c.field, was: c.was, value: next ? next.was : obj[c.field] };
  });
}

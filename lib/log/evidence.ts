/**
 * Declared evidence checked against what a session recorded (seed 000 "Read declared evidence", issue 12
 * item 2, docs/status.md). An agent's status report may declare evidence items (`{type, ref, result}`);
 * for `command` and `test` items this finds the recorded `agent.action` the ref names and its
 * `agent.action_result`, and gives a verdict:
 *
 * - `supported`: a recorded result agrees with the claim. A pass (`passed`, `completed`, `exit:0`) needs a
 *   recorded status `ok` with exit code 0; a failure (`failed`, `exit:N`) a recorded non-zero exit code (N
 *   itself for `exit:N`); `interrupted` / `cancelled` a result of that status.
 * - `unsupported`: no recorded action matches, its result is missing, the action has results that
 *   disagree (a second result never overrides the first), or the result conflicts with the claim;
 *   `reason` says which.
 * - `unchecked`: `file` and `commit` items (the transcript does not record them).
 *
 * Which action a ref names, best match first: its event id (`a_…`) or tool-call id (`call_id`); a
 * command equal to the ref; a command that starts with the ref's words (two words at least) followed by
 * arguments only (no `|`, `||`, `&&`, `;`, `&`, redirection or substitution after them, which could turn
 * a failure into a success). Among actions matching equally well, the last one recorded no later than the
 * report (with `CLOCK_SKEW_MICROS` of slack: writers' clocks are not the server's). Feed it the effective
 * events (corrections applied). Declared events are never written into the transcript: this only reads it.
 */
import type { RecordedEvent } from './codec.js';

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
}

/** How much later than the report an action's `ts` may be and still count as before it: 60 s. */
export const CLOCK_SKEW_MICROS = 60_000_000;

const PASS = new Set(['passed', 'completed', 'exit:0']);
/** What may follow a command's words and change its outcome: pipes, lists, background, redirection, substitution. */
const SHELL_CONTROL = /[|;&<>`]|\$\(/;
const STOPPED = new Set(['interrupted', 'cancelled']);

interface RecordedAction {
  id: string;
  callId: string | null;
  /** the command it ran, whitespace collapsed, or null when its input names none */
  command: string | null;
  tsMicros: number;
  /** every result recorded for it, in merged order */
  results: { status: string; exitCode: number | null }[];
}

/**
 * The actions and results of one merged transcript, fed in merged order (`add`), then asked about
 * evidence items (`check`). Memory: one small record per action.
 */
export class EvidenceIndex {
  private readonly actions: RecordedAction[] = [];
  private readonly byId = new Map<string, RecordedAction>();
  /** results whose action came later in merged order (or never): by the id they name */
  private readonly early = new Map<string, { status: string; exitCode: number | null }[]>();

  /** Takes one recorded event; anything but `agent.action` and `agent.action_result` is ignored. */
  add(ev: RecordedEvent): void {
    const o = ev.obj;
    if (ev.type === 'agent.action' && typeof o.id === 'string') {
      const a: RecordedAction = {
        id: o.id,
        callId: typeof o.call_id === 'string' && o.call_id !== '' ? o.call_id : null,
        command: commandOf(o.input),
        tsMicros: ev.tsMicros ?? 0,
        results: [],
      };
      this.actions.push(a);
      this.byId.set(a.id, a);
      if (a.callId !== null && !this.byId.has(a.callId)) this.byId.set(a.callId, a);
      a.results.push(...(this.early.get(a.id) ?? []));
      if (a.callId !== null) a.results.push(...(this.early.get(a.callId) ?? []));
    } else if (ev.type === 'agent.action_result' && typeof o.action_id === 'string') {
      const r = {
        status: typeof o.status === 'string' ? o.status : 'ok',
        exitCode: Number.isInteger(o.exit_code) ? (o.exit_code as number) : null,
      };
      const a = this.byId.get(o.action_id);
      if (a) a.results.push(r);
      else this.early.set(o.action_id, [...(this.early.get(o.action_id) ?? []), r]);
    }
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
      return none('unsupported', `the only recorded action matching "${e.ref}" came after the report`);
    }
    if (found === null) return none('unsupported', `no recorded action matches "${e.ref}"`);
    const { action: a, basis } = found;
    const first = a.results[0];
    const base = { action_id: a.id, matched_by: basis, exit_code: first?.exitCode ?? null };
    if (!first) return { ...base, verdict: 'unsupported', reason: `action ${a.id} has no recorded result` };
    const shown = (r: { status: string; exitCode: number | null }) =>
      r.exitCode === null ? `status ${r.status}` : `status ${r.status}, exit code ${r.exitCode}`;
    if (a.results.some((r) => r.status !== first.status || r.exitCode !== first.exitCode)) {
      return {
        ...base,
        verdict: 'unsupported',
        reason: `action ${a.id} has conflicting results (${a.results.map(shown).join('; then ')})`,
      };
    }
    const { status, exitCode } = first;
    const verdict = (ok: boolean, reason: string): EvidenceCheck => ({
      ...base,
      verdict: ok ? 'supported' : 'unsupported',
      reason,
    });
    const recorded = exitCode === null ? `no exit code (status ${status})` : `exit code ${exitCode}`;
    if (PASS.has(e.result)) {
      const why = status !== 'ok' && exitCode === 0 ? ` but status ${status}` : '';
      return verdict(
        exitCode === 0 && status === 'ok',
        `claimed ${e.result}; action ${a.id} recorded ${recorded}${why}`,
      );
    }
    const exit = /^exit:(-?\d+)$/.exec(e.result);
    if (exit)
      return verdict(
        exitCode === Number(exit[1]),
        `claimed ${e.result}; action ${a.id} recorded ${recorded}`,
      );
    if (e.result === 'failed') {
      return verdict(
        exitCode !== null && exitCode !== 0,
        `claimed failed; action ${a.id} recorded ${recorded}`,
      );
    }
    if (STOPPED.has(e.result)) {
      return verdict(
        status === 'cancelled' || status === 'interrupted',
        `claimed ${e.result}; action ${a.id} recorded status ${status}`,
      );
    }
    return verdict(false, `"${e.result}" is a result of a file, not of a ${e.type}`);
  }

  private find(
    e: DeclaredEvidence,
    reportedAtMicros: number,
  ): { action: RecordedAction; basis: MatchBasis } | 'later' | null {
    const direct = this.byId.get(e.ref);
    if (direct) return { action: direct, basis: direct.id === e.ref ? 'id' : 'call_id' };
    const ref = collapse(e.ref);
    const levels: [MatchBasis, (cmd: string) => boolean][] = [['command', (cmd) => cmd === ref]];
    if (ref.includes(' ')) {
      levels.push([
        'command_prefix',
        (cmd) => cmd.startsWith(`${ref} `) && !SHELL_CONTROL.test(cmd.slice(ref.length)),
      ]);
    }
    let later = false;
    for (const [basis, matches] of levels) {
      let best: RecordedAction | null = null;
      for (const a of this.actions) {
        if (a.command === null || !matches(a.command)) continue;
        if (a.tsMicros > reportedAtMicros + CLOCK_SKEW_MICROS) later = true;
        else best = a;
      }
      if (best) return { action: best, basis };
    }
    return later ? 'later' : null;
  }
}

function none(verdict: Verdict, reason: string): EvidenceCheck {
  return { verdict, reason, action_id: null, matched_by: null, exit_code: null };
}

const collapse = (s: string) => s.trim().replace(/\s+/g, ' ');

/**
 * The command an action's input names: a string input, or its `command` / `cmd` field (a string, or an
 * argv array, whose `sh -c` / `bash -lc` wrapper is dropped); null when it has none.
 */
export function commandOf(input: unknown): string | null {
  if (typeof input === 'string') return collapse(input);
  if (typeof input !== 'object' || input === null || Array.isArray(input)) return null;
  const o = input as Record<string, unknown>;
  const c = o.command ?? o.cmd;
  if (typeof c === 'string') return collapse(c);
  if (Array.isArray(c) && c.every((x) => typeof x === 'string')) {
    const argv = c as string[];
    const wrapped = argv.length === 3 && /(^|\/)(ba|z)?sh$/.test(argv[0]!) && /^-l?c$/.test(argv[1]!);
    return collapse(wrapped ? argv[2]! : argv.join(' '));
  }
  return null;
}

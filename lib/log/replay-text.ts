/**
 * The text replay's lines (seed 001 "replay", DESIGN §3): one readable line per event, its attribution mark,
 * and the one-line forms of ids and free text (issue 8.4, lib/log/escape). Used by lib/log/replay.ts, which
 * re-exports `formatTextLine` and `attributionMark`.
 */
import { type Attribution, Attributor } from './attribution.js';
import { decodeEvent, type RecordedEvent } from './codec.js';
import { type CorrectionIndex, type EffectiveEvent, effectiveLine } from './corrections.js';
import { escapeControl } from './escape.js';

/**
 * The replay's line of each event, given in merged order: in NDJSON the line as written unless a
 * correction changed the event (then `serializeEvent` of its effective view with its provenance, see
 * `correctedLine`), in text one readable line with its attribution. State: the agents named so far, the
 * attributor and the authors of messages (text), and what `index` records as events pass.
 */
export class EventLines {
  private readonly agents = new Map<string, string>();
  private readonly attributor: Attributor | null;
  /** message id → the person who wrote it (text only; memory grows with the messages, not the events) */
  private readonly authors = new Map<string, string>();
  private readonly anyCorrections: boolean;

  /**
   * @param lightAttribution give the attributor a view of each uncorrected event built from its parsed
   *   fields (`attributionView`) instead of the recorded event, which it would decode with the zod schemas
   *   (most of the text replay's time). Same attributions; the reference replay keeps the decode.
   */
  constructor(
    private readonly format: 'ndjson' | 'text',
    private readonly index: CorrectionIndex,
    private readonly lightAttribution = false,
  ) {
    this.anyCorrections = index.size > 0;
    this.attributor = format === 'text' ? new Attributor() : null;
  }

  /** The next event's output line, with its newline. */
  line(event: RecordedEvent): string {
    const index = this.index;
    let corrected: { line: string; effective: EffectiveEvent } | null = null;
    if (this.anyCorrections) {
      if (event.type === 'correction') index.passed(event.id);
      corrected = index.targets(event.id) ? correctedLine(event, index, this.format, this.agents) : null;
    }
    if (this.format === 'ndjson') return corrected?.line ?? `${event.raw}\n`;
    // Text shows who each action and output is attributed to (DESIGN §3, lib/log/attribution), from
    // the effective event: a corrected caused_by counts. People are named by their messages' user_id.
    if (event.type === 'message' && typeof event.obj.user_id === 'string')
      this.authors.set(event.id, event.obj.user_id);
    const a = this.attributor!.push(
      corrected?.effective ?? (this.lightAttribution ? attributionView(event) : event),
    );
    let text = corrected === null ? formatTextLine(event, this.agents) : corrected.line.slice(0, -1);
    // A correction whose target already passed and refused it is shown as such, not as if applied.
    const refused = event.type === 'correction' ? index.problemOf(event.id) : undefined;
    if (refused) text += ` [not applied: ${refused.code}]`;
    return a ? `${text} ${attributionMark(a, this.authors)}\n` : `${text}\n`;
  }
}

const NO_EXTRA: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;

/**
 * What `Attributor.push` reads of an event, as a `LogEvent`-shaped object it takes as it is: the envelope,
 * the type and the five fields attribution uses, as parsed. It attributes exactly as the decoded event
 * would: for an event whose fields decode, the decoded values are the parsed ones or, for a missing field,
 * `''`/`null`, which the attributor reads as it reads a missing one; for one that does not decode, the
 * attributor reads the decoded event's `extra`, which holds the parsed values.
 */
function attributionView(event: RecordedEvent): Record<string, unknown> {
  const o = event.obj;
  return {
    v: event.v,
    sid: event.sid,
    w: event.w,
    seq: event.seq,
    id: event.id,
    ts: event.ts,
    mono: event.mono,
    type: event.type,
    user_id: o.user_id,
    turn_id: o.turn_id,
    context_message_ids: o.context_message_ids,
    action_id: o.action_id,
    caused_by: o.caused_by,
    extra: NO_EXTRA,
  };
}

/**
 * How the text replay shows an attribution: `[← priya m_…: temporal 0.7]`, `[← nobody: recorded_no_cause]`,
 * `[← contested: priya m_… | sam m_…; 0.35 each]`. `authors` names the person of each message id it knows.
 */
export function attributionMark(a: Attribution, authors: ReadonlyMap<string, string> = new Map()): string {
  const conf = Number(a.confidence.toFixed(2));
  const ids = (m: readonly string[], sep: string) => m.map(escapeControl).join(sep);
  if (a.basis === 'contested' && a.candidates) {
    const who = a.candidates.map((c) => `${escapeControl(c.user_id)} ${ids(c.message_ids, ',')}`).join(' | ');
    return `[← contested: ${who}; ${conf} each]`;
  }
  if (a.message_ids.length === 0) return `[← nobody: ${a.basis}]`;
  const people = [
    ...new Set(a.message_ids.map((m) => authors.get(m)).filter((p): p is string => p !== undefined)),
  ];
  const who = people.length > 0 ? `${ids(people, ', ')} ` : '';
  return `[← ${who}${ids(a.message_ids, ', ')}: ${a.basis} ${conf}]`;
}

const MAX_WHAT = 240;

/**
 * One readable line for an event: `ts  who  type  what`, with no newline or other control character in
 * it (see the module's doc). `agents` maps writer ids to the agent named in their `writer.start` (filled
 * as events pass), so an agent's events are shown under its name.
 */
export function formatTextLine(ev: RecordedEvent, agents: Map<string, string>): string {
  const o = ev.obj;
  if (ev.type === 'writer.start') {
    const meta = (o.meta ?? {}) as Record<string, unknown>;
    if (typeof meta.agent === 'string' && meta.agent) agents.set(ev.w, meta.agent);
  }
  const who = escapeControl(whoOf(ev, agents));
  const what = oneLine(whatOf(ev));
  return `${escapeControl(ev.ts)}  ${who.padEnd(14)}  ${escapeControl(ev.type).padEnd(19)}  ${what}`.trimEnd();
}

function whoOf(ev: RecordedEvent, agents: Map<string, string>): string {
  const o = ev.obj;
  switch (ev.type) {
    case 'message':
    case 'participant.join':
    case 'participant.leave':
      return str(o.user_id) || '?';
    case 'note':
      return str(o.author) || agents.get(ev.w) || ev.w;
    default:
      return agents.get(ev.w) ?? ev.w;
  }
}

/** What an event says. Ids and names go through `name` (one line, `\n`); free text is left to `oneLine`. */
function whatOf(ev: RecordedEvent): string {
  const o = ev.obj;
  switch (ev.type) {
    case 'writer.start': {
      const m = (o.meta ?? {}) as Record<string, unknown>;
      return `writer ${name(ev.w)} starts (agent ${show(m.agent)}, app ${show(m.app)}, host ${show(m.host)}, pid ${show(m.pid)})`;
    }
    case 'participant.join':
      return `joins${o.display_name ? ` as ${name(o.display_name)}` : ''}`;
    case 'participant.leave':
      return 'leaves';
    case 'message':
      return `${name(ev.id)}: ${str(o.text)}`;
    case 'turn.start': {
      const ctx = o.context_message_ids;
      const c = Array.isArray(ctx)
        ? ctx.length
          ? `context ${ctx.map(name).join(', ')}`
          : 'context: none (recorded)'
        : 'no context recorded';
      return `${name(o.turn_id) || name(ev.id)} begins; ${c}`;
    }
    case 'agent.action':
      return `${name(ev.id)} ${name(o.tool)} ${compactJson(o.input)}`;
    case 'agent.action_result': {
      const exit = o.exit_code === null || o.exit_code === undefined ? '' : ` exit ${show(o.exit_code)}`;
      const body = o.error ? str(o.error) : compactJson(o.output);
      return `${name(o.action_id)} ${name(o.status)}${exit}: ${body}`;
    }
    case 'agent.output':
      return `${str(o.text)}`;
    case 'turn.end':
      return `${name(o.turn_id)} ends: ${name(o.status)}`;
    case 'note':
      return str(o.text);
    case 'correction':
      return `${name(o.target_id)}.${name(o.field)} := ${compactJson(o.value)} (${str(o.reason)})`;
    case 'writer.end':
      return `writer ${name(ev.w)} ends${o.reason ? `: ${str(o.reason)}` : ''}`;
    default: {
      const rest: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(o)) {
        if (!['v', 'sid', 'w', 'seq', 'id', 'ts', 'mono', 'type'].includes(k)) rest[k] = v;
      }
      return `(unknown type) ${compactJson(rest)}`;
    }
  }
}

function str(v: unknown): string {
  return typeof v === 'string' ? v : v === null || v === undefined ? '' : JSON.stringify(v);
}

/** An id or a name: always one line, a newline shown as `\n`. */
function name(v: unknown): string {
  return escapeControl(str(v));
}

function show(v: unknown): string {
  return v === null || v === undefined ? '-' : escapeControl(String(v));
}

function compactJson(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * Free text on one line: newlines shown as ` ⏎ `, tabs as spaces, every other control, DEL, C1 and bidi
 * character escaped (`escapeControl`), cut to a screen line.
 */
export function oneLine(s: string): string {
  const flat = escapeControl(s.replace(/\r?\n/g, ' ⏎ ').replace(/\t/g, ' '));
  return flat.length > MAX_WHAT ? `${flat.slice(0, MAX_WHAT - 1)}…` : flat;
}

/**
 * The replay line of an event some correction names, with the effective event (for attribution), or
 * null when no correction changed it.
 */
export function correctedLine(
  event: RecordedEvent,
  index: CorrectionIndex,
  format: 'ndjson' | 'text',
  agents: Map<string, string>,
): { line: string; effective: EffectiveEvent } | null {
  const eff = index.apply(decodeEvent(event));
  if (!eff.corrected) return null;
  const line = effectiveLine(eff);
  if (format === 'ndjson') return { line: `${line}\n`, effective: eff };
  const shown: RecordedEvent = { ...event, obj: JSON.parse(line) as Record<string, unknown> };
  const marks = eff.corrected
    .map(
      (c) =>
        `${escapeControl(c.field)} by ${escapeControl(c.by)}${c.reason ? ` (${oneLine(c.reason)})` : ''}`,
    )
    .join(', ');
  return { line: `${formatTextLine(shown, agents)} [corrected: ${marks}]\n`, effective: eff };
}

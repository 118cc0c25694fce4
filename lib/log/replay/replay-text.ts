/**
 * The text replay's lines (seed 001 "replay", DESIGN §3): one readable line per event, its attribution mark,
 * and the one-line forms of ids and free text (issue 8.4, lib/log/format/escape). Used by lib/log/replay/replay.ts, which
 * re-exports `formatTextLine` and `attributionMark`.
 */

import { decodeEvent, parseLineText, type RecordedEvent } from '../format/codec.js';
import { escapeControl, hasControl } from '../format/escape.js';
import { type LineFields, RawJson } from '../format/line-fields.js';
import { cutText } from '../format/text-cut.js';
import type { TextOut } from '../read/text-out.js';
import { type Attribution, Attributor } from './attribution.js';
import { type CorrectionIndex, type EffectiveEvent, effectiveLine } from './corrections.js';
import { Authors, contestedMarkBytes, type MarkCache, newMarkCache, printableAscii } from './text-mark.js';

/** Where an event's line lies: its bytes `lb[ls, le)`, 1-based number and byte offset in its segment. */
export interface LineAt {
  lb: Buffer;
  ls: number;
  le: number;
  lineNo: number;
  lineOffset: number;
}

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
  private readonly authors = new Authors();
  private readonly anyCorrections: boolean;
  /** the fast text path's marks of windows already shown (`textLine`) */
  private readonly marks: MarkCache | null;

  /**
   * @param lightAttribution give the attributor a view of each uncorrected event built from its parsed
   *   fields (`attributionView`) instead of the recorded event, which it would decode with the zod schemas
   *   (most of the text replay's time). Same attributions; the reference replay keeps the decode.
   * @param fastText text only: events come through `textLine` (parsed once by the caller), the
   *   attributor shares a window's arrays between its results and the marks of windows are kept
   *   (`MarkCache`). Same bytes as `line` (test/log/fast-replay.test.ts, fast-text.test.ts).
   */
  constructor(
    private readonly format: 'ndjson' | 'text',
    private readonly index: CorrectionIndex,
    private readonly lightAttribution = false,
    fastText = false,
  ) {
    this.anyCorrections = index.size > 0;
    this.attributor =
      format === 'text' ? new Attributor({ shareWindows: fastText, messageIds: this.authors.ids }) : null;
    this.marks = format === 'text' && fastText ? newMarkCache() : null;
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
    return this.text(event, corrected);
  }

  /**
   * `line` of an event given as its parsed line, written into `out`: the text replay's fast path (issue
   * 16), formatting from `o` with no `RecordedEvent` unless a correction names the event. `o` is the
   * line's `JSON.parse` or its `readLineFields` (lib/log/format/line-fields.ts: the fields the text reads); every
   * envelope field has its type (a line the scan took as an event). `line` is where the line lies (its
   * bytes, 1-based number and byte offset in its segment), read only for an event a correction names.
   * `mayBeTarget` false says no correction names it (`CorrectionIndex.mayTarget` of its id's hash), so
   * its id is not looked up. Needs an EventLines made with `fastText`.
   */
  textLine(o: Record<string, unknown> | LineFields, line: LineAt, out: TextOut, mayBeTarget = true): void {
    const type = o.type as string;
    const id = o.id as string;
    if (this.anyCorrections) {
      const index = this.index;
      if (type === 'correction') index.passed(id);
      if (mayBeTarget && index.targets(id)) {
        const raw = line.lb.toString('utf8', line.ls, line.le);
        const p = parseLineText(raw, line.lineNo, line.lineOffset, EMPTY, 0, 0);
        if (!p.ok) throw new Error(`line ${line.lineNo}: an event line the parser refuses`);
        out.strLine(this.text(p.event, correctedLine(p.event, index, 'text', this.agents)));
        return;
      }
    }
    const w = o.w as string;
    const f = o as Record<string, unknown>;
    if (type === 'message') this.message(id, f.user_id, f.user_id);
    const a = this.attributor!.pushFields(type, id, w, f);
    let text = formatFields(type, w, id, o.ts as string, f, this.agents);
    if (type === 'correction') {
      const refused = this.index.problemOf(id);
      if (refused) text += ` [not applied: ${refused.code}]`;
    }
    out.str(text);
    if (a) {
      const kept = this.keptMark(a);
      if (kept !== null) out.bytes(kept);
      else out.str(` ${attributionMark(a, this.authors)}`);
    }
    out.endLine();
  }

  private text(event: RecordedEvent, corrected: { line: string; effective: EffectiveEvent } | null): string {
    const index = this.index;
    // Text shows who each action and output is attributed to (DESIGN §3, lib/log/replay/attribution), from
    // the effective event: a corrected caused_by counts. People are named by their messages' user_id.
    if (event.type === 'message') {
      // The attributor reads the effective event's user_id (from `extra` when its fields did not decode).
      const eff = corrected?.effective as Record<string, unknown> | undefined;
      const f =
        eff === undefined ? event.obj : 'unknown' in eff ? (eff.extra as Record<string, unknown>) : eff;
      this.message(event.id, event.obj.user_id, f.user_id);
    }
    const a = this.attributor!.push(
      corrected?.effective ?? (this.lightAttribution ? attributionView(event) : event),
    );
    let text = corrected === null ? formatTextLine(event, this.agents) : corrected.line.slice(0, -1);
    // A correction whose target already passed and refused it is shown as such, not as if applied.
    const refused = event.type === 'correction' ? index.problemOf(event.id) : undefined;
    if (refused) text += ` [not applied: ${refused.code}]`;
    return a ? `${text} ${attributionMark(a, this.authors)}\n` : `${text}\n`;
  }

  /**
   * A message passes: its author (`user`, the recorded user_id) is named by its id from now on, and the
   * mark cache hears of what could make a mark it keeps out of date: an id whose author changes (a
   * repeated id), an id or a user id the attributor records (`seen`) that needs escaping.
   */
  private message(id: string, user: unknown, seen: unknown): void {
    const m = this.marks;
    // An author that changes, or a first one for an id that passed with none, may change a kept mark.
    if (this.authors.pass(id, user) && m !== null) m.authorsChanged++;
    if (m?.plainIds && (!printableAscii(id) || (typeof seen === 'string' && !printableAscii(seen))))
      m.plainIds = false;
  }

  /**
   * ` ${attributionMark(a, authors)}` as UTF-8, kept per window (the fast path's `MarkCache`), or null for
   * a mark of another basis (made each time).
   */
  private keptMark(a: Attribution): Buffer | null {
    const m = this.marks!;
    if (a.basis !== 'temporal' && a.basis !== 'contested') return null;
    // Results of one window share its array (shareWindows): its mark is made once.
    const kept = m.byWindow.get(a.message_ids);
    if (kept !== undefined && (a.basis === 'contested' || kept.authorsChanged === m.authorsChanged)) {
      const bytes = m.ring.bytes(kept.mark);
      if (bytes !== null) return bytes;
    }
    const mark =
      a.basis === 'contested' && m.plainIds
        ? contestedMarkBytes(a, m.ring)
        : m.ring.put(null, ` ${attributionMark(a, this.authors)}`, false);
    if (mark === null) return null;
    m.byWindow.set(a.message_ids, { mark, authorsChanged: m.authorsChanged });
    return m.ring.bytes(mark);
  }
}

const NO_EXTRA: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;
const EMPTY = Buffer.alloc(0);

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
export function attributionMark(
  a: Attribution,
  authors: { get(id: string): string | undefined } = new Map<string, string>(),
): string {
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
  return formatFields(ev.type, ev.w, ev.id, ev.ts, ev.obj, agents);
}

/** `formatTextLine` of an event given as its envelope's type, w, id, ts and its parsed object. */
function formatFields(
  type: string,
  w: string,
  id: string,
  ts: string,
  o: Record<string, unknown>,
  agents: Map<string, string>,
): string {
  const ev = { type, w, id, obj: o };
  if (type === 'writer.start') {
    const meta = (o.meta ?? {}) as Record<string, unknown>;
    if (typeof meta.agent === 'string' && meta.agent) agents.set(w, meta.agent);
  }
  const who = escapeControl(whoOf(ev, agents));
  const what = oneLine(whatOf(ev));
  return `${escapeControl(ts)}  ${who.padEnd(14)}  ${escapeControl(type).padEnd(19)}  ${what}`.trimEnd();
}

/** What whoOf/whatOf read of an event. */
interface Shown {
  type: string;
  w: string;
  id: string;
  obj: Record<string, unknown>;
}

function whoOf(ev: Shown, agents: Map<string, string>): string {
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
function whatOf(ev: Shown): string {
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
  if (v instanceof RawJson) return v.text;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/**
 * Free text on one line: newlines shown as ` ⏎ `, tabs as spaces, every other control, DEL, C1 and bidi
 * character escaped (`escapeControl`), cut to a screen line on a character boundary (`cutText`: never half
 * a flag or of a ZWJ emoji).
 */
export function oneLine(s: string): string {
  // No newline or tab in a string hasControl passes: the replaces would find nothing.
  const flat = hasControl(s) ? escapeControl(s.replace(/\r?\n/g, ' ⏎ ').replace(/\t/g, ' ')) : s;
  return flat.length > MAX_WHAT ? `${cutText(flat, MAX_WHAT - 1)}…` : flat;
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

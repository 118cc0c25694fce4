/**
 * Attribution: which human message(s) each `agent.action` and `agent.output` of a merged session is
 * attributed to, on what basis, and with what confidence in [0, 1]. Source: DESIGN §3 ("Attribution") and
 * seed 001 ("null vs []"); the full rules with a worked example per basis are in `docs/attribution.md`.
 *
 * Shape of one result:
 *
 *     { event_id: 'a_…', type: 'agent.action' | 'agent.output', turn_id: 't_…' | null,
 *       message_ids: ['m_…', …], basis, confidence,
 *       candidates?: [{ user_id, message_ids, confidence }, …],   // contested (and cascade from contested)
 *       cascade_from?: 'a_…' }                                      // cascade only
 *
 * Bases, tried in this order for each event; the first that applies wins:
 *
 * 1. `recorded` — the event's `caused_by` is a non-empty list: those ids (deduplicated, as written), 1.0.
 * 2. `recorded_no_cause` — `caused_by: []`: the agent recorded that nothing caused it. No ids, 1.0.
 * 3. `recorded_context` — `caused_by` is null and the event's turn (its `turn_id` → that turn's
 *    `turn.start`) has a non-empty `context_message_ids`: those ids, 1.0.
 * 4. `recorded_empty_context` — `caused_by` null and the turn's `context_message_ids: []`. No ids, 1.0.
 *
 * Otherwise nothing was recorded (`caused_by` null, and the turn's context null or the turn unknown), and
 * the attribution is inferred:
 *
 * 5. `cascade` (`agent.action` only) — the latest `agent.action_result` read so far whose `action_id` names
 *    an earlier `agent.action` A of the SAME `turn_id` (non-empty), when no `message` was read after A
 *    (neither while A ran nor after its result), and A's own confidence is > 0: A's message ids and
 *    candidates, every confidence × `CASCADE_DECAY` (0.8). `cascade_from` names A. Chains decay
 *    geometrically: recorded → 0.8 → 0.64 → …; temporal → 0.56 → …. When the rule does not apply
 *    (no such result, a message since A, A at confidence 0), the window rules below decide.
 * 6. `temporal` — the window (below) holds messages of exactly one participant (`user_id`): all of them,
 *    confidence `TEMPORAL_CONFIDENCE` (0.7).
 * 7. `contested` — the window holds messages of n ≥ 2 participants: `candidates` lists each participant
 *    (in the order of their first message in the window) with their message ids and
 *    `CONTESTED_TOTAL_CONFIDENCE / n` (0.7 / n). The top-level `message_ids` is every message of the window (merged order) and the top-level
 *    `confidence` is that of one candidate (0.7 / n): no single message set is more likely than another.
 * 8. `none` — the window holds no message: no ids, confidence 0.
 *
 * Confidences are rounded to 6 decimal places (0.7 / 3 → 0.233333; 0.7 × 0.8 → 0.56).
 *
 * The window. A turn is *known* once its `turn.start` has been read (a turn.start read later, e.g. after a
 * clock skew across writers, does not count). The window's *anchor* is the event's turn.start when the turn
 * is known, else the event itself. Its *writer* is the anchor's writer (`w`). The *previous turn* is the
 * latest `turn.start` of that same writer read before the anchor (for a known turn, the same-writer
 * turn.start just before it; for an unknown turn, the writer's latest turn.start before the event). The
 * window is every `message` after the previous turn's `turn.start` (or from the session's start when there
 * is none) and before the anchor, in merged order, from any writer. Keying the previous turn by writer
 * means two agents running turns concurrently each get their own window, and a message can fall in the
 * windows of both (both may have read it): that is reported, not resolved.
 *
 * Leniency (never throws): input may be `LogEvent`s, `RecordedEvent`s (decoded with `decodeEvent`),
 * `MergedEvent`s or plain event objects; anything that is not an object is skipped. An event whose fields
 * did not decode (an `UnknownEvent` with type `agent.action` etc.) is read from its `extra`; a `caused_by`
 * or `context_message_ids` that is not a list of strings counts as not recorded (null). A `turn_id` that
 * names no known turn falls through to inference. Recorded ids are not checked against the session's
 * messages (verify's job): a recorded fact is trusted as written. A turn.start with no `turn_id` is keyed by
 * its own id (the writer gives both the same value); when the same turn id starts twice, the first is kept.
 * Corrections are not applied here: pass the effective view (corrections folded in) to attribute it.
 *
 * Memory: the messages (id, user), the turns (where their windows lie, their recorded context) and the
 * actions (their turn) read so far: O(messages + turns + actions), never the events' payloads, each id
 * interned once (lib/log/replay/id-table.ts, ~28 bytes) and each fact an int32; the actions a cascade can still
 * come from whole; and the recent turns' windows once inferred. A window is a range of message indexes
 * (counted at its turn.start); a known turn's window is inferred once (its messages all came before its
 * turn.start, so it cannot change), then reused by every action and output of the turn while kept.
 */

import type { LogEvent } from '../format/events.js';
import { fieldsOf, idList, str, toEvent } from './attribution-input.js';
import type {
  AttributableInput,
  Attribution,
  AttributionBasis,
  AttributorOptions,
} from './attribution-types.js';
import { type Inferred, MessageWindows, SizedFifo } from './attribution-window.js';
import { IdTable, Int32Column } from './id-table.js';

// The result's shape (Attribution, AttributionBasis, AttributionCandidate, AttributableInput): attribution-types.ts.
export type {
  AttributableInput,
  Attribution,
  AttributionBasis,
  AttributionCandidate,
  AttributorOptions,
} from './attribution-types.js';

/** Confidence of a recorded basis (`recorded*`). */
export const RECORDED_CONFIDENCE = 1;
// TEMPORAL_CONFIDENCE, CONTESTED_TOTAL_CONFIDENCE: with the window they apply to (attribution-window.ts).
export { CONTESTED_TOTAL_CONFIDENCE, TEMPORAL_CONFIDENCE } from './attribution-window.js';
/** Factor a `cascade` applies to the inherited action's confidence (and to each of its candidates'). */
export const CASCADE_DECAY = 0.8;

/**
 * Message ids (in all) of the recent turns' windows kept for their next action or output: a turn's
 * events come soon after its turn.start, and a window is made again (the same) when it is no longer kept.
 */
const WINDOW_IDS_KEPT = 256 * 1024;

/**
 * A window by its bounds, as message indexes `start` ≤ i < `end` (`MessageWindows.infer`), and its turn's
 * number when the turn is known (the cache's key), else -1.
 */
interface WindowRef {
  turn: number;
  start: number;
  end: number;
}

/**
 * An action that a later one may cascade from: read since the last message, with a confidence above 0
 * (once a message is read, or at 0, it never can: rule 5). Its message ids come either from its own
 * attribution (recorded, context) or from a window made again when needed.
 */
interface ActionRef {
  /** the action's number in `actionIds` */
  key: number;
  confidence: number;
  /** the attribution, unless it came from a window */
  attribution: Attribution | null;
  /** the window its ids come from (temporal, contested, and cascades from those), or null */
  window: WindowRef | null;
}

const round = (x: number): number => Math.round(x * 1e6) / 1e6;

/**
 * Streaming attribution: `push` each event of the merged stream in order; it returns the attribution of an
 * `agent.action` or `agent.output`, and null for every other event. Never throws on odd input.
 *
 * State (issue 16, "peak RSS flat"): ids are interned (`IdTable`) and a turn's or action's facts are
 * int32 columns indexed by its number, positions are counted in messages (a window is a range of
 * message indexes), and the actions that a cascade could still come from (read since the last message)
 * are the only ones kept whole.
 *
 * @example
 * const at = new Attributor();
 * for await (const m of mergeSegments(sessionDirSources(dir))) {
 *   const a = at.push(m.event);
 *   if (a) console.log(a.event_id, a.basis, a.confidence);
 * }
 */
export class Attributor {
  private readonly messages: MessageWindows;
  private readonly windows: SizedFifo<number, Inferred>;
  private readonly share: boolean;
  /**
   * Turn ids: of turn.starts (known turns) and of actions' `turn_id`s (which may name no known turn).
   * Per number: `turnAt`, messages read before its turn.start (-1: not a known turn); `turnPrev`,
   * messages read before its writer's previous turn.start (0 when none); `turnContext`, its recorded
   * `context_message_ids` as an index into `contexts` (-1: null).
   */
  private readonly turnIds = new IdTable();
  private readonly turnAt = new Int32Column(-1);
  private readonly turnPrev = new Int32Column();
  private readonly turnContext = new Int32Column(-1);
  private readonly contexts: string[][] = [];
  /** per writer: messages read before its latest turn.start, and its latest known turn (whose window may be kept) */
  private readonly lastTurnAt = new Map<string, number>();
  private readonly openTurn = new Map<string, number>();
  /** action ids; per number, its `turn_id`'s number in `turnIds` (-1 for none): what a result names */
  private readonly actionIds = new IdTable();
  private readonly actionTurn = new Int32Column(-1);
  /** the actions read since the last message with a confidence above 0, by number */
  private readonly live = new Map<number, ActionRef>();
  /** per turn number: the action whose result was read last, while it can be cascaded from */
  private readonly lastResult = new Map<number, ActionRef>();
  /** the window the last `attributeOne` took its ids from, or null */
  private lastWindow: WindowRef | null = null;

  constructor(options: AttributorOptions = {}) {
    this.share = options.shareWindows === true;
    this.windows = new SizedFifo(options.keptWindowIds ?? WINDOW_IDS_KEPT);
    this.messages = new MessageWindows(options.messageIds);
  }

  /** Reads the next event of the merged stream; returns its attribution when it is an action or output. */
  push(input: AttributableInput | Record<string, unknown>): Attribution | null {
    let ev: LogEvent | null;
    try {
      ev = toEvent(input);
    } catch {
      ev = null;
    }
    if (!ev) return null;
    return this.pushFields(ev.type, str(ev.id), str(ev.w), fieldsOf(ev));
  }

  /**
   * `push` of an event given as its type, id, writer and type fields (`f.user_id`, `turn_id`,
   * `context_message_ids`, `action_id`, `caused_by`, read as `push` reads a decoded event's): for a
   * caller that holds the parsed line (the text replay, lib/log/replay/replay-text.ts) and would otherwise build
   * an event object per line only for `push` to read. Same state, same results as `push`.
   */
  pushFields(type: string, id: string, w: string, f: Record<string, unknown>): Attribution | null {
    switch (type) {
      case 'message': {
        this.messages.add(id, str(f.user_id));
        // No action read so far can be cascaded from any more (rule 5: no message since A).
        if (this.live.size > 0) this.live.clear();
        if (this.lastResult.size > 0) this.lastResult.clear();
        return null;
      }
      case 'turn.start': {
        const turnId = str(f.turn_id) || id;
        const at = this.messages.size;
        // The writer's previous turn is most likely over: its window is let go (made again if needed),
        // so that windows die young rather than fill the old generation (the text replay's GC).
        const open = this.openTurn.get(w);
        if (open !== undefined) this.windows.delete(open);
        if (turnId) {
          const t = this.turnIds.add(turnId);
          if (this.turnAt.get(t) < 0) {
            this.turnAt.set(t, at);
            this.turnPrev.set(t, this.lastTurnAt.get(w) ?? 0);
            const context = idList(f.context_message_ids);
            if (context !== null) {
              this.turnContext.set(t, this.contexts.length);
              this.contexts.push(context);
            }
            this.openTurn.set(w, t);
          }
        }
        this.lastTurnAt.set(w, at);
        return null;
      }
      case 'agent.action_result': {
        const a = this.actionIds.find(str(f.action_id));
        const t = a < 0 ? -1 : this.actionTurn.get(a);
        if (t >= 0) {
          // An action no cascade can come from, named last, leaves its turn none to cascade from.
          const live = this.live.get(a);
          if (live !== undefined) this.lastResult.set(t, live);
          else this.lastResult.delete(t);
        }
        return null;
      }
      case 'agent.action':
      case 'agent.output': {
        const turnId = str(f.turn_id);
        const a = this.attributeOne(type, id, w, turnId, idList(f.caused_by));
        if (type === 'agent.action' && a.event_id) {
          const k = this.actionIds.add(a.event_id);
          this.actionTurn.set(k, turnId ? this.turnIds.add(turnId) : -1);
          const window = this.lastWindow;
          // A newer action of the same id replaces the older one, as a result names the latest.
          if (a.confidence > 0)
            this.live.set(k, {
              key: k,
              confidence: a.confidence,
              attribution: window === null ? a : null,
              window,
            });
          else this.live.delete(k);
        }
        return a;
      }
      default:
        return null;
    }
  }

  private attributeOne(
    type: 'agent.action' | 'agent.output',
    id: string,
    w: string,
    turnId: string,
    causedBy: string[] | null,
  ): Attribution {
    // Object literals, not `{ ...base, … }`: V8 takes a spread followed by more keys through a slow
    // path (~5 µs a result, most of the text replay's attribution time).
    const turn_id = turnId || null;
    this.lastWindow = null;
    if (causedBy !== null) {
      return causedBy.length > 0
        ? result(id, type, turn_id, causedBy, 'recorded', RECORDED_CONFIDENCE)
        : result(id, type, turn_id, [], 'recorded_no_cause', RECORDED_CONFIDENCE);
    }
    const tk = turnId ? this.turnIds.find(turnId) : -1;
    const known = tk >= 0 && this.turnAt.get(tk) >= 0;
    const ctx = known ? this.turnContext.get(tk) : -1;
    if (ctx >= 0) {
      const context = this.contexts[ctx]!;
      return context.length > 0
        ? result(id, type, turn_id, context, 'recorded_context', RECORDED_CONFIDENCE)
        : result(id, type, turn_id, [], 'recorded_empty_context', RECORDED_CONFIDENCE);
    }
    if (type === 'agent.action' && tk >= 0) {
      // Kept only while no message has been read since it, with a confidence above 0 (rule 5).
      const prior = this.lastResult.get(tk);
      if (prior !== undefined) {
        // A window's candidates all have the window's confidence, and decay with it: one number.
        const from: Omit<Attribution, 'event_id' | 'type' | 'turn_id'> = prior.window
          ? this.windowOf(prior.window)
          : prior.attribution!;
        const confidence = round(prior.confidence * CASCADE_DECAY);
        const out: Attribution = {
          event_id: id,
          type,
          turn_id,
          message_ids: this.share ? from.message_ids : [...from.message_ids],
          basis: 'cascade',
          confidence,
          cascade_from: this.actionIds.text(prior.key),
        };
        if (from.candidates) {
          out.candidates = from.candidates.map((c) => ({
            user_id: c.user_id,
            message_ids: this.share ? c.message_ids : [...c.message_ids],
            confidence: prior.window ? confidence : round(c.confidence * CASCADE_DECAY),
          }));
        }
        this.lastWindow = prior.window;
        return out;
      }
    }
    // The window: messages after the previous same-writer turn.start, before the anchor.
    const win: WindowRef = known
      ? { turn: tk, start: this.turnPrev.get(tk), end: this.turnAt.get(tk) }
      : { turn: -1, start: this.lastTurnAt.get(w) ?? 0, end: this.messages.size };
    const w0 = this.windowOf(win);
    if (w0.basis === 'none') return result(id, type, turn_id, [], 'none', 0);
    this.lastWindow = win;
    const message_ids = this.share ? w0.message_ids : [...w0.message_ids];
    if (!w0.candidates) return result(id, type, turn_id, message_ids, w0.basis, w0.confidence);
    const candidates = this.share
      ? w0.candidates
      : w0.candidates.map((c) => ({
          user_id: c.user_id,
          message_ids: [...c.message_ids],
          confidence: c.confidence,
        }));
    return {
      event_id: id,
      type,
      turn_id,
      message_ids,
      basis: w0.basis,
      confidence: w0.confidence,
      candidates,
    };
  }

  /**
   * What a window gives. A known turn's window holds messages read before its turn.start only, so it never
   * changes: it is made once for the turn's events (while kept), and made again, the same, after.
   */
  private windowOf(win: WindowRef): Inferred {
    if (win.turn < 0) return this.messages.infer(win.start, win.end);
    let w0 = this.windows.get(win.turn);
    if (w0 === undefined) {
      w0 = this.messages.infer(win.start, win.end);
      this.windows.set(win.turn, w0, w0.message_ids.length);
    }
    return w0;
  }
}

function result(
  event_id: string,
  type: Attribution['type'],
  turn_id: string | null,
  message_ids: string[],
  basis: AttributionBasis,
  confidence: number,
): Attribution {
  return { event_id, type, turn_id, message_ids, basis, confidence };
}

/**
 * The attribution of every `agent.action` and `agent.output` of `events`, given in merged order (e.g.
 * `mergeSegments(…)` mapped through `decodeEvent`), in that order. Other events are read (messages, turns,
 * results) but not attributed. Never throws on odd input.
 */
export function attribute(events: Iterable<AttributableInput | Record<string, unknown>>): Attribution[] {
  const at = new Attributor();
  const out: Attribution[] = [];
  for (const ev of events) {
    const a = at.push(ev);
    if (a) out.push(a);
  }
  return out;
}

/** Streaming `attribute` over an async source (e.g. `mergeSegments(sessionDirSources(dir))`). */
export async function* attributeStream(
  events: AsyncIterable<AttributableInput | Record<string, unknown>>,
): AsyncGenerator<Attribution> {
  const at = new Attributor();
  for await (const ev of events) {
    const a = at.push(ev);
    if (a) yield a;
  }
}

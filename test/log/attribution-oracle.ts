/**
 * The Attributor as it was before its state was interned (lib/log/replay/attribution.ts at 3124e37: strings in
 * Maps, an object per turn and per action, positions counted in events), kept as the reference that
 * test/log/attribution-compact.test.ts checks the compact one against. Not used by the library.
 */

import type { LogEvent } from '../../lib/log/format/events.js';
import {
  type Attribution,
  type AttributionBasis,
  type AttributionCandidate,
  CASCADE_DECAY,
  CONTESTED_TOTAL_CONFIDENCE,
  RECORDED_CONFIDENCE,
  TEMPORAL_CONFIDENCE,
} from '../../lib/log/replay/attribution.js';
import { fieldsOf, idList, str, toEvent } from '../../lib/log/replay/attribution-input.js';
import { SizedFifo } from '../../lib/log/replay/attribution-window.js';

const round = (x: number): number => Math.round(x * 1e6) / 1e6;

interface MessageRef {
  id: string;
  user_id: string;
  /** the user's number, in order of first message: a window groups by it without a map lookup */
  user: number;
  pos: number;
}

/**
 * What a window gives: every message id in merged order, the basis, the confidence and, when contested,
 * each user's candidate. Never changed once made (an Attributor keeps one per known turn).
 */
interface OldInferred {
  message_ids: string[];
  basis: 'temporal' | 'contested' | 'none';
  confidence: number;
  candidates?: AttributionCandidate[];
}

/** The messages read so far, in merged order, and the windows over them. */
class OldMessageWindows {
  private readonly messages: MessageRef[] = [];
  /** user id → its number; `seen`/`slot` per number group a window in one pass */
  private readonly users = new Map<string, number>();
  private readonly seen: number[] = [];
  private readonly slot: number[] = [];
  private stamp = 0;

  /** Records a message at position `pos` (greater than every position recorded before). */
  add(id: string, user_id: string, pos: number): void {
    let user = this.users.get(user_id);
    if (user === undefined) {
      user = this.users.size;
      this.users.set(user_id, user);
      this.seen.push(0);
      this.slot.push(0);
    }
    this.messages.push({ id, user_id, user, pos });
  }

  /**
   * The window of the messages at positions p, start < p < end: `none` (no message, confidence 0),
   * `temporal` (one user_id: 0.7) or `contested` (n users: 0.7 / n each, rounded to 6 places). A fresh
   * object and arrays each call.
   */
  infer(start: number, end: number): OldInferred {
    const msgs = this.messages;
    const first = this.firstAfter(start);
    let last = first;
    while (last < msgs.length && msgs[last]!.pos < end) last++;
    if (last === first) return { message_ids: [], basis: 'none', confidence: 0 };
    const stamp = ++this.stamp;
    const { seen, slot } = this;
    const firsts: MessageRef[] = [];
    const lists: string[][] = [];
    const ids: string[] = new Array(last - first);
    for (let i = first; i < last; i++) {
      const m = msgs[i]!;
      ids[i - first] = m.id;
      if (seen[m.user] !== stamp) {
        seen[m.user] = stamp;
        slot[m.user] = lists.length;
        firsts.push(m);
        lists.push([m.id]);
      } else lists[slot[m.user]!]!.push(m.id);
    }
    if (lists.length === 1) return { message_ids: ids, basis: 'temporal', confidence: TEMPORAL_CONFIDENCE };
    const share = round(CONTESTED_TOTAL_CONFIDENCE / lists.length);
    return {
      message_ids: ids,
      basis: 'contested',
      confidence: share,
      candidates: lists.map((message_ids, k) => ({
        user_id: firsts[k]!.user_id,
        message_ids,
        confidence: share,
      })),
    };
  }

  /** Index of the first message whose position is > pos. */
  private firstAfter(pos: number): number {
    const msgs = this.messages;
    let lo = 0;
    let hi = msgs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (msgs[mid]!.pos <= pos) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

interface TurnRef {
  pos: number;
  w: string;
  context: string[] | null;
  /** position of the same writer's previous turn.start, -1 when none */
  prevPos: number;
}

/**
 * Message ids (in all) of the recent turns' windows kept for their next action or output: a turn's
 * events come soon after its turn.start, and a window is made again (the same) when it is no longer kept.
 */
const WINDOW_IDS_KEPT = 256 * 1024;

/** Options of an `Attributor`. */
interface AttributorOptions {
  /**
   * Results inferred from the same window (the actions and outputs of one turn, and cascades from them)
   * share their `message_ids` and `candidates` arrays instead of each getting copies: for a caller that
   * never changes a result (the text replay, which also recognises a window it has shown by its array).
   * Default false: every result's arrays are its own.
   */
  shareWindows?: boolean;
  /**
   * Message ids (in all) of the recent turns' windows kept for the turns' next events (default 256 Ki);
   * a window no longer kept is made again, the same. Tests pass 0 to keep none.
   */
  keptWindowIds?: number;
}

/** A window by its bounds (positions start < p < end) and its turn when known (the cache's key). */
interface WindowRef {
  turn: TurnRef | null;
  start: number;
  end: number;
}

/**
 * An action, as a later cascade needs it: its confidence and where its message ids come from, either
 * its own attribution (recorded, context, none) or a window made again when needed: keeping every
 * action's window (~64 ids at 64 writers) was most of the text replay's memory.
 */
interface ActionRef {
  id: string;
  turn_id: string;
  pos: number;
  confidence: number;
  /** the attribution, unless it came from a window */
  attribution: Attribution | null;
  /** the window its ids come from (temporal, contested, and cascades from those), or null */
  window: WindowRef | null;
}

/**
 * Streaming attribution: `push` each event of the merged stream in order; it returns the attribution of an
 * `agent.action` or `agent.output`, and null for every other event. Never throws on odd input.
 *
 * @example
 * const at = new Attributor();
 * for await (const m of mergeSegments(sessionDirSources(dir))) {
 *   const a = at.push(m.event);
 *   if (a) console.log(a.event_id, a.basis, a.confidence);
 * }
 */
export class OracleAttributor {
  private pos = -1;
  private readonly messages = new OldMessageWindows();
  private readonly windows: SizedFifo<TurnRef, OldInferred>;
  /** per writer, its latest turn (whose window may be kept) */
  private readonly openTurn = new Map<string, TurnRef>();
  private readonly share: boolean;
  private readonly turns = new Map<string, TurnRef>();
  private readonly lastTurnPos = new Map<string, number>();
  private readonly actions = new Map<string, ActionRef>();
  /** per turn id: the action whose result was read last */
  private readonly lastResult = new Map<string, ActionRef>();
  private lastMessagePos = -1;
  /** the window the last `attributeOne` took its ids from, or null */
  private lastWindow: WindowRef | null = null;

  constructor(options: AttributorOptions = {}) {
    this.share = options.shareWindows === true;
    this.windows = new SizedFifo(options.keptWindowIds ?? WINDOW_IDS_KEPT);
  }

  /** Reads the next event of the merged stream; returns its attribution when it is an action or output. */
  push(input: Record<string, unknown>): Attribution | null {
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
    this.pos += 1;
    const pos = this.pos;
    switch (type) {
      case 'message': {
        this.messages.add(id, str(f.user_id), pos);
        this.lastMessagePos = pos;
        return null;
      }
      case 'turn.start': {
        const turnId = str(f.turn_id) || id;
        // The writer's previous turn is most likely over: its window is let go (made again if needed),
        // so that windows die young rather than fill the old generation (the text replay's GC).
        const open = this.openTurn.get(w);
        if (open !== undefined) this.windows.delete(open);
        if (turnId && !this.turns.has(turnId)) {
          const turn: TurnRef = {
            pos,
            w,
            context: idList(f.context_message_ids),
            prevPos: this.lastTurnPos.get(w) ?? -1,
          };
          this.turns.set(turnId, turn);
          this.openTurn.set(w, turn);
        }
        this.lastTurnPos.set(w, pos);
        return null;
      }
      case 'agent.action_result': {
        const action = this.actions.get(str(f.action_id));
        if (action?.turn_id) this.lastResult.set(action.turn_id, action);
        return null;
      }
      case 'agent.action':
      case 'agent.output': {
        const a = this.attributeOne(type, id, w, str(f.turn_id), idList(f.caused_by), pos);
        if (type === 'agent.action' && a.event_id) {
          const window = this.lastWindow;
          this.actions.set(a.event_id, {
            id: a.event_id,
            turn_id: str(f.turn_id),
            pos,
            confidence: a.confidence,
            attribution: window === null ? a : null,
            window,
          });
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
    pos: number,
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
    const turn = turnId ? this.turns.get(turnId) : undefined;
    if (turn?.context) {
      return turn.context.length > 0
        ? result(id, type, turn_id, turn.context, 'recorded_context', RECORDED_CONFIDENCE)
        : result(id, type, turn_id, [], 'recorded_empty_context', RECORDED_CONFIDENCE);
    }
    if (type === 'agent.action' && turnId) {
      const prior = this.lastResult.get(turnId);
      if (prior && prior.confidence > 0 && this.lastMessagePos < prior.pos) {
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
          cascade_from: prior.id,
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
    const win: WindowRef = turn
      ? { turn, start: turn.prevPos, end: turn.pos }
      : { turn: null, start: this.lastTurnPos.get(w) ?? -1, end: pos };
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
  private windowOf(win: WindowRef): OldInferred {
    if (win.turn === null) return this.messages.infer(win.start, win.end);
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

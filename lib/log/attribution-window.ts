/**
 * The messages an `Attributor` has read and the windows it infers from (rules 6-8 of lib/log/attribution.ts,
 * DESIGN §3 "Attribution"): every message's id, user and position in the merged stream, in that order, and
 * for a window (start, end) of positions what the attribution says of it: `none`, `temporal` (one user)
 * or `contested` (each user's messages, users in the order of their first message in the window, the
 * confidence shared). Split from attribution.ts for its size; the rules' docs and tests are there.
 *
 * Memory: one small record per message, one number per distinct user id.
 */
import type { AttributionCandidate } from './attribution.js';

/** Confidence of `temporal` (one participant's messages in the window). */
export const TEMPORAL_CONFIDENCE = 0.7;
/** Confidence of `contested`, shared equally among the n participants of the window (0.7 / n each). */
export const CONTESTED_TOTAL_CONFIDENCE = 0.7;

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
export interface Inferred {
  message_ids: string[];
  basis: 'temporal' | 'contested' | 'none';
  confidence: number;
  candidates?: AttributionCandidate[];
}

/** The messages read so far, in merged order, and the windows over them. */
export class MessageWindows {
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
  infer(start: number, end: number): Inferred {
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

/**
 * A map that keeps its most recent entries up to `budget` in size (each entry's size as given to `set`,
 * at least 1): setting one evicts the oldest until the rest fit. For the caches of the text replay's hot
 * path, whose entries are made again when evicted. `get` does not refresh an entry (first in, first out).
 */
export class SizedFifo<K, V> {
  /** each entry with its place in `order` (counted from the first key ever set) */
  private readonly map = new Map<K, { value: V; size: number; at: number }>();
  /** keys in the order set, `order[0]` at place `dropped`; a key set again keeps only its last place */
  private order: K[] = [];
  private dropped = 0;
  private head = 0;
  private total = 0;

  constructor(private readonly budget: number) {}

  get(key: K): V | undefined {
    return this.map.get(key)?.value;
  }

  /** Forgets `key`'s entry. */
  delete(key: K): void {
    const e = this.map.get(key);
    if (e === undefined) return;
    this.map.delete(key);
    this.total -= e.size;
  }

  /** Adds or replaces `key`'s entry; an entry larger than the budget is not kept. */
  set(key: K, value: V, size: number): void {
    const n = Math.max(1, size);
    const old = this.map.get(key);
    if (old !== undefined) {
      this.total -= old.size;
      this.map.delete(key);
    }
    if (n > this.budget) return;
    this.map.set(key, { value, size: n, at: this.dropped + this.order.length });
    this.order.push(key);
    this.total += n;
    while (this.total > this.budget) {
      const at = this.dropped + this.head;
      const k = this.order[this.head++]!;
      const e = this.map.get(k);
      if (e !== undefined && e.at === at) {
        this.map.delete(k);
        this.total -= e.size;
      }
    }
    if (this.head > 1024 && this.head * 2 > this.order.length) {
      this.order = this.order.slice(this.head);
      this.dropped += this.head;
      this.head = 0;
    }
  }
}

/**
 * The messages an `Attributor` has read and the windows it infers from (rules 6-8 of lib/log/replay/attribution.ts,
 * DESIGN §3 "Attribution"): every message's id and user in the merged stream, in that order, and for a
 * window (a range of message indexes) what the attribution says of it: `none`, `temporal` (one user) or
 * `contested` (each user's messages, users in the order of their first message in the window, the
 * confidence shared). Split from attribution.ts for its size; the rules' docs and tests are there.
 *
 * Memory (issue 16, "peak RSS flat"): per message its id interned once (`IdTable`: its bytes and ~16
 * bytes of index) and two int32 (its id's number, its user's number); one entry per distinct user id;
 * the id strings of the last 4,096 messages, so that a window (the recent messages) is made without
 * decoding its ids again.
 */
import type { AttributionCandidate } from './attribution-types.js';
import { IdTable, Int32Column } from './id-table.js';

/** Confidence of `temporal` (one participant's messages in the window). */
export const TEMPORAL_CONFIDENCE = 0.7;
/** Confidence of `contested`, shared equally among the n participants of the window (0.7 / n each). */
export const CONTESTED_TOTAL_CONFIDENCE = 0.7;

const round = (x: number): number => Math.round(x * 1e6) / 1e6;

/** Message id strings kept as they came (a power of 2): older ones are decoded from the id table. */
const RECENT_IDS = 4096;

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
  /** the messages' ids (shared with the caller when it passed one: the text replay's authors) */
  readonly ids: IdTable;
  /** per message, in order: its id's number in `ids`, its user's number */
  private readonly idOf = new Int32Column();
  private readonly userOf = new Int32Column();
  private count = 0;
  private readonly recent: string[] = new Array(RECENT_IDS);
  /** user id → its number, in order of first message: a window groups by it without a map lookup */
  private readonly users = new Map<string, number>();
  private readonly userIds: string[] = [];
  /** `seen`/`slot` per user number group a window in one pass */
  private readonly seen: number[] = [];
  private readonly slot: number[] = [];
  private stamp = 0;

  constructor(ids: IdTable = new IdTable()) {
    this.ids = ids;
  }

  /** How many messages were added: the index the next one gets. */
  get size(): number {
    return this.count;
  }

  /** Records the next message. */
  add(id: string, user_id: string): void {
    let user = this.users.get(user_id);
    if (user === undefined) {
      user = this.userIds.length;
      this.users.set(user_id, user);
      this.userIds.push(user_id);
      this.seen.push(0);
      this.slot.push(0);
    }
    const i = this.count++;
    this.idOf.set(i, this.ids.add(id));
    this.userOf.set(i, user);
    this.recent[i & (RECENT_IDS - 1)] = id;
  }

  /**
   * The window of the messages of index `first` ≤ i < `last` (0 ≤ first, last ≤ size): `none` (no message,
   * confidence 0), `temporal` (one user_id: 0.7) or `contested` (n users: 0.7 / n each, rounded to 6
   * places). A fresh object and arrays each call.
   */
  infer(first: number, last: number): Inferred {
    if (last <= first) return { message_ids: [], basis: 'none', confidence: 0 };
    const stamp = ++this.stamp;
    const { seen, slot } = this;
    const firsts: number[] = [];
    const lists: string[][] = [];
    const ids: string[] = new Array(last - first);
    const oldest = this.count - RECENT_IDS;
    for (let i = first; i < last; i++) {
      const id = i >= oldest ? this.recent[i & (RECENT_IDS - 1)]! : this.ids.text(this.idOf.get(i));
      const user = this.userOf.get(i);
      ids[i - first] = id;
      if (seen[user] !== stamp) {
        seen[user] = stamp;
        slot[user] = lists.length;
        firsts.push(user);
        lists.push([id]);
      } else lists[slot[user]!]!.push(id);
    }
    if (lists.length === 1) return { message_ids: ids, basis: 'temporal', confidence: TEMPORAL_CONFIDENCE };
    const share = round(CONTESTED_TOTAL_CONFIDENCE / lists.length);
    return {
      message_ids: ids,
      basis: 'contested',
      confidence: share,
      candidates: lists.map((message_ids, k) => ({
        user_id: this.userIds[firsts[k]!]!,
        message_ids,
        confidence: share,
      })),
    };
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

/**
 * The text replay's attribution marks on its fast path (issue 16): in a session of many writers most
 * actions and outputs are attributed to a window of every other writer's messages (`contested`, ~64 ids
 * at 64 writers), and every action and output of a turn to the same window. So the mark of a window is
 * made once and kept with the window's array (the Attributor's `shareWindows`), and when no message id
 * or user id of the session needs escaping the contested mark is joined from the ids as they are.
 * The marks are `attributionMark`'s (lib/log/replay/replay-text.ts), byte for byte.
 */
import type { Attribution } from './attribution.js';
import { IdTable, Int32Column } from './id-table.js';

/** What `EventLines` keeps of the marks it has made, and what says whether one still holds. */
export interface MarkCache {
  /**
   * window (its `message_ids` array) → its mark as UTF-8 after a space, and `authorsChanged` when it was
   * made; kept while the Attributor keeps the window (weakly: it lets its windows go early)
   */
  byWindow: WeakMap<readonly string[], { mark: MarkAt; authorsChanged: number }>;
  /**
   * Counts the messages whose id already had an author, or had passed with none (a user_id that is not a
   * string), and now gets another: a temporal mark names the authors of its ids, so one made before such
   * a message may no longer be the mark. (A window holds only messages that passed before it.)
   */
  authorsChanged: number;
  /** where the marks' bytes are written */
  ring: MarkRing;
  /**
   * true while every message id and user id read so far is printable ASCII (so `escapeControl` leaves it
   * as it is, and a contested mark is ASCII but for its arrow)
   */
  plainIds: boolean;
}

/**
 * The author of each message id as the text replay names it: the latest string `user_id` recorded with
 * that id. Ids are interned (`ids`, shared with the Attributor's messages) and authors numbered: per
 * message id one int32, not a Map entry and its strings.
 */
export class Authors {
  readonly ids = new IdTable();
  /** per id: its author's number; NONE never passed, UNNAMED passed with no string user_id only */
  private readonly author = new Int32Column(NONE);
  private readonly numbers = new Map<string, number>();
  private readonly names: string[] = [];

  /** The author of message id `id`, if a message of that id had a string user_id. */
  get(id: string): string | undefined {
    const k = this.ids.find(id);
    if (k < 0) return undefined;
    const a = this.author.get(k);
    return a >= 0 ? this.names[a] : undefined;
  }

  /**
   * A message of id `id` and recorded `user_id` `user` passes. True when that gives the id another
   * author: it had one, or had passed with none (the marks made before it may name it otherwise).
   */
  pass(id: string, user: unknown): boolean {
    const k = this.ids.add(id);
    const prev = this.author.get(k);
    if (typeof user !== 'string') {
      if (prev === NONE) this.author.set(k, UNNAMED);
      return false;
    }
    let u = this.numbers.get(user);
    if (u === undefined) {
      u = this.names.length;
      this.numbers.set(user, u);
      this.names.push(user);
    }
    if (prev === u) return false;
    this.author.set(k, u);
    return prev !== NONE;
  }
}

const NONE = -1;
const UNNAMED = -2;

/** An empty cache. */
export function newMarkCache(): MarkCache {
  return {
    byWindow: new WeakMap(),
    authorsChanged: 0,
    ring: new MarkRing(),
    plainIds: true,
  };
}

/** Whether every UTF-16 unit of `s` is printable ASCII (U+0020–U+007E). */
export function printableAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

const CONTESTED = Buffer.from(' [← contested: ', 'utf8');

/**
 * ` ${attributionMark(a)}` as UTF-8 for a contested attribution whose user ids and message ids are all
 * printable ASCII: ` [← contested: priya m_1,m_2 | sam m_3; 0.35 each]`. All but the arrow is ASCII, so it
 * is written as Latin-1 (a copy, not an encoding of a two-byte string). Null when it is too long to keep.
 */
export function contestedMarkBytes(a: Attribution, ring: MarkRing): MarkAt | null {
  const cs = a.candidates!;
  let who = '';
  for (let k = 0; k < cs.length; k++) {
    const c = cs[k]!;
    who += k === 0 ? `${c.user_id} ${c.message_ids.join(',')}` : ` | ${c.user_id} ${c.message_ids.join(',')}`;
  }
  return ring.put(CONTESTED, `${who}; ${Number(a.confidence.toFixed(2))} each]`, true);
}

const RING_BYTES = 4 * 1024 * 1024;

/** Where a kept mark's bytes were written in a `MarkRing`: from absolute byte `at`, `len` bytes. */
export interface MarkAt {
  at: number;
  len: number;
}

/**
 * Where kept marks' bytes are written: one 4 MiB buffer, written round and round. A mark stays readable
 * until 4 MiB of newer marks have been written over it (`bytes` then says null, and the caller makes it
 * again); a window's mark is needed only until its writer's next turn, a few hundred marks later at most
 * in practice. One buffer for the whole replay: slabs of 1 MiB, each kept alive by any mark in it and freed
 * only by a full collection, held ~40 MB at 1M events × 64 writers.
 */
export class MarkRing {
  private readonly buf = Buffer.allocUnsafeSlow(RING_BYTES);
  /** bytes written since the start, skips at the buffer's end included */
  private written = 0;

  /**
   * Writes `head`'s bytes then `s` as Latin-1 (`latin1`: every unit of `s` is below U+0100) or UTF-8;
   * null (nothing written) when that could take more than a sixteenth of the ring.
   */
  put(head: Buffer | null, s: string, latin1: boolean): MarkAt | null {
    const most = (head?.length ?? 0) + (latin1 ? s.length : s.length * 3);
    if (most > RING_BYTES / 16) return null;
    let p = this.written % RING_BYTES;
    if (p + most > RING_BYTES) {
      this.written += RING_BYTES - p;
      p = 0;
    }
    let end = p;
    if (head !== null) end += head.copy(this.buf, end);
    end += this.buf.write(s, end, latin1 ? 'latin1' : 'utf8');
    const at = this.written;
    this.written += end - p;
    return { at, len: end - p };
  }

  /** The bytes of `m` while none has been written over (a view, valid until the next `put`), else null. */
  bytes(m: MarkAt): Buffer | null {
    if (this.written - m.at > RING_BYTES) return null;
    const p = m.at % RING_BYTES;
    return this.buf.subarray(p, p + m.len);
  }
}

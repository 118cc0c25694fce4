/**
 * The search half of lib/audit/locate-chunks.ts (issue 15): where the bytes of an attested chunk are in
 * a segment, at given offsets or in a window of line starts, with a memory of what was hashed and one
 * budget for all hashing off the in-order walk, so a tampered segment costs about linear work.
 */
import { createHash } from 'node:crypto';
import type { SegmentFile } from './segment-index.js';

/** One attested chunk of a writer, in attested order (offsets tile [0, length)). */
export interface AttestedChunk {
  offset: number;
  length: number;
  /** '' for bytes whose chunks are unknown (their digest is missing): taken as they are, not hashed */
  sha256: string;
  /** the digest seq that lists it */
  seq: number;
}

const WINDOW_MAX = 64 * 1024 * 1024;
const BLOCK = 1024 * 1024;

/**
 * One walk's search state. Offsets asked about only grow with the walk's cursor q, which is what lets
 * the scan keep, per chunk length, one contiguous range it has already hashed.
 */
export class ChunkSearch {
  /** a small number per distinct (length, SHA-256) of the attested chunks, and each chunk's (-1: none) */
  private readonly keys = new Map<string, number>();
  private readonly idOf: Int32Array;
  /** per length: [lo, hi) the window scan has hashed at every line start (and at lo) */
  private readonly scanned = new Map<number, { lo: number; hi: number }>();
  /** per key id: the offsets (ascending) where the scan found those bytes; and per offset, the ids */
  private readonly seen: number[][] = [];
  private readonly hits = new Map<number, number[]>();
  /** true once the budget could not pay for a hash: every later search answers null */
  exhausted = false;

  /** `budget`: bytes that may be hashed off the in-order walk, in all. */
  constructor(
    private readonly seg: SegmentFile,
    private readonly chunks: AttestedChunk[],
    private budget: number,
  ) {
    this.idOf = new Int32Array(chunks.length).fill(-1);
    chunks.forEach((c, k) => {
      if (c.sha256 === '') return;
      const key = keyOf(c.length, c.sha256);
      let id = this.keys.get(key);
      if (id === undefined) {
        id = this.seen.length;
        this.keys.set(key, id);
        this.seen.push([]);
      }
      this.idOf[k] = id;
    });
  }

  /** Takes `n` bytes of hashing from the budget; false (and the budget is spent) when it cannot. */
  afford(n: number): boolean {
    if (this.exhausted || n > this.budget) {
      this.exhausted = true;
      return false;
    }
    this.budget -= n;
    return true;
  }

  /** The first of `ks` (shortest first) whose bytes at p hash to its SHA-256; what the scan saw is reused. */
  async matchAt(p: number, ks: number[]): Promise<number | null> {
    if (ks.length === 0) return null;
    // the common case at a mismatch: every length already scanned here, and nothing was found at p
    if (!this.hits.has(p) && ks.every((k) => this.covered(this.chunks[k]!.length, p))) return null;
    const sorted = [...ks].sort((a, b) => this.chunks[a]!.length - this.chunks[b]!.length);
    const digests = new Map<number, string>(); // length → SHA-256 at p, for lengths the scan did not cover
    const todo = [...new Set(sorted.map((k) => this.chunks[k]!.length))].filter((l) => !this.covered(l, p));
    if (todo.length > 0) {
      const h = await this.hashLengths(p, todo);
      if (h === null) return null;
      for (let i = 0; i < todo.length; i++) digests.set(todo[i]!, h[i]!);
    }
    for (const k of sorted) {
      const c = this.chunks[k]!;
      const d = digests.get(c.length);
      if (d !== undefined ? d === c.sha256 : this.seenAt(k, p)) return k;
    }
    return null;
  }

  /** SHA-256 of [p, p+l) for each of `lens` (ascending), one pass; null when the budget cannot pay. */
  private async hashLengths(p: number, lens: number[]): Promise<string[] | null> {
    if (!this.afford(lens.at(-1)!)) return null;
    const h = createHash('sha256');
    const out: string[] = [];
    let at = p;
    for (const l of lens) {
      if (!(await this.seg.feed([h], at, p + l - at))) return null;
      at = p + l;
      out.push(h.copy().digest('hex'));
    }
    return out;
  }

  private covered(len: number, p: number): boolean {
    const s = this.scanned.get(len);
    return s !== undefined && p >= s.lo && p < s.hi;
  }

  /** Whether the scan found chunk k's bytes at p. */
  private seenAt(k: number, p: number): boolean {
    return this.hits.get(p)?.includes(this.idOf[k]!) ?? false;
  }

  /**
   * An insertion: the first of q and each line start after it, within a bounded window, where a
   * candidate's bytes are (shortest candidate first at one offset). Each length is hashed at each
   * offset at most once over the whole walk (q only grows): `scanned` and `seen` remember.
   */
  async scanWindow(q: number, cands: number[]): Promise<{ k: number; p: number } | null> {
    const span = cands.reduce((s, k) => s + this.chunks[k]!.length, 0);
    const limit = q + Math.min(this.seg.size - q, WINDOW_MAX, 2 * span + BLOCK);
    if (limit <= q) return null;
    const byLength = [...cands].sort((a, b) => this.chunks[a]!.length - this.chunks[b]!.length);
    const lens = [...new Set(byLength.map((k) => this.chunks[k]!.length))];
    const ranges = lens.map((l) => {
      const s = this.scanned.get(l);
      if (s && s.hi >= q) return s;
      const fresh = { lo: q, hi: q }; // offsets before q no longer matter: q only grows
      this.scanned.set(l, fresh);
      return fresh;
    });
    // the nearest place a candidate was already seen
    let best: { k: number; p: number } | null = null;
    for (const k of byLength) {
      if (this.idOf[k]! < 0) continue;
      const at = this.seen[this.idOf[k]!]!;
      const i = lowerBound(at, q);
      if (i < at.length && at[i]! < limit && (best === null || at[i]! < best.p)) best = { k, p: at[i]! };
    }
    // lines of equal length fit every candidate at every line start: a cap keeps one scan bounded
    let cap = limit - q + 16 * BLOCK;
    for (let p = q; ; ) {
      p = Math.max(p, Math.min(...ranges.map((r) => r.hi)));
      if (p >= limit || (best !== null && p > best.p)) break;
      const todo = lens.filter((_, i) => ranges[i]!.hi <= p);
      const fit = todo.filter(
        (l) => p + l <= this.seg.size && (p + l === this.seg.size || this.seg.isNewline(p + l - 1)),
      );
      if (fit.length > 0) {
        cap -= fit.at(-1)!;
        if (cap < 0) return null;
        const h = await this.hashLengths(p, fit);
        if (h === null) return null;
        for (let i = 0; i < fit.length; i++) {
          const id = this.keys.get(keyOf(fit[i]!, h[i]!));
          if (id === undefined) continue;
          this.seen[id]!.push(p);
          const ids = this.hits.get(p);
          if (ids) ids.push(id);
          else this.hits.set(p, [id]);
        }
      }
      const next = this.seg.nextLineStart(p);
      for (let i = 0; i < lens.length; i++) if (ranges[i]!.hi <= p) ranges[i]!.hi = next;
      // every length is covered up to p now, so a candidate here is the nearest
      for (const k of byLength) {
        if (this.seenAt(k, p)) return { k, p };
      }
      p = next;
    }
    return best;
  }
}

function keyOf(length: number, sha256: string): string {
  return `${length}:${sha256}`;
}

/** The first index of ascending `a` whose value is >= v. */
function lowerBound(a: number[], v: number): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < v) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

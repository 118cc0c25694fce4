/**
 * How a segment stored as objects is laid out once small chunk objects may be compacted (issue 17.2):
 * each object holds bytes `[offset, offset + size)` of its writer's segment, a chunk object (named by
 * its offset) one accepted chunk, a compacted object (named by its range) a run of consecutive chunks.
 * While a compaction is under way, and after one that crashed before its deletes, both a compacted
 * object and some of the chunk objects it holds are listed: any read picks the tiling of `[0, end)` with
 * the fewest objects, and the compactor deletes the objects no tiling needs. Pure functions, shared by
 * the S3 adapter (lib/store/s3-segment-read.ts) and the compaction plan (lib/service/compaction.ts).
 */
import type { SegmentKey } from './ports.js';

/** One object of a writer's segment: bytes `[offset, offset + size)`. */
export interface SegmentObject {
  offset: number;
  size: number;
  /** a run of chunks written by the compactor (`{offset:015}-{end:015}.jsonl`), not one chunk */
  compacted: boolean;
}

/**
 * The objects (of `objects`, sorted by offset) that tile `[0, end)` with the fewest objects: the first
 * starts at 0, each next where the previous ends, the last reaches `end` or past it (a compacted object
 * may hold bytes indexed after a reader read the length). Null when none do. O(n): every object starts
 * where an earlier one ends or is skipped.
 */
export function fewestObjectTiling<T extends SegmentObject>(objects: readonly T[], end: number): T[] | null {
  if (end <= 0) return [];
  // For each position reached: the fewest objects that reach it, and the last of them.
  const best = new Map<number, { count: number; via: number }>([[0, { count: 0, via: -1 }]]);
  let done: { count: number; via: number } | null = null;
  for (let i = 0; i < objects.length; i++) {
    const o = objects[i]!;
    const at = best.get(o.offset);
    if (!at || o.size <= 0) continue;
    const to = o.offset + o.size;
    const count = at.count + 1;
    if (to >= end) {
      if (!done || count < done.count) done = { count, via: i };
      continue;
    }
    const there = best.get(to);
    if (!there || count < there.count) best.set(to, { count, via: i });
  }
  if (!done) return null;
  const path: T[] = [];
  for (let i = done.via; i >= 0; ) {
    const o = objects[i]!;
    path.push(o);
    i = o.offset === 0 ? -1 : best.get(o.offset)!.via;
  }
  return path.reverse();
}

/**
 * The listed objects a tiling leaves out that a compaction explains: each lies inside one compacted
 * object of `tiling` (a chunk object it holds, or an older, shorter run). `unexplained` are the others
 * (an object overlapping the tiling that no compaction wrote: a fault a read reports). Both by offset.
 */
export function supersededObjects<T extends SegmentObject>(
  objects: readonly T[],
  tiling: readonly T[],
): { superseded: T[]; unexplained: T[] } {
  const used = new Set<T>(tiling);
  const superseded: T[] = [];
  const unexplained: T[] = [];
  let t = 0;
  for (const o of objects) {
    if (used.has(o)) continue;
    // The tiling object holding o's first byte (tiling is sorted and contiguous).
    while (t < tiling.length - 1 && tiling[t]!.offset + tiling[t]!.size <= o.offset) t++;
    const holder = tiling[t];
    const inside =
      holder?.compacted && o.offset >= holder.offset && o.offset + o.size <= holder.offset + holder.size;
    (inside ? superseded : unexplained).push(o);
  }
  return { superseded, unexplained };
}

/** An object of a writer's segment as its store lists it: `name` is the store's key of it. */
export interface StoredSegmentObject extends SegmentObject {
  name: string;
}

/**
 * What a compaction of small chunk objects asks of a segment store whose segments are objects (S3,
 * lib/store/s3-compaction.ts; issue 17.2). The rules (which writers, which runs, the check of every
 * chunk's SHA-256 against the index before anything is written or deleted) are lib/service/compaction.ts'.
 */
export interface SegmentCompactionStore {
  /** Every object of the writer that starts before `end`, by offset (chunk objects and compacted runs). */
  listObjects(key: SegmentKey, end: number): Promise<StoredSegmentObject[]>;
  /**
   * Bytes `[start, end)` of the segment, read from `objects` (consecutive, covering the range).
   * @throws Error naming the object when one is gone or comes back short
   */
  readObjects(
    key: SegmentKey,
    objects: readonly StoredSegmentObject[],
    start: number,
    end: number,
  ): Promise<Uint8Array>;
  /**
   * Stores `bytes` as the compacted object of bytes `[start, start + bytes.length)`, create-only, with
   * `sha256` (hex, of `bytes`) for the store to check what it received against. `stored`, or `exists`
   * when the same bytes are there already (a compaction that crashed after its put).
   * @throws CompactionConflictError when other bytes are stored under that name
   */
  putCompacted(
    key: SegmentKey,
    start: number,
    bytes: Uint8Array,
    sha256: string,
  ): Promise<'stored' | 'exists'>;
  /** Deletes `objects` (a versioned bucket keeps their bytes as older versions); resolves with how many. */
  deleteObjects(key: SegmentKey, objects: readonly StoredSegmentObject[]): Promise<number>;
}

/** Other bytes are stored under a compacted object's name: the compaction leaves it and deletes nothing. */
export class CompactionConflictError extends Error {
  override name = 'CompactionConflictError';
}

/**
 * How a segment stored as objects is laid out once small chunk objects may be compacted (issue 17.2):
 * each object holds bytes `[offset, offset + size)` of its writer's segment, a chunk object (named by
 * its offset) one accepted chunk, a compacted object (named by its range) a run of consecutive chunks.
 * While a compaction is under way, and after one that crashed before its deletes, both a compacted
 * object and some of the chunk objects it holds are listed: any read picks the tiling of `[0, end)` with
 * the fewest objects, and the compactor deletes the objects no tiling needs. Pure functions, shared by
 * the S3 adapter (lib/store/s3/segment-read.ts) and the compaction plan (lib/service/ingest/compaction.ts).
 */
import { z } from 'zod';
import { Count } from '../contract/ids.js';
import type { SegmentKey } from './segments.js';

/** One object of a writer's segment: bytes `[offset, offset + size)`. */
export const SegmentObject = z.object({
  offset: Count,
  size: Count,
  /** a run of chunks written by the compactor (`{offset:015}-{end:015}.jsonl`), not one chunk */
  compacted: z.boolean(),
});
export type SegmentObject = z.infer<typeof SegmentObject>;

/** A run costs more than any number of chunk objects when a tiling prefers chunk objects (`preferChunks`). */
const RUN_COST = 2 ** 32;

/**
 * The objects (of `objects`, sorted by offset) that tile `[0, end)` with the fewest objects: the first
 * starts at 0, each next where the previous ends, the last reaches `end` or past it (a compacted object
 * may hold bytes indexed after a reader read the length). With `preferChunks` (reads), the fewest runs
 * first: a run is read only where the chunk objects it holds are gone (deleted by the compactor, which
 * checked the run against the index first), so an object under a run's name beside intact chunk objects
 * is never read in their place. Null when none tile. O(n): every object starts where an earlier one
 * ends or is skipped.
 */
export function fewestObjectTiling<T extends SegmentObject>(
  objects: readonly T[],
  end: number,
  o: { preferChunks?: boolean } = {},
): T[] | null {
  if (end <= 0) return [];
  const costOf = (x: SegmentObject) => (o.preferChunks && x.compacted ? RUN_COST + 1 : 1);
  // For each position reached: the least cost that reaches it, and the last object of it.
  const best = new Map<number, { cost: number; via: number }>([[0, { cost: 0, via: -1 }]]);
  let done: { cost: number; via: number } | null = null;
  for (let i = 0; i < objects.length; i++) {
    const x = objects[i]!;
    const at = best.get(x.offset);
    if (!at || x.size <= 0) continue;
    const to = x.offset + x.size;
    const cost = at.cost + costOf(x);
    if (to >= end) {
      if (!done || cost < done.cost) done = { cost, via: i };
      continue;
    }
    const there = best.get(to);
    if (!there || cost < there.cost) best.set(to, { cost, via: i });
  }
  if (!done) return null;
  const path: T[] = [];
  for (let i = done.via; i >= 0; ) {
    const x = objects[i]!;
    path.push(x);
    i = x.offset === 0 ? -1 : best.get(x.offset)!.via;
  }
  return path.reverse();
}

/**
 * The listed objects a tiling leaves out that a compaction explains. `superseded`: each lies inside one
 * compacted object of `tiling` (a chunk object it holds, or an older, shorter run). `shadowed`: runs
 * that start and end where objects of `tiling` do, or reach past its end (a run whose chunk objects a
 * `preferChunks` tiling read instead), none overlapping another run but by holding it. `unexplained` are the others (an
 * object overlapping the tiling that no compaction wrote, runs that overlap with different starts: a
 * fault a read reports). All by offset.
 */
export function supersededObjects<T extends SegmentObject>(
  objects: readonly T[],
  tiling: readonly T[],
): { superseded: T[]; shadowed: T[]; unexplained: T[] } {
  const used = new Set<T>(tiling);
  const bounds = new Set<number>(tiling.flatMap((x) => [x.offset, x.offset + x.size]));
  const last = tiling.length > 0 ? tiling.at(-1)!.offset + tiling.at(-1)!.size : 0;
  const superseded: T[] = [];
  const shadowed: T[] = [];
  const unexplained: T[] = [];
  let t = 0;
  for (const x of objects) {
    if (used.has(x)) continue;
    // The tiling object holding x's first byte (tiling is sorted and contiguous).
    while (t < tiling.length - 1 && tiling[t]!.offset + tiling[t]!.size <= x.offset) t++;
    const holder = tiling[t];
    const inside =
      holder?.compacted && x.offset >= holder.offset && x.offset + x.size <= holder.offset + holder.size;
    if (inside) superseded.push(x);
    // (a run may reach past the range read: the chunk objects after it are not listed)
    else if (
      x.compacted &&
      bounds.has(x.offset) &&
      (bounds.has(x.offset + x.size) || x.offset + x.size >= last)
    )
      shadowed.push(x);
    else unexplained.push(x);
  }
  // Two runs that overlap without one holding the other: two passes that disagreed.
  const runs = objects.filter((x) => x.compacted);
  for (let i = 0; i < runs.length; i++) {
    for (let j = i + 1; j < runs.length && runs[j]!.offset < runs[i]!.offset + runs[i]!.size; j++) {
      const [a, b] = [runs[i]!, runs[j]!];
      const holds = (p: SegmentObject, q: SegmentObject) =>
        q.offset >= p.offset && q.offset + q.size <= p.offset + p.size;
      if (!holds(a, b) && !holds(b, a)) {
        for (const x of [a, b]) {
          if (!unexplained.includes(x) && !used.has(x)) unexplained.push(x);
        }
      }
    }
  }
  unexplained.sort((a, b) => a.offset - b.offset);
  return { superseded, shadowed, unexplained };
}

/** An object of a writer's segment as its store lists it: `name` is the store's key of it. */
export const StoredSegmentObject = SegmentObject.extend({ name: z.string() });
export type StoredSegmentObject = z.infer<typeof StoredSegmentObject>;

/**
 * What a compaction of small chunk objects asks of a segment store whose segments are objects (S3,
 * lib/store/s3/compaction.ts; issue 17.2). The rules (which writers, which runs, the check of every
 * chunk's SHA-256 against the index before anything is written or deleted) are lib/service/ingest/compaction.ts'.
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

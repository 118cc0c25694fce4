/**
 * The k-way merge's binary min-heap (lib/log/read/merge.ts over parsed batches, lib/log/read/fast-merge.ts over
 * `LineCursor`s): one copy for both, so that they order heads the same way. A head comes first by its
 * merge key (its writer's running maximum ts, in µs), then its writer id, then its segment's index.
 */

/** What the heap orders a head by. */
export interface MergeHead {
  /** the merge key: the writer's running maximum ts in µs (DESIGN §3 "Merge") */
  readonly key: number;
  /** the writer id, the tie-break */
  readonly w: string;
  /** the segment's index in the merge's input, the last tie-break */
  readonly index: number;
}

/** Whether head `a` comes before `b` in the merge: by key, then writer id, then segment index. */
export function before(a: MergeHead, b: MergeHead): boolean {
  if (a.key !== b.key) return a.key < b.key;
  if (a.w !== b.w) return a.w < b.w;
  return a.index < b.index;
}

/** Adds `h` to `heap`. */
export function heapPush<T extends MergeHead>(heap: T[], h: T): void {
  heap.push(h);
  let i = heap.length - 1;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!before(heap[i]!, heap[p]!)) break;
    [heap[i], heap[p]] = [heap[p]!, heap[i]!];
    i = p;
  }
}

/** Removes the least head (`heap[0]`; `heap` is not empty). */
export function heapPopTop<T extends MergeHead>(heap: T[]): void {
  const last = heap.pop()!;
  if (heap.length > 0) {
    heap[0] = last;
    heapSiftDown(heap, 0);
  }
}

/** Moves `heap[i]` down to its place, after its key grew (the top having moved on to its next line). */
export function heapSiftDown<T extends MergeHead>(heap: T[], i: number): void {
  const n = heap.length;
  const c = heap[i]!;
  for (;;) {
    const l = 2 * i + 1;
    if (l >= n) break;
    const r = l + 1;
    let m = l;
    if (r < n && before(heap[r]!, heap[l]!)) m = r;
    // The common step: the top, having moved on by one line, is still the least.
    if (!before(heap[m]!, c)) break;
    heap[i] = heap[m]!;
    i = m;
  }
  heap[i] = c;
}

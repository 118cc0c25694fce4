/**
 * The streaming k-way merge of a session's segments into one transcript (seed 001, DESIGN §3 "Merge").
 *
 * Order: by `(ts, w, seq)`, where a writer's own events never change their relative order. To make both
 * true at once, each event is merged under its writer's *running maximum* ts: when a writer's clock steps
 * back, its later events sort as if stamped at the latest instant that writer had already reached (they stay
 * in seq order, right after it), and verify reports `ts_backwards`. A ts that is not a timestamp also takes
 * the running maximum (or sorts first when nothing came before it). Memory holds one pending event per
 * segment: it grows with the number of writers, not with the session.
 */
import type { LineProblem, RecordedEvent } from './codec.js';
import type { SegmentItem } from './reader.js';

/** One segment to merge: the writer id it belongs to and its items in file order. */
export interface MergeSource {
  w: string;
  items: AsyncIterable<SegmentItem>;
}

/** A merged event with the key it was ordered by. */
export interface MergedEvent {
  event: RecordedEvent;
  /** the writer id of the segment it came from (its `MergeSource.w`) */
  source: string;
  /** the writer's running maximum ts (µs) at this event: the merge key */
  orderMicros: number;
}

/** A quarantined line in merged position (only with `keepProblems`): right after its writer's previous event. */
export interface MergedProblem {
  problem: LineProblem;
  w: string;
  orderMicros: number;
}

export interface MergeOptions {
  /** called for every line a segment could not give as an event (quarantined: not in the merged stream) */
  onProblem?: (w: string, problem: LineProblem) => void;
}

interface Head {
  key: number;
  w: string;
  index: number;
  event: RecordedEvent | null;
  problem: LineProblem | null;
  it: AsyncIterator<SegmentItem>;
  maxTs: number;
}

function before(a: Head, b: Head): boolean {
  if (a.key !== b.key) return a.key < b.key;
  if (a.w !== b.w) return a.w < b.w;
  return a.index < b.index;
}

/**
 * Merges segments into one ordered stream of events. Lines that are problems are passed to `onProblem`
 * and skipped. Errors of a source's iterator propagate.
 */
export async function* mergeSegments(
  sources: MergeSource[],
  options: MergeOptions = {},
): AsyncGenerator<MergedEvent> {
  for await (const item of mergeItems(sources, options, false)) yield item as MergedEvent;
}

/**
 * Like `mergeSegments`, but quarantined lines stay in the stream, each right after its writer's previous
 * event (raw replay). A last line with no newline is still left out: its writer has not finished it.
 */
export function mergeSegmentsKeepingProblems(
  sources: MergeSource[],
  options: MergeOptions = {},
): AsyncGenerator<MergedEvent | MergedProblem> {
  return mergeItems(sources, options, true);
}

async function* mergeItems(
  sources: MergeSource[],
  options: MergeOptions,
  keepProblems: boolean,
): AsyncGenerator<MergedEvent | MergedProblem> {
  const heap: Head[] = [];
  const advance = async (h: Pick<Head, 'w' | 'index' | 'it' | 'maxTs'>): Promise<Head | null> => {
    for (;;) {
      const next = await h.it.next();
      if (next.done) return null;
      const item = next.value;
      if (item.kind === 'problem') {
        options.onProblem?.(h.w, item.problem);
        if (keepProblems && item.problem.complete) {
          return {
            w: h.w,
            index: h.index,
            it: h.it,
            maxTs: h.maxTs,
            event: null,
            problem: item.problem,
            key: h.maxTs,
          };
        }
        continue;
      }
      const ts = item.event.tsMicros;
      const maxTs = ts !== null && ts > h.maxTs ? ts : h.maxTs;
      return { w: h.w, index: h.index, it: h.it, maxTs, event: item.event, problem: null, key: maxTs };
    }
  };
  for (let i = 0; i < sources.length; i++) {
    const src = sources[i]!;
    const h = await advance({ w: src.w, index: i, it: src.items[Symbol.asyncIterator](), maxTs: -Infinity });
    if (h) push(heap, h);
  }
  while (heap.length > 0) {
    const top = heap[0]!;
    if (top.event) yield { event: top.event, source: top.w, orderMicros: top.key };
    else yield { problem: top.problem!, w: top.w, orderMicros: top.key };
    const next = await advance(top);
    if (next) replaceTop(heap, next);
    else popTop(heap);
  }
}

function push(heap: Head[], h: Head): void {
  heap.push(h);
  let i = heap.length - 1;
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!before(heap[i]!, heap[p]!)) break;
    [heap[i], heap[p]] = [heap[p]!, heap[i]!];
    i = p;
  }
}

function replaceTop(heap: Head[], h: Head): void {
  heap[0] = h;
  siftDown(heap, 0);
}

function popTop(heap: Head[]): void {
  const last = heap.pop()!;
  if (heap.length > 0) {
    heap[0] = last;
    siftDown(heap, 0);
  }
}

function siftDown(heap: Head[], i: number): void {
  const n = heap.length;
  for (;;) {
    const l = 2 * i + 1;
    const r = l + 1;
    let m = i;
    if (l < n && before(heap[l]!, heap[m]!)) m = l;
    if (r < n && before(heap[r]!, heap[m]!)) m = r;
    if (m === i) return;
    [heap[i], heap[m]] = [heap[m]!, heap[i]!];
    i = m;
  }
}

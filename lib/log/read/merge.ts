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
import type { LineProblem, RecordedEvent } from '../format/codec.js';
import { heapPopTop, heapPush, heapSiftDown, type MergeHead } from './merge-heap.js';
import type { SegmentItem } from './reader.js';

/**
 * One segment to merge: the writer id it belongs to and its items in file order, either one by one
 * (`items`) or in batches (`batches`, faster: the reader's `readSegmentBatches`).
 */
export type MergeSource =
  | { w: string; items: AsyncIterable<SegmentItem>; batches?: undefined }
  | { w: string; batches: AsyncIterable<SegmentItem[]>; items?: undefined };

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
  /**
   * Stops the merge: once aborted, the next step throws the signal's reason (an `AbortError`) instead of
   * reading on. Every source is closed either way (see `mergeSegments`).
   */
  signal?: AbortSignal;
}

/** A segment's cursor in the heap; mutated in place as it advances. */
interface Head extends MergeHead {
  key: number;
  w: string;
  index: number;
  event: RecordedEvent | null;
  problem: LineProblem | null;
  it: AsyncIterator<SegmentItem[]>;
  batch: SegmentItem[];
  pos: number;
  maxTs: number;
}

/** Up to this many merged items go out in one batch... */
const OUT_BATCH = 1024;
/**
 * ...and at most about this many bytes of lines (as written), so a batch of long lines does not hold
 * megabytes: a response's memory stays bounded by the batch, not by the size of the events.
 */
const OUT_BATCH_BYTES = 64 * 1024;

/**
 * Merges segments into one ordered stream of events. Lines that are problems are passed to `onProblem`
 * and skipped. Errors of a source's iterator propagate.
 *
 * Every source's iterator is closed (`return()`) when the merge ends in any way: exhausted, failed,
 * aborted through `options.signal`, or closed early by its consumer (`break`, `return()`). A source that
 * holds a file or a socket (a segment being read) releases it then, not when the process exits.
 */
export async function* mergeSegments(
  sources: MergeSource[],
  options: MergeOptions = {},
): AsyncGenerator<MergedEvent> {
  for await (const batch of mergeBatches(sources, options, false)) yield* batch as MergedEvent[];
}

/** `mergeSegments` in batches of up to 1024 events (the replay's hot path: one await per batch). */
export function mergeSegmentBatches(
  sources: MergeSource[],
  options: MergeOptions = {},
): AsyncGenerator<MergedEvent[]> {
  return mergeBatches(sources, options, false) as AsyncGenerator<MergedEvent[]>;
}

/**
 * Like `mergeSegmentBatches`, but quarantined lines stay in the stream, each right after its writer's
 * previous event (the raw replay's reference path, the timeline). A last line with no newline is still
 * left out: its writer has not finished it.
 */
export function mergeSegmentBatchesKeepingProblems(
  sources: MergeSource[],
  options: MergeOptions = {},
): AsyncGenerator<Array<MergedEvent | MergedProblem>> {
  return mergeBatches(sources, options, true);
}

async function* singleBatches(items: AsyncIterable<SegmentItem>): AsyncGenerator<SegmentItem[]> {
  for await (const item of items) yield [item];
}

async function* mergeBatches(
  sources: MergeSource[],
  options: MergeOptions,
  keepProblems: boolean,
): AsyncGenerator<Array<MergedEvent | MergedProblem>> {
  /**
   * Moves a head to its next item within its current batch, without awaiting: true when it holds one,
   * undefined when the batch is used up (then `advance` fetches the next). Most steps end here, so the
   * merge pays one promise per batch, not one per event.
   */
  const step = (h: Head): true | undefined => {
    while (h.pos < h.batch.length) {
      const item = h.batch[h.pos++]!;
      if (item.kind === 'problem') {
        options.onProblem?.(h.w, item.problem);
        if (keepProblems && item.problem.complete) {
          h.event = null;
          h.problem = item.problem;
          h.key = h.maxTs;
          return true;
        }
        continue;
      }
      const ts = item.event.tsMicros;
      if (ts !== null && ts > h.maxTs) h.maxTs = ts;
      h.event = item.event;
      h.problem = null;
      h.key = h.maxTs;
      return true;
    }
    return undefined;
  };
  /** Moves a head to its next item, fetching batches as needed; false when its segment is exhausted. */
  const advance = async (h: Head): Promise<boolean> => {
    for (;;) {
      if (step(h)) return true;
      const next = await h.it.next();
      if (next.done) return false;
      h.batch = next.value;
      h.pos = 0;
    }
  };
  const signal = options.signal;
  const heap: Head[] = [];
  // Every source's iterator, made before any is read, so that all of them are closed at the end.
  const iterators = sources.map((src) => (src.batches ?? singleBatches(src.items!))[Symbol.asyncIterator]());
  try {
    for (let i = 0; i < sources.length; i++) {
      signal?.throwIfAborted();
      const h: Head = {
        key: -Infinity,
        w: sources[i]!.w,
        index: i,
        event: null,
        problem: null,
        it: iterators[i]!,
        batch: [],
        pos: 0,
        maxTs: -Infinity,
      };
      if (await advance(h)) heapPush(heap, h);
    }
    let out: Array<MergedEvent | MergedProblem> = [];
    let outBytes = 0;
    while (heap.length > 0) {
      const top = heap[0]!;
      if (top.event) {
        out.push({ event: top.event, source: top.w, orderMicros: top.key });
        outBytes += top.event.raw.length;
      } else {
        out.push({ problem: top.problem!, w: top.w, orderMicros: top.key });
        outBytes += top.problem!.bytes.length;
      }
      if (out.length >= OUT_BATCH || outBytes >= OUT_BATCH_BYTES) {
        yield out;
        signal?.throwIfAborted();
        out = [];
        outBytes = 0;
      }
      if (step(top) || (await advance(top))) heapSiftDown(heap, 0);
      else heapPopTop(heap);
    }
    if (out.length > 0) yield out;
  } finally {
    // Without this, a consumer that stops early (a client gone mid-replay) leaves every segment's reader
    // suspended with its file open: one descriptor per writer per abandoned replay (issue 8).
    await closeAll(iterators);
  }
}

/**
 * Closes iterators (`return()`), all of them even when some fail; the first failure is rethrown after.
 * None of them may be mid-`next()` (the merge awaits one source at a time).
 */
async function closeAll(iterators: Iterable<AsyncIterator<unknown>>): Promise<void> {
  const results = await Promise.allSettled([...iterators].map((it) => it.return?.()));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}

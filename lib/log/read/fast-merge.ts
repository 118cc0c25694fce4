/**
 * The replay's fast merge (issue 16): the k-way merge of lib/log/read/merge.ts over `LineCursor`s, writing the
 * merged lines into large output buffers as the bytes they were (`Buffer.copy` of the line and a newline):
 * no line is decoded, parsed into an object or encoded again unless a caller's `render` asks for it (a
 * corrected event, a text line).
 *
 * Same order as merge.ts: by (key, writer id, segment index), where key is the writer's running maximum ts
 * (lib/log/read/line-cursor.ts). Same end: every segment's reader is closed however the merge ends (done,
 * failed, aborted through `signal`, or closed early by its consumer), so no file or request outlives it.
 */
import type { LineProblem } from '../format/codec.js';
import { newLineScan } from '../format/envelope-scan.js';
import { type BlockSet, LineCursor } from './line-cursor.js';
import { heapPopTop, heapPush, heapSiftDown } from './merge-heap.js';
import { TextOut } from './text-out.js';

export interface FastMergeOptions {
  /** quarantined complete lines stay in the output, in merged position (the raw replay) */
  keepProblems: boolean;
  /** scan each event's id (for `render`) */
  wantId: boolean;
  /**
   * The text of an event's output line, newline included, or null to copy the line's bytes as they are.
   * Called for every event in merged order (never for a quarantined line). May throw; the merge then
   * closes every reader and rethrows.
   */
  render?: ((c: LineCursor) => string | null) | undefined;
  onProblem?: ((w: string, problem: LineProblem) => void) | undefined;
  /** bytes of each output buffer (default 1 MiB); a line longer than that gets a buffer of its own */
  outputBytes?: number | undefined;
  /** once aborted, the merge throws its reason at the next block or output buffer */
  signal?: AbortSignal | undefined;
}

/** The CLI's output buffers: few writes, each large. */
export const DEFAULT_OUTPUT_BYTES = 1024 * 1024;

/**
 * Merges the segments read by `blocks` (one reader per writer, in segment order) and yields the merged
 * output in buffers of whole lines, each a fresh buffer the consumer may keep. Closes every reader
 * (`closeAll`) at the end, whatever the end. Errors of the readers and of `render` propagate.
 */
export async function* mergeToBuffers(
  blocks: BlockSet,
  options: FastMergeOptions,
): AsyncGenerator<Uint8Array> {
  const { signal, render } = options;
  const cap = options.outputBytes ?? DEFAULT_OUTPUT_BYTES;
  const scan = newLineScan();
  const cursorOptions = {
    keepProblems: options.keepProblems,
    wantId: options.wantId,
    onProblem: options.onProblem,
  };
  try {
    const heap: LineCursor[] = [];
    for (let i = 0; i < blocks.readers.length; i++) {
      signal?.throwIfAborted();
      const c = new LineCursor(i, blocks.readers[i]!, scan, cursorOptions);
      if (await c.advance()) heapPush(heap, c);
    }
    let out = Buffer.allocUnsafe(cap);
    let used = 0;
    /** a buffer to yield before the current line is written (the full output, or a long line's own) */
    let ready: Buffer | null = null;
    let alone: Buffer | null = null;
    while (heap.length > 0) {
      const top = heap[0]!;
      const text = render && !top.problem ? render(top) : null;
      if (text === null) {
        const len = top.le - top.ls;
        if (used + len + 1 > cap) {
          if (used > 0) {
            ready = out.subarray(0, used);
            out = Buffer.allocUnsafe(cap);
            used = 0;
          }
          if (len + 1 > cap) {
            alone = Buffer.allocUnsafe(len + 1);
            top.lb.copy(alone, 0, top.ls, top.le);
            alone[len] = 0x0a;
          }
        }
        if (alone === null) {
          top.lb.copy(out, used, top.ls, top.le);
          used += len;
          out[used++] = 0x0a;
        }
      } else {
        // At most 3 bytes per UTF-16 unit: checked before writing, so `write` never cuts the text.
        const most = text.length * 3;
        if (used + most > cap) {
          if (used > 0) {
            ready = out.subarray(0, used);
            out = Buffer.allocUnsafe(cap);
            used = 0;
          }
          if (most > cap) alone = Buffer.from(text, 'utf8');
        }
        if (alone === null) used += out.write(text, used, 'utf8');
      }
      // The line is copied out: the cursor may move on (and its reader reuse the block) before we yield.
      if (top.step() || (await top.advance())) {
        if (heap.length > 1) heapSiftDown(heap, 0);
      } else heapPopTop(heap);
      if (ready !== null) {
        const b = ready;
        ready = null;
        yield b;
        signal?.throwIfAborted();
      }
      if (alone !== null) {
        const b = alone;
        alone = null;
        yield b;
        signal?.throwIfAborted();
      }
    }
    if (used > 0) yield out.subarray(0, used);
  } finally {
    // A consumer that stops early (a client gone mid-replay) must not leave a segment open (issue 8).
    await blocks.closeAll();
  }
}

/**
 * `mergeToBuffers` for a caller that writes every event's line itself (the text replay): `render` writes
 * the line of the event at `c`, newline included, into `out`; quarantined lines are skipped. Yields
 * buffers of whole lines of about `outputBytes` (default 1 MiB), each the consumer's to keep. Closes every
 * reader at the end, whatever the end. Errors of the readers and of `render` propagate.
 */
export async function* mergeToText(
  blocks: BlockSet,
  options: {
    render: (c: LineCursor, out: TextOut) => void;
    /** keep each event's id hash (`LineCursor.idHash`) for `render` */
    wantId?: boolean;
    onProblem?: ((w: string, problem: LineProblem) => void) | undefined;
    outputBytes?: number | undefined;
    signal?: AbortSignal | undefined;
  },
): AsyncGenerator<Uint8Array> {
  const { signal, render } = options;
  const out = new TextOut(options.outputBytes ?? DEFAULT_OUTPUT_BYTES);
  const scan = newLineScan();
  const cursorOptions = {
    keepProblems: false,
    wantId: options.wantId === true,
    onProblem: options.onProblem,
  };
  try {
    const heap: LineCursor[] = [];
    for (let i = 0; i < blocks.readers.length; i++) {
      signal?.throwIfAborted();
      const c = new LineCursor(i, blocks.readers[i]!, scan, cursorOptions);
      if (await c.advance()) heapPush(heap, c);
    }
    while (heap.length > 0) {
      const top = heap[0]!;
      render(top, out);
      if (top.step() || (await top.advance())) {
        if (heap.length > 1) heapSiftDown(heap, 0);
      } else heapPopTop(heap);
      const done = out.take();
      for (let k = 0; k < done.length; k++) {
        yield done[k]!;
        signal?.throwIfAborted();
      }
    }
    const last = out.finish();
    if (last !== null) yield last;
  } finally {
    await blocks.closeAll();
  }
}

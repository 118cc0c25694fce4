/**
 * When a session ran, for the session page's header (issue 14 finding 2): its first and last event's `ts`
 * as written. A writer's events are in ts order (verify flags `ts_backwards`), so the session's first is
 * the earliest of its segments' first lines and its last the latest of their last lines: each segment
 * is streamed once, keeping only its first line and its last few KiB, so page 1 of a long session does
 * not have to merge to its end to say when it ended. Only a line that parses as an event counts (the same
 * line parser as the merge): a quarantined line holding a nested `"ts"` says nothing about when the
 * session ran.
 */
import { parseLineText } from '../../log/format/codec.js';
import type { ReplaySegment } from '../../log/replay/replay.js';

/** The first and last event ts of a session (as written), null when no line had a readable one. */
export interface SessionSpan {
  first: string | null;
  last: string | null;
}

/** Bytes kept from a segment's end: a few lines, so a last line without a ts still leaves one before it. */
const TAIL_BYTES = 64 * 1024;
const NO_BYTES = new Uint8Array(0);

/** The ts of the first line of `lines` (in the given order) that is an event with a readable one. */
function firstTs(lines: Iterable<string>): { ts: string; micros: number } | null {
  for (const line of lines) {
    if (line === '') continue;
    const parsed = parseLineText(line, 0, 0, NO_BYTES, 0, 0, false);
    if (parsed.ok && parsed.event.tsMicros !== null)
      return { ts: parsed.event.ts, micros: parsed.event.tsMicros };
  }
  return null;
}

/**
 * The span of `segments` (see the module's doc). `signal` aborted: the reads stop and it rejects.
 * @throws what a segment's stream throws
 */
export async function sessionSpan(
  segments: readonly ReplaySegment[],
  signal?: AbortSignal,
): Promise<SessionSpan> {
  let first: { ts: string; micros: number } | null = null;
  let last: { ts: string; micros: number } | null = null;
  const dec = new TextDecoder();
  await Promise.all(
    segments.map(async (seg) => {
      let head = '';
      let headDone = false;
      let tail = new Uint8Array(0);
      for await (const chunk of seg.open(undefined, signal)) {
        signal?.throwIfAborted();
        if (!headDone) {
          head += dec.decode(chunk.subarray(0, Math.min(chunk.length, TAIL_BYTES)));
          headDone = head.includes('\n') || head.length >= TAIL_BYTES;
        }
        const joined = new Uint8Array(Math.min(tail.length + chunk.length, TAIL_BYTES));
        const fromChunk = Math.min(chunk.length, TAIL_BYTES);
        const fromTail = joined.length - fromChunk;
        joined.set(tail.subarray(tail.length - fromTail), 0);
        joined.set(chunk.subarray(chunk.length - fromChunk), fromTail);
        tail = joined;
      }
      const f = firstTs(head.split('\n').slice(0, 8));
      const l = firstTs(dec.decode(tail).split('\n').reverse());
      if (f && (first === null || f.micros < first.micros)) first = f;
      if (l && (last === null || l.micros > last.micros)) last = l;
    }),
  );
  return {
    first: (first as { ts: string } | null)?.ts ?? null,
    last: (last as { ts: string } | null)?.ts ?? null,
  };
}

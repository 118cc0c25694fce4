/** A stored session's segments, as the replay, verify and inspect read them. */

import { resolveLimits } from '../../contract/limits.js';
import { mergeChunkBytes, type ReplaySegment } from '../../log/replay/replay.js';
import type { ByteRange, SegmentKey } from '../../store/index.js';
import type { ServiceContext } from './context.js';
import { notFound } from './errors.js';
import { dataLossError } from './storage-faults.js';

/** A writer whose segment holds less than its index: `range` is gone. */
export interface SegmentLoss {
  w: string;
  range: ByteRange;
}

/**
 * What a segment lost of `[0, end)` (`end` its indexed length), or null: the first range the store does
 * not hold (`missingBytes`), else a torn tail (`tornTail`: its last byte is not the newline every
 * acknowledged chunk ends with, as after a crash that zero-filled the file's tail). Two cheap checks (a
 * stat, a one-byte read) that every read of a segment makes before its first byte (issue 8).
 */
export async function segmentLoss(
  ctx: ServiceContext,
  key: SegmentKey,
  end: number,
): Promise<ByteRange | null> {
  return (await ctx.segments.missingBytes(key, end)) ?? (await ctx.segments.tornTail(key, end));
}

/**
 * The segments of a stored session, each up to the length indexed now, so that every pass over them
 * (corrections, then the merge) reads the same bytes while ingest goes on. Each `open()` starts a new read.
 * Every segment is checked against its index first (`segmentLoss`), so a loss is an error status, not a
 * short stream that already answered 200 (issue 8).
 * @throws AppError `not_found` when the session has no writer (or is another tenant's); `data_loss` (500,
 *   `details` `{w, range}`) when a segment lost acknowledged bytes
 */
export async function storedSegments(ctx: ServiceContext, sid: string): Promise<ReplaySegment[]> {
  const { segments, losses } = await storedSegmentsAndLosses(ctx, sid);
  const first = losses[0];
  if (first) throw dataLossError({ tenant: ctx.tenant, sid, w: first.w }, first.range);
  return segments;
}

/**
 * `storedSegments` for verify: no error for a loss, but each writer's missing range, and the segment of
 * such a writer read only up to where its bytes stop (what is there is still checked); `ends` has each
 * writer's readable length (its indexed length, or where its loss begins).
 * @throws AppError `not_found` when the session has no writer (or is another tenant's)
 */
export async function storedSegmentsAndLosses(
  ctx: ServiceContext,
  sid: string,
): Promise<{ segments: ReplaySegment[]; losses: SegmentLoss[]; ends: Map<string, number> }> {
  const writers = await ctx.state.listWriters(ctx.tenant, sid);
  if (writers.length === 0) throw notFound('session');
  // A stream's chunk when its reader names none: the block the replay's merge would read (Limits.replayReadBytes).
  const defaultChunk = mergeChunkBytes(writers.length, resolveLimits(ctx.limits).replayReadBytes);
  const missing = await Promise.all(
    writers.map((wr) => segmentLoss(ctx, { tenant: ctx.tenant, sid, w: wr.w }, wr.length)),
  );
  const losses: SegmentLoss[] = [];
  const ends = new Map<string, number>();
  const segments = writers.map((wr, i) => {
    const range = missing[i] ?? null;
    if (range) losses.push({ w: wr.w, range });
    const end = range ? range.start : wr.length;
    ends.set(wr.w, end);
    return {
      w: wr.w,
      open: (chunkBytes = defaultChunk, signal?: AbortSignal, start = 0) =>
        ctx.segments.readSegment({ tenant: ctx.tenant, sid, w: wr.w }, end, start, chunkBytes, { signal }),
    };
  });
  return { segments, losses, ends };
}

/** A stored session's segments, as the replay, verify and inspect read them. */
import { mergeChunkBytes, type ReplaySegment } from '../log/replay.js';
import type { ServiceContext } from './context.js';
import { notFound } from './errors.js';

/**
 * The segments of a stored session, each up to the length indexed now, so that every pass over them
 * (corrections, then the merge) reads the same bytes while ingest goes on. Each `open()` starts a new read.
 * @throws AppError `not_found` when the session has no writer (or is another tenant's)
 */
export async function storedSegments(ctx: ServiceContext, sid: string): Promise<ReplaySegment[]> {
  const writers = await ctx.state.listWriters(ctx.tenant, sid);
  if (writers.length === 0) throw notFound('session');
  const defaultChunk = mergeChunkBytes(writers.length);
  return writers.map((wr) => ({
    w: wr.w,
    open: (chunkBytes = defaultChunk) =>
      ctx.segments.readSegment({ tenant: ctx.tenant, sid, w: wr.w }, wr.length, 0, chunkBytes),
  }));
}

/** The merge sources of a stored session: each writer's segment, up to its indexed length. */
import type { MergeSource } from '../log/merge.js';
import { readSegmentBatches } from '../log/reader.js';
import type { ServiceContext } from './context.js';
import { notFound } from './errors.js';

/**
 * Opens every stored segment of a session for one merge pass (call again for another pass).
 * @throws AppError `not_found` when the session has no writer (or is another tenant's)
 */
export async function openStoredSources(ctx: ServiceContext, sid: string): Promise<MergeSource[]> {
  const writers = await ctx.state.listWriters(ctx.tenant, sid);
  if (writers.length === 0) throw notFound('session');
  return writers.map((wr) => ({
    w: wr.w,
    batches: readSegmentBatches(ctx.segments.readSegment({ tenant: ctx.tenant, sid, w: wr.w }, wr.length)),
  }));
}

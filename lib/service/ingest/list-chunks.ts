/**
 * `GET /v1/sessions/{sid}/writers/{w}/chunks` (scope `ingest` or `read`): the SHA-256 of every chunk the
 * server acknowledged for a writer, in offset order, a page at a time. An upload hashes the same byte
 * ranges of its file before it sends more, so a changed byte of what was uploaded (even one that keeps
 * the file's length and line count: `test/fixtures/cases/05b-*`) is refused instead of spliced onto
 * (issue 15 item 1; DESIGN §4 "append-only").
 */
import type { ChunkList } from '../../contract/chunks.js';
import { requireScope, requireSessionAccess, type ServiceContext } from '../shared/context.js';
import { notFound } from '../shared/errors.js';

/**
 * The chunk records of writer `w` starting at byte `from` (a chunk's offset, or 0), at most `limit`.
 * @throws AppError `not_found` when the session or writer is unknown (or not the caller's); `forbidden`
 *   without scope `ingest` or `read`
 */
export async function listWriterChunks({
  ctx,
  sid,
  w,
  from,
  limit,
}: {
  ctx: ServiceContext;
  sid: string;
  w: string;
  from: number;
  limit: number;
}): Promise<ChunkList> {
  requireScope(ctx, 'ingest', 'read');
  requireSessionAccess(ctx, sid);
  const rec = await ctx.state.getWriter(ctx.tenant, sid, w);
  if (!rec) throw notFound('writer');
  const chunks = await ctx.state.listChunks(ctx.tenant, sid, w, from, limit);
  const last = chunks.at(-1);
  const end = last ? last.offset + last.length : from;
  return {
    chunks: chunks.map((c) => ({
      offset: c.offset,
      length: c.length,
      sha256: c.sha256,
      lines: c.lines,
      last_seq: c.last_seq,
    })),
    next_from: last && end < rec.length ? end : null,
  };
}

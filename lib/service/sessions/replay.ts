/**
 * Reading sessions back: the writer index, the session listing, the merged replay and raw segments
 * (DESIGN §4). Replay merges the stored segments with the same code the CLI uses on a local directory,
 * so both give the same bytes.
 */

import { resolveLimits } from '../../contract/limits.js';
import type { LineProblem } from '../../log/format/codec.js';
import { CorrectionIndex } from '../../log/replay/corrections.js';
import { type ReplayFormat, replayBytes, replayChunks } from '../../log/replay/replay.js';
import { InvalidCursorError, type SessionRecord, type WriterRecord } from '../../store/index.js';
import { requireScope, requireSessionAccess, type ServiceContext } from '../shared/context.js';
import { AppError, notFound } from '../shared/errors.js';
import type { ScanGate } from '../shared/scan-gate.js';
import { segmentLoss, storedSegments } from '../shared/sources.js';
import { dataLossError } from '../shared/storage-faults.js';
import { type DeclaredRow, declaredRows, interleaveDeclared } from '../status/declared.js';
import { checkedStatus } from '../status/get.js';
import { openCursor, sealCursor } from './cursors.js';
import type { SessionDetail, SessionList, SessionView, WriterView } from './schemas.js';

export type { SessionView, WriterView } from './schemas.js';

function writerView(r: WriterRecord): WriterView {
  return {
    writer: r.w,
    length: r.length,
    lines: r.lines,
    last_seq: r.last_seq,
    ended: r.ended,
    agent: r.agent,
    updated_at: r.updated_at,
  };
}

/**
 * `GET /v1/sessions/{sid}/writers/{w}` (scope `ingest` or `read`): the index, once the store is seen to
 * hold all of it. @throws AppError `not_found`; `data_loss` (500, `{w, range}`) when the segment holds
 * less than its index (a writer resuming there would append after a hole)
 */
export async function getWriter({
  ctx,
  sid,
  w,
}: {
  ctx: ServiceContext;
  sid: string;
  w: string;
}): Promise<WriterView> {
  requireScope(ctx, 'ingest', 'read');
  requireSessionAccess(ctx, sid);
  const rec = await ctx.state.getWriter(ctx.tenant, sid, w);
  if (!rec) throw notFound('writer');
  await requireStored(ctx, sid, rec);
  // Only here, not in the session's writer list: where an upload resumes, it checks its prefix (issue 15.1).
  return { ...writerView(rec), digest: rec.chain };
}

/**
 * @throws AppError `data_loss` when the store holds less of the writer's segment than its index says, or
 *   its last byte is not a newline (a torn tail)
 */
async function requireStored(ctx: ServiceContext, sid: string, rec: WriterRecord): Promise<void> {
  const missing = await segmentLoss(ctx, { tenant: ctx.tenant, sid, w: rec.w }, rec.length);
  if (missing) throw dataLossError({ tenant: ctx.tenant, sid, w: rec.w }, missing);
}

/**
 * `GET /v1/sessions` (scope `read`): the tenant's sessions, most recent activity first, a page at a time.
 * `next` is a signed cursor (lib/service/sessions/cursors.ts): a client can page only with cursors this server
 * gave it for this tenant. A session-bound token sees its own session (when it exists) and nothing else:
 * one page, `next: null`, and every cursor refused (none was ever given to a bound token).
 * @param limit 1..200 @throws AppError `invalid_cursor` (400)
 */
export async function listSessions({
  ctx,
  limit,
  cursor,
}: {
  ctx: ServiceContext;
  limit: number;
  cursor: string | null;
}): Promise<SessionList> {
  requireScope(ctx, 'read');
  return sessionsPage({ ctx, limit, cursor });
}

/**
 * A page of the tenant's sessions exactly as `listSessions` answers it, signed cursors included, for a
 * caller that has checked its own scope: the board (`getBoard`, scope `board` or `read`) pages with it,
 * so a board cursor is signed and checked like a listing's (issue 8.7).
 * @param limit 1..200 @throws AppError `invalid_cursor` (400)
 */
export async function sessionsPage({
  ctx,
  limit,
  cursor,
}: {
  ctx: ServiceContext;
  limit: number;
  cursor: string | null;
}): Promise<SessionList> {
  const inner = cursor === null ? null : await openCursor(ctx, 'sessions', cursor);
  const view = ({ tenant: _t, ...rest }: SessionRecord): SessionView => rest;
  if (ctx.caller.session !== null) {
    const own = await ctx.state.getSession(ctx.tenant, ctx.caller.session);
    return { sessions: own ? [view(own)] : [], next: null };
  }
  try {
    const page = await ctx.state.listSessions(ctx.tenant, limit, inner);
    const next = page.next === null ? null : await sealCursor(ctx, 'sessions', page.next);
    return { sessions: page.items.map(view), next };
  } catch (err) {
    // A signed cursor the store refuses: only if the store changed how it pages since it was given.
    if (err instanceof InvalidCursorError)
      throw new AppError('invalid_cursor', 'the cursor is no longer valid: start from the first page');
    throw err;
  }
}

/**
 * What one replay response reads ahead of its client: segment blocks of `Limits.replayReadBytes` in all
 * (256 KiB by default, as the merge before issue 16 read; a block is at least 16 KiB per writer) and
 * output buffers of 64 KiB (one body batch of lib/http/stream.ts). A server holds one merge per open
 * replay, most of them waiting on their client, so memory per response stays small (issue 8).
 */
function responseReplay(ctx: ServiceContext): { readBudgetBytes: number; outputBytes: number } {
  return { readBudgetBytes: resolveLimits(ctx.limits).replayReadBytes, outputBytes: 64 * 1024 };
}

/**
 * `GET /v1/sessions/{sid}/replay` (scope `read`): the merged transcript, `ndjson` as bytes (the fast merge,
 * `replayBytes`) or `text` as text chunks of whole lines, with corrections applied (each corrected event
 * carries its `corrected` provenance; DESIGN §3).
 * The session's existence is checked before the first line, so a 404 is still possible; the lines then
 * stream. `signal` (the request's: aborted when the client goes away) stops the replay and closes every
 * segment it reads; closing the returned iterable early does too. With a `gate`, the corrections pass (the
 * part no client's pace holds back) waits for a place in it. Nothing is read before the first line is
 * asked for. @throws AppError `not_found`
 */
export async function replaySession({
  ctx,
  sid,
  format,
  onProblem,
  signal,
  gate,
}: {
  ctx: ServiceContext;
  sid: string;
  format: ReplayFormat;
  onProblem?: (w: string, p: LineProblem) => void;
  signal?: AbortSignal;
  gate?: ScanGate;
}): Promise<AsyncIterable<string | Uint8Array>> {
  // The board's session page links the replay's downloads, so a board token may read it too.
  requireScope(ctx, 'read', 'board');
  requireSessionAccess(ctx, sid);
  const segments = await storedSegments(ctx, sid);
  const options = { ...(onProblem ? { onProblem } : {}), signal, ...responseReplay(ctx) };
  // The text replay shows the agents' status reports as rows marked Declared, their claims checked.
  const declared = async () => {
    const status = format === 'text' ? await checkedStatus(ctx, sid, signal) : null;
    return status ? declaredRows(status) : [];
  };
  const body = (corrections?: CorrectionIndex, rows: DeclaredRow[] = []) => {
    const o = corrections ? { ...options, corrections } : options;
    return format === 'ndjson'
      ? replayBytes(segments, 'ndjson', o)
      : interleaveDeclared(replayChunks(segments, format, o), rows);
  };
  if (!gate) {
    return (async function* () {
      yield* body(undefined, await declared());
    })();
  }
  return (async function* () {
    const [corrections, rows] = await gate.run(
      () => Promise.all([CorrectionIndex.scan(segments, signal), declared()]),
      signal,
    );
    yield* body(corrections, rows);
  })();
}

/**
 * `replay?raw=1` (scope `read`, or `board`: the session page links it): every stored line as written,
 * quarantined ones included, in merged order (DESIGN §5), as bytes (the fast merge, `replayBytes`).
 * `signal` as for `replaySession`. @throws AppError `not_found`
 */
export async function rawSession({
  ctx,
  sid,
  signal,
}: {
  ctx: ServiceContext;
  sid: string;
  signal?: AbortSignal;
}): Promise<AsyncIterable<Uint8Array>> {
  requireScope(ctx, 'read', 'board');
  requireSessionAccess(ctx, sid);
  return replayBytes(await storedSegments(ctx, sid), 'raw', { signal, ...responseReplay(ctx) });
}

/**
 * `GET /v1/sessions/{sid}/writers/{w}/segment` (scope `read`, or `board`: the session page links each
 * writer's): the raw segment, its length checked before
 * the first byte. @throws AppError `not_found`; `data_loss` (500, `{w, range}`)
 */
export async function rawSegment({
  ctx,
  sid,
  w,
  signal,
}: {
  ctx: ServiceContext;
  sid: string;
  w: string;
  /** the request's: aborted when the client goes away, it stops the read and closes the segment */
  signal?: AbortSignal;
}): Promise<{ length: number; body: AsyncIterable<Uint8Array> }> {
  requireScope(ctx, 'read', 'board');
  requireSessionAccess(ctx, sid);
  const rec = await ctx.state.getWriter(ctx.tenant, sid, w);
  if (!rec) throw notFound('writer');
  await requireStored(ctx, sid, rec);
  const key = { tenant: ctx.tenant, sid, w };
  return { length: rec.length, body: ctx.segments.readSegment(key, rec.length, 0, undefined, { signal }) };
}

/** `GET /v1/sessions/{sid}` (scope `read`): the session index entry and its writers. */
export async function getSession({ ctx, sid }: { ctx: ServiceContext; sid: string }): Promise<SessionDetail> {
  requireScope(ctx, 'read', 'board');
  requireSessionAccess(ctx, sid);
  const s = await ctx.state.getSession(ctx.tenant, sid);
  if (!s) throw notFound('session');
  const { tenant: _t, ...rest } = s;
  const writers = (await ctx.state.listWriters(ctx.tenant, sid)).map(writerView);
  return { ...rest, writers };
}

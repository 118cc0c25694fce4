/**
 * `ingestChunk`: accept the next complete lines of a writer's segment (DESIGN §4 chunk route, §5 "What
 * ingest refuses and what it records").
 *
 * Refused: an empty body or one not ending with a newline; a body over 5 MiB or of more lines than
 * `Limits.maxChunkLines`; a chunk that would take the tenant past its storage quota; a new segment whose
 * first line is not a parseable `writer.start` of this session and writer; any line that names another
 * session or writer.
 * Everything else is stored as written, torn lines included (the merged replay skips them, verify reports
 * them). The bytes are written first, then the writer index advances on the condition that it is still
 * where it was read; a retry of an accepted chunk gets the same answer with 200.
 */
import { createHash } from 'node:crypto';
import { Mutex } from 'async-mutex';
import { nextChain } from '../../audit/chain.js';
import { MAX_CHUNK_BYTES, resolveLimits } from '../../contract/limits.js';
import { ChunkConflictError, StateConflictError, type SummaryDelta } from '../../store/index.js';
import { isEmptyDelta } from '../../store/session-summary.js';
import { noteDamage, noteStorage, QUOTA_LEVELS } from '../alerts/crossings.js';
import type { IngestAnswer } from '../sessions/schemas.js';
import { isoNow, requireScope, requireSessionAccess, type ServiceContext } from '../shared/context.js';
import { AppError } from '../shared/errors.js';
import { dataLossError, storageAppError } from '../shared/storage-faults.js';
import { summariesChanged } from '../shared/summary-cache.js';
import { tenantLimits } from '../tenants/limits.js';
import { projectChunk } from '../usage/project.js';
import { chainBefore, digestDueAfter } from './chain.js';
import { scanLines } from './lines.js';
import { noteSeenEmails } from './seen-emails.js';

/** Largest chunk body any deployment takes, in bytes (DESIGN §4, §7); a deployment may set less (`Limits`). */
export { MAX_CHUNK_BYTES };

export interface IngestInput {
  sid: string;
  w: string;
  /** byte offset of the body's first byte in the segment */
  offset: number;
  body: Uint8Array;
}

/** The answer to an accepted chunk; `created` false for a retry of a chunk already accepted. */
export type IngestResult = IngestAnswer & { created: boolean };

/**
 * @throws AppError `empty_body`, `incomplete_line`, `payload_too_large`, `too_many_lines` (with
 *   `max_lines`), `quota_exceeded` (with `quota_bytes`, `used_bytes`), `missing_writer_start`,
 *   `misrouted_line` (400/413, nothing stored), `offset_mismatch` (409 with `expected_offset`);
 *   `insufficient_storage` (507), `storage_read_only` (503), `storage_permission_denied` (500), all with
 *   `expected_offset` and nothing stored; `data_loss` (500) when the segment lost acknowledged bytes or
 *   its tail is torn; `summary_not_updated` (503, with `expected_offset`) when the session's board summary
 *   (or its usage counters) could not be updated: nothing of the chunk was indexed (send the same chunk
 *   again)
 */
export async function ingestChunk({
  ctx,
  input,
}: {
  ctx: ServiceContext;
  input: IngestInput;
}): Promise<IngestResult> {
  requireScope(ctx, 'ingest');
  requireSessionAccess(ctx, input.sid);
  const { sid, w, body } = input;
  if (body.length === 0)
    throw new AppError('empty_body', 'the chunk is empty: send at least one complete line');
  const maxBytes = resolveLimits(ctx.limits).maxChunkBytes;
  if (body.length > maxBytes) throw await tooLarge(ctx, input, maxBytes);
  if (body[body.length - 1] !== 0x0a) {
    throw new AppError('incomplete_line', 'the chunk must end with a newline: send complete lines only');
  }
  const { maxChunkLines } = resolveLimits(ctx.limits);
  if (hasMoreLinesThan(body, maxChunkLines)) {
    throw new AppError(
      'too_many_lines',
      `a chunk may hold at most ${maxChunkLines} lines: send the segment in smaller chunks`,
      { max_lines: maxChunkLines },
    );
  }
  // One chunk of a writer at a time in this process: the store may replace bytes past the indexed length
  // (left by a crash), so the length read here must still be the indexed length when the bytes are written.
  return withWriterLock(ctx, sid, w, () => appendChunk(ctx, input));
}

/**
 * The 413 for a body over `MAX_CHUNK_BYTES` (DESIGN §7). When its first line alone is longer than that, no
 * chunk can carry it: the answer names that line (its number in the segment when the offset is the stored
 * length, and its byte offset) so the writer can say which line of which segment it is.
 */
async function tooLarge(ctx: ServiceContext, input: IngestInput, maxBytes: number): Promise<AppError> {
  const nl = input.body.indexOf(0x0a);
  if (nl !== -1 && nl < maxBytes) {
    return new AppError(
      'payload_too_large',
      `a chunk may hold at most ${maxBytes} bytes: send fewer lines per chunk`,
      { max_bytes: maxBytes },
    );
  }
  const current = await ctx.state.getWriter(ctx.tenant, input.sid, input.w);
  const line = (current?.length ?? 0) === input.offset ? (current?.lines ?? 0) + 1 : null;
  return new AppError(
    'payload_too_large',
    `the line${line === null ? '' : ` ${line}`} at byte offset ${input.offset} of writer ${input.w} is longer than ${maxBytes} bytes: no chunk can carry it`,
    { max_bytes: maxBytes, line, offset: input.offset },
  );
}

/** The checks and writes of `ingestChunk` once it holds the writer's lock. */
async function appendChunk(ctx: ServiceContext, input: IngestInput): Promise<IngestResult> {
  const { sid, w, offset, body } = input;
  const key = { tenant: ctx.tenant, sid, w };
  const current = await ctx.state.getWriter(ctx.tenant, sid, w);
  const length = current?.length ?? 0;
  // Here, not on libuv's pool: WebCrypto's digest copies the body first, and measured slower for 4 MiB
  // chunks on 2 cores (24.9 against 28.9 ms of server CPU a chunk, issue 16.3).
  const sha256 = createHash('sha256').update(body).digest('hex');

  if (offset !== length) return answerRetry(ctx, input, sha256, length);

  const scan = scanLines(body, sid, w, current);
  await requireQuota(ctx, body.length);
  // The writer's chained digest (issue 15.1): recomputed from its chunk records, once, for a writer
  // indexed before chains were kept; before any byte is written, so a failure stores nothing.
  const chain = nextChain(
    await chainBefore(ctx.state, ctx.tenant, sid, current),
    offset,
    body.length,
    sha256,
  );
  try {
    // A torn tail (a crash zero-filled it): appending after it would acknowledge a segment with a hole.
    // A file shorter than the index is putChunk's to find (SegmentDataLossError).
    const torn = offset > 0 ? await ctx.segments.tornTail(key, offset) : null;
    if (torn) throw dataLossError(key, torn);
    // Resolves once every byte is on disk (FsSegmentStore writes them all and fsyncs): only then does
    // the index advance, so a 201 never counts bytes the store does not hold.
    await ctx.segments.putChunk(key, offset, body);
  } catch (err) {
    if (err instanceof ChunkConflictError) return answerRetry(ctx, input, sha256, length);
    const fault = storageAppError(err, 'this chunk', { expected_offset: offset });
    // Acknowledged bytes gone (issue 28 `record.damaged`): once per writer and length it was found at.
    if (fault?.code === 'data_loss') {
      const detail = fault.message;
      await noteDamage(
        ctx.state,
        ctx.tenant,
        { sid, w, what: 'data_loss', detail, key: `${w}:loss:${offset}` },
        isoNow(ctx),
      );
    }
    throw fault ?? err;
  }
  // The summary first: a merge that fails leaves the chunk unacknowledged and unindexed, so the client's
  // retry writes both (a failed merge after the advance was lost once the client gave up: the next upload
  // found every byte on the server, board-summary-resume). The merge is idempotent (unions, earliest wins).
  await mergeSummaryOrFail(ctx, sid, scan.summary, offset);
  // The usage counters too (issue 27 item 5), before the advance for the same reason: a 2xx means
  // counted, a failure (503, nothing indexed) is counted by the retry, and a retry of a counted chunk
  // counts nothing (lib/service/usage/project.ts).
  // A chunk of another token than the writer's first (issue 24.1) counts no usage, nor does any after it.
  const foreign = current !== null && current.token_id !== null && current.token_id !== ctx.caller.id;
  await projectChunk(ctx, sid, w, offset, body, { foreign, sha256 });
  const next = {
    length: offset + body.length,
    lines: (current?.lines ?? 0) + scan.lines,
    last_seq: scan.lastSeq ?? current?.last_seq ?? null,
    ended: (current?.ended ?? false) || scan.ended,
    agent: current?.agent ?? scan.agent,
    // Who put the writer on record (issue 24.1): set by its first chunk and kept. The token is the
    // server's own knowledge of the request, never the writer's bytes.
    provenance: current ? current.provenance : scan.provenance,
    token_id: current ? current.token_id : ctx.caller.id,
    token_label: current ? current.token_label : ctx.caller.label,
    // A chunk from another token than the one that started the writer (a session token minted from it
    // too: the agent may hold one): its bytes are not that writer's own record, so a verdict counts none
    // of the writer's results; recorded, never refused (DESIGN §5: ingest records what was written).
    mixed_tokens:
      (current?.mixed_tokens ?? false) ||
      (current !== null && current.token_id !== null && current.token_id !== ctx.caller.id),
  };
  try {
    await ctx.state.advanceWriter(ctx.tenant, sid, w, length, {
      ...next,
      chunk: { offset, length: body.length, sha256, lines: next.lines, last_seq: next.last_seq, chain },
      chain,
      digest_due: digestDueAfter(current, scan.ended, ctx.now()),
      at: isoNow(ctx),
    });
  } catch (err) {
    // Another client advanced this writer between our read and our write: answer as for its state now.
    if (err instanceof StateConflictError)
      return answerRetry(ctx, input, sha256, err.currentLength ?? length);
    // The bytes are past the indexed length, never acknowledged: a retry at `offset` replaces them.
    throw storageAppError(err, 'this chunk', { expected_offset: offset }) ?? err;
  }
  summariesChanged(ctx.state, ctx.tenant);
  // Its joins' emails (issue 29 item 4): once the chunk is stored and indexed, never failing the answer
  // (a failed write is logged); only a chunk with a join that carries an email costs anything.
  await noteSeenEmails(ctx, scan.emailClaims);
  return { created: true, writer: w, length: next.length, lines: next.lines, last_seq: next.last_seq };
}

/**
 * Adds what the chunk showed (its earliest message, people, agent) to the session's summary, the
 * overview's view of it (issue 14.1). It runs BEFORE the writer index advances (ADR 4), making the
 * session's index entry when its first chunk comes: a merge that fails (a store fault, five lost merge
 * races) fails the request with nothing indexed, so the client's retry of the chunk writes the chunk and
 * its summary, and a 2xx still means stored, indexed and summarised. A merge that succeeded and an
 * advance that then failed leave at most a session entry with its summary and no writers until the retry.
 * @throws AppError `insufficient_storage` (507) and the other storage faults of `storageAppError`, else
 *   `summary_not_updated` (503), each with `expected_offset`: nothing of the chunk was indexed
 */
async function mergeSummaryOrFail(
  ctx: ServiceContext,
  sid: string,
  delta: SummaryDelta,
  offset: number,
): Promise<void> {
  if (isEmptyDelta(delta)) return;
  try {
    await ctx.state.mergeSessionSummary(ctx.tenant, sid, delta, isoNow(ctx));
  } catch (err) {
    throw (
      storageAppError(err, 'this chunk', { expected_offset: offset }) ??
      new AppError(
        'summary_not_updated',
        `the board's summary of session ${sid} could not be updated, so this chunk was not recorded: send the same chunk again (from offset ${offset})`,
        { expected_offset: offset },
        { cause: err },
      )
    );
  }
  summariesChanged(ctx.state, ctx.tenant);
}

/** True when `body` holds more than `max` newline-terminated lines (stops counting past `max`). */
function hasMoreLinesThan(body: Uint8Array, max: number): boolean {
  let lines = 0;
  for (let nl = body.indexOf(0x0a); nl !== -1; nl = body.indexOf(0x0a, nl + 1)) {
    if (++lines > max) return true;
  }
  return false;
}

/**
 * Refuses a chunk that would take the tenant past its quota: its own where its tenant record has one,
 * else the deployment's (lib/service/tenants/limits.ts, issue 17.1; the record is read at most every 30 s
 * per process). The usage is read from the state store, so every server of a deployment sees the same
 * total; chunks of other writers in flight at the same moment are not counted yet (and on DynamoDB the
 * total is up to 30 s old), so a tenant may pass its quota by at most those (a soft quota).
 * @throws AppError `quota_exceeded` (413) with `quota_bytes` (the quota applied), `used_bytes` and
 *   `chunk_bytes`; the message says whether the quota is the tenant's own or the deployment's
 */
async function requireQuota(ctx: ServiceContext, chunkBytes: number): Promise<void> {
  const { quotaBytes: quota, quotaFrom } = await tenantLimits(ctx);
  if (quota === null) return;
  const used = (await ctx.state.tenantUsage(ctx.tenant)).bytes;
  if (used + chunkBytes <= quota) {
    // Near the quota: `quota.near` once per level (issue 28), never failing the chunk.
    if ((used + chunkBytes) * 100 >= QUOTA_LEVELS[0] * quota) {
      await noteStorage(ctx.state, ctx.tenant, used + chunkBytes, quota, isoNow(ctx));
    }
    return;
  }
  await noteStorage(ctx.state, ctx.tenant, quota, quota, isoNow(ctx));
  const whose = quotaFrom === 'tenant' ? 'its own storage quota' : 'its storage quota';
  throw new AppError(
    'quota_exceeded',
    `this chunk of ${chunkBytes} bytes would take the tenant past ${whose} (${used} of ${quota} bytes used): nothing was stored; ask the operator for a larger quota`,
    { quota_bytes: quota, used_bytes: used, chunk_bytes: chunkBytes },
  );
}

const writerLocks = new WeakMap<object, Map<string, { mutex: Mutex; users: number }>>();

/**
 * Runs `fn` holding the in-process lock of one writer of the context's segment store: ingest's, and a
 * usage recompute's of that writer (lib/service/usage/recompute.ts), so neither sees the other half done.
 */
export async function withWriterLock<T>(
  ctx: ServiceContext,
  sid: string,
  w: string,
  fn: () => Promise<T>,
): Promise<T> {
  let locks = writerLocks.get(ctx.segments);
  if (!locks) {
    locks = new Map();
    writerLocks.set(ctx.segments, locks);
  }
  const k = `${ctx.tenant}/${sid}/${w}`;
  let entry = locks.get(k);
  if (!entry) {
    entry = { mutex: new Mutex(), users: 0 };
    locks.set(k, entry);
  }
  entry.users += 1;
  try {
    return await entry.mutex.runExclusive(fn);
  } finally {
    entry.users -= 1;
    if (entry.users === 0) locks.delete(k);
  }
}

/** A chunk not at the stored length: the same chunk again (200, its answer) or a conflict (409). */
async function answerRetry(
  ctx: ServiceContext,
  input: IngestInput,
  sha256: string,
  storedLength: number,
): Promise<IngestResult> {
  if (input.offset < storedLength) {
    const chunk = await ctx.state.getChunk(ctx.tenant, input.sid, input.w, input.offset);
    if (chunk && chunk.sha256 === sha256 && chunk.length === input.body.length) {
      // The same bytes as stored: their summary was merged before they were indexed (`appendChunk`).
      return {
        created: false,
        writer: input.w,
        length: chunk.offset + chunk.length,
        lines: chunk.lines,
        last_seq: chunk.last_seq,
      };
    }
  }
  throw new AppError(
    'offset_mismatch',
    `the server holds ${storedLength} bytes of this writer's segment: send the bytes from offset ${storedLength}`,
    { expected_offset: storedLength },
  );
}

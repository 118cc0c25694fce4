/**
 * `GET /v1/sessions/{sid}/export` (issue 15.3, docs/audit.md): one bundle an auditor verifies offline
 * (`hansard verify --digests`): the segments as stored, every signed digest, the public keys and a
 * manifest (lib/audit/bundle.ts `packBundle`). A digest is written for the export first (reason
 * `export`), so the newest digest covers every byte the bundle holds, unless the head already does and is
 * young, the caller names a stored one (`?head=N`) or the deployment cannot sign
 * (lib/service/digests/export-head.ts); each segment is read only up to
 * the length that head digest states, never the live length, so chunks ingested while the bundle streams
 * cannot make it disagree with its head.
 */
import type { Readable } from 'node:stream';
import { packBundle } from '../../audit/bundle.js';
import type { DigestWriter } from '../../audit/schemas.js';
import { requireScope, requireSessionAccess, type ServiceContext } from '../shared/context.js';
import { notFound } from '../shared/errors.js';
import { segmentLoss } from '../shared/sources.js';
import { dataLossError } from '../shared/storage-faults.js';
import { digestDeps } from './deps.js';
import { bundleHead } from './export-head.js';
import { listPublicKeys } from './keys.js';

/** Digests read at once while an export gathers them. */
const DIGEST_READS_AT_ONCE = 16;

/** A prepared export: its head digest and the tar, not yet read. */
export interface SessionExport {
  /** the digest the bundle ends with (its `manifest.head`) */
  head: { seq: number; sha256: string };
  /** the tar bundle (`{sid}/…`, manifest.json last); reading it reads the segments */
  body: AsyncIterable<Uint8Array>;
  /** digests, writers and bytes of segments it holds */
  digests: number;
  writers: number;
  bytes: number;
}

/**
 * Checks that the caller may export session `sid` and that it exists, without writing or reading more
 * (a HEAD request, and the first step of `exportSession`).
 * @throws AppError `forbidden` (scope `read` needed); `not_found` for a missing session, another
 *   tenant's, or another session than a session-bound token's (the same answer for all three)
 */
export async function checkExport(ctx: ServiceContext, sid: string): Promise<void> {
  requireScope(ctx, 'read');
  requireSessionAccess(ctx, sid);
  if (!(await ctx.state.getSession(ctx.tenant, sid))) throw notFound('session');
}

/**
 * The bundle of session `sid` up to `bundleHead`: stored digest `head` when given, else an `export`
 * digest written now, or the head when it covers every chunk and is young (the newest stored one where
 * the deployment cannot sign). Nothing of a segment is
 * read before `body` is.
 * @param signal aborted when the client goes away: the segment reads stop
 * @throws AppError as `checkExport`; `digests_unavailable` / `signing_unavailable` (503) when the
 *   deployment cannot write a digest; `digest_not_found` (404) / `no_digest` (409) as `bundleHead`;
 *   `data_loss` (500) when a segment holds less than the head digest
 *   attests; the stores' errors
 */
export async function exportSession({
  ctx,
  sid,
  signal,
  head: upTo,
}: {
  ctx: ServiceContext;
  sid: string;
  signal?: AbortSignal;
  /** bundle up to this stored digest, writing none (`?head=N`) */
  head?: number;
}): Promise<SessionExport> {
  await checkExport(ctx, sid);
  const deps = digestDeps(ctx);
  const head = await bundleHead(ctx, sid, upTo);
  const headSeq = head.seq;

  // Every digest up to the head, as stored; a later one (written while this export runs) is left out, so
  // the head is the newest. A seq the store lacks is left out too: the verifier reports the gap.
  const seqs = (await deps.digests.listDigests(ctx.tenant, sid)).filter((s) => s <= headSeq);
  const digests: { seq: number; bytes: Uint8Array }[] = [];
  // A few reads at a time: a month-long session holds thousands of digests, each an S3 GET on AWS.
  for (let i = 0; i < seqs.length; i += DIGEST_READS_AT_ONCE) {
    const batch = seqs.slice(i, i + DIGEST_READS_AT_ONCE);
    const read = await Promise.all(batch.map((seq) => deps.digests.getDigest(ctx.tenant, sid, seq)));
    read.forEach((bytes, j) => {
      if (bytes) digests.push({ seq: batch[j]!, bytes });
    });
  }
  const { keys } = await listPublicKeys(deps.signer);
  const segments = await attestedSegments(ctx, sid, head.writers, signal);
  const body = packBundle({
    tenant: ctx.tenant,
    sid,
    exported_at: ctx.now().toISOString(),
    head: { seq: head.seq, sha256: head.sha256 },
    digests,
    keys,
    segments,
  });
  return {
    head: { seq: head.seq, sha256: head.sha256 },
    body: chunksOf(body),
    digests: digests.length,
    writers: segments.length,
    bytes: segments.reduce((n, s) => n + s.length, 0),
  };
}

/**
 * Each writer of the head digest, read up to the length the digest attests; checked first, so a loss
 * answers an error status instead of a bundle cut short.
 * @throws AppError `data_loss` naming the writer and the range gone
 */
async function attestedSegments(
  ctx: ServiceContext,
  sid: string,
  writers: DigestWriter[],
  signal: AbortSignal | undefined,
) {
  const key = (w: string) => ({ tenant: ctx.tenant, sid, w });
  // Checked together, as the replay checks its segments (lib/service/shared/sources.ts).
  const missing = await Promise.all(
    writers.map((wr) => (wr.length > 0 ? segmentLoss(ctx, key(wr.w), wr.length) : null)),
  );
  writers.forEach((wr, i) => {
    const range = missing[i];
    if (range) throw dataLossError(key(wr.w), range);
  });
  return writers.map((wr) => ({
    w: wr.w,
    length: wr.length,
    read: () =>
      wr.length === 0
        ? (async function* () {})()
        : ctx.segments.readSegment(key(wr.w), wr.length, 0, undefined, { signal }),
  }));
}

/**
 * The bytes of `body`, and when the reader stops early (the client went away) the stream destroyed
 * without an error: Node's own iterator would destroy it with an AbortError that nobody hears (an
 * unhandled rejection). The segment reads stop through the request's signal.
 */
async function* chunksOf(body: Readable): AsyncGenerator<Uint8Array> {
  try {
    for await (const chunk of body.iterator({ destroyOnReturn: false })) yield chunk as Uint8Array;
  } finally {
    if (!body.destroyed) body.destroy();
  }
}

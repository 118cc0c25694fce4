/**
 * verify and inspect of a stored session (issue 3; DESIGN §4 `GET …/verify`, `GET …/inspect`): the same
 * library functions the CLI runs on a local directory, over the stored segments.
 */

import { createHash } from 'node:crypto';
import { inspectSession, type SessionSummary } from '../../log/analyse/inspect.js';
import {
  type Problem,
  VERIFY_CODES,
  type VerifyReport,
  verifySegments,
  verifySession,
} from '../../log/analyse/verify.js';
import { mergeSegments } from '../../log/read/merge.js';
import { type Attribution, attributeStream } from '../../log/replay/attribution.js';
import { CorrectionIndex } from '../../log/replay/corrections.js';
import { segmentSources } from '../../log/replay/replay.js';
import { noteDamage } from '../alerts/crossings.js';
import { isoNow, requireScope, requireSessionAccess, type ServiceContext } from '../shared/context.js';
import { type SegmentLoss, storedSegments, storedSegmentsAndLosses } from '../shared/sources.js';
import { type DeclaredSummary, declaredSummary } from '../status/declared.js';
import { checkedStatus } from '../status/get.js';
import { digestChecked } from './chunk-digests.js';
import type { AttributionList } from './schemas.js';

/**
 * `GET /v1/sessions/{sid}/verify` (scope `read`, or `board`: the session page shows its findings and links
 * the report). A segment whose store holds less than its index, or
 * whose last byte is not a newline (a torn tail), is a `data_loss` problem (error, with the lost `range`);
 * the bytes before the loss are checked as usual. Every whole chunk read is hashed against the SHA-256
 * ingest acknowledged it with: a chunk whose bytes changed is a `chunk_digest_mismatch` (error, with the
 * chunk's `range`). The hashing rides on the corrections pass, which reads every byte anyway.
 * @throws AppError `not_found`
 */
export async function verifyStored({
  ctx,
  sid,
  signal,
}: {
  ctx: ServiceContext;
  sid: string;
  /** the request's: aborted when the client goes away, it stops the reads (AbortError) and closes them */
  signal?: AbortSignal;
}): Promise<VerifyReport> {
  requireScope(ctx, 'read', 'board');
  requireSessionAccess(ctx, sid);
  const { segments, losses, ends } = await storedSegmentsAndLosses(ctx, sid);
  const digests = digestChecked(ctx, sid, segments, ends);
  // verifySegments' two passes, with the first one (every byte of every segment) hashed on the way.
  const corrections = await CorrectionIndex.scan(digests.segments, signal);
  const extraProblems = [...losses.map(lossProblem), ...(await digests.problems(signal))];
  const report = await verifySession(segmentSources(segments, { signal }), {
    sid,
    corrections,
    extraProblems,
  });
  if (report.summary.errors > 0) await noteVerifyErrors(ctx, sid, report);
  return report;
}

/**
 * `record.damaged` for a verify that found errors (issue 28): once per distinct set of (code, writer)
 * errors, so verifying the same damage again fires nothing, and new damage does.
 */
async function noteVerifyErrors(ctx: ServiceContext, sid: string, report: VerifyReport): Promise<void> {
  const errors = report.problems.filter((p) => p.severity === 'error');
  const kinds = [...new Set(errors.map((p) => `${p.code}@${p.w ?? '-'}`))].sort();
  const codes = [...new Set(errors.map((p) => p.code))].sort();
  await noteDamage(
    ctx.state,
    ctx.tenant,
    {
      sid,
      w: errors.length > 0 && errors.every((p) => p.w === errors[0]!.w) ? (errors[0]!.w ?? null) : null,
      what: codes.includes('data_loss') ? 'data_loss' : 'verify_errors',
      detail: `verify found ${report.summary.errors} error${report.summary.errors === 1 ? '' : 's'}: ${codes.join(', ')}`,
      key: `verify:${createHash('sha256').update(kinds.join('\n')).digest('hex').slice(0, 32)}`,
    },
    isoNow(ctx),
  );
}

/** A lost range of a segment as a verify finding. */
function lossProblem({ w, range }: SegmentLoss): Problem {
  return {
    severity: VERIFY_CODES.data_loss,
    code: 'data_loss',
    w,
    seq: null,
    line: null,
    message: `bytes [${range.start}, ${range.end}) of ${w}'s segment are gone: the server acknowledged them, but its storage no longer holds them (data loss); the segment is checked up to byte ${range.start}`,
    range: { start: range.start, end: range.end },
  };
}

/**
 * `GET /v1/sessions/{sid}/inspect` (scope `read`): the summary with its verify summary, and the agents'
 * status reports with their claims checked (`declared`, null when none). @throws AppError `not_found`
 */
export async function inspectStored({
  ctx,
  sid,
  signal,
}: {
  ctx: ServiceContext;
  sid: string;
  /** as for `verifyStored` */
  signal?: AbortSignal;
}): Promise<SessionSummary & { declared: DeclaredSummary | null }> {
  requireScope(ctx, 'read');
  requireSessionAccess(ctx, sid);
  const segments = await storedSegments(ctx, sid);
  const report = await verifySegments(segments, sid, [], signal);
  const summary = await inspectSession(segmentSources(segments, { signal }), report);
  // The agents' reports are a section of their own: a declared event never fills an observed field.
  const status = await checkedStatus(ctx, sid, signal);
  return { ...summary, declared: status ? declaredSummary(status) : null };
}

/**
 * `GET /v1/sessions/{sid}/attribution` (scope `read`): every agent action and output with the messages it
 * is attributed to, the basis and the confidence (DESIGN §3, docs/attribution.md). @throws AppError `not_found`
 */
export async function attributionStored({
  ctx,
  sid,
  signal,
}: {
  ctx: ServiceContext;
  sid: string;
  /** as for `verifyStored` */
  signal?: AbortSignal;
}): Promise<AttributionList> {
  requireScope(ctx, 'read');
  requireSessionAccess(ctx, sid);
  const attributions: Attribution[] = [];
  const sources = segmentSources(await storedSegments(ctx, sid), { signal });
  for await (const a of attributeStream(mergeSegments(sources, { signal }))) attributions.push(a);
  return { sid, attributions };
}

/**
 * verify and inspect of a stored session (issue 3; DESIGN §4 `GET …/verify`, `GET …/inspect`): the same
 * library functions the CLI runs on a local directory, over the stored segments.
 */
import { type Attribution, attributeStream } from '../log/attribution.js';
import { inspectSession, type SessionSummary } from '../log/inspect.js';
import { mergeSegments } from '../log/merge.js';
import { segmentSources } from '../log/replay.js';
import { type VerifyReport, verifySegments } from '../log/verify.js';
import { requireScope, requireSessionAccess, type ServiceContext } from './context.js';
import { storedSegments } from './sources.js';

/** `GET /v1/sessions/{sid}/verify` (scope `read`). @throws AppError `not_found` */
export async function verifyStored({
  ctx,
  sid,
}: {
  ctx: ServiceContext;
  sid: string;
}): Promise<VerifyReport> {
  requireScope(ctx, 'read');
  requireSessionAccess(ctx, sid);
  return verifySegments(await storedSegments(ctx, sid), sid);
}

/** `GET /v1/sessions/{sid}/inspect` (scope `read`): the summary with its verify summary. @throws AppError `not_found` */
export async function inspectStored({
  ctx,
  sid,
}: {
  ctx: ServiceContext;
  sid: string;
}): Promise<SessionSummary> {
  requireScope(ctx, 'read');
  requireSessionAccess(ctx, sid);
  const segments = await storedSegments(ctx, sid);
  const report = await verifySegments(segments, sid);
  return inspectSession(segmentSources(segments), report);
}

/**
 * `GET /v1/sessions/{sid}/attribution` (scope `read`): every agent action and output with the messages it
 * is attributed to, the basis and the confidence (DESIGN §3, docs/attribution.md). @throws AppError `not_found`
 */
export async function attributionStored({
  ctx,
  sid,
}: {
  ctx: ServiceContext;
  sid: string;
}): Promise<{ sid: string; attributions: Attribution[] }> {
  requireScope(ctx, 'read');
  requireSessionAccess(ctx, sid);
  const attributions: Attribution[] = [];
  for await (const a of attributeStream(mergeSegments(segmentSources(await storedSegments(ctx, sid)))))
    attributions.push(a);
  return { sid, attributions };
}

/**
 * Verify's report for the session page (lib/service/timeline/page.ts), kept a short while. Verify decodes every
 * event (most of a 10,000-event page's time, docs/timeline.md), and the page asks for it again on every
 * "Load more" and reload. A report is reused only while the session's segments have the same lengths (they
 * only grow) and for at most `VERIFY_KEPT_MS`, so a fault that changes stored bytes without changing their
 * length (a chunk digest mismatch) shows within that time. Only finished reports are kept: a report being
 * made belongs to its request, and stops with it when its client goes away (issue 8).
 */
import type { VerifyReport } from '../../log/analyse/verify.js';
import type { WriterRecord } from '../../store/index.js';
import { verifyStored } from '../analysis/verify.js';
import type { ServiceContext } from '../shared/context.js';

/** How long a report is reused for the same segment lengths. */
export const VERIFY_KEPT_MS = 30_000;
/** Reports kept at most (the oldest goes first). */
const KEPT = 200;

const REPORTS = new Map<string, { from: string; at: number; report: VerifyReport }>();

/**
 * `verifyStored` of `sid` (the caller has checked its scope and access), or the report made for the same
 * segment lengths less than `VERIFY_KEPT_MS` ago. `writers` are the session's writer records as read now.
 * @throws what `verifyStored` throws (the signal's reason once it aborts)
 */
export async function pageVerify(
  ctx: ServiceContext,
  sid: string,
  writers: readonly WriterRecord[],
  signal?: AbortSignal,
): Promise<VerifyReport> {
  const key = `${ctx.tenant}/${sid}`;
  const from = writers.map((w) => `${w.w}:${w.length}`).join(',');
  const known = REPORTS.get(key);
  if (known && known.from === from && Date.now() - known.at < VERIFY_KEPT_MS) return known.report;
  const at = Date.now();
  const report = await verifyStored({ ctx, sid, signal });
  REPORTS.delete(key);
  REPORTS.set(key, { from, at, report });
  if (REPORTS.size > KEPT) REPORTS.delete(REPORTS.keys().next().value!);
  return report;
}

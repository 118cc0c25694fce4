/**
 * What a board row shows beyond the session index, shared by the board (`getBoard`) and the overview
 * (`getOverview`): the session's work items with their freshness decided now, and its declared evidence's
 * verdict counts, computed again only when a report or a segment changed them.
 */

import type { VerdictCounts } from '../../contract/status.js';
import type { StatusRecord, WorkItem } from '../../store/index.js';
import type { ServiceContext } from '../shared/context.js';
import { checkedView } from '../status/get.js';
import { workView } from '../work/view.js';
import type { BoardSession } from './schemas.js';

/** Work items as a board row lists them (no history), freshness at `now`. */
export function workRows(items: WorkItem[], now: Date): BoardSession['work'] {
  return items.map((i) => {
    const { history: _, ...rest } = workView(i, now);
    return rest;
  });
}

/** The verdict counts last computed per session, with what they were computed from (LRU by insertion). */
const VERDICTS = new Map<string, { from: string; counts: Promise<VerdictCounts> }>();
const VERDICTS_KEPT = 2000;

/**
 * The verdict counts of a session's declared evidence (lib/service/status/get.ts). They change only when a
 * report is added (the record's version) or a segment grows (the session's bytes), so they are computed
 * again only then, and once: board reads at the same moment share the one computation in flight (five
 * reads after a report read a 108 MB transcript five times).
 */
export function verdicts(ctx: ServiceContext, status: StatusRecord, bytes: number): Promise<VerdictCounts> {
  const key = `${ctx.tenant}/${status.sid}`;
  const from = `${status.version}:${bytes}`;
  const known = knownVerdicts(ctx, status.sid, status.version, bytes);
  if (known) return known;
  const counts = checkedView(ctx, status).then((v) => v.evidence);
  VERDICTS.delete(key);
  VERDICTS.set(key, { from, counts });
  // A failed computation is not kept: the next read tries again.
  counts.catch(() => {
    if (VERDICTS.get(key)?.counts === counts) VERDICTS.delete(key);
  });
  if (VERDICTS.size > VERDICTS_KEPT) VERDICTS.delete(VERDICTS.keys().next().value!);
  return counts;
}

/**
 * The verdict counts already computed (or being computed) for the status record at `version` of session
 * `sid` and `bytes` of its segments, or null: how the board skips reading a status record it has the
 * verdicts of (issue 17.6: the session entry says which version its report copy is of).
 */
export function knownVerdicts(
  ctx: ServiceContext,
  sid: string,
  version: number,
  bytes: number,
): Promise<VerdictCounts> | null {
  const known = VERDICTS.get(`${ctx.tenant}/${sid}`);
  return known?.from === `${version}:${bytes}` ? known.counts : null;
}

/**
 * When a work lease that has not expired is still no evidence of activity (issue 25.5): the server's
 * freshness (lib/service/work/view.ts `freshnessOf`) and `hansard work status` (lib/client/work/status.ts, to
 * say why) decide it by the same rule.
 */
import { WORK_TTL } from './work.js';

/**
 * How far after the server's clock a renewal may be dated and still count, ms: the clocks of a
 * deployment's instances differ by milliseconds (one answering right after another renewed must not
 * flicker to unknown); a clock minutes or hours ahead is well past it.
 */
export const RENEWAL_AHEAD_TOLERANCE_MS = 5_000;

/**
 * Why a lease that has not expired at `now` (ms) is no evidence of activity: `renewed_ahead` (its
 * renewal is dated more than `RENEWAL_AHEAD_TOLERANCE_MS` after now), `too_long` (it runs more than the
 * longest TTL past its renewal, or the times do not parse); null when it counts. Both the server
 * (`freshnessOf`) and `hansard work status` (to say why) use it.
 */
export function leaseDoubt(
  lease: { lease_expires_at: string; last_heartbeat_at: string },
  now: number,
): 'renewed_ahead' | 'too_long' | null {
  const expires = Date.parse(lease.lease_expires_at);
  const renewed = Date.parse(lease.last_heartbeat_at);
  if (!Number.isFinite(expires) || !Number.isFinite(renewed)) return 'too_long';
  if (renewed - now > RENEWAL_AHEAD_TOLERANCE_MS) return 'renewed_ahead';
  if (expires - renewed > WORK_TTL.max * 1000) return 'too_long';
  return null;
}

/**
 * A work item as answered, with its freshness decided at the time of the answer (seed 004 "Two
 * observations, two authorities"; issue 13 item 3): `observed` while the lease has not expired, `unknown`
 * once it has (absence or expiry is never idle, finished or abandoned), `stopped` after a stop.
 *
 * A lease is evidence of activity only as a renewal dated at or before now (issue 25.5): one renewed
 * after the server's clock (by an instance whose clock ran ahead, or a clock set back since) reads
 * `unknown` whatever its expiry, and so does one longer than any TTL (24 h) past its renewal, which no
 * write makes. Otherwise a clock 2 h ahead would keep a 15 min lease observed for 2 h 15 min.
 */
import type { Freshness, WorkSummary, WorkView } from '../../contract/work.js';
import { leaseDoubt } from '../../contract/work-lease.js';
import type { WorkItem } from '../../store/index.js';

/** The freshness of `item` at `now`. */
export function freshnessOf(item: WorkItem, now: Date): Freshness {
  const expires = Date.parse(item.lease_expires_at);
  const live = now.getTime() < expires && leaseDoubt(item, now.getTime()) === null;
  const shown = item.state === 'stopped' ? 'stopped' : live ? 'observed' : 'unknown';
  return {
    shown,
    lease_expires_at: item.lease_expires_at,
    last_heartbeat_at: item.last_heartbeat_at,
    last_reported: item.last_reported as Freshness['last_reported'],
    as_of: now.toISOString(),
  };
}

/** `item` as the API answers it (`WorkView`), freshness at `now`. */
export function workView(item: WorkItem, now: Date): WorkView {
  return { ...workSummary(item, now), history: item.history as WorkView['history'] };
}

/** `item` as `GET /v1/work` lists it (`WorkSummary`: no history), freshness at `now`. */
export function workSummary(item: WorkItem, now: Date): WorkSummary {
  return {
    id: item.id,
    session: item.session,
    system: item.system,
    actor: item.actor,
    subject: item.subject as WorkView['subject'],
    mode: item.mode,
    summary: item.summary,
    ttl_seconds: item.ttl_seconds,
    state: item.state,
    outcome: item.outcome,
    waiting_on: item.waiting_on,
    freshness: freshnessOf(item, now),
    started_at: item.started_at,
  };
}

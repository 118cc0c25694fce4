/**
 * A work item as answered, with its freshness decided at the time of the answer (seed 004 "Two
 * observations, two authorities"; issue 13 item 3): `observed` while the lease has not expired, `unknown`
 * once it has (absence or expiry is never idle, finished or abandoned), `stopped` after a stop.
 */
import type { WorkItem } from '../store/index.js';
import type { Freshness, WorkSummary, WorkView } from './work-schemas.js';

/** The freshness of `item` at `now`. */
export function freshnessOf(item: WorkItem, now: Date): Freshness {
  const expires = Date.parse(item.lease_expires_at);
  const shown = item.state === 'stopped' ? 'stopped' : now.getTime() < expires ? 'observed' : 'unknown';
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

/**
 * The watches of the outbox (issue 28 item 1), looked at when due, before anything is sent:
 * - a **lease watch** fires `work.unknown` when the item's lease did expire (freshness `unknown`, seed 004),
 *   follows a renewed lease to its new expiry, and ends with a stopped item;
 * - a **claims watch** checks a report's declared command and test claims against the transcript as
 *   stored then (the same checks `GET …/status` makes, lib/service/status/get.ts) and fires
 *   `claim.unsupported` when one is `unsupported`: the record refutes it. A claim the record cannot decide
 *   (`unchecked`) fires nothing.
 */
import type { OutboxEvent, TokenRecord } from '../../store/index.js';
import type { ServiceContext } from '../shared/context.js';
import { checkedView } from '../status/get.js';
import { freshnessOf } from '../work/view.js';
import type { AlertDeps } from './deps.js';
import { leaseExpiryId } from './events.js';

/** What a due watch comes to: nothing, the same watch later, or an event to deliver. */
export type WatchOutcome =
  | { kind: 'drop' }
  | { kind: 'later'; due_at: string }
  | { kind: 'fire'; id: string; at: string; data: Record<string, unknown> };

/** The watch of `e` looked at now. */
export async function lookAt(deps: AlertDeps, e: OutboxEvent): Promise<WatchOutcome> {
  if (e.watch?.work_id !== undefined) return lookAtLease(deps, e, e.watch.work_id);
  if (e.watch?.status_version !== undefined) return lookAtClaims(deps, e);
  return { kind: 'drop' };
}

async function lookAtLease(deps: AlertDeps, e: OutboxEvent, workId: string): Promise<WatchOutcome> {
  const item = await deps.state.getWork(e.tenant, workId);
  if (!item || item.state === 'stopped') return { kind: 'drop' };
  const now = deps.now();
  const fresh = freshnessOf(item, now);
  if (fresh.shown === 'observed') return { kind: 'later', due_at: item.lease_expires_at };
  return {
    kind: 'fire',
    // Of this expiry: two watches of one item (a renewal raced the worker) fire one event.
    id: leaseExpiryId(e.tenant, workId, item.lease_expires_at),
    at: [item.lease_expires_at, now.toISOString()].sort()[0]!,
    data: {
      work_id: item.id,
      actor: item.actor,
      system: item.system,
      mode: item.mode,
      summary: item.summary,
      lease_expired_at: item.lease_expires_at,
      last_heartbeat_at: item.last_heartbeat_at,
    },
  };
}

/** The caller a watch reads as: the service itself, reading one tenant (never a client's token). */
function serviceCaller(tenant: string, at: string): TokenRecord {
  return {
    id: 'tok_00000000000000000000000000',
    tenant,
    hash: '',
    scopes: ['read'],
    session: null,
    label: 'alerts',
    created_at: at,
    expires_at: null,
    revoked_at: null,
    last_used_at: null,
    parent: null,
    root: 'tok_00000000000000000000000000',
  };
}

/** Most unsupported claims an event lists (it says how many there were). */
const MAX_LISTED = 4;

async function lookAtClaims(deps: AlertDeps, e: OutboxEvent): Promise<WatchOutcome> {
  if (!e.sid) return { kind: 'drop' };
  const record = await deps.state.getStatus(e.tenant, e.sid);
  if (!record) return { kind: 'drop' };
  const now = deps.now();
  const ctx: ServiceContext = {
    tenant: e.tenant,
    caller: serviceCaller(e.tenant, now.toISOString()),
    segments: deps.segments,
    state: deps.state,
    now: deps.now,
  };
  const view = await checkedView(ctx, record);
  // The report the watch is of: the one kept with its time and reporter (retention may have dropped it).
  const report = view.history.find(
    (h, i) => h.reported_at === e.data.report_at && record.reports[i]?.reported_by === e.data.reported_by,
  );
  if (!report) return { kind: 'drop' };
  const items = report.events.flatMap((ev) =>
    ev.evidence
      .filter((i) => i.type === 'command' || i.type === 'test')
      .map((i) => ({ kind: ev.kind, item: i })),
  );
  const unsupported = items.filter((x) => x.item.check.verdict === 'unsupported');
  if (unsupported.length === 0) return { kind: 'drop' };
  return {
    kind: 'fire',
    id: e.id,
    at: e.at,
    data: {
      report_at: e.data.report_at,
      note: e.data.note,
      claims: items.length,
      unsupported: unsupported.length,
      items: unsupported.slice(0, MAX_LISTED).map(({ kind, item }) => ({
        kind,
        type: item.type,
        ref: item.ref,
        reason: item.check.reason,
        rests_on: item.check.rests_on,
      })),
    },
  };
}

/**
 * The records the alerts contract (./alerts.contract.ts) writes: targets, outbox events and deliveries,
 * valid as lib/store/alerts.ts has them, with fields of several JSON shapes.
 */
import { newId } from '../../../lib/log/format/ids.js';
import type { AlertDelivery, AlertTarget, AttemptResult, OutboxEvent } from '../../../lib/store/index.js';
import { at } from './records.js';

/** A fresh ULID. */
export const ulid = (): string => newId('e').slice(2);

/** An alert target of `tenant` made at time `when`, at version 1. */
export function targetOf(tenant: string, when: number, over: Partial<AlertTarget> = {}): AlertTarget {
  return {
    tenant,
    id: `at_${ulid()}`,
    url: 'https://hooks.example.com/hansard?x=1',
    format: 'standard',
    events: ['session.blocked', 'work.unknown'],
    agents: ['claude-code'],
    after_seconds: 0,
    label: 'naïve café ✓',
    secrets: [{ sealed: 'sealed:abc', until: null }],
    created_at: at(when),
    created_by: 'tok_ADMIN',
    version: 1,
    ...over,
  };
}

/** An outbox event of `tenant` of time `when`, due then. */
export function eventOf(tenant: string, when: number, over: Partial<OutboxEvent> = {}): OutboxEvent {
  return {
    tenant,
    id: `msg_${ulid()}`,
    kind: 'session.blocked',
    sid: newId('s'),
    at: at(when),
    due_at: at(when),
    data: { state: 'blocked', note: 'waiting on review ✓', nested: { list: [1, [2]] }, none: null },
    agents: ['claude-code'],
    watch: null,
    only_target: null,
    ...over,
  };
}

/** The pending delivery of `e` to target `target`, due at `e.at` (plus `after` seconds). */
export function deliveryOf(e: OutboxEvent, target: string, after = 0): AlertDelivery {
  return {
    tenant: e.tenant,
    target_id: target,
    event_id: e.id,
    kind: e.kind,
    sid: e.sid,
    order: `${e.at}#${e.id}`,
    status: 'pending',
    attempts: 0,
    next_at: new Date(Date.parse(e.at) + after * 1000).toISOString(),
    created_at: e.at,
    claimed_until: null,
    last_status: null,
    last_error: null,
    delivered_at: null,
    skipped_reason: null,
    event: { at: e.at, data: e.data },
    after_seconds: after,
  };
}

/** The result of an attempt that delivered `d` at time `when`. */
export const delivered = (d: AlertDelivery, when: number): AttemptResult => ({
  status: 'delivered',
  attempts: d.attempts + 1,
  next_at: null,
  last_status: 204,
  last_error: null,
  delivered_at: at(when),
  skipped_reason: null,
});

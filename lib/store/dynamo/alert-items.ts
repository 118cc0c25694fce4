/**
 * The alert items of `DynamoStateStore` (issue 28, dynamo/alerts.ts; the layout: dynamo/schema.ts): an
 * outbox event's Put for the transaction of the change that fires it, and deliveries ⇄ items. A delivery's
 * fields are attributes (nulls absent, so conditions read them), the event as sent one JSON attribute;
 * a finished one has no `next_at` and the table's TTL 30 days out. Items are read back through the port's
 * schemas (`parseDelivery`, `parseEvent`, `parseTarget`): one that does not parse is null, and the
 * listings leave it out, so one damaged item never stops the others.
 */
import { AlertDelivery, AlertTarget, OutboxEvent } from '../alerts.js';
import { compact, type Item, type TransactItem } from './items.js';
import { GSI1_PK, GSI1_SK, gsiKeys, type ItemKey, keys, TTL_ATTRIBUTE } from './schema.js';

/** How long a finished delivery is kept (TTL cleanup), seconds: 30 days. */
export const FINISHED_KEPT_SECONDS = 30 * 86_400;

/** The statuses a delivery ends in. */
export const FINAL = new Set(['delivered', 'dead', 'skipped']);

/**
 * The Put of an outbox event, for the transaction of the change that fires it (putStatus, putWork,
 * claimKey, advanceWriter). Unconditional: the id is derived from the change, so a second write is the
 * same item, and a condition must not cancel the change.
 * @throws ZodError when `e` does not fit `OutboxEvent`
 */
export function outboxPut(table: string, e: OutboxEvent): TransactItem {
  const event = OutboxEvent.parse(e);
  return {
    Put: {
      TableName: table,
      Item: {
        ...keys.alertOutbox(event.tenant, event.id),
        tenant: event.tenant,
        id: event.id,
        due_at: event.due_at,
        event_json: JSON.stringify(event),
      },
    },
  };
}

/**
 * The Puts of `events` for a change's transaction (`outboxPut`), one per (tenant, id): a transaction may
 * not touch one item twice, and a second write of an id is the same event.
 */
export function outboxPuts(table: string, events: readonly OutboxEvent[] | undefined): TransactItem[] {
  return firstOf(events ?? [], (e) => `${e.tenant}#${e.id}`).map((e) => outboxPut(table, e));
}

/** The first of `list` of each key, in order: what SQLite's `INSERT OR IGNORE` of them keeps. */
export function firstOf<T>(list: readonly T[], key: (t: T) => string): T[] {
  const once = new Map<string, T>();
  for (const t of list) if (!once.has(key(t))) once.set(key(t), t);
  return [...once.values()];
}

/** The key of a delivery: in its session's partition, its (target) queue's range in `order`. */
export function deliveryKey(d: AlertDelivery): ItemKey {
  return keys.alertDelivery(d.tenant, d.sid, d.target_id, d.order, d.event_id);
}

/** A delivery's item: its fields as attributes (nulls absent), the event as sent as JSON. */
export function deliveryItem(d: AlertDelivery): Item {
  const { event, ...fields } = d;
  const final = FINAL.has(d.status);
  return compact({
    ...deliveryKey(d),
    [GSI1_PK]: gsiKeys.alertTargetPk(d.tenant, d.target_id),
    [GSI1_SK]: `${d.order}#${d.event_id}`,
    ...fields,
    next_at: final ? null : d.next_at,
    event_json: JSON.stringify(event),
    ...(final ? { [TTL_ATTRIBUTE]: Math.floor(Date.now() / 1000) + FINISHED_KEPT_SECONDS } : {}),
  });
}

/** A delivery item as the port's delivery, or null when it does not parse as one (a damaged item). */
export function parseDelivery(item: Item): AlertDelivery | null {
  const nullable = (k: string): unknown => (item[k] === undefined ? null : item[k]);
  const r = AlertDelivery.safeParse({
    tenant: item.tenant,
    target_id: item.target_id,
    event_id: item.event_id,
    kind: item.kind,
    sid: nullable('sid'),
    order: item.order,
    status: item.status,
    attempts: item.attempts,
    next_at: nullable('next_at'),
    created_at: item.created_at,
    claimed_until: nullable('claimed_until'),
    last_status: nullable('last_status'),
    last_error: nullable('last_error'),
    delivered_at: nullable('delivered_at'),
    skipped_reason: nullable('skipped_reason'),
    event: json(item.event_json),
    after_seconds: item.after_seconds,
  });
  return r.success ? r.data : null;
}

/** An outbox item as the port's event (its `due_at` the attribute's: a reschedule moves it), or null. */
export function parseEvent(item: Item): OutboxEvent | null {
  const stored = json(item.event_json);
  if (typeof stored !== 'object' || stored === null) return null;
  const r = OutboxEvent.safeParse({ ...stored, due_at: item.due_at });
  return r.success ? r.data : null;
}

/** A target item's record, or null when it does not parse as one. */
export function parseTarget(item: Item): AlertTarget | null {
  const r = AlertTarget.safeParse(json(item.target_json));
  return r.success ? r.data : null;
}

/** `value` parsed as JSON; undefined when it is not a string of JSON. */
function json(value: unknown): unknown {
  if (typeof value !== 'string') return undefined;
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}

/** Code-unit order, as SQLite's default BINARY collation compares ASCII text. */
export function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

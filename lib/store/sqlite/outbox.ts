/**
 * The outbox write of `SqliteStateStore` (issue 28, DESIGN §6d "one outbox pattern"): a change's alert
 * events inserted in the change's own transaction (sqlite/status-work.ts, sqlite/advance.ts) and by
 * `putOutboxEvents` (sqlite/alerts.ts, whose tables these are). A file of its own so that those modules
 * depend on it and not on one another.
 */
import { OutboxEvent } from '../alerts.js';

/** The statement cache it writes through: the store's (`SqlitePrimitives.q`, `AdvancePrimitives.q`). */
export interface OutboxStatements {
  q(sql: string): { run(...params: unknown[]): unknown };
}

/**
 * Writes `events` to the outbox; an event whose (tenant, id) is there already is left as it is. Inside
 * the caller's transaction (a change's events go with it, or not at all).
 * @throws ZodError when an event does not fit `OutboxEvent` (the caller's transaction rolls back)
 */
export function insertOutbox(x: OutboxStatements, events: readonly OutboxEvent[] | undefined): void {
  if (!events?.length) return;
  const st = x.q('INSERT OR IGNORE INTO alert_outbox (tenant, id, due_at, event) VALUES (?, ?, ?, ?)');
  for (const e of events) {
    const event = OutboxEvent.parse(e);
    st.run(event.tenant, event.id, event.due_at, JSON.stringify(event));
  }
}

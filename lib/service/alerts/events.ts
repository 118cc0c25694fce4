/**
 * The alert events of a change (issue 28 item 1): what each kind carries, and its id. An event is written
 * to the outbox in the same transaction as the change that fires it (lib/store/alerts.ts), so these are
 * pure functions of the change: the status report (`statusEvents`), a work item's lease (`leaseWatch`),
 * a budget or quota crossing, a damaged record. Payloads are small: ids, states, counts and at most the
 * report's note (≤ 240 characters, seed 000), never transcript content.
 *
 * Ids are derived from the change (`eventId`), so a change written twice (a retry) fires once, and every
 * delivery attempt of an event carries the same `webhook-id`: the receiver tells duplicates apart by it.
 */
import { createHash } from 'node:crypto';
import type { AlertKind } from '../../contract/alerts.js';
import type { OutboxEvent, StatusRecord, WorkItem } from '../../store/index.js';

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

/**
 * `msg_` + 26 Crockford base32 characters (130 bits) of the SHA-256 of `parts` (joined by NUL): the same
 * parts give the same id, in any process.
 */
export function eventId(...parts: string[]): string {
  const digest = createHash('sha256').update(parts.join('\0')).digest();
  let out = '';
  let bits = 0;
  let value = 0;
  for (const byte of digest) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5 && out.length < 26) {
      out += CROCKFORD[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
    value &= (1 << bits) - 1;
    if (out.length === 26) break;
  }
  return `msg_${out}`;
}

/** The states whose start fires an event, and the kind each fires. */
const STATE_KINDS: Record<string, AlertKind> = {
  blocked: 'session.blocked',
  needs_review: 'session.needs_review',
  done: 'session.done',
};

/**
 * How long after a report its declared claims are checked, ms: the transcript that supports a claim may
 * reach the server after the report that declares it (the hooks ship at turn ends, uploads lag).
 */
export const CLAIM_CHECK_AFTER_MS = 60_000;

/** Whether a report declares a claim the transcript is checked for (a command or a test run). */
function hasCheckedClaims(events: unknown[]): boolean {
  return events.some((e) =>
    ((e as { evidence?: { type?: string }[] }).evidence ?? []).some(
      (i) => i.type === 'command' || i.type === 'test',
    ),
  );
}

/** An outbox event with the fields most kinds leave at their defaults. */
export function outboxEvent(
  e: Pick<OutboxEvent, 'tenant' | 'id' | 'kind' | 'sid' | 'at' | 'data'> & Partial<OutboxEvent>,
): OutboxEvent {
  return { due_at: e.at, agents: [], watch: null, only_target: null, ...e };
}

/**
 * The events of a status report about to be stored as `next` (after `prev`): `session.{state}` when the
 * report starts a run of blocked, needs_review or done (a report repeating the state fires nothing: the
 * run's `state_since` is unchanged), and a claims watch when it declares command or test evidence, looked
 * at later (lib/service/alerts/watch.ts) to fire `claim.unsupported` if the record
 * refutes one (`CLAIM_CHECK_AFTER_MS`). Ids are of the record's version: a retried write of the same version fires once.
 */
export function statusEvents(prev: StatusRecord | null, next: StatusRecord): OutboxEvent[] {
  const out: OutboxEvent[] = [];
  const last = next.reports.at(-1)!;
  const changed = !prev || prev.reports.at(-1)?.state !== last.state;
  const kind = STATE_KINDS[last.state];
  if (kind && changed) {
    out.push(
      outboxEvent({
        tenant: next.tenant,
        id: eventId(next.tenant, next.sid, 'status', String(next.version)),
        kind,
        sid: next.sid,
        at: last.reported_at,
        data: {
          state: last.state,
          since: next.state_since ?? last.reported_at,
          note: last.note,
          reported_by: last.reported_by,
        },
      }),
    );
  }
  if (hasCheckedClaims(last.events)) {
    out.push(
      outboxEvent({
        tenant: next.tenant,
        id: eventId(next.tenant, next.sid, 'claims', String(next.version)),
        kind: 'claim.unsupported',
        sid: next.sid,
        at: last.reported_at,
        due_at: new Date(Date.parse(last.reported_at) + CLAIM_CHECK_AFTER_MS).toISOString(),
        data: { report_at: last.reported_at, reported_by: last.reported_by, note: last.note },
        watch: { status_version: next.version },
      }),
    );
  }
  return out;
}

/**
 * The lease watch of a work item that holds a live lease it did not hold before (started, or renewed after
 * it had expired): due at the lease's expiry, when the worker reads the item again (watch.ts) and fires
 * `work.unknown` if the lease did expire, or looks again at the renewed expiry. Null when the item is
 * stopped or was already watched (its previous write held a live lease: the watch follows renewals).
 */
export function leaseWatch(prev: WorkItem | null, next: WorkItem, now: Date): OutboxEvent | null {
  if (next.state === 'stopped') return null;
  const watched =
    prev !== null && prev.state !== 'stopped' && Date.parse(prev.lease_expires_at) > now.getTime();
  if (watched) return null;
  return outboxEvent({
    tenant: next.tenant,
    id: eventId(next.tenant, next.id, 'lease-watch', String(next.version)),
    kind: 'work.unknown',
    sid: next.session,
    at: next.updated_at,
    due_at: next.lease_expires_at,
    data: {},
    watch: { work_id: next.id },
  });
}

/** The id of the `work.unknown` of one expiry: two watches of one item that see it fire one event. */
export function leaseExpiryId(tenant: string, workId: string, expiresAt: string): string {
  return eventId(tenant, workId, 'unknown', expiresAt);
}

/** What a damaged record's event says. */
export interface Damage {
  sid: string;
  /** the writer whose segment it is about, when one */
  w: string | null;
  /** `data_loss`, `chunk_digest_mismatch`, `verify_errors`, `digest_fork` */
  what: string;
  /** one line */
  detail: string;
  /** what makes it one finding: the same key fires once */
  key: string;
}

/** The `record.damaged` event of `damage` (claimed once by `damage.key`, lib/service/alerts/damage.ts). */
export function damageEvent(tenant: string, at: string, damage: Damage): OutboxEvent {
  return outboxEvent({
    tenant,
    id: eventId(tenant, damage.sid, 'damage', damage.key),
    kind: 'record.damaged',
    sid: damage.sid,
    at,
    data: { writer: damage.w, what: damage.what, detail: damage.detail.slice(0, 300) },
  });
}

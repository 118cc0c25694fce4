/**
 * The alert events recorded once by a claimed key (issue 28 item 1): `quota.near` (storage), `budget.crossed`
 * (usage and cost, issue 27) and `record.damaged`. Each is claimed with `claimKey`, and its outbox event is
 * written in the claim's transaction and only by the claim that won (lib/store/idempotency.ts): of any
 * number of processes that see the same crossing, one fires it. All of them are best effort for the
 * caller: a store that fails here never fails the chunk, the verify or the digest that saw the crossing.
 */
import type { IdempotencyStore } from '../../store/index.js';
import { type Damage, damageEvent, eventId, outboxEvent } from './events.js';

/** The storage levels `quota.near` fires at, in percent of the quota (100: a chunk was refused). */
export const QUOTA_LEVELS = [80, 95, 100] as const;

/** The claim scope of a tenant's quota events. */
const QUOTA_SCOPE = 'alerts:quota-near';
/** The claim scope of damaged-record events. */
const DAMAGE_SCOPE = 'alerts:record-damaged';

/**
 * Fires `quota.near` for each level of `QUOTA_LEVELS` that `usedBytes` has reached of `quotaBytes` and no
 * process fired yet for this quota (a larger quota set later fires afresh). Never throws.
 */
export async function noteStorage(
  state: IdempotencyStore,
  tenant: string,
  usedBytes: number,
  quotaBytes: number,
  at: string,
): Promise<void> {
  for (const level of QUOTA_LEVELS) {
    if (usedBytes * 100 < level * quotaBytes) continue;
    const key = `${quotaBytes}:${level}`;
    const event = outboxEvent({
      tenant,
      id: eventId(tenant, 'quota', key),
      kind: 'quota.near',
      sid: null,
      at,
      data: { level, used_bytes: usedBytes, quota_bytes: quotaBytes },
    });
    try {
      await state.claimKey(tenant, QUOTA_SCOPE, key, at, [event]);
    } catch {
      return; // the next chunk tries again
    }
  }
}

/** The `budget.crossed` event of a budget crossing `claimKey` records (lib/service/usage/budget.ts). */
export function budgetEvent(e: {
  tenant: string;
  month: string;
  level: number;
  monthly_budget_usd: number;
  month_cost_micros: number;
  at: string;
}) {
  return outboxEvent({
    tenant: e.tenant,
    id: eventId(e.tenant, 'budget', e.month, String(e.level)),
    kind: 'budget.crossed',
    sid: null,
    at: e.at,
    data: {
      month: e.month,
      level: e.level,
      monthly_budget_usd: e.monthly_budget_usd,
      month_cost_usd: e.month_cost_micros / 1_000_000,
    },
  });
}

/**
 * Fires `record.damaged` for `damage` once per `damage.key` (claimed, so a verify run again on the same
 * damage, or a retried chunk that meets the same loss, fires nothing new). Never throws.
 */
export async function noteDamage(
  state: IdempotencyStore,
  tenant: string,
  damage: Damage,
  at: string,
): Promise<void> {
  try {
    await state.claimKey(tenant, DAMAGE_SCOPE, `${damage.sid}:${damage.key}`, at, [
      damageEvent(tenant, at, damage),
    ]);
  } catch {
    // best effort: the damage stays on record (verify reports it); the alert waits for the next finding
  }
}

/**
 * The idempotency keys of a work item's semantic operations (checkpoint, wait, stop), remembered for the
 * item's whole life (issue 24 item 3; docs/work.md "API"), without the item growing without bound (a
 * DynamoDB item holds at most 400 KB):
 *
 * - the newest `MAX_APPLIED` keys live in the item itself (`WorkItem.applied`): written in the same
 *   conditional write as the operation, so two requests under one key cannot both apply it;
 * - an older key leaves the item as a claimed key (`IdempotencyStore.claimKey`, scope `work:applied:{id}`,
 *   value `{op} {hash} {at}`) BEFORE the write that drops it lands, so whoever reads the item after that
 *   write finds the key in the store (`IdempotencyStore.readClaim`, strongly consistent). Only keys already
 *   applied are ever claimed there: a crash between the claim and the write leaves the key in both.
 *
 * How long: the item's own keys as long as the item; claimed keys on SQLite for good, on DynamoDB at
 * least 30 days after they left the item (the claims' TTL; an item is removed 30 days after its last
 * write or lease). Before this, the item kept the last 50 and forgot the rest: a 51st-oldest key sent
 * again was applied a second time.
 */
import type { IdempotencyStore, WorkItem } from '../../store/index.js';

/** Keys kept in the item itself (the newest); older ones are claimed keys. */
export const MAX_APPLIED = 50;

/** One operation applied under a key. */
export type Applied = WorkItem['applied'][number];

/** The claim scope of item `id`'s keys that left it. */
export function appliedScope(id: string): string {
  return `work:applied:${id}`;
}

/**
 * The operation applied to `item` under `key`: from the item, else (when keys have left it,
 * `applied_archived` > 0) from the claimed keys; null when none was.
 * @throws the store's error
 */
export async function findApplied(
  state: IdempotencyStore,
  item: WorkItem,
  key: string,
): Promise<Applied | null> {
  const kept = item.applied.find((a) => a.key === key);
  if (kept) return kept;
  if (!item.applied_archived) return null;
  const held = await state.readClaim(item.tenant, appliedScope(item.id), key);
  return held === null ? null : parseClaim(key, held);
}

/**
 * Adds `entry` to `next.applied` (the item about to be written); the entries past the newest
 * `MAX_APPLIED` are claimed in the store first, oldest first, then dropped from the item and counted
 * in `applied_archived`. Safe to repeat for a write tried again: a claim of the same entry holds the
 * same value.
 * @throws the store's error (nothing is written then)
 */
export async function addApplied(state: IdempotencyStore, next: WorkItem, entry: Applied): Promise<void> {
  const all = [...next.applied, entry];
  const leaving = all.slice(0, Math.max(0, all.length - MAX_APPLIED));
  for (const a of leaving) await state.claimKey(next.tenant, appliedScope(next.id), a.key, claimOf(a));
  next.applied = all.slice(leaving.length);
  if (leaving.length > 0) next.applied_archived = (next.applied_archived ?? 0) + leaving.length;
}

function claimOf(a: Applied): string {
  return `${a.op} ${a.hash} ${a.at}`;
}

function parseClaim(key: string, value: string): Applied {
  const [op = '', hash = '', at = ''] = value.split(' ');
  return { key, op, hash, at };
}

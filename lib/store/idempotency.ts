/**
 * The idempotency port: keys claimed once within a scope (an `Idempotency-Key` within `work:start:{sid}`,
 * a work item's archived keys), by one conditional write. Part of the state store.
 */
import type { OutboxEvent } from './alerts.js';

/** Claimed keys. */
export interface IdempotencyStore {
  /**
   * Claims `key` within `scope` (both free text, e.g. an `Idempotency-Key` within `work:start:{sid}`) for
   * `value`, unless it is claimed already: one conditional write, so of any number of concurrent claims
   * of one key, in any number of processes, exactly one wins and every caller is answered the same value.
   * A claim is kept at least 30 days (DynamoDB: removed by TTL after that; SQLite: kept).
   * `outbox` (alert events, lib/store/alerts.ts) is written in the same transaction as the claim, and only
   * when this call claimed the key: a crossing recorded once fires once.
   * @returns the value the key holds: `value` when this call claimed it, the first claimant's otherwise
   */
  claimKey(
    tenant: string,
    scope: string,
    key: string,
    value: string,
    outbox?: OutboxEvent[],
  ): Promise<string>;
  /**
   * The value `key` holds within `scope` (strongly consistent), or null when it is not claimed: a read
   * that claims nothing, for a claim made by another request (e.g. a work item's archived keys).
   */
  readClaim(tenant: string, scope: string, key: string): Promise<string | null>;
}

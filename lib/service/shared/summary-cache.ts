/**
 * The tenant's session summaries as the overview reads them (`SessionIndex.listSessionSummaries`), one
 * listing shared by every overview of the tenant asked within `SUMMARIES_MAX_AGE_MS` (a board open in many
 * browsers, each polling every second, reads the store about twice a second). A write through this
 * process (a chunk, a report) drops the tenant's listing, so it shows at once here; a write through
 * another process (another Lambda instance) shows within `SUMMARIES_MAX_AGE_MS` plus one listing.
 */
import type { SessionIndex, SessionSummary } from '../../store/index.js';

/** How old a shared listing may be when an overview takes it, in ms. */
export const SUMMARIES_MAX_AGE_MS = 500;

/** Listings in flight or recent, per store and tenant. */
const LISTINGS = new WeakMap<
  SessionIndex,
  Map<string, { started: number; list: Promise<SessionSummary[]> }>
>();

/**
 * The tenant's summaries from a listing started at most `maxAgeMs` ago and not dropped since (shared), or
 * from a new one. A failed listing is not kept.
 */
export function summaries(state: SessionIndex, tenant: string, maxAgeMs: number): Promise<SessionSummary[]> {
  let byTenant = LISTINGS.get(state);
  if (!byTenant) {
    byTenant = new Map();
    LISTINGS.set(state, byTenant);
  }
  const t = performance.now();
  const known = byTenant.get(tenant);
  if (known && t - known.started <= maxAgeMs) return known.list;
  // Stale tenants' entries go (a map of every tenant ever asked would only grow).
  for (const [k, v] of byTenant) if (t - v.started > SUMMARIES_MAX_AGE_MS) byTenant.delete(k);
  const list = state.listSessionSummaries(tenant);
  const entry = { started: t, list };
  byTenant.set(tenant, entry);
  list.catch(() => {
    if (byTenant.get(tenant) === entry) byTenant.delete(tenant);
  });
  return list;
}

/** Drops the tenant's shared listing: the next overview reads the store (after a write of this process). */
export function summariesChanged(state: SessionIndex, tenant: string): void {
  LISTINGS.get(state)?.delete(tenant);
}

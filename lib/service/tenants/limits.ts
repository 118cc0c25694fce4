/**
 * A tenant's limits in force (issue 17, items 1 and 3; DESIGN §6c "Limits … are set per tenant"): its own
 * storage quota and per-token request rate where its tenant record has them
 * (`TenantStore.getTenantSettings`, set by `hansard tenant set`), else the deployment's
 * (`Limits.tenantQuotaBytes`; the rate limiter's own config).
 *
 * The record is read at most every `Limits.tenantSettingsMaxAgeMs` (30 s by default) per process, state
 * store and tenant, and asks while a read is in flight share it: ingest's quota check and the rate
 * limiter ask on every request, and must not pay a read each. So a change made by the operator (another
 * process) applies here within 30 s, as the usage figure the quota is checked against is itself up to
 * 30 s old on DynamoDB (a soft quota, ADR 8).
 */

import { type Limits, resolveLimits } from '../../contract/limits.js';
import { DEFAULT_TENANT_SETTINGS, type TenantSettings, type TenantStore } from '../../store/index.js';

/** What ingest and the rate limiter hold a tenant to. */
export interface TenantLimits {
  /** bytes of segments the tenant may store in all; null: no quota */
  quotaBytes: number | null;
  /** whose quota `quotaBytes` is: the tenant's own (its record) or the deployment's */
  quotaFrom: 'tenant' | 'deployment';
  /**
   * requests a minute per token of the tenant, 0 for none limited; null: the deployment's rate (the
   * limiter's own config)
   */
  rateLimitPerMinute: number | null;
}

interface Cached {
  /** `performance.now()` when the read started */
  readAt: number;
  settings: Promise<TenantSettings>;
}

/** The settings read or being read, per state store (tests open many) and tenant. */
const CACHES = new WeakMap<TenantStore, Map<string, Cached>>();
/** Above this many tenants, entries past their age are dropped (a map of every tenant would only grow). */
const SWEEP_AT = 1_000;

/**
 * The tenant's settings from a read started at most `maxAgeMs` ago in this process, else from a new read
 * (shared by every ask until it ends). A tenant without a record reads as `DEFAULT_TENANT_SETTINGS`.
 * A failed read is not kept: the next ask reads again.
 * @throws what `TenantStore.getTenantSettings` throws (the store unreachable, a record edited into nonsense)
 */
export function tenantSettings(
  state: TenantStore,
  tenant: string,
  maxAgeMs: number,
): Promise<TenantSettings> {
  let byTenant = CACHES.get(state);
  if (!byTenant) {
    byTenant = new Map();
    CACHES.set(state, byTenant);
  }
  const now = performance.now();
  const known = byTenant.get(tenant);
  if (known && now - known.readAt < maxAgeMs) return known.settings;
  if (byTenant.size >= SWEEP_AT) {
    for (const [k, v] of byTenant) if (now - v.readAt >= maxAgeMs) byTenant.delete(k);
  }
  const entry: Cached = {
    readAt: now,
    settings: state.getTenantSettings(tenant).then((s) => s ?? DEFAULT_TENANT_SETTINGS),
  };
  byTenant.set(tenant, entry);
  entry.settings.catch(() => {
    if (byTenant.get(tenant) === entry) byTenant.delete(tenant);
  });
  return entry.settings;
}

/**
 * The limits `ctx.tenant` is held to: its own values where its record has them, the deployment's
 * (`ctx.limits`, with `DEFAULT_LIMITS` under them) for the rest. Cached as `tenantSettings` says.
 * @throws what `tenantSettings` throws
 */
export async function tenantLimits(ctx: {
  state: TenantStore;
  tenant: string;
  limits?: Partial<Limits> | undefined;
}): Promise<TenantLimits> {
  const limits = resolveLimits(ctx.limits);
  const own = await tenantSettings(ctx.state, ctx.tenant, limits.tenantSettingsMaxAgeMs);
  return {
    quotaBytes: own.quota_bytes ?? limits.tenantQuotaBytes,
    quotaFrom: own.quota_bytes === null ? 'deployment' : 'tenant',
    rateLimitPerMinute: own.rate_limit_per_minute,
  };
}

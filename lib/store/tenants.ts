/**
 * A tenant's own limits, kept on its tenant record (issue 17.1 and 17.3; DESIGN §6c "Limits … are set
 * per tenant"): its storage quota and its per-token request rate, each null for "the deployment's" (what
 * `hansard serve --quota-bytes` / `--rate-limit` or the Lambda environment set for every tenant). Both
 * adapters read and write them through `StateStore.getTenantSettings` / `setTenantSettings` and check
 * what they read against `TenantSettingsSchema`, so a record edited by hand into something else fails
 * loudly instead of quietly becoming a limit. What the values mean is the service's
 * (lib/service/tenants/limits.ts); the store keeps them as given.
 */
import { z } from 'zod';

/** Most requests a minute a tenant's tokens may be allowed (the limiters' own bound, lib/ratelimit). */
export const MAX_RATE_LIMIT_PER_MINUTE = 1_000_000;
/** Largest monthly budget a tenant may set, US dollars. */
export const MAX_MONTHLY_BUDGET_USD = 1_000_000_000;

/** A tenant's settings as stored (absent attributes and NULL columns read as null). */
export const TenantSettingsSchema = z.strictObject({
  /** bytes of segments the tenant may store in all; null: the deployment's quota */
  quota_bytes: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).nullable(),
  /** requests a minute per token of the tenant, 0 for none limited; null: the deployment's rate */
  rate_limit_per_minute: z.number().int().min(0).max(MAX_RATE_LIMIT_PER_MINUTE).nullable(),
  /**
   * the tenant's monthly budget in US dollars at list price (issue 27 item 4: crossing 80 % and 100 % of it
   * is recorded once a month, lib/service/usage/budget.ts); absent: none (no deployment default)
   */
  monthly_budget_usd: z.number().positive().max(MAX_MONTHLY_BUDGET_USD).optional(),
  /** when they were last set (ISO 8601); null: never */
  updated_at: z.string().nullable(),
});
export type TenantSettings = z.infer<typeof TenantSettingsSchema>;

/**
 * What `setTenantSettings` changes: a field given is set (null: back to the deployment's), a field left
 * out keeps its value.
 */
export const TenantSettingsChangeSchema = TenantSettingsSchema.pick({
  quota_bytes: true,
  rate_limit_per_minute: true,
})
  .extend({ monthly_budget_usd: z.number().positive().max(MAX_MONTHLY_BUDGET_USD).nullable() })
  .partial();
export type TenantSettingsChange = z.infer<typeof TenantSettingsChangeSchema>;

/** The settings fields a change may set. */
export const SETTINGS_FIELDS = ['quota_bytes', 'rate_limit_per_minute', 'monthly_budget_usd'] as const;

/**
 * `change` checked against `TenantSettingsChangeSchema`, and the fields it gives (each to be set, or
 * back to the deployment's when null); a field it leaves out is kept. What both adapters'
 * `setTenantSettings` write from.
 * @throws ZodError for a change the schema refuses
 */
export function settingsChange(change: TenantSettingsChange): {
  valid: TenantSettingsChange;
  fields: Array<(typeof SETTINGS_FIELDS)[number]>;
} {
  const valid = TenantSettingsChangeSchema.parse(change);
  return { valid, fields: SETTINGS_FIELDS.filter((f) => f in valid) };
}

/** The settings of a tenant nobody set anything for: the deployment's everywhere. */
export const DEFAULT_TENANT_SETTINGS: TenantSettings = {
  quota_bytes: null,
  rate_limit_per_minute: null,
  updated_at: null,
};

/**
 * The settings read from `tenant`'s record (missing fields read as null).
 * @throws Error naming the tenant and the bad field when the record holds something the schema refuses
 */
export function parseTenantSettings(tenant: string, stored: Record<string, unknown>): TenantSettings {
  const r = TenantSettingsSchema.safeParse({
    quota_bytes: stored.quota_bytes ?? null,
    rate_limit_per_minute: stored.rate_limit_per_minute ?? null,
    // absent unless set, so settings read before budgets existed keep their shape
    ...(stored.monthly_budget_usd != null ? { monthly_budget_usd: stored.monthly_budget_usd } : {}),
    updated_at: stored.updated_at ?? null,
  });
  if (r.success) return r.data;
  const issue = r.error.issues[0]!;
  throw new Error(
    `the record of tenant ${tenant} holds an invalid ${issue.path.join('.')} (${issue.message}): set it again with hansard tenant set`,
  );
}

/** A tenant's stored bytes (for the storage quota, DESIGN §7). */
export const TenantUsage = z.object({
  /** bytes of segments, every writer of every session */
  bytes: z.number(),
});
export type TenantUsage = z.infer<typeof TenantUsage>;

/** Tenants: their records, their own limits and what they store. */
export interface TenantStore {
  /** @throws StateConflictError when the tenant exists */
  createTenant(tenant: string, at: string): Promise<void>;
  tenantExists(tenant: string): Promise<boolean>;
  /**
   * The tenant's own limits from its tenant record (`TenantSettingsSchema` above; issue 17.1, 17.3), strongly
   * consistent; a tenant nothing was set for reads all null (the deployment's). Null when there is no
   * such tenant. Callers on a request path cache it (lib/service/tenants/limits.ts).
   * @throws Error when the record holds values `TenantSettingsSchema` refuses
   */
  getTenantSettings(tenant: string): Promise<TenantSettings | null>;
  /**
   * Applies `change` to the tenant's settings (a field given is set, null back to the deployment's; one
   * left out is kept) and stamps them `at` (ISO 8601), in one conditional write. Returns the settings
   * after it, or null when there is no such tenant (nothing is written then).
   * @throws ZodError for a change `TenantSettingsChangeSchema` refuses, before anything is written
   */
  setTenantSettings(tenant: string, change: TenantSettingsChange, at: string): Promise<TenantSettings | null>;

  /**
   * What a tenant stores: the sum of its writers' indexed lengths, kept as a running total by
   * `advanceWriter` (so it costs one small read, not a scan). A tenant with nothing stored has 0 bytes.
   * For the soft storage quota: DynamoDB answers from a figure of this process at most 30 s old, plus
   * this process's own advances since (issue 17.1), so other processes' chunks may be missing from it.
   */
  tenantUsage(tenant: string): Promise<TenantUsage>;
}

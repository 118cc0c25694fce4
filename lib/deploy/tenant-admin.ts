/**
 * The operator's access to a deployment's tenants (DESIGN §4, §6c): `hansard tenant create`,
 * `admin-token`, `set` and `show` work on the state store itself, not through a server: the DynamoDB
 * table of an AWS deployment (with the caller's AWS credentials, the SDK's default provider chain) or the
 * SQLite file of a local data directory. The CLI reaches the store only through here
 * (lib/client/cli/tenant-store.ts parses the options), and loads SQLite or the AWS SDK only when a command runs.
 */
import { ensureTenant, mintRecoveryAdmin } from '../service/tenants/bootstrap.js';
import type { CreatedToken } from '../service/tokens/create.js';
import {
  StateConflictError,
  type StateStore,
  type TenantSettings,
  type TenantSettingsChange,
} from '../store/index.js';

export type { CreatedToken } from '../service/tokens/create.js';
export { isTenantName } from '../store/keys.js';
export {
  MAX_MONTHLY_BUDGET_USD,
  MAX_RATE_LIMIT_PER_MINUTE,
  type TenantSettings,
  type TenantSettingsChange,
} from '../store/tenants.js';

/** Which state store: a DynamoDB table (`region`, `endpoint` optional) or a local data directory. */
export type TenantStoreAt = { table: string; region?: string; endpoint?: string } | { data: string };

/** What the operator's tenant commands do on a state store. Close it when done. */
export interface TenantAdmin {
  /**
   * Tenant `name` with its first admin token (its secret shown once); null when the tenant exists already,
   * also when someone else created it between the check and the write.
   */
  createTenant(name: string, now: Date): Promise<CreatedToken | null>;
  /** A new admin token for the existing tenant `name` (`mintRecoveryAdmin`); null when there is none. */
  recoverAdmin(name: string, now: Date): Promise<CreatedToken | null>;
  /** The tenant's own limits; null when there is no such tenant. */
  getSettings(name: string): Promise<TenantSettings | null>;
  /** Applies `change` at `at` (ISO 8601) and answers the settings after it; null when there is no such tenant. */
  setSettings(name: string, change: TenantSettingsChange, at: string): Promise<TenantSettings | null>;
  close(): Promise<void>;
}

/**
 * The state store `at` names, opened for the operator's commands.
 * @throws the AWS SDK's errors for a table (a missing region, credentials, access) and the filesystem's
 *   or better-sqlite3's for a data directory, as the stores throw them
 */
export async function openTenantAdmin(at: TenantStoreAt): Promise<TenantAdmin> {
  const state = await openState(at);
  return {
    createTenant: async (name, now) => {
      try {
        return await ensureTenant(state, name, now);
      } catch (err) {
        if (err instanceof StateConflictError) return null;
        throw err;
      }
    },
    recoverAdmin: (name, now) => mintRecoveryAdmin(state, name, now),
    getSettings: (name) => state.getTenantSettings(name),
    setSettings: (name, change, at) => state.setTenantSettings(name, change, at),
    close: () => state.close(),
  };
}

async function openState(at: TenantStoreAt): Promise<StateStore> {
  if ('table' in at) {
    const { openDynamoStateStore } = await import('./aws.js');
    return openDynamoStateStore({ table: at.table, region: at.region, endpoint: at.endpoint });
  }
  // The stores alone: ./local.ts would load the whole app (Hono, the routes, node-server). Not serve's
  // data-directory lock (./data-lock.ts): this only writes state.sqlite, whose own locking (WAL,
  // busy_timeout) lets a tenant be created or changed while the server runs.
  const { openLocalStores } = await import('./local-stores.js');
  return openLocalStores(at.data).state;
}

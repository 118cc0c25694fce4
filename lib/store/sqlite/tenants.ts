/**
 * The tenant settings methods of `SqliteStateStore` (issue 17.1, 17.3; ../tenants.ts): a tenant's
 * own quota and rate limit are columns of its row in `tenants` (NULL: the deployment's), added to a
 * database made before them. Split from the store so that each file stays readable, as
 * sqlite/status-work.ts is.
 */

import {
  parseTenantSettings,
  settingsChange,
  type TenantSettings,
  type TenantSettingsChange,
} from '../tenants.js';
import type { SqlitePrimitives } from './status-work.js';

/** The columns of `tenants` the settings live in, as `name TYPE`. */
const SETTINGS_COLUMNS = [
  'quota_bytes INTEGER',
  'rate_limit_per_minute INTEGER',
  'settings_updated_at TEXT',
  'monthly_budget_usd REAL',
];

/**
 * Adds the settings columns to `tenants` where they are missing (a database from before them: its
 * tenants read as the deployment's). Run inside the store's schema transaction.
 */
export function addTenantSettingsColumns(
  exec: (sql: string) => void,
  columns: () => Array<{ name: string }>,
): void {
  const have = new Set(columns().map((c) => c.name));
  for (const col of SETTINGS_COLUMNS) {
    if (!have.has(col.split(' ')[0]!)) exec(`ALTER TABLE tenants ADD COLUMN ${col}`);
  }
}

type Row = {
  quota_bytes: number | null;
  rate_limit_per_minute: number | null;
  monthly_budget_usd: number | null;
  updated_at: string | null;
};

const SELECT =
  'SELECT quota_bytes, rate_limit_per_minute, monthly_budget_usd, settings_updated_at AS updated_at FROM tenants WHERE name = ?';

/** The `StateStore` tenant settings methods on SQLite; each answers as `DynamoStateStore`'s does. */
export class SqliteTenantSettings {
  constructor(private readonly x: SqlitePrimitives) {}

  async getTenantSettings(tenant: string): Promise<TenantSettings | null> {
    const row = this.x.q(SELECT).get(tenant) as Row | undefined;
    return row ? parseTenantSettings(tenant, row) : null;
  }

  /**
   * Only the given fields' columns are written (so a change of one field also mends a record whose other
   * field was edited by hand), then the row is read back, in one transaction.
   */
  async setTenantSettings(
    tenant: string,
    change: TenantSettingsChange,
    at: string,
  ): Promise<TenantSettings | null> {
    const { valid, fields } = settingsChange(change);
    const sets = [...fields.map((f) => `${f} = ?`), 'settings_updated_at = ?'].join(', ');
    return this.x.transaction(() => {
      const r = this.x
        .q(`UPDATE tenants SET ${sets} WHERE name = ?`)
        .run(...fields.map((f) => valid[f] ?? null), at, tenant) as { changes: number };
      if (r.changes === 0) return null;
      return parseTenantSettings(tenant, this.x.q(SELECT).get(tenant) as Row);
    });
  }
}

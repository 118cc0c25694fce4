/**
 * The tenant settings methods of `DynamoStateStore` (issue 17.1, 17.3; ../tenants.ts): a tenant's
 * own quota and rate limit are attributes of its tenant item `TENANT#{name}` / `TENANT`
 * (`quota_bytes`, `rate_limit_per_minute`, `settings_updated_at`; absent: the deployment's, as every null
 * of this adapter). Split from the store so that each file stays readable; the store lends its primitives.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  parseTenantSettings,
  settingsChange,
  type TenantSettings,
  type TenantSettingsChange,
} from '../tenants.js';
import { errorName, update } from './items.js';
import { keys } from './schema.js';
import type { DynamoPrimitives } from './tokens.js';

/** The tenant item's attributes ⇄ the fields of `TenantSettings`. */
function settingsOf(tenant: string, item: Record<string, unknown>): TenantSettings {
  return parseTenantSettings(tenant, { ...item, updated_at: item.settings_updated_at });
}

/** The `StateStore` tenant settings methods on DynamoDB; each answers as `SqliteStateStore`'s does. */
export class DynamoTenantSettings {
  constructor(private readonly x: DynamoPrimitives) {}

  /** One strongly consistent GetItem of the tenant item (callers cache it: lib/service/tenants/limits.ts). */
  async getTenantSettings(tenant: string): Promise<TenantSettings | null> {
    const item = await this.x.get(keys.tenant(tenant));
    return item ? settingsOf(tenant, item) : null;
  }

  /**
   * One UpdateItem on condition that the tenant item exists: SET for a value, REMOVE for null, only the
   * fields given (two operators changing different fields do not undo each other); the item as it is
   * after the update is what it answers.
   */
  async setTenantSettings(
    tenant: string,
    change: TenantSettingsChange,
    at: string,
  ): Promise<TenantSettings | null> {
    const { valid, fields } = settingsChange(change);
    const set: Record<string, unknown> = { settings_updated_at: at };
    for (const f of fields) if (valid[f] !== null) set[f] = valid[f];
    const remove = fields.filter((f) => valid[f] === null);
    try {
      const res = await this.x.doc.send(
        new UpdateCommand({
          TableName: this.x.table,
          Key: keys.tenant(tenant),
          ...update({ set, remove }, (e) => `attribute_exists(${e.n('pk')})`),
          ReturnValues: 'ALL_NEW',
        }),
      );
      return settingsOf(tenant, res.Attributes ?? {});
    } catch (err) {
      if (errorName(err) === 'ConditionalCheckFailedException') return null;
      throw err;
    }
  }
}

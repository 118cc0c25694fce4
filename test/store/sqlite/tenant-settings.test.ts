/**
 * What only the SQLite adapter's tenant settings have (the contract for both is
 * test/store/contract/tenants.contract.ts): a database from before them gets the columns and reads its
 * tenants at the deployment's values; a record edited by hand into something the schema refuses fails its read with
 * a message naming the tenant and the field, and setting that field mends it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-tenant-settings-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const file = () => join(mkdtempSync(join(tmp, 'sqlite-')), 'state.sqlite');

describe('SqliteStateStore tenant settings', () => {
  it('adds the columns to a database from before them, once, its tenants at the deployment’s', async () => {
    const path = file();
    const store = new SqliteStateStore(path);
    await store.createTenant('acme', '2026-01-01T00:00:00.000Z');
    await store.close();
    const raw = new Database(path);
    for (const col of ['quota_bytes', 'rate_limit_per_minute', 'settings_updated_at', 'monthly_budget_usd'])
      raw.exec(`ALTER TABLE tenants DROP COLUMN ${col}`);
    expect((raw.pragma('table_info(tenants)') as Array<{ name: string }>).map((c) => c.name)).toEqual([
      'name',
      'created_at',
    ]);
    raw.close();

    const reopened = new SqliteStateStore(path);
    expect(await reopened.getTenantSettings('acme')).toEqual({
      quota_bytes: null,
      rate_limit_per_minute: null,
      updated_at: null,
    });
    await reopened.setTenantSettings('acme', { rate_limit_per_minute: 5 }, '2026-01-02T00:00:00.000Z');
    await reopened.close();
    // Opened again: nothing migrated twice, the setting kept.
    const again = new SqliteStateStore(path);
    expect(await again.getTenantSettings('acme')).toMatchObject({ rate_limit_per_minute: 5 });
    await again.close();
  });

  it('fails the read of a record edited into nonsense, naming it, and a set of that field mends it', async () => {
    const path = file();
    const store = new SqliteStateStore(path);
    await store.createTenant('acme', '2026-01-01T00:00:00.000Z');
    await store.setTenantSettings('acme', { rate_limit_per_minute: 5 }, '2026-01-01T00:00:01.000Z');
    const raw = new Database(path);
    raw.prepare("UPDATE tenants SET quota_bytes = -3 WHERE name = 'acme'").run();
    raw.close();
    await expect(store.getTenantSettings('acme')).rejects.toThrow(
      /the record of tenant acme holds an invalid quota_bytes .*: set it again with hansard tenant set/,
    );
    expect(await store.setTenantSettings('acme', { quota_bytes: null }, '2026-01-01T00:00:02.000Z')).toEqual({
      quota_bytes: null,
      rate_limit_per_minute: 5,
      updated_at: '2026-01-01T00:00:02.000Z',
    });
    await store.close();
  });
});

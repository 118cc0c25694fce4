/**
 * The `StateStore` contract's tenant settings cases (issue 17.1, 17.3; lib/store/tenants.ts): a
 * tenant's own quota and rate limit on its tenant record, null for the deployment's. Run by
 * `runStateStoreContract` (./state-store.contract.ts) on every adapter: SQLite and DynamoDB Local (and,
 * recorded, by test/infra/dynamo-access.test.ts, which checks what each method sends against its IAM
 * declaration).
 */
import { describe, expect } from 'vitest';
import type { StateStore } from '../../../lib/store/index.js';
import { at } from './writers.contract.js';

type Contract = (title: string, fn: (store: StateStore) => Promise<void>) => void;

const MiB = 1024 * 1024;
const DEPLOYMENT_S = { quota_bytes: null, rate_limit_per_minute: null, updated_at: null };

export function tenantSettingsCases(contract: Contract): void {
  describe('tenant settings', () => {
    contract("a new tenant reads the deployment's settings (all null); no tenant reads null", async (s) => {
      expect(await s.getTenantSettings('acme')).toBeNull();
      await s.createTenant('acme', at(0));
      expect(await s.getTenantSettings('acme')).toEqual(DEPLOYMENT_S);
      expect(await s.getTenantSettings('globex')).toBeNull();
    });

    contract(
      "sets each field on its own, keeps the other, and null gives back the deployment's",
      async (s) => {
        await s.createTenant('acme', at(0));
        const quota = { quota_bytes: MiB, rate_limit_per_minute: null, updated_at: at(1) };
        expect(await s.setTenantSettings('acme', { quota_bytes: MiB }, at(1))).toEqual(quota);
        expect(await s.getTenantSettings('acme')).toEqual(quota);

        const both = { quota_bytes: MiB, rate_limit_per_minute: 5, updated_at: at(2) };
        expect(await s.setTenantSettings('acme', { rate_limit_per_minute: 5 }, at(2))).toEqual(both);
        expect(await s.getTenantSettings('acme')).toEqual(both);

        const rateOnly = { quota_bytes: null, rate_limit_per_minute: 5, updated_at: at(3) };
        expect(await s.setTenantSettings('acme', { quota_bytes: null }, at(3))).toEqual(rateOnly);
        expect(await s.getTenantSettings('acme')).toEqual(rateOnly);

        // 0: the tenant's tokens are not limited (a value, not the deployment's)
        await s.setTenantSettings('acme', { quota_bytes: 10 * MiB, rate_limit_per_minute: 0 }, at(4));
        expect(await s.getTenantSettings('acme')).toEqual({
          quota_bytes: 10 * MiB,
          rate_limit_per_minute: 0,
          updated_at: at(4),
        });
        // An empty change only stamps the time.
        expect(await s.setTenantSettings('acme', {}, at(5))).toMatchObject({
          quota_bytes: 10 * MiB,
          rate_limit_per_minute: 0,
          updated_at: at(5),
        });
        const back = { quota_bytes: null, rate_limit_per_minute: null, updated_at: at(6) };
        const cleared = { quota_bytes: null, rate_limit_per_minute: null };
        expect(await s.setTenantSettings('acme', cleared, at(6))).toEqual(back);
        expect(await s.getTenantSettings('acme')).toEqual(back);
        // The tenant itself is untouched by all of it.
        expect(await s.tenantExists('acme')).toBe(true);
        await expect(s.createTenant('acme', at(7))).rejects.toMatchObject({ name: 'StateConflictError' });
      },
    );

    contract('keeps each tenant its own settings', async (s) => {
      await s.createTenant('acme', at(0));
      await s.createTenant('globex', at(0));
      await s.setTenantSettings('acme', { quota_bytes: MiB, rate_limit_per_minute: 5 }, at(1));
      expect(await s.getTenantSettings('globex')).toEqual(DEPLOYMENT_S);
      await s.setTenantSettings('globex', { rate_limit_per_minute: 7 }, at(2));
      expect(await s.getTenantSettings('acme')).toEqual({
        quota_bytes: MiB,
        rate_limit_per_minute: 5,
        updated_at: at(1),
      });
    });

    contract('answers null for a tenant that does not exist, and creates nothing', async (s) => {
      expect(await s.setTenantSettings('globex', { quota_bytes: MiB }, at(1))).toBeNull();
      expect(await s.tenantExists('globex')).toBe(false);
      expect(await s.getTenantSettings('globex')).toBeNull();
      // The name is still free.
      await s.createTenant('globex', at(2));
      expect(await s.getTenantSettings('globex')).toEqual(DEPLOYMENT_S);
    });

    contract('refuses values out of range before writing anything', async (s) => {
      await s.createTenant('acme', at(0));
      await s.setTenantSettings('acme', { quota_bytes: MiB }, at(1));
      const bad = [
        { quota_bytes: 0 },
        { quota_bytes: -1 },
        { quota_bytes: 1.5 },
        { quota_bytes: 2 ** 60 },
        { rate_limit_per_minute: -1 },
        { rate_limit_per_minute: 2.5 },
        { rate_limit_per_minute: 1_000_001 },
        { rate_limit_per_minute: '5' as unknown as number },
        { quota_bytes: MiB, other: 1 } as { quota_bytes: number },
      ];
      for (const change of bad) {
        await expect(
          s.setTenantSettings('acme', change, at(2)),
          JSON.stringify(change),
        ).rejects.toMatchObject({ name: 'ZodError' });
      }
      expect(await s.getTenantSettings('acme')).toEqual({
        quota_bytes: MiB,
        rate_limit_per_minute: null,
        updated_at: at(1),
      });
    });
  });
}

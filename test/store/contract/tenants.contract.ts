/**
 * The tenants contract (lib/store/tenants.ts `TenantStore`): tenants made once; a tenant's own quota and
 * rate limit on its tenant record, null for the deployment's (issue 17.1, 17.3); and its usage, the
 * running total of its writers' bytes (issue 5, 17.1). Run on every adapter (./suite.ts): SQLite and
 * DynamoDB Local (and, recorded, by test/infra/dynamo-access.test.ts, which checks what each method
 * sends against its IAM declaration).
 */
import { describe, expect } from 'vitest';
import { newId } from '../../../lib/log/format/ids.js';
import {
  StateConflictError,
  type StatusStore,
  type TenantStore,
  type WriterStore,
} from '../../../lib/store/index.js';
import { advanceOf, at, statusOf } from './records.js';
import { type ContractOptions, runContract } from './suite.js';

const MiB = 1024 * 1024;
const DEPLOYMENT_S = { quota_bytes: null, rate_limit_per_minute: null, updated_at: null };

export function runTenantsContract(opts: ContractOptions<TenantStore & WriterStore & StatusStore>): void {
  runContract('tenants', opts, (contract) => {
    describe('tenants', () => {
      contract('creates a tenant and then reports that it exists', async (s) => {
        expect(await s.tenantExists('acme')).toBe(false);
        await s.createTenant('acme', at(0));
        expect(await s.tenantExists('acme')).toBe(true);
        expect(await s.tenantExists('globex')).toBe(false);
      });

      contract('refuses to create a tenant twice with StateConflictError', async (s) => {
        await s.createTenant('acme', at(0));
        await expect(s.createTenant('acme', at(1))).rejects.toBeInstanceOf(StateConflictError);
        expect(await s.tenantExists('acme')).toBe(true);
      });
    });

    // Issue 17.1, 17.3: a tenant's own quota and rate limit, on its tenant record.
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

    // Issue 5: the per-tenant storage quota reads the tenant's bytes from the state store.
    describe('tenant usage', () => {
      contract(
        "sums a tenant's writers' bytes over its sessions, and 0 for a tenant with none",
        async (s) => {
          expect(await s.tenantUsage('acme')).toEqual({ bytes: 0 });
          const [s1, s2] = [newId('s'), newId('s')];
          const [w1, w2, w3] = [newId('w'), newId('w'), newId('w')];
          await s.advanceWriter('acme', s1, w1, 0, advanceOf(0, 100, { lines: 1, when: 1 }));
          await s.advanceWriter('acme', s1, w1, 100, advanceOf(100, 50, { lines: 2, when: 2 }));
          await s.advanceWriter('acme', s1, w2, 0, advanceOf(0, 7, { lines: 1, when: 3 }));
          await s.advanceWriter('acme', s2, w3, 0, advanceOf(0, 1000, { lines: 1, when: 4 }));
          await s.advanceWriter('globex', s1, w1, 0, advanceOf(0, 3, { lines: 1, when: 5 }));
          expect(await s.tenantUsage('acme')).toEqual({ bytes: 1157 });
          expect(await s.tenantUsage('globex')).toEqual({ bytes: 3 });
          expect(await s.tenantUsage('initech')).toEqual({ bytes: 0 });
          // Reports add no bytes.
          await s.putStatus(statusOf('acme', newId('s'), 6));
          expect(await s.tenantUsage('acme')).toEqual({ bytes: 1157 });
        },
      );

      contract('counts only the advance that wins, and nothing of a refused one', async (s) => {
        const sid = newId('s');
        const w = newId('w');
        await s.advanceWriter('acme', sid, w, 0, advanceOf(0, 40, { lines: 1, when: 1 }));
        await expect(
          s.advanceWriter('acme', sid, w, 0, advanceOf(0, 99, { lines: 1, when: 2 })),
        ).rejects.toBeInstanceOf(StateConflictError);
        expect(await s.tenantUsage('acme')).toEqual({ bytes: 40 });
        const settled = await Promise.allSettled([
          s.advanceWriter('acme', sid, w, 40, advanceOf(40, 10, { lines: 2, when: 3 })),
          s.advanceWriter('acme', sid, w, 40, advanceOf(40, 20, { lines: 2, when: 3 })),
        ]);
        const won = settled[0]!.status === 'fulfilled' ? 10 : 20;
        expect(settled.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        expect(await s.tenantUsage('acme')).toEqual({ bytes: 40 + won });
      });

      contract('adds up concurrent advances of many sessions of one tenant exactly', async (s) => {
        const advances = Array.from({ length: 24 }, (_, i) => ({
          sid: newId('s'),
          w: newId('w'),
          bytes: i + 1,
        }));
        await Promise.all(
          advances.map((a) =>
            s.advanceWriter('acme', a.sid, a.w, 0, advanceOf(0, a.bytes, { lines: 1, when: 1 })),
          ),
        );
        expect(await s.tenantUsage('acme')).toEqual({ bytes: (24 * 25) / 2 });
      });
    });
  });
}

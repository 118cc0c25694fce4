/**
 * lib/service/tenants/limits.ts on a real SQLite state store whose `getTenantSettings` is counted: a
 * tenant's own values over the deployment's, one read per tenant per `tenantSettingsMaxAgeMs` (asks in
 * between and while a read is in flight share it), a failed read not kept, stores and tenants apart.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { tenantLimits, tenantSettings } from '../../../lib/service/tenants/limits.js';
import type { StateStore } from '../../../lib/store/index.js';
import { SqliteStateStore } from '../../../lib/store/sqlite/state-store.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-tenant-limits-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
afterEach(() => vi.useRealTimers());

const MiB = 1024 * 1024;
const at = '2026-01-01T00:00:00.000Z';

/** A fresh store with tenants acme and globex, and how often its settings were read. */
async function counted(): Promise<{ state: StateStore; reads: () => number; fail: (on: boolean) => void }> {
  const state = new SqliteStateStore(join(mkdtempSync(join(tmp, 's-')), 'state.sqlite'));
  await state.createTenant('acme', at);
  await state.createTenant('globex', at);
  let reads = 0;
  let failing = false;
  const real = state.getTenantSettings.bind(state);
  state.getTenantSettings = async (tenant) => {
    reads++;
    if (failing) throw new Error('state store unreachable');
    return real(tenant);
  };
  return { state, reads: () => reads, fail: (on) => (failing = on) };
}

describe('tenantLimits', () => {
  it("gives the tenant's own values where set and the deployment's for the rest", async () => {
    const { state } = await counted();
    await state.setTenantSettings('acme', { quota_bytes: MiB, rate_limit_per_minute: 5 }, at);
    const limits = { tenantQuotaBytes: 8 * MiB, tenantSettingsMaxAgeMs: 0 };
    expect(await tenantLimits({ state, tenant: 'acme', limits })).toEqual({
      quotaBytes: MiB,
      quotaFrom: 'tenant',
      rateLimitPerMinute: 5,
    });
    expect(await tenantLimits({ state, tenant: 'globex', limits })).toEqual({
      quotaBytes: 8 * MiB,
      quotaFrom: 'deployment',
      rateLimitPerMinute: null,
    });
    // no limits given: DEFAULT_LIMITS (10 GiB); a deployment without a quota keeps a tenant's own
    expect(await tenantLimits({ state, tenant: 'globex' })).toMatchObject({ quotaBytes: 10 * 1024 ** 3 });
    const noQuota = { tenantQuotaBytes: null, tenantSettingsMaxAgeMs: 0 };
    expect(await tenantLimits({ state, tenant: 'globex', limits: noQuota })).toMatchObject({
      quotaBytes: null,
    });
    expect(await tenantLimits({ state, tenant: 'acme', limits: noQuota })).toMatchObject({ quotaBytes: MiB });
    // A tenant without a record (tokens made straight in the store) is held to the deployment's.
    expect(await tenantLimits({ state, tenant: 'initech', limits })).toMatchObject({
      quotaBytes: 8 * MiB,
      quotaFrom: 'deployment',
      rateLimitPerMinute: null,
    });
    await state.close();
  });

  it('reads a tenant once per max age (30 s by default), shares a read in flight, and sees a change after', async () => {
    vi.useFakeTimers({ toFake: ['performance'] });
    const { state, reads } = await counted();
    const ask = () => tenantLimits({ state, tenant: 'acme' });
    await Promise.all([ask(), ask(), ask()]);
    expect(reads()).toBe(1);
    await state.setTenantSettings('acme', { quota_bytes: MiB }, at);
    vi.advanceTimersByTime(29_000);
    // Within 30 s: this process's copy, the change not seen yet.
    expect((await ask()).quotaBytes).toBe(10 * 1024 ** 3);
    expect(reads()).toBe(1);
    // The other tenant has its own copy.
    await tenantLimits({ state, tenant: 'globex' });
    expect(reads()).toBe(2);
    vi.advanceTimersByTime(1_000);
    expect((await ask()).quotaBytes).toBe(MiB);
    expect(reads()).toBe(3);
    await state.close();
  });

  it('keeps no failed read: the next ask reads again', async () => {
    const { state, reads, fail } = await counted();
    fail(true);
    await expect(tenantSettings(state, 'acme', 30_000)).rejects.toThrow('state store unreachable');
    fail(false);
    expect(await tenantSettings(state, 'acme', 30_000)).toEqual({
      quota_bytes: null,
      rate_limit_per_minute: null,
      updated_at: null,
    });
    expect(reads()).toBe(2);
    await state.close();
  });

  it('keeps each state store its own copies', async () => {
    const a = await counted();
    const b = await counted();
    await b.state.setTenantSettings('acme', { rate_limit_per_minute: 9 }, at);
    expect((await tenantSettings(a.state, 'acme', 30_000)).rate_limit_per_minute).toBeNull();
    expect((await tenantSettings(b.state, 'acme', 30_000)).rate_limit_per_minute).toBe(9);
    await a.state.close();
    await b.state.close();
  });
});

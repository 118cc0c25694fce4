/**
 * `hansard tenant set NAME --monthly-budget-usd N|default` (issue 27 item 4) on a local data directory:
 * what it prints and stores, `default` removing it, and the refusals (exit 2, nothing written).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openLocalStores } from '../../../lib/deploy/local.js';
import { runHansard } from '../../support/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-tenant-budget-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const hansard = (...argv: string[]) => runHansard(argv, { cwd: tmp });
const data = ['--data', 'local-data'];

const stored = async () => {
  const { state } = openLocalStores(join(tmp, 'local-data'));
  try {
    return await state.getTenantSettings('acme');
  } finally {
    await state.close();
  }
};

describe('hansard tenant set --monthly-budget-usd', () => {
  beforeAll(async () => {
    expect((await hansard('tenant', 'create', 'acme', ...data)).code).toBe(0);
  });

  it('sets a budget in dollars, shows it, keeps the other limits', async () => {
    const r = await hansard('tenant', 'set', 'acme', '--monthly-budget-usd', '1250.50', ...data);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/\n {2}budget: {8}\$1250\.5 a month \(list price\)\n/);
    expect(await stored()).toMatchObject({ monthly_budget_usd: 1250.5, quota_bytes: null });
    const json = await hansard('tenant', 'show', 'acme', ...data, '--json');
    expect(JSON.parse(json.out)).toMatchObject({ tenant: 'acme', monthly_budget_usd: 1250.5 });
  });

  it('default removes it', async () => {
    const r = await hansard('tenant', 'set', 'acme', '--monthly-budget-usd', 'default', ...data);
    expect(r.code, r.err).toBe(0);
    expect(r.out).not.toContain('budget:');
    expect(await stored()).not.toHaveProperty('monthly_budget_usd');
  });

  it('refuses what is not an amount of dollars, writing nothing', async () => {
    for (const bad of ['0', '-5', '12.345', 'lots', '1e3']) {
      const r = await hansard('tenant', 'set', 'acme', '--monthly-budget-usd', bad, ...data);
      expect(r.code, bad).toBe(2);
      expect(r.err).toContain(`--monthly-budget-usd ${bad} is not an amount of US dollars`);
    }
    expect(await stored()).not.toHaveProperty('monthly_budget_usd');
  });
});

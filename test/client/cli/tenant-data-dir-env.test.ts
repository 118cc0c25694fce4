/**
 * `hansard tenant create|set|show` honour `HANSARD_DATA_DIR` (listed under Environment in `hansard --help`,
 * honoured by `serve` and `keys`) when neither --data nor --table is given; a flag wins over it. Run
 * through `runCli` with the variable in the command's environment, on real data directories.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openLocalStores } from '../../../lib/deploy/local-stores.js';
import { runHansard } from '../../support/cli.js';
import { tmpDirs } from '../../support/tmp.js';

const scratch = tmpDirs('hansard-tenant-env-');

describe('hansard tenant … with HANSARD_DATA_DIR', () => {
  it('create, set and show work on the directory it names', async () => {
    const root = scratch.make();
    const env = { HANSARD_DATA_DIR: 'env-data' };
    const created = await runHansard(['tenant', 'create', 'acme'], { cwd: root, env });
    expect(created.code, created.err).toBe(0);
    expect(created.out).toMatch(/^hns_[0-9A-Za-z]{43}\n$/);
    const { state } = openLocalStores(join(root, 'env-data'));
    expect(await state.tenantExists('acme')).toBe(true);
    await state.close();

    const set = await runHansard(['tenant', 'set', 'acme', '--rate-limit', '5'], { cwd: root, env });
    expect(set.code, set.err).toBe(0);
    const shown = await runHansard(['tenant', 'show', 'acme', '--json'], { cwd: root, env });
    expect(shown.code, shown.err).toBe(0);
    expect(JSON.parse(shown.out)).toMatchObject({ tenant: 'acme', rate_limit_per_minute: 5 });

    // A tenant it does not hold is named with the directory the variable gave.
    const none = await runHansard(['tenant', 'show', 'nope'], { cwd: root, env });
    expect(none.code).toBe(2);
    expect(none.err).toContain('data directory env-data');
  });

  it('--data wins over the variable', async () => {
    const root = scratch.make();
    const r = await runHansard(['tenant', 'create', 'acme', '--data', 'flag-data'], {
      cwd: root,
      env: { HANSARD_DATA_DIR: 'env-data' },
    });
    expect(r.code, r.err).toBe(0);
    expect(existsSync(join(root, 'flag-data', 'state.sqlite'))).toBe(true);
    expect(existsSync(join(root, 'env-data'))).toBe(false);
  });

  it('--table wins over the variable: no "one of them" refusal, the data directory untouched', async () => {
    const root = scratch.make();
    const r = await runHansard(
      ['tenant', 'show', 'acme', '--table', 't', '--region', 'eu-west-1', '--endpoint', 'http://127.0.0.1:9'],
      {
        cwd: root,
        // Nothing listens there: the table is tried (and fails), the data directory never is.
        env: { HANSARD_DATA_DIR: 'env-data' },
      },
    );
    expect(r.err).not.toMatch(/one of them/);
    expect(r.code).not.toBe(0);
    expect(existsSync(join(root, 'env-data'))).toBe(false);
  }, 60_000);

  it('--region with the variable and no --table: refused, they go with --table', async () => {
    const root = scratch.make();
    const r = await runHansard(['tenant', 'create', 'acme', '--region', 'eu-west-1'], {
      cwd: root,
      env: { HANSARD_DATA_DIR: 'env-data' },
    });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--region and --endpoint go with --table/);
    expect(existsSync(join(root, 'env-data'))).toBe(false);
  });

  it('neither flag nor variable: exit 2, naming both flags and HANSARD_DATA_DIR', async () => {
    const r = await runHansard(['tenant', 'create', 'acme'], { cwd: scratch.make(), env: {} });
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--table TABLE \(DynamoDB\) or --data DIR \(local\).*HANSARD_DATA_DIR/);
  });
});

/**
 * `hansard tenant set` and `hansard tenant show` (issue 17.1, 17.3), run in-process through `runCli`: on a
 * local data directory (SQLite) and on a DynamoDB Local table with credentials from the environment, as
 * `tenant create` is (test/client/cli/tenant.test.ts). What they print, what they store (on DynamoDB: the
 * attributes of the tenant item, removed again by `default`), and their refusals: exit 2 with a message
 * that says what to do, and nothing written.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type DynamoLocal,
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  startDynamoLocal,
} from '../../../harness/dynamodb-local.js';
import { openLocalStores } from '../../../lib/deploy/local.js';
import { DynamoStateStore } from '../../../lib/store/dynamo/state-store.js';
import { runHansard } from '../../support/cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-tenant-limits-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const hansard = (...argv: string[]) => runHansard(argv, { cwd: tmp });
const MiB = 1024 * 1024;

describe('hansard tenant set / show --data DIR', () => {
  const data = ['--data', 'local-data'];
  beforeAll(async () => {
    expect((await hansard('tenant', 'create', 'acme', ...data)).code).toBe(0);
  });
  const stored = async () => {
    const { state } = openLocalStores(join(tmp, 'local-data'));
    try {
      return await state.getTenantSettings('acme');
    } finally {
      await state.close();
    }
  };

  it("shows a new tenant at the deployment's values", async () => {
    const r = await hansard('tenant', 'show', 'acme', ...data);
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(
      "tenant acme\n  storage quota: the deployment's\n  rate limit:    the deployment's\n  set at:        never\n",
    );
  });

  it('sets a quota given as a size and a rate, prints them, and says when a server applies them', async () => {
    const r = await hansard(
      'tenant',
      'set',
      'acme',
      '--quota-bytes',
      '50GiB',
      '--rate-limit',
      '1200',
      ...data,
    );
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(
      /^tenant acme\n {2}storage quota: 50 GiB \(53687091200 bytes\), its own\n {2}rate limit: {4}1200 requests a minute per token, its own\n {2}set at: {8}\d{4}-/,
    );
    expect(r.err).toBe('a running server applies this within 30 s\n');
    expect(await stored()).toMatchObject({ quota_bytes: 50 * 1024 ** 3, rate_limit_per_minute: 1200 });
  });

  it('changes one field, keeps the other, and default gives it back to the deployment', async () => {
    const one = await hansard('tenant', 'set', 'acme', '--quota-bytes', '1048576', ...data, '--json');
    expect(one.code, one.err).toBe(0);
    expect(JSON.parse(one.out)).toEqual({
      tenant: 'acme',
      quota_bytes: MiB,
      rate_limit_per_minute: 1200,
      updated_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    const back = await hansard('tenant', 'set', 'acme', '--rate-limit', 'default', ...data, '--json');
    expect(JSON.parse(back.out)).toMatchObject({ quota_bytes: MiB, rate_limit_per_minute: null });
    const none = await hansard('tenant', 'set', 'acme', '--rate-limit', '0', ...data);
    expect(none.out).toContain('rate limit:    none (its tokens are not limited), its own');
    const shown = await hansard('tenant', 'show', 'acme', ...data, '--json');
    expect(JSON.parse(shown.out)).toMatchObject({ quota_bytes: MiB, rate_limit_per_minute: 0 });
  });

  it('refuses what it cannot do with exit 2, a message that says what to do, and nothing written', async () => {
    const before = await stored();
    const cases: Array<[string[], RegExp]> = [
      [['set', 'acme', ...data], /say what to set: --quota-bytes SIZE\|default, --rate-limit N\|default/],
      [['set', 'acme', '--quota-bytes', '0', ...data], /--quota-bytes 0 is not a size: give bytes/],
      [['set', 'acme', '--quota-bytes', '10 parsecs', ...data], /--quota-bytes 10 parsecs is not a size/],
      [['set', 'acme', '--quota-bytes', 'Default', ...data], /--quota-bytes Default is not a size/],
      [['set', 'acme', '--quota-bytes', '99999999TiB', ...data], /is not a size/],
      [
        ['set', 'acme', '--rate-limit', '-1', ...data],
        /--rate-limit -1 is not a number of requests per minute/,
      ],
      [['set', 'acme', '--rate-limit', '2.5', ...data], /--rate-limit 2.5 is not a number/],
      [
        ['set', 'acme', '--rate-limit', '1000001', ...data],
        /give 0 to 1000000 \(0: none limited\) or default/,
      ],
      [['set', 'acme', '--rate-limit', '5'], /--table TABLE \(DynamoDB\) or --data DIR/],
      [
        ['set', 'acme', '--rate-limit', '5', ...data, '--table', 't'],
        /--table TABLE \(DynamoDB\) or --data DIR/,
      ],
      [
        ['set', 'acme', '--rate-limit', '5', ...data, '--region', 'eu-west-1'],
        /--region and --endpoint go with --table/,
      ],
      [['set', 'Acme', '--rate-limit', '5', ...data], /"Acme" is not a valid tenant name/],
      [
        ['set', 'globex', '--rate-limit', '5', ...data],
        /there is no tenant globex in data directory local-data: nothing was changed \(create it with hansard tenant create globex\)/,
      ],
      [['show', 'globex', ...data], /there is no tenant globex/],
      [['show', 'acme'], /--table TABLE \(DynamoDB\) or --data DIR/],
      [['set', 'acme', '--rate-limit'], /argument missing/],
    ];
    for (const [args, message] of cases) {
      const r = await hansard('tenant', ...args);
      expect(r.code, args.join(' ')).toBe(2);
      expect(r.out, args.join(' ')).toBe('');
      expect(r.err, args.join(' ')).toMatch(message);
    }
    expect(await stored()).toEqual(before);
    // With --json the refusal is one error object on stderr, with its own code for a missing tenant.
    const missing = await hansard('tenant', 'set', 'globex', '--rate-limit', '5', ...data, '--json');
    expect(missing.code).toBe(2);
    expect(JSON.parse(missing.err)).toMatchObject({ error: { code: 'no_such_tenant', exit_code: 2 } });
    const { state } = openLocalStores(join(tmp, 'local-data'));
    expect(await state.tenantExists('globex')).toBe(false);
    await state.close();
  });

  it('has --help with examples, the units and when a change applies', async () => {
    const set = await hansard('tenant', 'set', '--help');
    expect(set.code).toBe(0);
    const help = set.out + set.err;
    expect(help).toContain(
      'hansard tenant set acme --quota-bytes 50GiB --table hansard-state --region eu-west-1',
    );
    expect(help).toContain(
      'hansard tenant set acme --quota-bytes default --rate-limit default --data ./.hansard',
    );
    expect(help).toMatch(/SIZE: bytes, or a size such as 500MiB/);
    expect(help).toMatch(/A running server applies a change within\s+30 s/);
    const show = await hansard('tenant', 'show', '--help');
    expect(show.out + show.err).toContain('hansard tenant show acme --data ./.hansard --json');
    const top = await hansard('tenant', '--help');
    expect(top.out + top.err).toMatch(/set \[options\] <name>[\s\S]*show \[options\] <name>/);
  });
});

describe('hansard tenant set / show --table TABLE (DynamoDB Local)', () => {
  let local: DynamoLocal;
  let table: string;
  let state: DynamoStateStore;
  beforeAll(async () => {
    local = await startDynamoLocal();
    table = await local.freshTable();
    state = new DynamoStateStore({ tableName: table, client: local.client });
    await state.createTenant('acme', '2026-01-01T00:00:00.000Z');
    // The operator's credentials, found by the SDK's default provider chain.
    vi.stubEnv('AWS_ACCESS_KEY_ID', LOCAL_CREDENTIALS.accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', LOCAL_CREDENTIALS.secretAccessKey);
  }, 120_000);
  afterAll(async () => {
    vi.unstubAllEnvs();
    await state?.close();
    await local?.stop();
  });
  const target = () => ['--table', table, '--region', LOCAL_REGION, '--endpoint', local.endpoint];
  const item = async () =>
    (
      await DynamoDBDocumentClient.from(local.client).send(
        new GetCommand({ TableName: table, Key: { pk: 'TENANT#acme', sk: 'TENANT' } }),
      )
    ).Item;

  it('keeps the settings on the tenant item, and default removes the attribute', async () => {
    const r = await hansard(
      'tenant',
      'set',
      'acme',
      '--quota-bytes',
      '1MiB',
      '--rate-limit',
      '5',
      ...target(),
      '--json',
    );
    expect(r.code, r.err).toBe(0);
    expect(JSON.parse(r.out)).toMatchObject({ tenant: 'acme', quota_bytes: MiB, rate_limit_per_minute: 5 });
    expect(await item()).toMatchObject({
      tenant: 'acme',
      created_at: '2026-01-01T00:00:00.000Z',
      quota_bytes: MiB,
      rate_limit_per_minute: 5,
      settings_updated_at: expect.any(String),
    });
    const back = await hansard('tenant', 'set', 'acme', '--quota-bytes', 'default', ...target());
    expect(back.code, back.err).toBe(0);
    const after = await item();
    expect(after).not.toHaveProperty('quota_bytes');
    expect(after).toMatchObject({ rate_limit_per_minute: 5, created_at: '2026-01-01T00:00:00.000Z' });
    const shown = await hansard('tenant', 'show', 'acme', ...target(), '--json');
    expect(JSON.parse(shown.out)).toMatchObject({ quota_bytes: null, rate_limit_per_minute: 5 });
  });

  it('refuses a tenant that is not in the table with exit 2, creating no item', async () => {
    const r = await hansard('tenant', 'set', 'globex', '--rate-limit', '5', ...target());
    expect(r.code).toBe(2);
    expect(r.err).toContain(`there is no tenant globex in table ${table} in ${LOCAL_REGION}`);
    expect(await state.tenantExists('globex')).toBe(false);
  });

  it('says so with exit 1 when the table does not exist', async () => {
    const r = await hansard(
      'tenant',
      'show',
      'acme',
      '--table',
      'no-such-table',
      '--region',
      LOCAL_REGION,
      '--endpoint',
      local.endpoint,
    );
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/table no-such-table in us-east-1 was not found/);
  });
});

/**
 * `hansard tenant create` (DESIGN §4 tokens), run in-process through `runCli`: on a local data
 * directory (SQLite) and on a DynamoDB Local table with credentials from the environment (the SDK's
 * default provider chain, as an operator's shell provides them).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  type DynamoLocal,
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  startDynamoLocal,
} from '../../../harness/dynamodb-local.js';
import type { Io } from '../../../lib/client/api/io.js';
import { runCli } from '../../../lib/client/cli/main.js';
import { openLocalStores } from '../../../lib/deploy/local.js';
import { hashToken } from '../../../lib/service/tokens/create.js';
import { DynamoStateStore } from '../../../lib/store/dynamo/state-store.js';
import type { StateStore } from '../../../lib/store/index.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-tenant-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Runs the CLI with captured output. */
async function hansard(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: Io = {
    stdout: { write: (s) => (out += String(s)) },
    stderr: { write: (s) => (err += s) },
    env: {},
    cwd: tmp,
  };
  const code = await runCli(argv, io);
  return { code, out, err };
}

/** The printed token is stored as an admin token of `tenant`. */
async function expectAdminToken(state: StateStore, tenant: string, token: string): Promise<void> {
  expect(token).toMatch(/^hns_[0-9A-Za-z]{43}$/);
  const rec = await state.getTokenByHash(hashToken(token));
  expect(rec).toMatchObject({ tenant, revoked_at: null });
  expect(rec?.scopes).toContain('admin');
  expect(await state.tenantExists(tenant)).toBe(true);
}

describe('hansard tenant create --data DIR', () => {
  it('creates the tenant and prints its admin token once, on stdout', async () => {
    const r = await hansard('tenant', 'create', 'acme', '--data', 'local-data');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^hns_[0-9A-Za-z]{43}\n$/);
    expect(r.err).toContain('shown once');
    const { state } = openLocalStores(join(tmp, 'local-data'));
    await expectAdminToken(state, 'acme', r.out.trim());
    await state.close();
  });

  it('prints one JSON document with --json', async () => {
    const r = await hansard('tenant', 'create', 'globex', '--data', 'local-data', '--json');
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(r.out) as Record<string, unknown>;
    expect(doc).toMatchObject({ tenant: 'globex', id: expect.stringMatching(/^tok_/) });
    expect(doc.scopes).toContain('admin');
    const { state } = openLocalStores(join(tmp, 'local-data'));
    await expectAdminToken(state, 'globex', String(doc.token));
    await state.close();
  });

  it('refuses a tenant that exists with exit 2, printing no token and changing nothing', async () => {
    const first = await hansard('tenant', 'create', 'initech', '--data', 'local-data');
    expect(first.code).toBe(0);
    const again = await hansard('tenant', 'create', 'initech', '--data', 'local-data');
    expect(again.code).toBe(2);
    expect(again.out).toBe('');
    expect(again.err).toMatch(/tenant initech exists already/);
    const { state } = openLocalStores(join(tmp, 'local-data'));
    expect(await state.listTokens('initech')).toHaveLength(1);
    await state.close();
  });

  it('refuses an invalid name or a missing store with exit 2 and says what to do', async () => {
    for (const name of ['Acme', '-acme', 'a_b', 'x'.repeat(64)]) {
      const r = await hansard('tenant', 'create', '--data', 'local-data', '--', name);
      expect(r.code).toBe(2);
      expect(r.err).toMatch(/not a valid tenant name: use 1 to 63 lower-case letters/);
    }
    const neither = await hansard('tenant', 'create', 'acme');
    expect(neither.code).toBe(2);
    expect(neither.err).toMatch(/--table TABLE \(DynamoDB\) or --data DIR/);
    const both = await hansard('tenant', 'create', 'acme', '--data', 'd', '--table', 't');
    expect(both.code).toBe(2);
    const stray = await hansard('tenant', 'create', 'acme', '--data', 'd', '--region', 'eu-west-1');
    expect(stray.code).toBe(2);
    expect(stray.err).toMatch(/--region and --endpoint go with --table/);
  });
});

describe('hansard tenant create --table TABLE (DynamoDB Local)', () => {
  let local: DynamoLocal;
  let table: string;
  let state: DynamoStateStore;
  beforeAll(async () => {
    local = await startDynamoLocal();
    table = await local.freshTable();
    state = new DynamoStateStore({ tableName: table, client: local.client });
    // The operator's credentials, found by the SDK's default provider chain.
    vi.stubEnv('AWS_ACCESS_KEY_ID', LOCAL_CREDENTIALS.accessKeyId);
    vi.stubEnv('AWS_SECRET_ACCESS_KEY', LOCAL_CREDENTIALS.secretAccessKey);
  });
  afterAll(async () => {
    vi.unstubAllEnvs();
    await state?.close();
    await local?.stop();
  });
  const target = () => ['--table', table, '--region', LOCAL_REGION, '--endpoint', local.endpoint];

  it('creates the tenant in the table and prints its admin token', async () => {
    const r = await hansard('tenant', 'create', 'acme', ...target());
    expect(r.code, r.err).toBe(0);
    await expectAdminToken(state, 'acme', r.out.trim());
  });

  it('refuses a tenant that exists with exit 2', async () => {
    const r = await hansard('tenant', 'create', 'acme', ...target());
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/tenant acme exists already/);
    expect(await state.listTokens('acme')).toHaveLength(1);
  });

  it('says so with exit 1 when the table does not exist', async () => {
    const r = await hansard(
      'tenant',
      'create',
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

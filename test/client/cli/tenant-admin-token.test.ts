/**
 * `hansard tenant admin-token NAME --data DIR`: a new admin token for a tenant whose admins lost theirs,
 * minted on the state store directly (a new user's finding: the README's only advice was a fresh data
 * directory, which loses every session). Run in-process through `runCli` on a local data directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Io } from '../../../lib/client/api/io.js';
import { runCli } from '../../../lib/client/cli/main.js';
import { openLocalStores } from '../../../lib/deploy/local.js';
import { hashToken } from '../../../lib/service/tokens/create.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-admin-token-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

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

async function withState<T>(fn: (state: ReturnType<typeof openLocalStores>['state']) => Promise<T>) {
  const { state } = openLocalStores(join(tmp, 'data'));
  try {
    return await fn(state);
  } finally {
    await state.close();
  }
}

describe('hansard tenant admin-token --data DIR', () => {
  it('mints a second admin token for an existing tenant and keeps the first', async () => {
    const first = await hansard('tenant', 'create', 'acme', '--data', 'data');
    expect(first.code, first.err).toBe(0);
    expect(first.err).not.toContain('admin-token'); // only said when the tenant exists already

    const r = await hansard('tenant', 'admin-token', 'acme', '--data', 'data');
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^hns_[0-9A-Za-z]{43}\n$/);
    expect(r.err).toContain('shown once');
    expect(r.err).toContain('hansard token revoke');
    const token = r.out.trim();
    expect(token).not.toBe(first.out.trim());
    await withState(async (state) => {
      const minted = await state.getTokenByHash(hashToken(token));
      expect(minted).toMatchObject({ tenant: 'acme', revoked_at: null, label: 'recovery admin' });
      expect(minted?.scopes).toEqual(expect.arrayContaining(['admin', 'ingest', 'report', 'read', 'board']));
      const kept = await state.getTokenByHash(hashToken(first.out.trim()));
      expect(kept).toMatchObject({ tenant: 'acme', revoked_at: null });
    });
  });

  it('prints one JSON document with --json', async () => {
    const r = await hansard('tenant', 'admin-token', 'acme', '--data', 'data', '--json');
    expect(r.code, r.err).toBe(0);
    const doc = JSON.parse(r.out);
    expect(doc).toMatchObject({
      tenant: 'acme',
      token: expect.stringMatching(/^hns_/),
      id: expect.any(String),
    });
    expect(doc.scopes).toContain('admin');
  });

  it('refuses a tenant that does not exist with exit 2, storing nothing', async () => {
    const r = await hansard('tenant', 'admin-token', 'bravo', '--data', 'data');
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toContain('there is no tenant bravo');
    expect(r.err).toContain('hansard tenant create bravo');
    await withState(async (state) => expect(await state.tenantExists('bravo')).toBe(false));
  });

  it('points to itself when tenant create finds the tenant already there', async () => {
    const r = await hansard('tenant', 'create', 'acme', '--data', 'data');
    expect(r.code).toBe(2);
    expect(r.err).toContain('hansard tenant admin-token acme');
  });

  it('refuses a missing store or a bad name with exit 2', async () => {
    expect((await hansard('tenant', 'admin-token', 'acme')).code).toBe(2);
    expect((await hansard('tenant', 'admin-token', 'Bad Name', '--data', 'data')).code).toBe(2);
  });
});

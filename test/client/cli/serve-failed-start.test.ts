/**
 * A `hansard serve` that fails to start leaves no tenant behind (newcomer trial), against real processes
 * on fresh data directories: on a taken port it exits 2 saying so, and tenant `local` does not exist, so
 * the next start (on a free port) creates it and prints its admin token; a malformed
 * HANSARD_BOOTSTRAP_TOKEN is refused (exit 2) with a sentence naming the variable and the shape it needs,
 * no stack trace and nothing created. Before the fix the taken port left tenant `local` with an admin
 * token no one had seen (and the next start printed none), and the bad token printed `unexpected error:
 * AppError …` with its stack and left tenant `local` with no token at all.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runServeToExit, type ServeProcess, startServeProcess } from '../../../harness/serve-process.js';
import { openLocalStores } from '../../../lib/deploy/local.js';
import { ensureTenant } from '../../../lib/service/tenants/bootstrap.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-failed-start-'));
const cleanups: Array<() => unknown> = [];

afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
  rmSync(tmp, { recursive: true, force: true });
});

/** Whether the data directory's state database has tenant `local`, and its tokens. */
async function tenantLocal(dataDir: string): Promise<{ exists: boolean; tokens: number }> {
  const { state } = openLocalStores(dataDir);
  try {
    const exists = await state.tenantExists('local');
    return { exists, tokens: exists ? (await state.listTokens('local')).length : 0 };
  } finally {
    await state.close();
  }
}

describe('a hansard serve that cannot start', () => {
  it('on a taken port exits 2 and leaves no tenant; the next start on a free port prints the admin token', async () => {
    const taken = net.createServer();
    await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
    cleanups.push(() => new Promise((r) => taken.close(r)));
    const port = (taken.address() as net.AddressInfo).port;
    const dataDir = join(tmp, 'new');

    const failed = await runServeToExit({
      dataDir,
      args: ['--port', String(port)],
      env: { HANSARD_BOOTSTRAP_TOKEN: undefined },
    });
    cleanups.push(failed.cleanup);
    expect(failed.code, failed.stdout + failed.stderr).toBe(2);
    expect(failed.stderr).toContain(`port ${port} on 127.0.0.1 is in use`);
    expect(failed.stdout).not.toContain('hns_');
    expect(await tenantLocal(dataDir)).toEqual({ exists: false, tokens: 0 });

    const srv: ServeProcess = await startServeProcess({
      dataDir,
      env: { HANSARD_BOOTSTRAP_TOKEN: undefined },
    });
    cleanups.push(() => srv.close());
    expect(srv.stdout()).toContain('Tenant "local" created. Its admin token (shown once, keep it safe):');
    const admin = /^ {2}(hns_[0-9A-Za-z]{43})$/m.exec(srv.stdout())?.[1];
    expect(admin, srv.stdout()).toBeDefined();
    const res = await fetch(`${srv.url}/v1/tokens`, { headers: { authorization: `Bearer ${admin}` } });
    expect(res.status).toBe(200);
  }, 60_000);

  it.each([
    ['too short', 'hns_short', 'has 5 characters after hns_'],
    ['without hns_', `tok_${'a'.repeat(43)}`, 'does not start with hns_'],
    [
      'with other characters',
      `hns_${'a'.repeat(42)}-`,
      'has characters other than letters and digits after hns_',
    ],
  ])(
    'with a HANSARD_BOOTSTRAP_TOKEN %s exits 2 naming the variable and its shape, and creates nothing',
    async (_, token, what) => {
      const dataDir = join(tmp, `bad-token-${_.replace(/\W/g, '-')}`);
      const failed = await runServeToExit({ dataDir, env: { HANSARD_BOOTSTRAP_TOKEN: token } });
      cleanups.push(failed.cleanup);
      expect(failed.code, failed.stdout + failed.stderr).toBe(2);
      expect(failed.stderr).toContain(
        `hansard: HANSARD_BOOTSTRAP_TOKEN must be hns_ followed by 43 letters and digits (A-Z, a-z, 0-9); the one set ${what}. Nothing was created.`,
      );
      expect(failed.stderr).not.toContain('unexpected error');
      expect(failed.stderr).not.toMatch(/^\s+at /m);
      // The value may be some other secret: it is not repeated.
      expect(failed.stderr).not.toContain(token);
      expect(failed.stdout).toBe('');
      expect(existsSync(dataDir)).toBe(false);
    },
    30_000,
  );

  it('ensureTenant refuses a malformed secret before it creates the tenant', async () => {
    const { state } = openLocalStores(join(tmp, 'ensure'));
    cleanups.push(() => state.close());
    await expect(ensureTenant(state, 'local', new Date(), 'hns_short')).rejects.toMatchObject({
      code: 'bad_request',
    });
    expect(await state.tenantExists('local')).toBe(false);
  });
});

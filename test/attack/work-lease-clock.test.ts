/**
 * Clock games with the local work lease (seed 004 "Failure posture": "A missing/corrupt local lease
 * degrades to unknown and must never be repaired by inventing activity"; lib/client/work/local.ts readLease).
 * `hansard work status` with the server away reads this machine's lease file. A lease written while the
 * machine's clock ran a year ahead (then corrected by NTP), or edited by hand, says it expires in 2099:
 * its `expires_at` is far past `renewed_at + ttl_seconds`, which no heartbeat writes.
 *
 * The case found a fault and is skipped (`FAULT: …`) so the suite stays green; remove `.skip` to see it
 * fail (it fails on main at 9e73950).
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../lib/client/cli/main.js';
import { newId } from '../../lib/log/format/ids.js';
import { useServer } from '../support/server.js';

const srv = useServer({ tokens: { reporter: ['report', 'read'] } });

/** A loopback port nothing listens on (taken, then released). */
async function deadPort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', () => resolve()));
  const { port } = s.address() as AddressInfo;
  await new Promise<void>((resolve) => s.close(() => resolve()));
  return port;
}

async function work(args: string[], env: Record<string, string>) {
  let out = '';
  let err = '';
  const code = await runCli(['work', ...args], {
    stdout: { write: (s: string | Uint8Array) => (out += String(s)) },
    stderr: { write: (s: string) => (err += s) },
    env: { HANSARD_TOKEN: srv.tokens.reporter, USER: 'priya', ...env },
    cwd: tmpdir(),
  });
  return { code, out, err };
}

describe('a local lease that no heartbeat could have written', () => {
  // Found by this attack (low); fixed: a lease expiring over 24 h past its renewal (or now) is corrupt.
  it('a lease expiring decades after its renewal reads unknown with the server away', async () => {
    const env = {
      HANSARD_STATE_DIR: mkdtempSync(join(tmpdir(), 'hansard-lease-')),
      HANSARD_SESSION_ID: newId('s'),
    };
    const started = await work(
      ['start', '--mode', 'implementing', '--summary', 'Parser error recovery', '--ttl', '10m'],
      { ...env, HANSARD_URL: srv.url },
    );
    expect([started.code, started.err]).toEqual([0, '']);
    const id = /started (wk_\w{26})/.exec(started.out)![1]!;
    const path = join(env.HANSARD_STATE_DIR, 'work', `${id}.lease.json`);
    const lease = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...lease, expires_at: '2099-01-01T00:00:00.000Z' }));
    const st = await work(['status', '--json'], {
      ...env,
      HANSARD_URL: `http://127.0.0.1:${await deadPort()}`,
    });
    expect(st.code).toBe(0);
    const row = (JSON.parse(st.out).items as { id: string; shown: string }[]).find((r) => r.id === id);
    expect(row?.shown).toBe('unknown');
  });
});

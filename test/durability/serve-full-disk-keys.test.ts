/**
 * `hansard serve` restarted on a full disk with no signing key yet (a data directory from before the
 * signed digests, issue 15.2): it serves what it holds, as a restart on a full disk does (serve-start.ts),
 * warns that no digest is signed, and answers the digest routes 503 `digests_unavailable`, instead of
 * refusing to start. Once there is room, the next start makes the key. Needs root to mount a tmpfs.
 */
import { mkdtempSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startServer } from '../../lib/deploy/local-serve.js';
import { request } from '../support/http.js';
import { writeSession } from '../support/segments.js';
import { tmpfsMounts } from '../support/tmpfs.js';

const root = mkdtempSync(join(tmpdir(), 'hansard-full-keys-'));
const tmpfs = tmpfsMounts();
const cannotMount = tmpfs.mount(join(root, 'probe'), '64k');
afterAll(() => {
  tmpfs.unmountAll();
  rmSync(root, { recursive: true, force: true });
});
const admin = `hns_${'FullD1s'.repeat(6)}A`;

function fill(path: string): void {
  const piece = Buffer.alloc(4096);
  try {
    for (;;) writeFileSync(path, piece, { flag: 'a' });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOSPC') throw err;
  }
}

describe.skipIf(cannotMount !== null)('serve on a full disk without a signing key', () => {
  it('serves with a warning, answers GET /v1/keys 503; with room again the next start makes the key', async () => {
    const data = join(root, 'data');
    expect(tmpfs.mount(data, '1m')).toBeNull();
    const logged: string[] = [];
    const start = () =>
      startServer({
        port: 0,
        host: '127.0.0.1',
        data,
        bootstrapToken: admin,
        print: () => {},
        log: (l) => logged.push(l),
        rateLimit: 0,
      });
    const first = await start();
    const seg = writeSession(join(root, 'work'));
    const posted = await request(first, 'POST', `/v1/sessions/${seg.sid}/writers/${seg.w}/chunks?offset=0`, {
      token: admin,
      body: seg.bytes,
    });
    expect(posted.status).toBe(201);
    await first.close();
    // as a data directory from before the signed digests: no keys/
    rmSync(join(data, 'keys'), { recursive: true });
    const filler = join(data, 'filler.bin');
    fill(filler);

    const second = await start();
    try {
      expect(logged.join('\n')).toContain(
        `hansard: warning: the disk holding ${data} is full: no signing key could be made, so no session digest is signed`,
      );
      expect(logged.join('\n')).not.toMatch(/\n\s+at /);
      const keys = await request(second, 'GET', '/v1/keys');
      expect(keys.status).toBe(503);
      expect(keys.json.error.code).toBe('digests_unavailable');
      const replay = await request(second, 'GET', `/v1/sessions/${seg.sid}/replay?raw=1`, { token: admin });
      expect(replay.status).toBe(200);
      expect(replay.bytes.equals(seg.bytes)).toBe(true);
    } finally {
      await second.close();
    }

    unlinkSync(filler);
    const third = await start();
    try {
      const keys = await request(third, 'GET', '/v1/keys');
      expect(keys.status).toBe(200);
      expect(keys.json.keys).toHaveLength(1);
    } finally {
      await third.close();
    }
  }, 60_000);
});

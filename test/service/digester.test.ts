/**
 * The digester loop of `hansard serve` (lib/service/digester.ts): passes never overlap, `stop()` waits
 * for the pass under way, and a session failing the same way at every pass is logged once, not every 5 s.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startDigester } from '../../lib/service/digester.js';
import { type DigestWorld, localWorld } from '../support/digest-world.js';

const root = mkdtempSync(join(tmpdir(), 'hansard-digester-'));
const worlds: DigestWorld[] = [];
afterAll(async () => {
  for (const w of worlds) await w.close();
  rmSync(root, { recursive: true, force: true });
});

describe('startDigester', () => {
  it('logs a failing session once across passes, writes its digest once the signer works, and stops cleanly', async () => {
    const world = localWorld(root);
    worlds.push(world);
    const seg = world.segment({ open: true });
    await world.ingest(seg, 0, 2);
    let broken = true;
    const signer = {
      current: async () => {
        if (broken) throw new Error('the signing key is unreachable');
        return world.keyring.current();
      },
      publicKeys: () => world.keyring.publicKeys(),
    };
    const digester = startDigester(world.deps({ signer }), 60_000);
    try {
      for (let i = 0; i < 3; i++) expect(await digester.runOnce()).toMatchObject({ due: 1, failed: 1 });
      expect(world.logs).toHaveLength(1);
      expect(world.logs[0]).toContain('the signing key is unreachable');
      broken = false;
      expect(await digester.runOnce()).toMatchObject({ due: 1, written: 1 });
      expect(await world.stores.digests.listDigests('acme', seg.sid)).toEqual([1]);
    } finally {
      await digester.stop();
    }
    // stopped: nothing runs after stop() resolved
    world.clock.t += 3_600_000;
    await new Promise((r) => setTimeout(r, 50));
    expect(await world.stores.digests.listDigests('acme', seg.sid)).toEqual([1]);
  });
});

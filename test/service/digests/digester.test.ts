/**
 * The digester loop of `hansard serve` (lib/service/digests/digester.ts): a session failing the same way at every
 * pass is logged once, not every 5 s; it is held back 1, 2, 4 … ticks, and each pass lists as many more
 * sessions, so failing sessions (the earliest due) cannot keep the others from their digests; `stop()`
 * waits for the pass under way.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startDigester } from '../../../lib/service/digests/digester.js';
import { type DigestWorld, localWorld } from '../../support/digest-world.js';

const root = mkdtempSync(join(tmpdir(), 'hansard-digester-'));
const worlds: DigestWorld[] = [];
afterAll(async () => {
  for (const w of worlds) await w.close();
  rmSync(root, { recursive: true, force: true });
});
const make = () => {
  const w = localWorld(root);
  worlds.push(w);
  return w;
};
const TICK = 5_000;

describe('startDigester', () => {
  it('logs a failing session once, holds it back a tick, writes its digest once the signer works, stops cleanly', async () => {
    const world = make();
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
    const digester = startDigester(world.deps({ signer }), TICK);
    try {
      expect(await digester.runOnce()).toMatchObject({ due: 1, failed: 1 });
      // held back: not tried again within the tick
      expect(await digester.runOnce()).toMatchObject({ due: 1, skipped: 1, failed: 0 });
      world.clock.t += TICK;
      expect(await digester.runOnce()).toMatchObject({ due: 1, failed: 1 });
      expect(world.logs).toHaveLength(1);
      expect(world.logs[0]).toContain('the signing key is unreachable');
      broken = false;
      // the wait doubled: 2 ticks
      world.clock.t += TICK;
      expect(await digester.runOnce()).toMatchObject({ skipped: 1, written: 0 });
      world.clock.t += TICK;
      expect(await digester.runOnce()).toMatchObject({ due: 1, written: 1 });
      expect(await world.stores.digests.listDigests('acme', seg.sid)).toEqual([1]);
    } finally {
      await digester.stop();
    }
    world.clock.t += 3_600_000;
    await new Promise((r) => setTimeout(r, 50));
    expect(await world.stores.digests.listDigests('acme', seg.sid)).toEqual([1]);
  });

  it('a session that keeps failing does not keep the others from their digests, even one place per pass', async () => {
    const world = make();
    const broken = world.segment({ open: true });
    const fine = world.segment({ open: true });
    await world.ingest(broken, 0, 2);
    world.clock.t += 1000;
    await world.ingest(fine, 0, 2);
    world.clock.t += 1000;
    const listWriters = world.stores.state.listWriters.bind(world.stores.state);
    world.stores.state.listWriters = async (tenant, sid) => {
      if (sid === broken.sid) throw new Error('the index of this session is damaged');
      return listWriters(tenant, sid);
    };
    const digester = startDigester(world.deps(), TICK, 1);
    try {
      expect(await digester.runOnce()).toMatchObject({ due: 1, failed: 1 });
      expect(await digester.runOnce()).toMatchObject({ due: 2, skipped: 1, written: 1 });
      expect(await world.stores.digests.listDigests('acme', fine.sid)).toEqual([1]);
    } finally {
      await digester.stop();
      world.stores.state.listWriters = listWriters;
    }
  });
});

/**
 * Ingest's side of the digests (issue 15.1/15.2, lib/service/ingest/chain.ts) on the local stores: each
 * chunk's chain is stored with it and on the writer; a writer indexed before chains were kept (chain
 * NULL) gets its chain recomputed from its chunk records; and which chunks make the session due a digest
 * at once (a writer's first chunk, its writer.end, a chunk after its end, the first after a day's quiet).
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { GENESIS_CHAIN, nextChain } from '../../../lib/audit/chain.js';
import { writeDigest } from '../../../lib/service/digests/write.js';
import { type DigestWorld, localWorld, TENANT } from '../../support/digest-world.js';
import type { LocalSegment } from '../../support/segments.js';

const root = mkdtempSync(join(tmpdir(), 'hansard-digests-ingest-'));
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
const iso = (ms: number) => new Date(ms).toISOString();
const HOUR = 3_600_000;

/** The chain of `seg`'s lines cut into chunks at `cuts` (line indexes). */
function chainOf(seg: LocalSegment, cuts: number[]): string {
  let chain = GENESIS_CHAIN;
  let offset = 0;
  for (let i = 0; i + 1 < cuts.length; i++) {
    const body = Buffer.concat(seg.lines.slice(cuts[i], cuts[i + 1]));
    chain = nextChain(chain, offset, body.length, createHash('sha256').update(body).digest('hex'));
    offset += body.length;
  }
  return chain;
}

async function dueSids(world: DigestWorld): Promise<string[]> {
  return (await world.stores.state.listDigestsDue(iso(world.clock.t), 100)).map((d) => d.sid);
}

describe('the chain at ingest', () => {
  it('is stored on each chunk record and the writer, chunk after chunk', async () => {
    const world = make();
    const seg = world.segment({ open: true });
    await world.ingest(seg, 0, 2);
    await world.ingest(seg, 2, 5);
    const writer = (await world.stores.state.getWriter(TENANT, seg.sid, seg.w))!;
    expect(writer.chain).toBe(chainOf(seg, [0, 2, 5]));
    const chunks = await world.stores.state.listChunks(TENANT, seg.sid, seg.w, 0, 10);
    expect(chunks.map((c) => c.chain)).toEqual([chainOf(seg, [0, 2]), chainOf(seg, [0, 2, 5])]);
  });

  it('of a writer stored before chains (NULL) is recomputed from all its chunk records', async () => {
    const world = make();
    const seg = world.segment({ open: true });
    // one chunk record per line: the recompute reads them all
    const cuts = [0, 1, 2, 3, 4, 5, 6];
    for (let i = 0; i + 1 < cuts.length; i++) await world.ingest(seg, cuts[i]!, cuts[i + 1]!);
    const db = new Database(join(world.dir, 'state.sqlite'));
    db.prepare('UPDATE writers SET chain = NULL').run();
    db.prepare('UPDATE chunks SET chain = NULL').run();
    db.close();
    expect((await world.stores.state.getWriter(TENANT, seg.sid, seg.w))!.chain).toBeNull();
    // pages of 2 records: the recompute reads every page, not the first
    const list = world.stores.state.listChunks.bind(world.stores.state);
    let pages = 0;
    world.stores.state.listChunks = (t, sid, w, from, limit) => {
      pages += 1;
      return list(t, sid, w, from, Math.min(limit, 2));
    };
    // a digest of the legacy writer computes its chain from the records
    const d = (await writeDigest(world.deps(), TENANT, seg.sid, 'scheduled'))!.digest;
    expect(d.writers[0]!.chain).toBe(chainOf(seg, cuts));
    expect(d.chunks).toHaveLength(6);
    expect(pages).toBe(3);
    // the next chunk continues from the recomputed chain, and stores it
    await world.ingest(seg, 6, 8);
    expect((await world.stores.state.getWriter(TENANT, seg.sid, seg.w))!.chain).toBe(
      chainOf(seg, [...cuts, 8]),
    );
  });
});

describe('a chunk that makes the session due a digest at once', () => {
  it("a writer's first chunk; not its next ones while the session waits for its cadence", async () => {
    const world = make();
    const seg = world.segment({ open: true });
    await world.ingest(seg, 0, 2);
    expect(await dueSids(world)).toEqual([seg.sid]);
    await writeDigest(world.deps({ audit: { intervalSeconds: 86_400 } }), TENANT, seg.sid, 'scheduled');
    world.clock.t += HOUR;
    await world.ingest(seg, 2, 4);
    expect(await dueSids(world)).toEqual([]);
  });

  it('a chunk holding writer.end, and a chunk to a writer that has ended', async () => {
    const world = make();
    const seg = world.segment();
    const n = seg.lines.length;
    await world.ingest(seg, 0, 2);
    await writeDigest(world.deps({ audit: { intervalSeconds: 86_400 } }), TENANT, seg.sid, 'scheduled');
    world.clock.t += HOUR;
    await world.ingest(seg, 2, n);
    expect(await dueSids(world)).toEqual([seg.sid]);
    await writeDigest(world.deps(), TENANT, seg.sid, 'writer_end');
    expect(await dueSids(world)).toEqual([]);
    world.clock.t += HOUR;
    // a line after writer.end (stored as written): the closed session is due again
    const late = Buffer.from(`{"sid":"${seg.sid}","w":"${seg.w}","late":true}\n`);
    const stored = seg.lines.reduce((s, l) => s + l.length, 0);
    await world.ingest({ ...seg, lines: [...seg.lines, late] }, n, n + 1);
    expect((await world.stores.state.getWriter(TENANT, seg.sid, seg.w))!.length).toBe(stored + late.length);
    expect(await dueSids(world)).toEqual([seg.sid]);
  });

  it('the first chunk after a day without one, not after 23 hours', async () => {
    const world = make();
    const quiet = world.segment({ open: true });
    const busy = world.segment({ open: true });
    for (const seg of [quiet, busy]) {
      await world.ingest(seg, 0, 2);
      await writeDigest(
        world.deps({ audit: { intervalSeconds: 86_400 * 3, maxIntervalSeconds: 86_400 * 3 } }),
        TENANT,
        seg.sid,
        'scheduled',
      );
    }
    world.clock.t += 23 * HOUR;
    await world.ingest(busy, 2, 3);
    world.clock.t += 2 * HOUR;
    await world.ingest(quiet, 2, 3);
    expect(await dueSids(world)).toEqual([quiet.sid]);
  });
});

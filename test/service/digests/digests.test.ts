/**
 * Signed session digests (lib/service/digests/write.ts, issue 15.2) over real stores: the local ones (SQLite,
 * files) and the AWS ones on their emulators (DynamoDB Local, s3rver), with a fixed clock and chunks
 * ingested through the real `ingestChunk`. The cadence is the default: 300 s, doubling while unchanged.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../../harness/dynamodb-local.js';
import { type LocalS3, startS3rver } from '../../../harness/s3rver.js';
import {
  canonicalJson,
  digestHash,
  GENESIS_CHAIN,
  nextChain,
  signingInput,
} from '../../../lib/audit/chain.js';
import type { SignedDigest } from '../../../lib/audit/schemas.js';
import { verifySignature } from '../../../lib/audit/signature.js';
import { writeDigest, writeDueDigests } from '../../../lib/service/digests/write.js';
import { StateConflictError } from '../../../lib/store/index.js';
import { awsWorld, type DigestWorld, localWorld, T0, TENANT } from '../../support/digest-world.js';
import type { LocalSegment } from '../../support/segments.js';

const root = mkdtempSync(join(tmpdir(), 'hansard-digests-svc-'));
let dynamo: DynamoLocal;
let s3: LocalS3;
const worlds: DigestWorld[] = [];
beforeAll(async () => {
  [dynamo, s3] = await Promise.all([startDynamoLocal(), startS3rver()]);
}, 120_000);
afterAll(async () => {
  for (const w of worlds) await w.close();
  await dynamo?.stop();
  await s3?.close();
  rmSync(root, { recursive: true, force: true });
});

const BACKENDS = {
  'SQLite + files': async () => localWorld(root),
  'DynamoDB Local + s3rver': async () => awsWorld(root, dynamo, s3),
} as const;

const iso = (ms: number) => new Date(ms).toISOString();
const chunkOf = (seg: LocalSegment, from: number, to: number) => {
  const offset = seg.lines.slice(0, from).reduce((s, l) => s + l.length, 0);
  const body = Buffer.concat(seg.lines.slice(from, to));
  return { w: seg.w, offset, length: body.length, sha256: createHash('sha256').update(body).digest('hex') };
};

/** Every signature verifies with the keyring's key, and each digest's previous is the one before it. */
async function expectChain(world: DigestWorld, digests: SignedDigest[]): Promise<void> {
  const keys = await world.keyring.publicKeys();
  digests.forEach((d, i) => {
    expect(d.seq).toBe(i + 1);
    const key = keys.find((k) => k.key_id === d.key_id)!;
    expect(verifySignature(key.public_key, signingInput(d), d.signature), `signature of ${d.seq}`).toBe(true);
    const prev = digests[i - 1];
    expect(d.previous).toEqual(
      prev ? { seq: prev.seq, sha256: digestHash(prev), signature: prev.signature } : null,
    );
  });
}

for (const [name, open] of Object.entries(BACKENDS)) {
  describe(name, () => {
    const make = async () => {
      const w = await open();
      worlds.push(w);
      return w;
    };

    it("a writer's first chunk makes the session due at once: digest 1 lists it, signed, next due in 300 s", async () => {
      const world = await make();
      const seg = world.segment({ open: true });
      await world.ingest(seg, 0, 3);
      world.clock.t += 1000;
      expect((await world.stores.state.listDigestsDue(iso(world.clock.t), 10)).map((d) => d.sid)).toEqual([
        seg.sid,
      ]);
      const pass = await writeDueDigests(world.deps(), world.now(), 10);
      expect(pass).toEqual({ due: 1, written: 1, skipped: 0, failed: 0 });
      const [d1, ...rest] = await world.stored(seg.sid);
      expect(rest).toEqual([]);
      const c = chunkOf(seg, 0, 3);
      expect(d1).toMatchObject({
        format: 'hansard.digest.v1',
        tenant: TENANT,
        sid: seg.sid,
        seq: 1,
        at: iso(T0 + 1000),
        reason: 'scheduled',
        next_due: iso(T0 + 1000 + 300_000),
        previous: null,
        chunks: [c],
        writers: [
          {
            w: seg.w,
            length: c.length,
            lines: 3,
            chain: nextChain(GENESIS_CHAIN, 0, c.length, c.sha256),
            ended: false,
          },
        ],
        key_id: (await world.keyring.current()).key_id,
      });
      await expectChain(world, [d1!]);
      // stored as its canonical JSON, byte for byte
      const bytes = await world.stores.digests.getDigest(TENANT, seg.sid, 1);
      expect(Buffer.from(bytes!).toString()).toBe(canonicalJson(d1));
      // the writer's index holds the same chain
      expect((await world.stores.state.getWriter(TENANT, seg.sid, seg.w))!.chain).toBe(d1!.writers[0]!.chain);
      // not due again before next_due; a chunk in between waits for it
      await world.ingest(seg, 3, 5);
      world.clock.t += 299_000;
      expect(await world.stores.state.listDigestsDue(iso(world.clock.t - 1), 10)).toEqual([]);
      world.clock.t += 1000;
      expect(await writeDueDigests(world.deps(), world.now(), 10)).toMatchObject({ written: 1 });
      const d2 = (await world.stored(seg.sid))[1]!;
      expect(d2.chunks).toEqual([chunkOf(seg, 3, 5)]);
      expect(d2.next_due).toBe(iso(world.clock.t + 300_000));
    });

    it('a writer.end makes a writer_end digest at the next tick, closed (next_due null) when every writer ended', async () => {
      const world = await make();
      const seg = world.segment();
      await world.ingest(seg, 0, 4);
      await writeDueDigests(world.deps(), world.now(), 10);
      world.clock.t += 10_000;
      await world.ingest(seg, 4, seg.lines.length);
      world.clock.t += 1000;
      expect(await writeDueDigests(world.deps(), world.now(), 10)).toMatchObject({ due: 1, written: 1 });
      const ds = await world.stored(seg.sid);
      expect(ds.map((d) => [d.seq, d.reason, d.next_due])).toEqual([
        [1, 'scheduled', iso(T0 + 300_000)],
        [2, 'writer_end', null],
      ]);
      expect(ds[1]!.chunks).toEqual([chunkOf(seg, 4, seg.lines.length)]);
      expect(ds[1]!.writers[0]!.ended).toBe(true);
      await expectChain(world, ds);
    });

    it('nothing changed: a digest is written at the cadence all the same, chunks [], the wait doubled each time', async () => {
      const world = await make();
      const seg = world.segment({ open: true });
      await world.ingest(seg, 0, 2);
      await writeDueDigests(world.deps(), world.now(), 10);
      const waits: number[] = [];
      for (let i = 0; i < 3; i++) {
        const head = (await world.stores.state.getDigestHead(TENANT, seg.sid))!;
        const stored = (await world.stored(seg.sid)).at(-1)!;
        world.clock.t = Date.parse(stored.next_due!);
        waits.push((Date.parse(stored.next_due!) - Date.parse(head.at)) / 1000);
        expect(await writeDueDigests(world.deps(), world.now(), 10)).toMatchObject({ written: 1 });
      }
      const ds = await world.stored(seg.sid);
      expect(ds.map((d) => d.chunks.length)).toEqual([1, 0, 0, 0]);
      expect(waits).toEqual([300, 600, 1200]);
      expect((Date.parse(ds[3]!.next_due!) - Date.parse(ds[3]!.at)) / 1000).toBe(2400);
      expect(ds.slice(1).every((d) => d.reason === 'scheduled')).toBe(true);
      await expectChain(world, ds);
    });

    it('the wait stops doubling at the cap', async () => {
      const world = await make();
      const seg = world.segment({ open: true });
      await world.ingest(seg, 0, 2);
      const deps = world.deps({ audit: { intervalSeconds: 1, maxIntervalSeconds: 4 } });
      const waits: number[] = [];
      for (let i = 0; i < 5; i++) {
        const d = (await writeDigest(deps, TENANT, seg.sid, 'scheduled'))!.digest;
        waits.push((Date.parse(d.next_due!) - Date.parse(d.at)) / 1000);
        world.clock.t = Date.parse(d.next_due!);
      }
      expect(waits).toEqual([1, 2, 4, 4, 4]);
    });

    it('an open session with no chunk for 7 days is closed: its digest says next_due null; its next chunk reopens it', async () => {
      const world = await make();
      const seg = world.segment({ open: true });
      await world.ingest(seg, 0, 2);
      const deps = world.deps({ audit: { intervalSeconds: 86_400, maxIntervalSeconds: 86_400 } });
      const dues: (string | null)[] = [];
      for (let day = 0; day <= 7; day++) {
        world.clock.t = T0 + day * 86_400_000;
        const d = (await writeDigest(deps, TENANT, seg.sid, 'scheduled'))!.digest;
        dues.push(d.next_due);
      }
      expect(dues.slice(0, 7).every((d) => d !== null)).toBe(true);
      expect(dues[7]).toBeNull();
      expect((await world.stores.state.getDigestHead(TENANT, seg.sid))!.closed).toBe(true);
      world.clock.t += 86_400_000;
      expect(await writeDueDigests(deps, world.now(), 10)).toMatchObject({ due: 0 });
      // a chunk after more than a day's quiet makes it due; the digest lists it and is open again
      await world.ingest(seg, 2, 3);
      expect(await writeDueDigests(deps, world.now(), 10)).toMatchObject({ due: 1, written: 1 });
      const last = (await world.stored(seg.sid)).at(-1)!;
      expect(last.chunks).toEqual([chunkOf(seg, 2, 3)]);
      expect(last.next_due).toBe(iso(world.clock.t + 86_400_000));
    });

    it('a closed session gets no digest however long it waits, until a new chunk makes it due', async () => {
      const world = await make();
      const seg = world.segment();
      await world.ingest(seg, 0, seg.lines.length);
      expect(await writeDueDigests(world.deps(), world.now(), 10)).toMatchObject({ written: 1 });
      expect((await world.stored(seg.sid))[0]!.next_due).toBeNull();
      world.clock.t += 3 * 86_400_000;
      expect(await writeDueDigests(world.deps(), world.now(), 10)).toEqual({
        due: 0,
        written: 0,
        skipped: 0,
        failed: 0,
      });
      // a second writer joins: its first chunk makes the session due
      const other = world.segment({ sid: seg.sid, open: true, agent: 'reviewer' });
      await world.ingest(other, 0, 2);
      expect(await writeDueDigests(world.deps(), world.now(), 10)).toMatchObject({ due: 1, written: 1 });
      const ds = await world.stored(seg.sid);
      expect(ds).toHaveLength(2);
      expect(ds[1]!.chunks).toEqual([chunkOf(other, 0, 2)]);
      expect(ds[1]!.writers.map((w) => w.w)).toEqual([seg.w, other.w].sort());
      expect(ds[1]!.next_due).toBe(iso(world.clock.t + 300_000));
      await expectChain(world, ds);
    });

    it('concurrent writeDigest calls for one session make one chain: consecutive seqs, no fork', async () => {
      const world = await make();
      const seg = world.segment({ open: true });
      await world.ingest(seg, 0, 2);
      // Each call gets its own instant, so their records (and bytes) differ: only one may take a seq.
      let tick = 0;
      const deps = { ...world.deps(), now: () => new Date(world.clock.t + ++tick) };
      const results = await Promise.all(
        Array.from({ length: 6 }, () => writeDigest(deps, TENANT, seg.sid, 'export')),
      );
      const ds = await world.stored(seg.sid);
      expect(ds.length).toBeGreaterThanOrEqual(1);
      expect(results.filter((r) => r !== null)).toHaveLength(ds.length);
      await expectChain(world, ds);
      expect((await world.stores.state.getDigestHead(TENANT, seg.sid))!.seq).toBe(ds.length);
      // the race where both read the same head before either stores: exactly one wins seq n+1
      const n = ds.length;
      const put = world.stores.digests.putDigest.bind(world.stores.digests);
      let waiting: (() => void)[] = [];
      world.stores.digests.putDigest = async (...args) => {
        await new Promise<void>((resolve) => {
          waiting.push(resolve);
          if (waiting.length === 2) for (const go of waiting.splice(0)) go();
        });
        return put(...args);
      };
      try {
        const pair = await Promise.all([
          writeDigest(deps, TENANT, seg.sid, 'export'),
          writeDigest(deps, TENANT, seg.sid, 'export'),
        ]);
        expect(pair.filter((r) => r !== null).map((r) => r!.digest.seq)).toEqual([n + 1]);
      } finally {
        world.stores.digests.putDigest = put;
        waiting = [];
      }
      const after = await world.stored(seg.sid);
      expect(after).toHaveLength(n + 1);
      await expectChain(world, after);
    });

    it('a crash between storing digest n+1 and moving the head heals: the next write adopts it and goes on', async () => {
      const world = await make();
      const seg = world.segment({ open: true });
      await world.ingest(seg, 0, 2);
      await writeDigest(world.deps(), TENANT, seg.sid, 'scheduled');
      world.clock.t += 300_000;
      await world.ingest(seg, 2, 4);
      const putHead = world.stores.state.putDigestHead.bind(world.stores.state);
      world.stores.state.putDigestHead = async () => {
        throw new Error('the process died here');
      };
      await expect(writeDigest(world.deps(), TENANT, seg.sid, 'scheduled')).rejects.toThrow('died');
      world.stores.state.putDigestHead = putHead;
      expect((await world.stores.state.getDigestHead(TENANT, seg.sid))!.seq).toBe(1);
      expect(await world.stores.digests.listDigests(TENANT, seg.sid)).toEqual([1, 2]);
      // the session is still due (its mark was not moved): the next pass adopts 2 and writes 3
      world.clock.t += 1000;
      expect(await writeDueDigests(world.deps(), world.now(), 10)).toMatchObject({ written: 1, failed: 0 });
      const ds = await world.stored(seg.sid);
      expect(ds.map((d) => d.seq)).toEqual([1, 2, 3]);
      expect(ds[1]!.chunks).toEqual([chunkOf(seg, 2, 4)]);
      expect(ds[2]!.chunks).toEqual([]);
      await expectChain(world, ds);
      expect((await world.stores.state.getDigestHead(TENANT, seg.sid))!.seq).toBe(3);
    });

    it('a head moved by another process meanwhile: the call answers null, nothing forked', async () => {
      const world = await make();
      const seg = world.segment({ open: true });
      await world.ingest(seg, 0, 2);
      const putHead = world.stores.state.putDigestHead.bind(world.stores.state);
      world.stores.state.putDigestHead = async () => {
        throw new StateConflictError('another process moved the head');
      };
      try {
        expect(await writeDigest(world.deps(), TENANT, seg.sid, 'scheduled')).toBeNull();
      } finally {
        world.stores.state.putDigestHead = putHead;
      }
    });
  });
}

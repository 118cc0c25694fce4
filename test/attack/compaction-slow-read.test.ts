/**
 * Attack 4 on compaction (issue 17.2): a read that is slower than the compactor. A reader of a writer's
 * small chunk objects (16 GETs in flight) is a third of the compactor's pace (48 in flight), and reads a
 * compacted run at once: once it has caught up with the compactor's frontier it is inside the run being
 * compacted each time that run is put and its chunk objects deleted, so every run after that is a GET of
 * a deleted object (ChunkVanishedError) and a new listing. readSegment lists at most READ_LISTINGS = 4
 * times. The compactor's step is run from a middleware of the reader's client at the reader's first GET
 * of each region's chunk objects (exactly when a slower reader meets it). s3rver, real SDK.
 */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/index.js';
import type { SegmentKey } from '../../lib/store/index.js';
import { S3SegmentCompactor } from '../../lib/store/s3/compaction.js';
import { writerPrefix } from '../../lib/store/s3/segment-objects.js';
import { S3SegmentStore } from '../../lib/store/s3/segment-store.js';
import { readAll, useS3Bucket } from '../support/s3-bucket.js';

const s3 = useS3Bucket();

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');
const line = (i: number) => Buffer.from(`${JSON.stringify({ i }).padEnd(99, ' ')}\n`);
const PER_RUN = 10;

async function writer(n: number) {
  const key: SegmentKey = { tenant: 'acme', sid: newId('s'), w: newId('w') };
  const store = new S3SegmentStore({ client: s3.admin, bucket: s3.bucket });
  const chunks = Array.from({ length: n }, (_, i) => line(i));
  for (let i = 0; i < n; i++) await store.putChunk(key, i * 100, chunks[i]!);
  return { key, chunks, bytes: Buffer.concat(chunks) };
}

/**
 * A reader's client: at its first GET of a chunk object (not a run) of a region not compacted yet, the
 * compactor compacts that region's run of `PER_RUN` chunks (put, then deletes) before the GET is sent.
 */
function readerClient(w: { key: SegmentKey; chunks: Buffer[] }) {
  const compactor = new S3SegmentCompactor({ client: s3.admin, bucket: s3.bucket });
  const prefix = writerPrefix(w.key);
  const compacted = new Set<number>();
  const client = s3.client();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Key?: string };
      const m = /^(\d{15})\.jsonl$/.exec(input.Key?.slice(prefix.length) ?? '');
      if (context.commandName === 'GetObjectCommand' && m) {
        const region = Math.floor(Number(m[1]) / 100 / PER_RUN);
        if (!compacted.has(region) && (region + 1) * PER_RUN <= w.chunks.length) {
          compacted.add(region);
          const [from, to] = [region * PER_RUN, (region + 1) * PER_RUN];
          const run = Buffer.concat(w.chunks.slice(from, to));
          const objects = (await compactor.listObjects(w.key, to * 100)).filter(
            (o) => !o.compacted && o.offset >= from * 100,
          );
          await compactor.putCompacted(w.key, from * 100, run, sha(run));
          await compactor.deleteObjects(w.key, objects);
        }
      }
      return next(args);
    },
    { step: 'initialize', name: 'compactorAheadOfReader' },
  );
  return { client, runs: () => compacted.size };
}

describe('a read slower than the compactor over a writer of several runs', () => {
  // Was a FAULT (fixed in dfc245a: vanishes are counted only while the read makes no progress): a read
  // of a writer being compacted failed after READ_LISTINGS = 4 vanished objects, i.e. when the compaction
  // wrote a 4th run while the read was on, with ChunkVanishedError after bytes were yielded, so a replay
  // that answered 200 was cut off mid-stream. A writer of 4+ runs is >= 192 MiB of small objects, the
  // sessions compaction is for, and a reader of small objects (16 GETs in flight) is a third of the
  // compactor's pace (48), so a replay started near a writer's end met every run after the first.
  it('reads every byte of a 4-run writer compacted ahead of it (4 vanishes)', async () => {
    const w = await writer(4 * PER_RUN);
    const { client, runs } = readerClient(w);
    const reader = new S3SegmentStore({ client, bucket: s3.bucket, listingTtlMs: 0 });
    const got = await readAll(reader.readSegment(w.key, w.bytes.length));
    expect(runs()).toBe(4);
    expect(got.equals(w.bytes)).toBe(true);
    client.destroy();
  }, 120_000);

  it('held: 3 runs compacted ahead of the read (3 vanishes): every byte', async () => {
    const w = await writer(3 * PER_RUN);
    const { client, runs } = readerClient(w);
    const reader = new S3SegmentStore({ client, bucket: s3.bucket, listingTtlMs: 0 });
    expect((await readAll(reader.readSegment(w.key, w.bytes.length))).equals(w.bytes)).toBe(true);
    expect(runs()).toBe(3);
    client.destroy();
  }, 120_000);
});

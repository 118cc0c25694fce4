/**
 * `SegmentStore.missingBytes` and `SegmentDataLossError` (issue 8) against both adapters: the filesystem
 * store in a temp directory (a file cut short) and the S3 store over the real AWS SDK against s3rver on
 * loopback (a chunk object deleted). Both name the first missing range, so the service can answer
 * 500 `data_loss` before streaming and verify can report the range.
 */
import { mkdtemp, rm, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalS3, startS3rver } from '../../harness/s3rver.js';
import { newId } from '../../lib/log/index.js';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';
import { SegmentDataLossError, type SegmentKey, type SegmentStore } from '../../lib/store/index.js';
import { S3SegmentStore } from '../../lib/store/s3/segment-store.js';

let s3: LocalS3;
let bucket: string;
let root: string;

beforeAll(async () => {
  s3 = await startS3rver();
  bucket = await s3.createBucket();
  root = await mkdtemp(join(tmpdir(), 'hansard-loss-store-'));
});

afterAll(async () => {
  await s3?.close();
  await rm(root, { recursive: true, force: true });
});

const key = (): SegmentKey => ({ tenant: 'acme', sid: newId('s'), w: newId('w') });
const a = Buffer.from('0123456789'); // bytes [0, 10)
const b = Buffer.from('abcdefghij'); // bytes [10, 20)
const c = Buffer.from('KLMNO\n'); // bytes [20, 26)

async function readAll(store: SegmentStore, k: SegmentKey, end: number): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const p of store.readSegment(k, end)) parts.push(p);
  return Buffer.concat(parts);
}

interface Adapter {
  name: string;
  store: () => SegmentStore;
  /** takes bytes [10, 20) away, the way that adapter can lose them */
  lose: (store: SegmentStore, k: SegmentKey) => Promise<void>;
  /** where the loss ends: a file cut at 10 loses its whole tail; a missing chunk object only its own bytes */
  lostEnd: (end: number) => number;
}

const ADAPTERS: Adapter[] = [
  {
    name: 'FsSegmentStore (a file cut short)',
    store: () => new FsSegmentStore(root),
    lose: async (store, k) => truncate((store as FsSegmentStore).pathOf(k), 10),
    lostEnd: (end) => end,
  },
  {
    name: 'S3SegmentStore on s3rver (a chunk object deleted)',
    store: () => new S3SegmentStore({ client: s3.client(), bucket }),
    lose: async (_store, k) => {
      await s3.client().send(
        new DeleteObjectCommand({
          Bucket: bucket,
          Key: `tenants/${k.tenant}/sessions/${k.sid}/${k.w}/000000000000010.jsonl`,
        }),
      );
    },
    lostEnd: () => 20,
  },
];

for (const ad of ADAPTERS) {
  describe(ad.name, () => {
    it('missingBytes is null for a segment held whole, for an empty range, and names [0, end) for nothing stored', async () => {
      const store = ad.store();
      const k = key();
      await store.putChunk(k, 0, a);
      await store.putChunk(k, 10, b);
      expect(await store.missingBytes(k, 20)).toBeNull();
      expect(await store.missingBytes(k, 15)).toBeNull();
      expect(await store.missingBytes(key(), 0)).toBeNull();
      expect(await store.missingBytes(key(), 7)).toEqual({ start: 0, end: 7 });
    });

    it('names the first missing range, and readSegment throws SegmentDataLossError with it before any byte', async () => {
      const store = ad.store();
      const k = key();
      await store.putChunk(k, 0, a);
      await store.putChunk(k, 10, b);
      await store.putChunk(k, 20, c);
      await ad.lose(store, k);
      const range = { start: 10, end: ad.lostEnd(26) };
      expect(await store.missingBytes(k, 26)).toEqual(range);
      expect(await store.missingBytes(k, 10)).toBeNull();
      expect((await readAll(store, k, 10)).equals(a)).toBe(true);
      const yielded: Uint8Array[] = [];
      const err = await (async () => {
        try {
          for await (const p of store.readSegment(k, 26)) yielded.push(p);
        } catch (e) {
          return e;
        }
        return null;
      })();
      expect(err).toBeInstanceOf(SegmentDataLossError);
      expect((err as SegmentDataLossError).range).toEqual(range);
      expect((err as SegmentDataLossError).key).toEqual(k);
      expect(yielded).toEqual([]);
    });
  });
}

/**
 * The SegmentStore contract against both adapters: `FsSegmentStore` in a temp directory, and
 * `S3SegmentStore` over the real AWS SDK and real HTTP against s3rver on loopback (one fresh bucket for
 * this file; see harness/s3rver.ts for where s3rver is made to answer as S3 does). Then what is
 * particular to S3: the key scheme, pagination, loud gaps, and the emulator's fidelity where the adapter
 * relies on it.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DeleteObjectCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalS3, startS3rver } from '../../harness/s3rver.js';
import { newId } from '../../lib/log/index.js';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';
import type { SegmentKey } from '../../lib/store/index.js';
import { S3SegmentStore } from '../../lib/store/s3/segment-store.js';
import { runSegmentStoreContract, type StoreHandle } from './segment-store.contract.js';

let s3: LocalS3;
let bucket: string;

beforeAll(async () => {
  s3 = await startS3rver();
  bucket = await s3.createBucket();
});

afterAll(async () => {
  await s3?.close();
});

/** An S3SegmentStore on this file's bucket with its own client, counting the requests it sends. */
function s3Handle(opts: { staleAfterMs?: number; listPageSize?: number } = {}): StoreHandle & {
  client: S3Client;
} {
  const client = s3.client();
  let sent = 0;
  client.middlewareStack.add(
    (next) => async (args) => {
      sent += 1;
      return next(args);
    },
    { step: 'finalizeRequest', name: 'countRequests' },
  );
  return {
    client,
    store: new S3SegmentStore({ client, bucket, ...opts }),
    requests: () => sent,
    cleanup: async () => client.destroy(),
  };
}

runSegmentStoreContract({
  name: 'FsSegmentStore',
  newStore: async () => {
    const root = await mkdtemp(join(tmpdir(), 'hansard-fs-store-'));
    return { store: new FsSegmentStore(root), cleanup: () => rm(root, { recursive: true, force: true }) };
  },
  unacknowledged: { policy: 'replace' },
});

runSegmentStoreContract({
  name: 'S3SegmentStore on s3rver',
  newStore: async () => s3Handle(),
  // staleAfterMs 0: every object is already stale, which exercises the conditional replacement
  unacknowledged: { policy: 'replace-when-stale', newStaleStore: async () => s3Handle({ staleAfterMs: 0 }) },
});

describe('S3SegmentStore on s3rver', () => {
  const key = (): SegmentKey => ({ tenant: 'acme', sid: newId('s'), w: newId('w') });
  const text = (s: string) => Buffer.from(s, 'utf8');

  it('names each chunk object tenants/{tenant}/sessions/{sid}/{w}/{offset:015}.jsonl, typed as NDJSON', async () => {
    const { store, client, cleanup } = s3Handle();
    const k = key();
    await store.putChunk(k, 0, text('a\n'));
    await store.putChunk(k, 2, text('bc\n'));
    await store.putChunk(k, 5, text('d\n'));
    const listed = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: `tenants/acme/sessions/${k.sid}/` }),
    );
    const prefix = `tenants/acme/sessions/${k.sid}/${k.w}/`;
    expect(listed.Contents?.map((o) => o.Key)).toEqual([
      `${prefix}000000000000000.jsonl`,
      `${prefix}000000000000002.jsonl`,
      `${prefix}000000000000005.jsonl`,
    ]);
    const head = await client.send(
      new HeadObjectCommand({ Bucket: bucket, Key: `${prefix}000000000000002.jsonl` }),
    );
    expect(head.ContentType).toBe('application/x-ndjson');
    expect(head.ContentLength).toBe(3);
    await cleanup();
  });

  it('refuses an offset the 15-digit key cannot name, before any request', async () => {
    const { store, requests, cleanup } = s3Handle();
    for (const offset of [-1, 1.5, 10 ** 15, Number.NaN]) {
      await expect(store.putChunk(key(), offset, text('x\n'))).rejects.toThrow(RangeError);
    }
    expect(requests?.()).toBe(0);
    await cleanup();
  });

  it('reads a writer listed over many ListObjectsV2 pages', async () => {
    const { store, requests, cleanup } = s3Handle({ listPageSize: 2 });
    const k = key();
    const parts = Array.from({ length: 7 }, (_, i) => text(`line ${i}\n`));
    let offset = 0;
    for (const p of parts) {
      await store.putChunk(k, offset, p);
      offset += p.length;
    }
    const before = requests!();
    const got: Buffer[] = [];
    for await (const piece of store.readSegment(k, offset)) got.push(Buffer.from(piece));
    expect(Buffer.concat(got)).toEqual(Buffer.concat(parts));
    expect(requests!() - before).toBe(4 + 7); // four pages of at most two keys, then one GET per chunk
    await cleanup();
  });

  it('stops listing once the keys pass end', async () => {
    const { store, requests, cleanup } = s3Handle({ listPageSize: 2 });
    const k = key();
    const parts = Array.from({ length: 6 }, (_, i) => text(`${i}\n`));
    for (const [i, p] of parts.entries()) await store.putChunk(k, i * 2, p);
    const before = requests!();
    const got: Buffer[] = [];
    for await (const piece of store.readSegment(k, 4)) got.push(Buffer.from(piece));
    expect(Buffer.concat(got).toString()).toBe('0\n1\n');
    expect(requests!() - before).toBe(2 + 2); // pages [0,2] and [4,6] (6 ≥ end stops it), two GETs
    await cleanup();
  });

  it('throws naming the gap when a chunk object in the middle is missing, before yielding a byte', async () => {
    const { store, client, cleanup } = s3Handle();
    const k = key();
    await store.putChunk(k, 0, text('aa\n'));
    await store.putChunk(k, 3, text('bbbb\n'));
    await store.putChunk(k, 8, text('c\n'));
    await client.send(
      new DeleteObjectCommand({
        Bucket: bucket,
        Key: `tenants/acme/sessions/${k.sid}/${k.w}/000000000000003.jsonl`,
      }),
    );
    const got: Uint8Array[] = [];
    const reading = (async () => {
      for await (const piece of store.readSegment(k, 10)) got.push(piece);
    })();
    await expect(reading).rejects.toThrow(
      `segment tenants/acme/sessions/${k.sid}/${k.w}/ is missing bytes [3, 8)`,
    );
    expect(got).toEqual([]);
    await cleanup();
  });

  it('throws when two chunk objects overlap', async () => {
    const { store, client, cleanup } = s3Handle();
    const k = key();
    await store.putChunk(k, 0, text('aaaa\n'));
    await client.send(
      new PutObjectCommand({
        Bucket: bucket,
        Key: `tenants/acme/sessions/${k.sid}/${k.w}/000000000000002.jsonl`,
        Body: 'zz\n',
      }),
    );
    const reading = (async () => {
      for await (const _ of store.readSegment(k, 5)) {
      }
    })();
    await expect(reading).rejects.toThrow(/overlapping chunks/);
    await cleanup();
  });

  it('stopping a read early aborts the fetches under way, and the store reads on', async () => {
    const { store, cleanup } = s3Handle();
    const k = key();
    const big = Buffer.alloc(3 * 1024 * 1024, 0x61);
    big[big.length - 1] = 0x0a;
    await store.putChunk(k, 0, big);
    for await (const piece of store.readSegment(k, big.length)) {
      expect(piece.length).toBeLessThanOrEqual(256 * 1024);
      break;
    }
    const got: Buffer[] = [];
    for await (const piece of store.readSegment(k, big.length)) got.push(Buffer.from(piece));
    expect(Buffer.concat(got).equals(big)).toBe(true);
    await cleanup();
  });

  it('a stale object is replaced by one of two concurrent replacers, whole (If-Match)', async () => {
    const { store: fresh, cleanup: c1 } = s3Handle();
    const a = s3Handle({ staleAfterMs: 0 });
    const b = s3Handle({ staleAfterMs: 0 });
    const k = key();
    await fresh.putChunk(k, 0, text('crashed before the index advanced\n'));
    const x = text('replacement x\n');
    const y = text('replacement y\n');
    const results = await Promise.allSettled([a.store.putChunk(k, 0, x), b.store.putChunk(k, 0, y)]);
    expect(results.some((r) => r.status === 'fulfilled')).toBe(true);
    const got: Buffer[] = [];
    for await (const piece of fresh.readSegment(k, x.length)) got.push(Buffer.from(piece));
    expect([x.toString(), y.toString()]).toContain(Buffer.concat(got).toString());
    await Promise.all([c1(), a.cleanup(), b.cleanup()]);
  });

  describe('the emulator answers as S3 does where the adapter relies on it', () => {
    it('If-None-Match: * on an existing key is 412 PreconditionFailed, and the object is kept', async () => {
      const { client, cleanup } = s3Handle();
      const Key = `fidelity/${newId('e')}`;
      await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body: 'first', IfNoneMatch: '*' }));
      const err = await client
        .send(new PutObjectCommand({ Bucket: bucket, Key, Body: 'second', IfNoneMatch: '*' }))
        .catch((e: unknown) => e);
      expect(err).toBeInstanceOf(S3ServiceException);
      expect((err as S3ServiceException).name).toBe('PreconditionFailed');
      expect((err as S3ServiceException).$metadata.httpStatusCode).toBe(412);
      const head = await client.send(new HeadObjectCommand({ Bucket: bucket, Key }));
      expect(head.ContentLength).toBe(5);
      await cleanup();
    });

    it('If-Match with another ETag is 412, on a missing key 404 NoSuchKey', async () => {
      const { client, cleanup } = s3Handle();
      const Key = `fidelity/${newId('e')}`;
      const put = await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body: 'first' }));
      const stale = await client
        .send(
          new PutObjectCommand({
            Bucket: bucket,
            Key,
            Body: 'x',
            IfMatch: '"0123456789abcdef0123456789abcdef"',
          }),
        )
        .catch((e: unknown) => e as S3ServiceException);
      expect(stale).toMatchObject({ name: 'PreconditionFailed', $metadata: { httpStatusCode: 412 } });
      await client.send(new PutObjectCommand({ Bucket: bucket, Key, Body: 'second', IfMatch: put.ETag }));
      const missing = await client
        .send(new PutObjectCommand({ Bucket: bucket, Key: `${Key}-absent`, Body: 'x', IfMatch: put.ETag }))
        .catch((e: unknown) => e as S3ServiceException);
      expect(missing).toMatchObject({ name: 'NoSuchKey', $metadata: { httpStatusCode: 404 } });
      await cleanup();
    });

    it('a SHA-256 checksum that does not match the body is 400 BadDigest', async () => {
      const { client, cleanup } = s3Handle();
      const Key = `fidelity/${newId('e')}`;
      const err = await client
        .send(
          new PutObjectCommand({
            Bucket: bucket,
            Key,
            Body: 'the body',
            ChecksumSHA256: 'AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=',
          }),
        )
        .catch((e: unknown) => e as S3ServiceException);
      expect(err).toMatchObject({ name: 'BadDigest', $metadata: { httpStatusCode: 400 } });
      await cleanup();
    });
  });
});

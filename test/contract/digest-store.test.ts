/**
 * The `DigestStore` port (issue 15, lib/store/digests.ts) against both adapters: `FsDigestStore` in
 * a temp data directory and `S3DigestStore` over the real AWS SDK against s3rver on loopback. The same
 * cases run on both: create-only, a retry of the same bytes, other bytes refused, listing ascending (past
 * one listing page on S3), ids that could leave the session refused before any I/O. Then what each
 * adapter has of its own: the file layout and the temp files, the object keys.
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalS3, startS3rver } from '../../harness/s3rver.js';
import { newId } from '../../lib/log/format/ids.js';
import { DigestConflictError, type DigestStore } from '../../lib/store/digests.js';
import { FsDigestStore } from '../../lib/store/fs/digest-store.js';
import { S3DigestStore } from '../../lib/store/s3/digest-store.js';

let s3: LocalS3;
let bucket: string;
let client: S3Client;
let root: string;

beforeAll(async () => {
  s3 = await startS3rver();
  bucket = await s3.createBucket();
  client = s3.client();
  root = await mkdtemp(join(tmpdir(), 'hansard-digests-'));
});

afterAll(async () => {
  client?.destroy();
  await s3?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

const bytesOf = (text: string) => new Uint8Array(Buffer.from(text));
const digest = (seq: number, extra = '') => bytesOf(`{"format":"hansard.digest.v1","seq":${seq}${extra}}`);

interface Backend {
  name: string;
  store: () => Promise<DigestStore>;
}

const backends: Backend[] = [
  {
    name: 'FsDigestStore',
    store: async () => new FsDigestStore(await mkdtemp(join(root, 'data-'))),
  },
  {
    name: 'S3DigestStore (s3rver)',
    // 2 keys a page: the listing cases go past the first page
    store: async () => new S3DigestStore({ client, bucket, listPageSize: 2 }),
  },
];

for (const backend of backends) {
  describe(backend.name, () => {
    it('stores a digest create-only and reads it back; a missing one is null, none listed is []', async () => {
      const store = await backend.store();
      const sid = newId('s');
      expect(await store.getDigest('acme', sid, 1)).toBeNull();
      expect(await store.listDigests('acme', sid)).toEqual([]);
      await store.putDigest('acme', sid, 1, digest(1));
      expect(Buffer.from((await store.getDigest('acme', sid, 1))!).toString()).toBe(
        Buffer.from(digest(1)).toString(),
      );
      expect(await store.getDigest('acme', sid, 2)).toBeNull();
      // another tenant's session of the same id holds nothing
      expect(await store.getDigest('globex', sid, 1)).toBeNull();
      expect(await store.listDigests('globex', sid)).toEqual([]);
    });

    it('resolves the same bytes again (a retry) and refuses other bytes, keeping the first', async () => {
      const store = await backend.store();
      const sid = newId('s');
      await store.putDigest('acme', sid, 1, digest(1));
      await expect(store.putDigest('acme', sid, 1, digest(1))).resolves.toBeUndefined();
      const other = store.putDigest('acme', sid, 1, digest(1, ',"x":1'));
      await expect(other).rejects.toBeInstanceOf(DigestConflictError);
      await expect(other).rejects.toThrow(/digest 1 of session s_\w+ is already stored with other bytes/);
      // same length, one byte different: still refused
      await expect(
        store.putDigest('acme', sid, 1, bytesOf(Buffer.from(digest(1)).toString().replace('1}', '2}'))),
      ).rejects.toBeInstanceOf(DigestConflictError);
      expect(Buffer.from((await store.getDigest('acme', sid, 1))!).equals(digest(1))).toBe(true);
      expect(await store.listDigests('acme', sid)).toEqual([1]);
    });

    it('lets exactly one of two different digests written at once at a seq win', async () => {
      const store = await backend.store();
      const sid = newId('s');
      const a = digest(3, ',"by":"a"');
      const b = digest(3, ',"by":"b"');
      const settled = await Promise.allSettled([
        store.putDigest('acme', sid, 3, a),
        store.putDigest('acme', sid, 3, b),
      ]);
      expect(settled.map((r) => r.status).sort()).toEqual(['fulfilled', 'rejected']);
      const lost = settled.find((r) => r.status === 'rejected') as PromiseRejectedResult;
      expect(lost.reason).toBeInstanceOf(DigestConflictError);
      const winner = settled[0]!.status === 'fulfilled' ? a : b;
      expect(Buffer.from((await store.getDigest('acme', sid, 3))!).equals(winner)).toBe(true);
      // and two writes of the same bytes at once both resolve
      await Promise.all([store.putDigest('acme', sid, 4, a), store.putDigest('acme', sid, 4, a)]);
      expect(await store.listDigests('acme', sid)).toEqual([3, 4]);
    });

    it("lists the session's seqs ascending (numerically, past one page), no other session's", async () => {
      const store = await backend.store();
      const sid = newId('s');
      const other = newId('s');
      for (const seq of [10, 2, 1, 9, 100]) await store.putDigest('acme', sid, seq, digest(seq));
      await store.putDigest('acme', other, 5, digest(5));
      await store.putDigest('globex', sid, 7, digest(7));
      expect(await store.listDigests('acme', sid)).toEqual([1, 2, 9, 10, 100]);
      expect(await store.listDigests('acme', other)).toEqual([5]);
      expect(await store.listDigests('globex', sid)).toEqual([7]);
    });

    it('refuses ids that could leave the session, and seqs the name cannot hold, before any I/O', async () => {
      const store = await backend.store();
      const sid = newId('s');
      const bad: Array<[string, string]> = [
        ['..', sid],
        ['acme/../globex', sid],
        ['Acme', sid],
        ['acme', '../../etc'],
        ['acme', `${sid}/../${newId('s')}`],
        ['acme', 's_..'],
        ['acme', ''],
      ];
      for (const [tenant, s] of bad) {
        await expect(store.putDigest(tenant, s, 1, digest(1))).rejects.toBeInstanceOf(TypeError);
        await expect(store.getDigest(tenant, s, 1)).rejects.toBeInstanceOf(TypeError);
        await expect(store.listDigests(tenant, s)).rejects.toBeInstanceOf(TypeError);
      }
      for (const seq of [0, -1, 1.5, Number.NaN, 1_000_000_000]) {
        await expect(store.putDigest('acme', sid, seq, digest(1))).rejects.toBeInstanceOf(RangeError);
        await expect(store.getDigest('acme', sid, seq)).rejects.toBeInstanceOf(RangeError);
      }
      expect(await store.listDigests('acme', sid)).toEqual([]);
    });
  });
}

describe('FsDigestStore, on disk', () => {
  it('writes {data}/tenants/{t}/sessions/{sid}/digests/{seq:09}.json and leaves no temp file', async () => {
    const data = await mkdtemp(join(root, 'layout-'));
    const store = new FsDigestStore(data);
    const sid = newId('s');
    await store.putDigest('acme', sid, 12, digest(12));
    await store.putDigest('acme', sid, 12, digest(12)); // the retry's temp file goes too
    await expect(store.putDigest('acme', sid, 12, digest(13))).rejects.toBeInstanceOf(DigestConflictError);
    const dir = join(data, 'tenants', 'acme', 'sessions', sid, 'digests');
    expect(readdirSync(dir)).toEqual(['000000012.json']);
    expect(readFileSync(join(dir, '000000012.json')).equals(digest(12))).toBe(true);
  });

  it('never replaces a file already at the name (written by another process), and ignores other names', async () => {
    const data = await mkdtemp(join(root, 'existing-'));
    const store = new FsDigestStore(data);
    const sid = newId('s');
    const dir = join(data, 'tenants', 'acme', 'sessions', sid, 'digests');
    await mkdir(dir, { recursive: true });
    writeFileSync(join(dir, '000000001.json'), 'theirs');
    writeFileSync(join(dir, '.000000002.json.abc.tmp'), 'a crashed temp file');
    writeFileSync(join(dir, 'notes.txt'), 'not a digest');
    await expect(store.putDigest('acme', sid, 1, digest(1))).rejects.toBeInstanceOf(DigestConflictError);
    expect(readFileSync(join(dir, '000000001.json'), 'utf8')).toBe('theirs');
    await store.putDigest('acme', sid, 1, bytesOf('theirs'));
    expect(await store.listDigests('acme', sid)).toEqual([1]);
  });

  it('makes nothing outside the data directory for a traversal', async () => {
    const data = await mkdtemp(join(root, 'traversal-'));
    const store = new FsDigestStore(join(data, 'inner'));
    await expect(store.putDigest('acme', '../../../escaped', 1, digest(1))).rejects.toBeInstanceOf(TypeError);
    expect(readdirSync(data)).toEqual([]);
    expect(existsSync(join(root, 'escaped'))).toBe(false);
  });
});

describe('S3DigestStore, in the bucket', () => {
  it("keeps digest seq under tenants/{t}/sessions/{sid}/digests/{seq:09}.json, beside the writers' prefixes", async () => {
    const store = new S3DigestStore({ client, bucket });
    const sid = newId('s');
    await store.putDigest('acme', sid, 7, digest(7));
    const listed = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, Prefix: `tenants/acme/sessions/${sid}/` }),
    );
    expect(listed.Contents?.map((o) => o.Key)).toEqual([
      `tenants/acme/sessions/${sid}/digests/000000007.json`,
    ]);
  });
});

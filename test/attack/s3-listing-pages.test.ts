/**
 * Attack 5 on the S3 listings now paged by the SDK's `paginateListObjectsV2` (lib/store/s3/segment-store.ts
 * `listChunks`, s3/compaction.ts `listObjects`, s3/digest-store.ts `listDigests`), on s3rver through the
 * real SDK, every ListObjectsV2 recorded by a middleware on the client (its input: Prefix, StartAfter,
 * ContinuationToken, MaxKeys). Tried: pages of 1..3 keys, objects with odd names beside the chunks
 * (look-alikes, a sub-folder, a run whose size does not match its name), reads whose end falls mid-page
 * and on a page boundary (the listing must stop at the first key at or past the end, and send no page
 * after it), a kept listing extended with StartAfter riding on every page with the continuation token,
 * two runs at one offset on either side of that StartAfter, and a read aborted between two pages.
 */
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/index.js';
import type { SegmentKey } from '../../lib/store/index.js';
import { S3SegmentCompactor } from '../../lib/store/s3/compaction.js';
import { digestObjectKey, digestPrefix, S3DigestStore } from '../../lib/store/s3/digest-store.js';
import {
  chunkObjectKey,
  chunkOffsetOf,
  compactedObjectKey,
  listedObject,
  writerPrefix,
} from '../../lib/store/s3/segment-objects.js';
import { S3SegmentStore } from '../../lib/store/s3/segment-store.js';
import { readAll, useS3Bucket } from '../support/s3-bucket.js';

const s3 = useS3Bucket();

interface ListSent {
  prefix: string | undefined;
  startAfter: string | undefined;
  token: string | undefined;
  maxKeys: number | undefined;
}

/** A client that records every ListObjectsV2 it sends, and runs `hook` before the `nth` one. */
function listingClient(hook?: { nth: number; run: () => void | Promise<void> }) {
  const lists: ListSent[] = [];
  const client = s3.client();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'ListObjectsV2Command') {
        const i = args.input as {
          Prefix?: string;
          StartAfter?: string;
          ContinuationToken?: string;
          MaxKeys?: number;
        };
        lists.push({
          prefix: i.Prefix,
          startAfter: i.StartAfter,
          token: i.ContinuationToken,
          maxKeys: i.MaxKeys,
        });
        if (hook && lists.length === hook.nth) await hook.run();
      }
      return next(args);
    },
    { step: 'initialize', name: 'recordLists' },
  );
  return { client, lists };
}

const line = (i: number) => Buffer.from(`${JSON.stringify({ i }).padEnd(99, ' ')}\n`);
const put = (Key: string, Body: Buffer) =>
  s3.admin.send(new PutObjectCommand({ Bucket: s3.bucket, Key, Body }));

/** A writer of `n` 100-byte chunk objects (offsets 0, 100, …), put as ingest puts them. */
async function writer(n: number): Promise<{ key: SegmentKey; prefix: string; bytes: Buffer }> {
  const key = { tenant: 'acme', sid: newId('s'), w: newId('w') };
  const store = new S3SegmentStore({ client: s3.admin, bucket: s3.bucket });
  const chunks = Array.from({ length: n }, (_, i) => line(i));
  for (let i = 0; i < n; i++) await store.putChunk(key, i * 100, chunks[i]!);
  return { key, prefix: writerPrefix(key), bytes: Buffer.concat(chunks) };
}

/** Objects beside a writer's chunks that are not ones of ours (each must be passed over). */
async function oddNeighbours(key: SegmentKey, prefix: string): Promise<string[]> {
  const names = [
    `${prefix}000000000000100.jsonl.tmp`,
    `${prefix}000000000000150.json`,
    `${prefix}00000000000020.jsonl`,
    `${prefix}000000000000250x.jsonl`,
    `${prefix}000000000000300-junk.jsonl`,
    `${prefix}README`,
    `${prefix}sub/000000000000000.jsonl`,
    `${prefix}.hidden`,
    // a run's name with a size that is not its range's: not one of ours either
    compactedObjectKey(key, 200, 400),
    `${prefix}000000000000450-000000000000400.jsonl`,
  ];
  for (const n of names) await put(n, Buffer.from('x'));
  return names;
}

/** Every object under `prefix` in the order the server lists them (one unpaged listing of the s3.admin). */
async function serverObjects(prefix: string): Promise<{ key: string; size: number }[]> {
  const page = await s3.admin.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: prefix }));
  expect(page.IsTruncated).toBe(false);
  return (page.Contents ?? []).map((o) => ({ key: o.Key!, size: o.Size ?? 0 }));
}
const serverOrder = async (prefix: string) => (await serverObjects(prefix)).map((o) => o.key);

/**
 * The ListObjectsV2 requests a listing that stops at the first key at or past `end` needs: the pages up
 * to and including the one with that key (all pages when there is none).
 */
function pagesNeeded(order: string[], prefix: string, end: number, pageSize: number): number {
  const stop = order.findIndex((k) => chunkOffsetOf(prefix, k) >= end);
  return stop === -1 ? Math.max(1, Math.ceil(order.length / pageSize)) : Math.floor(stop / pageSize) + 1;
}

describe('paged listings of a writer (segment store)', () => {
  it('held: reads of every end, mid-chunk, mid-page and on page boundaries, pages of 1..3, with odd neighbours', async () => {
    const { key, prefix, bytes } = await writer(10);
    await oddNeighbours(key, prefix);
    const order = await serverOrder(prefix);
    // s3rver lists in UTF-8 binary order, as S3 does
    expect(order).toEqual([...order].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
    for (const pageSize of [1, 2, 3]) {
      for (const end of [1, 99, 100, 101, 250, 300, 450, 699, 700, 999, 1000]) {
        const { client, lists } = listingClient();
        const reader = new S3SegmentStore({
          client,
          bucket: s3.bucket,
          listPageSize: pageSize,
          listingTtlMs: 0,
        });
        const got = await readAll(reader.readSegment(key, end));
        const what = `page ${pageSize}, end ${end}`;
        expect(got.equals(bytes.subarray(0, end)), what).toBe(true);
        expect(lists.length, what).toBe(pagesNeeded(order, prefix, end, pageSize));
        expect(
          lists.every((l) => l.prefix === prefix && l.maxKeys === pageSize && l.startAfter === undefined),
        ).toBe(true);
        expect(lists[0]!.token, what).toBeUndefined();
        expect(
          lists.slice(1).every((l) => typeof l.token === 'string'),
          what,
        ).toBe(true);
        client.destroy();
      }
    }
  }, 300_000);

  it('held: missingBytes stops as early as a read and finds the gap behind odd neighbours', async () => {
    const { key, prefix } = await writer(8);
    await oddNeighbours(key, prefix);
    const order = await serverOrder(prefix);
    for (const pageSize of [1, 2, 3]) {
      const { client, lists } = listingClient();
      const reader = new S3SegmentStore({
        client,
        bucket: s3.bucket,
        listPageSize: pageSize,
        listingTtlMs: 0,
      });
      expect(await reader.missingBytes(key, 450)).toBeNull();
      expect(lists.length).toBe(pagesNeeded(order, prefix, 450, pageSize));
      // past the writer's end: the listing runs to the last page, and the gap is named
      lists.length = 0;
      expect(await reader.missingBytes(key, 900)).toEqual({ start: 800, end: 900 });
      expect(lists.length).toBeGreaterThanOrEqual(Math.ceil(order.length / pageSize));
      client.destroy();
    }
  }, 300_000);

  it('held: a kept listing is extended with StartAfter on every page beside the continuation token', async () => {
    const { key, prefix, bytes } = await writer(12);
    await oddNeighbours(key, prefix);
    for (const pageSize of [1, 2, 3]) {
      const { client, lists } = listingClient();
      const reader = new S3SegmentStore({
        client,
        bucket: s3.bucket,
        listPageSize: pageSize,
        listingTtlMs: 60_000,
      });
      expect((await readAll(reader.readSegment(key, 350))).equals(bytes.subarray(0, 350))).toBe(true);
      const first = lists.length;
      // the session grew: the second read lists only after the kept listing's last chunk (offset 300)
      const got = await readAll(reader.readSegment(key, 1150));
      expect(got.equals(bytes.subarray(0, 1150)), `page ${pageSize}`).toBe(true);
      const more = lists.slice(first);
      expect(more.length, `page ${pageSize}`).toBeGreaterThan(1);
      const after = chunkObjectKey(key, 300);
      expect(
        more.every((l) => l.startAfter === after),
        `page ${pageSize}`,
      ).toBe(true);
      expect(more[0]!.token).toBeUndefined();
      expect(more.slice(1).every((l) => typeof l.token === 'string')).toBe(true);
      // the server went on from the token (keys after `after` only, each once): no more pages than keys
      const order = await serverOrder(prefix);
      const rest = order.filter((k) => Buffer.compare(Buffer.from(k), Buffer.from(after)) > 0);
      expect(more.length).toBe(Math.ceil(rest.length / pageSize));
      // and the third read, inside the kept listing, lists nothing
      lists.length = 0;
      expect((await readAll(reader.readSegment(key, 1000))).equals(bytes.subarray(0, 1000))).toBe(true);
      expect(lists).toHaveLength(0);
      client.destroy();
    }
  }, 300_000);

  it('held: two runs at one offset, the shorter kept last: the extended listing lists the longer again and still reads right', async () => {
    // Objects: run [0,400), run [0,200) (an older, shorter one), chunks 400 and 500. The kept listing of a
    // read to 300 ends with the shorter run (by offset, then longest first), whose key sorts BEFORE the
    // longer one's, so the extension (StartAfter it) lists [0,400) a second time.
    const key = { tenant: 'acme', sid: newId('s'), w: newId('w') };
    const prefix = writerPrefix(key);
    const lines = Array.from({ length: 6 }, (_, i) => line(i));
    const bytes = Buffer.concat(lines);
    await put(compactedObjectKey(key, 0, 400), bytes.subarray(0, 400));
    await put(compactedObjectKey(key, 0, 200), bytes.subarray(0, 200));
    await put(chunkObjectKey(key, 400), lines[4]!);
    await put(chunkObjectKey(key, 500), lines[5]!);
    for (const pageSize of [1, 2, 3]) {
      const { client, lists } = listingClient();
      const reader = new S3SegmentStore({
        client,
        bucket: s3.bucket,
        listPageSize: pageSize,
        listingTtlMs: 60_000,
      });
      expect((await readAll(reader.readSegment(key, 300))).equals(bytes.subarray(0, 300))).toBe(true);
      const first = lists.length;
      const got = await readAll(reader.readSegment(key, 600));
      expect(got.equals(bytes), `page ${pageSize}`).toBe(true);
      expect(lists.slice(first).every((l) => l.startAfter === compactedObjectKey(key, 0, 200))).toBe(true);
      expect(await reader.missingBytes(key, 600)).toBeNull();
      client.destroy();
    }
    expect((await serverOrder(prefix))[0]).toBe(compactedObjectKey(key, 0, 200));
  }, 120_000);

  it('held: a read aborted between two pages sends no further page and rejects with the reason', async () => {
    const { key } = await writer(20);
    const controller = new AbortController();
    const reason = new Error('caller went away');
    const { client, lists } = listingClient({ nth: 3, run: () => controller.abort(reason) });
    const reader = new S3SegmentStore({ client, bucket: s3.bucket, listPageSize: 1, listingTtlMs: 0 });
    await expect(
      readAll(reader.readSegment(key, 2000, 0, undefined, { signal: controller.signal })),
    ).rejects.toBe(reason);
    expect(lists.length).toBe(3);
    client.destroy();
  }, 120_000);
});

describe('paged listings of the compactor and the digest store', () => {
  it('held: the compactor lists every object before the end, pages of 1..3, odd neighbours passed over', async () => {
    const { key, prefix } = await writer(9);
    await oddNeighbours(key, prefix);
    const order = await serverObjects(prefix);
    for (const pageSize of [1, 2, 3]) {
      for (const end of [1, 250, 450, 900, 5000]) {
        const { client, lists } = listingClient();
        const c = new S3SegmentCompactor({ client, bucket: s3.bucket, listPageSize: pageSize });
        const objects = await c.listObjects(key, end);
        const what = `page ${pageSize}, end ${end}`;
        const want = Array.from({ length: 9 }, (_, i) => i * 100).filter((o) => o < end);
        expect(
          objects.map((o) => [o.offset, o.size]),
          what,
        ).toEqual(want.map((o) => [o, 100]));
        // stops on the page holding the first object of ours at or past the end (as the old loop did)
        const first = order.findIndex((o) => {
          const listed = listedObject(prefix, o.key, o.size);
          return listed !== null && listed.offset >= end;
        });
        const need = first === -1 ? Math.ceil(order.length / pageSize) : Math.floor(first / pageSize) + 1;
        expect(lists.length, what).toBe(need);
        client.destroy();
      }
    }
  }, 300_000);

  it('held: the digest store lists every digest over pages of 1..3, passing over odd names', async () => {
    const sid = newId('s');
    const prefix = digestPrefix('acme', sid);
    const seqs = [1, 2, 3, 10, 11, 999, 1000, 123456789];
    for (const s of seqs) await put(digestObjectKey('acme', sid, s), Buffer.from('{}'));
    for (const odd of [
      '000000000.json',
      '00000001.json',
      '000000004.json.tmp',
      'x.json',
      'sub/000000005.json',
    ]) {
      await put(`${prefix}${odd}`, Buffer.from('{}'));
    }
    // another session's digests must not leak in
    await put(digestObjectKey('acme', newId('s'), 7), Buffer.from('{}'));
    const total = (await serverOrder(prefix)).length;
    for (const pageSize of [1, 2, 3]) {
      const { client, lists } = listingClient();
      const store = new S3DigestStore({ client, bucket: s3.bucket, listPageSize: pageSize });
      expect(await store.listDigests('acme', sid)).toEqual(seqs);
      expect(lists.length).toBe(Math.ceil(total / pageSize));
      expect(lists.every((l) => l.prefix === prefix && l.maxKeys === pageSize)).toBe(true);
      client.destroy();
    }
  }, 300_000);
});

/**
 * `SegmentStore.readSegment` stops when its reader is gone (issue 8 item 3), on both adapters: an aborted
 * `signal` ends the stream with the signal's reason, and an early `return()` ends it quietly; either way
 * what the read held is released. For the file store that is counted in this process's descriptors
 * (`/proc/self/fd`); for S3 (s3rver over real HTTP) in the requests still open on the emulator's side.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalS3, startS3rver } from '../../harness/s3rver.js';
import { newId } from '../../lib/log/index.js';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';
import type { SegmentKey, SegmentStore } from '../../lib/store/index.js';
import { S3SegmentStore } from '../../lib/store/s3/segment-store.js';

const CHUNK = 1024 * 1024;
const CHUNKS = 4;
/** 4 MiB in 1 MiB chunks of 64-byte lines: many reads of a small chunk size. */
const line = (i: number) => `${JSON.stringify({ i, pad: 'x'.repeat(40) }).padEnd(63, ' ')}\n`;
const chunkBytes = (c: number) =>
  Buffer.from(Array.from({ length: CHUNK / 64 }, (_, i) => line(c * (CHUNK / 64) + i)).join(''));

let s3: LocalS3;
let root: string;
let stores: Array<{ name: string; store: SegmentStore }>;
const key: SegmentKey = { tenant: 'acme', sid: newId('s'), w: newId('w') };

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'hansard-abort-store-'));
  s3 = await startS3rver();
  const bucket = await s3.createBucket();
  stores = [
    { name: 'FsSegmentStore', store: new FsSegmentStore(root) },
    { name: 'S3SegmentStore', store: new S3SegmentStore({ client: s3.client(), bucket }) },
  ];
  for (const { store } of stores) {
    for (let c = 0; c < CHUNKS; c++) await store.putChunk(key, c * CHUNK, chunkBytes(c));
  }
});
afterAll(async () => {
  await s3?.close();
  rmSync(root, { recursive: true, force: true });
});

const END = CHUNK * CHUNKS;
const openFds = () => readdirSync('/proc/self/fd').length;

async function settleFds(base: number): Promise<number> {
  for (let i = 0; i < 200 && openFds() > base; i++) await new Promise((r) => setTimeout(r, 10));
  return openFds();
}

describe.each(['FsSegmentStore', 'S3SegmentStore'])('readSegment of %s', (name) => {
  const store = () => stores.find((s) => s.name === name)!.store;

  it('with a signal aborted before the first read yields nothing and rejects with its reason', async () => {
    const ac = new AbortController();
    ac.abort(new Error('client gone'));
    const it = store()
      .readSegment(key, END, 0, 16 * 1024, { signal: ac.signal })
      [Symbol.asyncIterator]();
    await expect(it.next()).rejects.toThrow('client gone');
  });

  it('aborted mid-read rejects with its reason and gives no more bytes', async () => {
    const ac = new AbortController();
    const it = store()
      .readSegment(key, END, 0, 16 * 1024, { signal: ac.signal })
      [Symbol.asyncIterator]();
    let got = 0;
    const first = await it.next();
    got += (first.value as Uint8Array).length;
    ac.abort(new Error('client gone'));
    await expect(
      (async () => {
        for (;;) {
          const n = await it.next();
          if (n.done) return;
          got += n.value.length;
        }
      })(),
    ).rejects.toThrow('client gone');
    expect(got).toBeLessThan(END);
  });

  it('returns the bytes of a read that is not aborted', async () => {
    const ac = new AbortController();
    const parts: Uint8Array[] = [];
    for await (const p of store().readSegment(key, END, 0, 64 * 1024, { signal: ac.signal })) parts.push(p);
    expect(Buffer.concat(parts).equals(Buffer.concat([0, 1, 2, 3].map(chunkBytes)))).toBe(true);
  });
});

describe('FsSegmentStore', () => {
  it('leaves no descriptor open after 200 reads aborted or closed at every point of their life', async () => {
    const store = stores[0]!.store;
    const base = openFds();
    for (let i = 0; i < 200; i++) {
      const ac = new AbortController();
      const it = store.readSegment(key, END, 0, 16 * 1024, { signal: ac.signal })[Symbol.asyncIterator]();
      const pending = it.next();
      // Abort while the file is checked, opened, being read, or between reads; or close it early.
      if (i % 4 === 0) ac.abort();
      else if (i % 4 === 1) setImmediate(() => ac.abort());
      else if (i % 4 === 2) setTimeout(() => ac.abort(), i % 7);
      try {
        await pending;
        if (i % 4 === 3) await it.return?.(undefined);
        else for (;;) if ((await it.next()).done) break;
      } catch (err) {
        expect((err as Error).name).toBe('AbortError');
      }
    }
    expect(await settleFds(base)).toBe(base);
  });
});

describe('S3SegmentStore', () => {
  it('aborts the GETs under way when the signal is aborted', async () => {
    const store = stores[1]!.store;
    const ac = new AbortController();
    const it = store.readSegment(key, END, 0, undefined, { signal: ac.signal })[Symbol.asyncIterator]();
    await it.next();
    ac.abort(new Error('client gone'));
    const started = Date.now();
    await expect(it.next()).rejects.toThrow('client gone');
    // Rejected at once, not after the windows fetched ahead have all come in.
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

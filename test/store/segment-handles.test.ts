/**
 * The segment files `FsSegmentStore` keeps open between chunks (lib/store/segment-handles.ts, issue 16.3):
 * one descriptor per writer however many chunks, at most `maxOpen`, closed when idle and by `close()`,
 * closed after a failure; and never written blindly: a file replaced, removed or cut behind the store's
 * back is found at the next chunk as it was when every chunk opened its file, and a tail torn in place is
 * found through the kept descriptor. Real files, descriptors counted in /proc/self/fd.
 */
import {
  closeSync,
  linkSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { newId } from '../../lib/log/index.js';
import { FsSegmentStore } from '../../lib/store/fs-segment-store.js';
import { SegmentDataLossError } from '../../lib/store/storage-errors.js';

const root = mkdtempSync(join(tmpdir(), 'hansard-handles-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** Descriptors of this process open on files under `dir`. */
function openUnder(dir: string): string[] {
  const out: string[] = [];
  for (const fd of readdirSync('/proc/self/fd')) {
    try {
      const target = readlinkSync(`/proc/self/fd/${fd}`);
      if (target.startsWith(dir)) out.push(target);
    } catch {
      // closed while listed
    }
  }
  return out;
}

const key = () => ({ tenant: 'acme', sid: newId('s'), w: newId('w') });
const line = (n: number) => Buffer.from(`{"n":${n},"pad":"${'x'.repeat(40)}"}\n`);

function store(opts: ConstructorParameters<typeof FsSegmentStore>[1] = {}) {
  const dir = mkdtempSync(join(root, 'data-'));
  return { dir, s: new FsSegmentStore(dir, opts) };
}

describe('kept segment files', () => {
  it('one descriptor per writer across its chunks; close() releases it', async () => {
    const { dir, s } = store();
    const k = key();
    let at = 0;
    for (let n = 0; n < 5; n++) {
      await s.putChunk(k, at, line(n));
      at += line(n).length;
      expect(openUnder(dir)).toEqual([s.pathOf(k)]);
    }
    expect(readFileSync(s.pathOf(k)).length).toBe(at);
    await s.close();
    expect(openUnder(dir)).toEqual([]);
    // Closed, the store opens the file again for the next chunk.
    await s.putChunk(k, at, line(9));
    expect(openUnder(dir)).toEqual([s.pathOf(k)]);
    await s.close();
  });

  it('at most maxOpen descriptors, least recently used closed first', async () => {
    const { dir, s } = store({ maxOpen: 3 });
    const keys = Array.from({ length: 8 }, key);
    for (const k of keys) {
      await s.putChunk(k, 0, line(0));
      expect(openUnder(dir).length).toBeLessThanOrEqual(3);
    }
    await new Promise((r) => setTimeout(r, 20)); // closes of the evicted ones settle
    expect(new Set(openUnder(dir))).toEqual(new Set(keys.slice(-3).map((k) => s.pathOf(k))));
    // 8 writers at once: each has its file while its chunk runs; afterwards no more than 3 stay.
    await Promise.all(keys.map((k) => s.putChunk(k, line(0).length, line(1))));
    await new Promise((r) => setTimeout(r, 20));
    expect(openUnder(dir).length).toBeLessThanOrEqual(3);
    for (const k of keys)
      expect(readFileSync(s.pathOf(k)).equals(Buffer.concat([line(0), line(1)]))).toBe(true);
    await s.close();
    expect(openUnder(dir)).toEqual([]);
  });

  it('closes a file idle for idleMs; maxOpen 0 keeps none', async () => {
    const idle = store({ idleMs: 40 });
    await idle.s.putChunk(key(), 0, line(0));
    expect(openUnder(idle.dir).length).toBe(1);
    await new Promise((r) => setTimeout(r, 200));
    expect(openUnder(idle.dir)).toEqual([]);
    const none = store({ maxOpen: 0 });
    await none.s.putChunk(key(), 0, line(0));
    expect(openUnder(none.dir)).toEqual([]);
  });
});

describe('a kept file is never written blindly', () => {
  it('replaced behind the store (renamed over): the chunk goes to the file at the path, the old one is untouched', async () => {
    const { dir, s } = store();
    const k = key();
    await s.putChunk(k, 0, line(0));
    const path = s.pathOf(k);
    linkSync(path, join(dir, 'old.link')); // the kept inode, still reachable
    writeFileSync(join(dir, 'new.tmp'), line(5));
    renameSync(join(dir, 'new.tmp'), path);
    await s.putChunk(k, line(0).length, line(1));
    expect(readFileSync(join(dir, 'old.link')).equals(line(0))).toBe(true);
    expect(readFileSync(path).equals(Buffer.concat([line(5), line(1)]))).toBe(true);
    expect(openUnder(dir)).toEqual([path]);
    await s.close();
  });

  it('removed behind the store: data loss, and the descriptor is closed', async () => {
    const { dir, s } = store();
    const k = key();
    await s.putChunk(k, 0, line(0));
    unlinkSync(s.pathOf(k));
    await expect(s.putChunk(k, line(0).length, line(1))).rejects.toBeInstanceOf(SegmentDataLossError);
    // The old inode is not written, nothing is kept open after the failure.
    expect(openUnder(dir)).toEqual([]);
  });

  it('cut shorter in place: data loss with the missing range', async () => {
    const { s } = store();
    const k = key();
    await s.putChunk(k, 0, Buffer.concat([line(0), line(1)]));
    truncateSync(s.pathOf(k), 10);
    const err = await s.putChunk(k, 2 * line(0).length, line(2)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SegmentDataLossError);
    expect((err as SegmentDataLossError).range).toEqual({ start: 10, end: 2 * line(0).length });
    await s.close();
  });

  it('a tail torn in place is found through the kept descriptor', async () => {
    const { dir, s } = store();
    const k = key();
    const body = Buffer.concat([line(0), line(1)]);
    await s.putChunk(k, 0, body);
    expect(openUnder(dir)).toEqual([s.pathOf(k)]);
    expect(await s.tornTail(k, body.length)).toBeNull();
    const fd = openSync(s.pathOf(k), 'r+');
    writeSync(fd, Buffer.alloc(5), 0, 5, body.length - 5); // NULs where the last line's end was
    closeSync(fd);
    expect(await s.tornTail(k, body.length)).toEqual({ start: line(0).length, end: body.length });
    await s.close();
  });
});

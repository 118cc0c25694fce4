/**
 * How `FsSegmentStore` uses its files for a chunk (issue 16.3): no descriptor stays open after a chunk or a
 * torn-tail check (an open one would keep the volume from being remounted read-only or unmounted), the
 * folders of a new session are made when the open finds them missing, and each chunk finds what happened
 * behind the store's back: a file replaced (the chunk goes to the file at the path, the old one is
 * untouched), removed or cut (data loss), or torn in place (the torn range). Real files, descriptors counted
 * in /proc/self/fd.
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
import { newId } from '../../../lib/log/index.js';
import { SegmentDataLossError } from '../../../lib/store/errors.js';
import { FsSegmentStore } from '../../../lib/store/fs/segment-store.js';

const root = mkdtempSync(join(tmpdir(), 'hansard-segment-files-'));
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

function store() {
  const dir = mkdtempSync(join(root, 'data-'));
  return { dir, s: new FsSegmentStore(dir) };
}

describe('FsSegmentStore’s files', () => {
  it('no descriptor stays open after chunks, torn-tail checks or failures; folders are made for a new session', async () => {
    const { dir, s } = store();
    const keys = Array.from({ length: 6 }, key);
    const at = new Map<string, number>();
    for (let n = 0; n < 4; n++) {
      await Promise.all(
        keys.map(async (k) => {
          const off = at.get(k.w) ?? 0;
          expect(await s.tornTail(k, off)).toBeNull();
          await s.putChunk(k, off, line(n));
          at.set(k.w, off + line(n).length);
        }),
      );
      expect(openUnder(dir)).toEqual([]);
    }
    for (const k of keys) expect(readFileSync(s.pathOf(k)).length).toBe(4 * line(0).length);
    // A refused chunk (data loss) leaves nothing open either.
    await expect(s.putChunk(keys[0]!, 10 * line(0).length, line(9))).rejects.toBeInstanceOf(
      SegmentDataLossError,
    );
    expect(openUnder(dir)).toEqual([]);
  });

  it('a file replaced behind the store (renamed over): the chunk goes to the file at the path, the old one is untouched', async () => {
    const { dir, s } = store();
    const k = key();
    await s.putChunk(k, 0, line(0));
    const path = s.pathOf(k);
    linkSync(path, join(dir, 'old.link'));
    writeFileSync(join(dir, 'new.tmp'), line(5));
    renameSync(join(dir, 'new.tmp'), path);
    await s.putChunk(k, line(0).length, line(1));
    expect(readFileSync(join(dir, 'old.link')).equals(line(0))).toBe(true);
    expect(readFileSync(path).equals(Buffer.concat([line(5), line(1)]))).toBe(true);
  });

  it('a file removed behind the store: data loss', async () => {
    const { s } = store();
    const k = key();
    await s.putChunk(k, 0, line(0));
    unlinkSync(s.pathOf(k));
    await expect(s.putChunk(k, line(0).length, line(1))).rejects.toBeInstanceOf(SegmentDataLossError);
  });

  it('a file cut shorter in place: data loss with the missing range', async () => {
    const { s } = store();
    const k = key();
    await s.putChunk(k, 0, Buffer.concat([line(0), line(1)]));
    truncateSync(s.pathOf(k), 10);
    const err = await s.putChunk(k, 2 * line(0).length, line(2)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SegmentDataLossError);
    expect((err as SegmentDataLossError).range).toEqual({ start: 10, end: 2 * line(0).length });
  });

  it('a tail torn in place: the torn range, from the last newline before it', async () => {
    const { dir, s } = store();
    const k = key();
    const body = Buffer.concat([line(0), line(1)]);
    await s.putChunk(k, 0, body);
    expect(await s.tornTail(k, body.length)).toBeNull();
    const fd = openSync(s.pathOf(k), 'r+');
    writeSync(fd, Buffer.alloc(5), 0, 5, body.length - 5); // NULs where the last line's end was
    closeSync(fd);
    expect(await s.tornTail(k, body.length)).toEqual({ start: line(0).length, end: body.length });
    expect(await s.tornTail(k, body.length + 100)).toBeNull(); // shorter than asked: missingBytes' to say
    expect(await s.tornTail(key(), 10)).toBeNull(); // no file
    expect(openUnder(dir)).toEqual([]);
  });
});

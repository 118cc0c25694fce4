/**
 * `FsSegmentStore`: segments as appended files, `{data}/tenants/{tenant}/sessions/{sid}/{w}.jsonl`
 * (DESIGN §5), the seed's on-disk layout under a tenant folder. For one server process: appends to one
 * writer are serialized by an in-process mutex (the state store's conditional advance guards the index).
 *
 * A chunk costs four trips through libuv's pool (open, write, fsync, close; issue 16.3): the folders are
 * made only when the open finds them missing, the file's size is read with a synchronous fstat, and the
 * torn-tail check opens, reads one byte and closes synchronously, each a few µs in the kernel's caches
 * where a trip through the pool costs some 45 µs of CPU here. The write and the fsync stay on the pool,
 * through the `FileHandle` (whose `write` and `sync` the fault tests replace). No file stays open between
 * chunks: a descriptor open for writing would keep the volume from being remounted read-only or unmounted
 * (EBUSY), and a file replaced, removed or cut behind the server's back is found by each chunk's own open.
 */
import { closeSync, createReadStream, fstatSync, openSync, readSync, type Stats } from 'node:fs';
import { type FileHandle, open, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Mutex } from 'async-mutex';
import { errorCode, SegmentDataLossError, StorageFaultError } from '../errors.js';
import { assertSegmentKey } from '../keys.js';
import type { ByteRange, ReadSegmentOptions, SegmentKey, SegmentStore } from '../segments.js';
import { foldersUp, makeFolders, storageFault, syncFolder } from './durable.js';

/** How far `tornTail` reads back at a time, looking for the last newline before a torn tail. */
const TAIL_WINDOW = 64 * 1024;

export class FsSegmentStore implements SegmentStore {
  private readonly locks = new Map<string, { mutex: Mutex; users: number }>();

  /** @param root the data directory (`hansard serve --data`) */
  constructor(private readonly root: string) {}

  /** The file of a segment. @throws TypeError for an invalid key */
  pathOf(key: SegmentKey): string {
    assertSegmentKey(key);
    return join(this.root, 'tenants', key.tenant, 'sessions', key.sid, `${key.w}.jsonl`);
  }

  /**
   * Appends `bytes` at `offset` (see `SegmentStore.putChunk`): writes until every byte is down, then
   * fsyncs, and only then resolves, so the caller advances the index over bytes that are on disk. The
   * first chunk of a segment (`offset` 0) also fsyncs the folders from the segment's up to the data
   * directory (`syncFolders`): a new file's name is in its folder, not in the file, and without this a
   * power loss after the 201 may lose the whole segment. Later chunks sync only the file.
   * @throws StorageFaultError (`full`, `read_only`, `permission`) when the disk refuses the write; the file
   *   is cut back to `offset` first, so nothing of the chunk stays; `layout` when the session folder is a
   *   file or the segment file a folder
   * @throws SegmentDataLossError when the file holds fewer than `offset` bytes: acknowledged bytes are gone
   */
  async putChunk(key: SegmentKey, offset: number, bytes: Uint8Array): Promise<void> {
    const path = this.pathOf(key);
    await this.withLock(path, async () => {
      const fh = await this.storage('open', () => this.openSegment(path), path);
      try {
        let st: Stats;
        try {
          st = fstatSync(fh.fd);
        } catch (err) {
          throw this.fault(err, 'stat', path);
        }
        await this.putInto(key, path, { fh, size: st.size }, offset, bytes);
      } finally {
        await fh.close();
      }
    });
  }

  /** Opens the segment file for appending, making its folders first when the open finds them missing. */
  private async openSegment(path: string): Promise<FileHandle> {
    try {
      return await this.openFile(path, 'a+');
    } catch (err) {
      if (errorCode(err) !== 'ENOENT') throw err;
    }
    await this.makeFolders(dirname(path));
    return this.openFile(path, 'a+');
  }

  /** `putChunk` on the open file of the segment (`size`: its size now). */
  private async putInto(
    key: SegmentKey,
    path: string,
    { fh, size }: { fh: FileHandle; size: number },
    offset: number,
    bytes: Uint8Array,
  ): Promise<void> {
    // The index says `offset` bytes were accepted: a shorter file lost some of them. Appending here
    // would put the chunk at the wrong place, and a 409 would send the writer back to this offset.
    if (size < offset) throw new SegmentDataLossError(key, { start: size, end: offset });
    if (size > offset) {
      // Bytes past the indexed length were never acknowledged (a crash before the index advanced).
      const there = Buffer.alloc(Math.min(bytes.length, size - offset));
      await fh.read(there, 0, there.length, offset);
      if (there.length === bytes.length && there.equals(bytes)) {
        // A crashed attempt's bytes may not have been synced yet: they are acknowledged now.
        await this.storage('truncate', async () => {
          if (size > offset + bytes.length) await fh.truncate(offset + bytes.length);
          await fh.sync();
        });
        if (offset === 0) await this.syncFolders(path);
        return;
      }
      await this.storage('truncate', () => fh.truncate(offset));
    }
    await this.appendAll(fh, offset, bytes);
    if (offset === 0) await this.syncFolders(path);
  }

  /** `mkdir -p dir` under the data directory, reporting the disk's own error (fs/durable.ts). */
  private makeFolders(dir: string): Promise<void> {
    return makeFolders(this.root, dir);
  }

  /**
   * fsyncs each folder from the one holding `path` up to the data directory, deepest first. All of them,
   * not only those `mkdir` created now: an attempt that crashed between its `mkdir` and its syncs left
   * folders that exist but may not be on disk. Five small syncs, once per segment.
   * @throws StorageFaultError when the disk refuses (then nothing is acknowledged; a retry syncs again)
   */
  private async syncFolders(path: string): Promise<void> {
    for (const dir of foldersUp(this.root, path)) await this.storage('sync', () => syncFolder(dir), dir);
  }

  /**
   * Writes every byte of `bytes` at the end of the file (which is `offset` long), then fsyncs. A write may
   * store fewer bytes than asked (a disk filling up): the loop goes on until all are down or one fails.
   * On a failure the file is cut back to `offset` and synced, so what the disk keeps is what the index says.
   */
  private async appendAll(fh: FileHandle, offset: number, bytes: Uint8Array): Promise<void> {
    try {
      for (let done = 0; done < bytes.length; ) {
        const { bytesWritten } = await fh.write(bytes, done, bytes.length - done);
        // A write that stores nothing without an error would loop forever: treat it as a full disk.
        if (bytesWritten <= 0) throw Object.assign(new Error('write stored no bytes'), { code: 'ENOSPC' });
        done += bytesWritten;
      }
      await fh.sync();
    } catch (err) {
      try {
        await fh.truncate(offset);
        await fh.sync();
      } catch {
        // Bytes past the indexed length are never read and the next chunk at `offset` replaces them.
      }
      throw this.fault(err, 'write');
    }
  }

  /** Runs a file operation, turning a refusal of the disk into a `StorageFaultError`. */
  private async storage<T>(op: string, fn: () => Promise<T>, path?: string): Promise<T> {
    try {
      return await fn();
    } catch (err) {
      throw this.fault(err, op, path);
    }
  }

  /** `err` as a `StorageFaultError` when the disk refused or the layout is wrong (fs/durable.ts), else `err`. */
  private fault(err: unknown, op: string, path?: string): unknown {
    return storageFault(err, op, `a segment file under ${this.root}`, path);
  }

  /**
   * The size of a segment file in bytes; 0 when it does not exist.
   * @throws StorageFaultError `layout` when the path is not a regular file (a folder: no length to trust)
   *   or a folder on its way is a file (ENOTDIR)
   */
  private async fileSize(path: string): Promise<number> {
    let st: Stats;
    try {
      st = await stat(path);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return 0;
      throw this.fault(err, 'stat', path);
    }
    if (!st.isFile()) throw this.notAFile(st, 'stat', path);
    return st.size;
  }

  /** The layout fault of a segment path that is something else than a regular file. */
  private notAFile(st: Stats, op: string, path: string): StorageFaultError {
    const code = st.isDirectory() ? 'EISDIR' : 'not a regular file';
    return new StorageFaultError('layout', code, `${op} of ${path}`);
  }

  /**
   * Opens a segment file (`fs/promises.open`). A seam for tests that inject what a real disk does rarely
   * (a short write, EACCES): a subclass returns a handle that misbehaves.
   */
  protected openFile(path: string, flags: string): Promise<FileHandle> {
    return open(path, flags);
  }

  /** The file's size against `end`: `[size, end)` is missing when the file is shorter (see the port). */
  async missingBytes(key: SegmentKey, end: number): Promise<ByteRange | null> {
    const size = await this.fileSize(this.pathOf(key));
    return size < end ? { start: size, end } : null;
  }

  /**
   * Byte `end - 1` of the file against a newline (see the port): when it is not one, `[after the last
   * newline before it, end)` is torn. Reads one byte, and walks back 64 KiB at a time only when torn.
   */
  async tornTail(key: SegmentKey, end: number): Promise<ByteRange | null> {
    if (end <= 0) return null;
    const path = this.pathOf(key);
    // The common case, synchronously: open, fstat, read one byte, close. Torn, the walk back is below.
    let fd: number;
    try {
      fd = openSync(path, 'r');
    } catch (err) {
      if (errorCode(err) === 'ENOENT') return null; // missingBytes' to say
      throw this.fault(err, 'open', path);
    }
    try {
      const st = fstatSync(fd);
      if (!st.isFile()) throw this.notAFile(st, 'open', path);
      if (st.size < end) return null;
      const one = Buffer.alloc(1);
      if (readSync(fd, one, 0, 1, end - 1) === 1 && one[0] === 0x0a) return null;
    } finally {
      closeSync(fd);
    }
    let fh: FileHandle;
    try {
      fh = await open(path, 'r');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null; // missingBytes' to say
      throw this.fault(err, 'open', path);
    }
    try {
      const st = await fh.stat();
      if (!st.isFile()) throw this.notAFile(st, 'open', path);
      if (st.size < end) return null;
      const buf = Buffer.alloc(TAIL_WINDOW);
      await fh.read(buf, 0, 1, end - 1);
      if (buf[0] === 0x0a) return null;
      for (let hi = end - 1; hi > 0; ) {
        const lo = Math.max(0, hi - TAIL_WINDOW);
        const { bytesRead } = await fh.read(buf, 0, hi - lo, lo);
        const nl = buf.subarray(0, bytesRead).lastIndexOf(0x0a);
        if (nl !== -1) return { start: lo + nl + 1, end };
        hi = lo;
      }
      return { start: 0, end };
    } finally {
      await fh.close();
    }
  }

  /**
   * Streams bytes `[start, end)` of the segment file (see the port): the file is opened at the first read
   * and closed when the stream ends, fails, is closed early, or `options.signal` aborts it (then the read
   * rejects with an `AbortError`). Node's stream reads at most `chunkBytes` ahead.
   * @throws SegmentDataLossError when the file holds fewer than `end` bytes; StorageFaultError `layout`
   *   when the segment path is not a regular file
   */
  async *readSegment(
    key: SegmentKey,
    end: number,
    start = 0,
    chunkBytes = 256 * 1024,
    options: ReadSegmentOptions = {},
  ): AsyncIterable<Uint8Array> {
    if (end <= start) return;
    const { signal } = options;
    const path = this.pathOf(key);
    const size = await this.fileSize(path);
    // The index says these bytes were accepted: a shorter file is data loss, and must be loud.
    if (size < end) throw new SegmentDataLossError(key, { start: size, end });
    // Checked here, with no await before the stream is made: Node 20 leaks the descriptor of a read
    // stream created with a signal that is already aborted (it opens the file after destroying the stream).
    signal?.throwIfAborted();
    const stream = createReadStream(path, {
      start,
      end: end - 1,
      highWaterMark: chunkBytes,
      ...(signal ? { signal } : {}),
    });
    let at = start;
    try {
      for await (const piece of stream) {
        at += (piece as Buffer).length;
        yield piece as Buffer;
      }
    } catch (err) {
      // Node's AbortError wraps the reason; the port promises the reason itself, as S3's adapter gives.
      if (signal?.aborted) throw signal.reason;
      throw err;
    }
    // Cut while being read: the stream just ends early, which must not pass for the whole segment.
    if (at < end) throw new SegmentDataLossError(key, { start: at, end });
  }

  /** Runs `fn` holding the in-process lock of one segment file; the lock is forgotten when unused. */
  private async withLock<T>(path: string, fn: () => Promise<T>): Promise<T> {
    let entry = this.locks.get(path);
    if (!entry) {
      entry = { mutex: new Mutex(), users: 0 };
      this.locks.set(path, entry);
    }
    entry.users += 1;
    try {
      return await entry.mutex.runExclusive(fn);
    } finally {
      entry.users -= 1;
      if (entry.users === 0) this.locks.delete(path);
    }
  }
}

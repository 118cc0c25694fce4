/**
 * The readers behind `openSegmentBlocks` (lib/log/read/segment-blocks.ts, whose header tells the design): the pool
 * of descriptor slots, a file's positional reader and a stream's reader.
 */
import { closeSync, close as fsClose, open as fsOpen, read as fsRead, openSync, readSync } from 'node:fs';
import type { ReplaySegment } from './session-dir.js';

/** One segment's bytes as blocks, in order. */
export interface SegmentBlockReader {
  /** the segment's writer id */
  readonly w: string;
  /**
   * The next block of the segment (never empty), or null after its last byte (and after `close()`).
   * The block is the caller's until its next call to `next()` or `close()` on this reader: a file
   * segment's reader then reuses the buffer, so keep nothing of it without copying (a line cut by the
   * block's end, say). One call at a time per reader; different readers may read concurrently.
   * @throws the signal's reason once `options.signal` is aborted; the file system's or the store's error
   *   (then the reader is closed); an Error when the file ends before its listed `size` (cut since)
   */
  next(): Promise<Uint8Array | null>;
  /** Releases what the reader holds (descriptor, stream, buffer); `next()` gives null afterwards. */
  close(): Promise<void>;
}

/** What the pool can close to make room: a reader's idle descriptor or stream. */
export interface Holder {
  /** closes what it holds; the slot is then the caller's */
  evict(): Promise<void>;
}

/**
 * `max` slots, each an open descriptor or stream (or one being opened or closed). A reader holds its slot
 * while it is open; between reads it is idle, and the least recently used idle holder is evicted to make
 * room for another. A slot passes from the evicted to the one that needed it only once the close is done,
 * so the descriptors open never exceed `max`.
 */
export class SlotPool {
  private used = 0;
  /** idle holders, least recently used first (Map keeps insertion order) */
  private readonly idle = new Map<Holder, true>();
  private waiters: (() => void)[] = [];
  constructor(private readonly max: number) {}

  /** Takes a slot, evicting the least recently used idle holder when all are used (waits when none is idle). */
  async take(): Promise<void> {
    for (;;) {
      if (this.used < this.max) {
        this.used++;
        return;
      }
      const victim = this.idle.keys().next();
      if (!victim.done) {
        this.idle.delete(victim.value);
        await victim.value.evict();
        return; // the victim's slot is now ours
      }
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }
  /** `h` is reading: it must not be evicted. */
  busy(h: Holder): void {
    this.idle.delete(h);
  }
  /** `h` holds a slot and may be evicted (it becomes the most recently used). */
  rest(h: Holder): void {
    this.idle.set(h, true);
    this.wake();
  }
  /** `h` closed what it held itself (end, close, error): its slot is free. */
  give(h: Holder): void {
    this.idle.delete(h);
    this.used--;
    this.wake();
  }
  private wake(): void {
    const w = this.waiters.shift();
    if (w) w();
  }
}

/**
 * Block buffers that readers done with them leave for the next reader (at most `max`, each `bytes` long):
 * a pass that reads segments one after another (the corrections scan) then reuses a few buffers instead
 * of leaving one per segment for the garbage collector, which frees a buffer's memory only when it runs
 * (64 segments of 1 MiB blocks raised the scan's peak RSS by ~70 MB).
 */
export class BufferShelf {
  private readonly free: Buffer[] = [];
  constructor(
    readonly bytes: number,
    private readonly max: number,
  ) {}

  /** A buffer of at least `want` bytes: a shelved one when `want` fits it, else a new one of `want`. */
  take(want: number): Buffer {
    if (want <= this.bytes) {
      const b = this.free.pop();
      if (b !== undefined) return b;
    }
    return Buffer.allocUnsafe(want);
  }

  /** Leaves `b` for another reader; its owner must not touch it again (a buffer of another size is dropped). */
  put(b: Buffer): void {
    if (b.length === this.bytes && this.free.length < this.max) this.free.push(b);
  }
}

/** A file read with positional reads into its own buffer, its descriptor from the pool. */
export class FileBlockReader implements SegmentBlockReader, Holder {
  private offset = 0;
  private fd: number | null = null;
  private buf: Buffer | null = null;
  private pending: Promise<unknown> | null = null;
  private closed = false;

  private readonly path: string;
  private readonly size: number;

  constructor(
    readonly w: string,
    file: { path: string; size: number },
    private readonly blockBytes: number,
    private readonly pool: SlotPool,
    private readonly signal: AbortSignal | undefined,
    private readonly io: FileIo,
    private readonly shelf: BufferShelf | null = null,
  ) {
    this.path = file.path;
    this.size = file.size;
  }

  next(): Promise<Uint8Array | null> {
    if (this.pending) return Promise.reject(new Error(`segment ${this.w}: next() while a read is pending`));
    const p = this.read();
    this.pending = p;
    return p.finally(() => {
      this.pending = null;
    });
  }

  private async read(): Promise<Uint8Array | null> {
    this.signal?.throwIfAborted();
    if (this.closed || this.offset >= this.size) {
      this.shelve();
      return null;
    }
    if (this.fd === null) {
      await this.pool.take();
      try {
        // Aborted or closed while waiting for a slot: give it back without opening.
        this.signal?.throwIfAborted();
        if (this.closed) throw new Error(`segment ${this.w}: closed`);
        this.fd = await this.io.open(this.path);
      } catch (err) {
        this.pool.give(this);
        if (this.closed && !this.signal?.aborted) return null;
        throw err;
      }
    } else {
      this.pool.busy(this);
    }
    const fd = this.fd;
    try {
      const want = Math.min(this.blockBytes, this.size - this.offset);
      if (!this.buf || this.buf.length < want) {
        if (this.buf !== null) this.shelf?.put(this.buf);
        this.buf = this.shelf === null ? Buffer.allocUnsafe(want) : this.shelf.take(want);
      }
      const buf = this.buf;
      let got = 0;
      while (got < want) {
        const n = await this.io.read(fd, buf, got, want - got, this.offset + got);
        if (n === 0)
          throw new Error(`segment ${this.w} ends at byte ${this.offset + got}, listed as ${this.size}`);
        got += n;
      }
      this.offset += got;
      // Aborted or closed while reading: the descriptor was left to us (never closed under a read).
      this.signal?.throwIfAborted();
      if (this.closed) {
        await this.release();
        return null;
      }
      if (this.offset >= this.size) await this.release();
      else this.pool.rest(this);
      return buf.subarray(0, got);
    } catch (err) {
      await this.release();
      // The caller gave its last block back by calling next(): the buffer is free.
      this.shelve();
      throw err;
    }
  }

  /**
   * Leaves the buffer for another reader, once no block of it is the caller's (a call to `next()` that
   * gives null, `close()`): the last block is given out after the descriptor was released.
   */
  private shelve(): void {
    const b = this.buf;
    this.buf = null;
    if (b !== null) this.shelf?.put(b);
  }

  /** Closes the descriptor, if open, and frees its slot (never while a read uses it: see `close`). */
  private async release(): Promise<void> {
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    this.pool.busy(this); // not a victim while it closes: its slot is freed by give() below
    try {
      await this.io.close(fd);
    } finally {
      this.pool.give(this);
    }
  }

  /** Evicted by the pool while idle: close the descriptor; the offset stays for the reopening. */
  async evict(): Promise<void> {
    const fd = this.fd;
    this.fd = null;
    if (fd !== null) await this.io.close(fd);
  }

  async close(): Promise<void> {
    this.closed = true;
    // A read in flight closes its own descriptor when it ends: closing it under the read could let the
    // number be reused by another open and the read land in someone else's file.
    if (this.pending) await this.pending.catch(() => {});
    await this.release();
    this.shelve();
  }
}

/** Any `ReplaySegment`, read through its stream; a stream closed to make room is reopened at its offset. */
export class StreamBlockReader implements SegmentBlockReader, Holder {
  private offset = 0;
  private it: AsyncIterator<Uint8Array> | Iterator<Uint8Array> | null = null;
  private pending: Promise<unknown> | null = null;
  private done = false;
  readonly w: string;

  constructor(
    private readonly segment: ReplaySegment,
    private readonly blockBytes: number,
    private readonly pool: SlotPool,
    private readonly signal: AbortSignal | undefined,
  ) {
    this.w = segment.w;
  }

  next(): Promise<Uint8Array | null> {
    if (this.pending) return Promise.reject(new Error(`segment ${this.w}: next() while a read is pending`));
    const p = this.read();
    this.pending = p;
    return p.finally(() => {
      this.pending = null;
    });
  }

  private async read(): Promise<Uint8Array | null> {
    this.signal?.throwIfAborted();
    if (this.done) return null;
    if (this.it === null) {
      await this.pool.take();
      try {
        this.signal?.throwIfAborted();
        if (this.done) throw new Error(`segment ${this.w}: closed`);
        const s = this.segment.open(this.blockBytes, this.signal, this.offset);
        this.it =
          Symbol.asyncIterator in s
            ? (s as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]()
            : (s as Iterable<Uint8Array>)[Symbol.iterator]();
      } catch (err) {
        this.pool.give(this);
        if (this.done && !this.signal?.aborted) return null;
        throw err;
      }
    } else {
      this.pool.busy(this);
    }
    const it = this.it;
    try {
      for (;;) {
        const r = await it.next();
        if (r.done) {
          this.done = true;
          await this.release();
          return null;
        }
        if (r.value.length === 0) continue;
        this.offset += r.value.length;
        if (this.done) {
          await this.release();
          return null;
        }
        this.pool.rest(this);
        return r.value;
      }
    } catch (err) {
      this.done = true;
      await this.release().catch(() => {});
      // Node's streams wrap the reason in an AbortError; the promise is the reason itself.
      if (this.signal?.aborted) throw this.signal.reason;
      throw err;
    }
  }

  private async release(): Promise<void> {
    const it = this.it;
    if (it === null) return;
    this.it = null;
    this.pool.busy(this);
    try {
      await it.return?.();
    } finally {
      this.pool.give(this);
    }
  }

  async evict(): Promise<void> {
    const it = this.it;
    this.it = null;
    await it?.return?.();
  }

  async close(): Promise<void> {
    this.done = true;
    if (this.pending) await this.pending.catch(() => {});
    await this.release().catch(() => {});
  }
}

/** The system calls of a file reader: synchronous or through libuv's thread pool. */
export interface FileIo {
  open(path: string): number | Promise<number>;
  read(fd: number, buf: Buffer, at: number, length: number, position: number): number | Promise<number>;
  close(fd: number): void | Promise<void>;
}

export const SYNC_IO: FileIo = {
  open: (path) => openSync(path, 'r'),
  read: (fd, buf, at, length, position) => readSync(fd, buf, at, length, position),
  close: (fd) => closeSync(fd),
};

export const ASYNC_IO: FileIo = { open: openFd, read: readFd, close: closeFd };

function openFd(path: string): Promise<number> {
  return new Promise((resolve, reject) => fsOpen(path, 'r', (err, fd) => (err ? reject(err) : resolve(fd))));
}

function readFd(fd: number, buf: Buffer, at: number, length: number, position: number): Promise<number> {
  return new Promise((resolve, reject) =>
    fsRead(fd, buf, at, length, position, (err, n) => (err ? reject(err) : resolve(n))),
  );
}

function closeFd(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fsClose(fd, (err) => (err ? reject(err) : resolve())));
}

/**
 * A bounded reader of a session's segments for the replay merge (issue 16, "merge at the speed of reading",
 * "scale in writers"): every segment read once, from its first byte to its last, in large blocks, with
 *
 * - memory within a budget spread over the writers: a block is `budgetBytes / writers`, clamped to
 *   [16 KiB, 1 MiB] (`segmentBlockBytes`), and a segment smaller than a block gets a buffer of its size;
 * - at most `maxOpen` descriptors (or store reads) open at once, whatever the number of writers: when a
 *   reader needs to read and the limit is reached, the least recently used idle one is closed, its offset
 *   kept, and it is reopened at that offset when its reader next needs a block. A reader that reaches its
 *   segment's end closes at once, so a session of many small segments holds almost nothing open.
 *
 * Two ways of reading, chosen per segment:
 * - a `FileSegment` (`sessionDirFileSegments`, the CLI's session directory) is read with positional
 *   `fs.read` into the reader's own buffer, from a descriptor in a pool of at most `maxOpen` (one syscall
 *   and one promise per block; no stream machinery). The bound on descriptors is exact.
 * - any other `ReplaySegment` (the server's, over `SegmentStore.readSegment`) through its `open(blockBytes,
 *   signal, start)` stream, at most `maxOpen` streams at once; a stream closed to make room is reopened with
 *   `start` at the first byte not yet given. Its chunks are the blocks (the store is asked for `blockBytes`).
 *   A stream's descriptor is released by its own machinery shortly after `return()`, so the count can pass
 *   `maxOpen` by the few closes still in flight; and the chunk a stream had read ahead when it was closed is
 *   read again.
 */
import { createReadStream, close as fsClose, open as fsOpen, read as fsRead, statSync } from 'node:fs';
import type { ReplaySegment } from './replay.js';
import { listSegments } from './session-dir.js';

/** A segment that is a plain file, read by position: `size` is fixed when it was listed (a writer may append). */
export interface FileSegment extends ReplaySegment {
  file: { path: string; size: number };
}

export interface SegmentBlockOptions {
  /** bytes of blocks in all (default 16 MiB, the CLI's; a server passes less per response) */
  budgetBytes?: number;
  /** descriptors or streams open at once, at least 1 (default 128) */
  maxOpen?: number;
  /** aborting ends every read: `next()` rejects with the signal's reason, and everything is released */
  signal?: AbortSignal;
  /** read `FileSegment`s through their streams too (to compare the two ways; default false) */
  streams?: boolean;
}

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

export interface SegmentBlocks {
  /** one reader per segment, in the order of `segments` */
  readers: SegmentBlockReader[];
  /** the block size in bytes (the largest block a reader gives) */
  blockBytes: number;
  /** closes every reader: once it resolves, no descriptor or stream of these readers is open */
  closeAll(): Promise<void>;
}

const KiB = 1024;
const MiB = 1024 * KiB;
export const DEFAULT_BLOCK_BUDGET = 16 * MiB;
export const DEFAULT_MAX_OPEN = 128;

/** Block size for `writers` segments sharing `budgetBytes`: between 16 KiB and 1 MiB. */
export function segmentBlockBytes(writers: number, budgetBytes = DEFAULT_BLOCK_BUDGET): number {
  return Math.min(MiB, Math.max(16 * KiB, Math.floor(budgetBytes / Math.max(1, writers))));
}

/**
 * The segments of a session directory, as `sessionDirSegments` gives them (sorted by writer id, each
 * length taken now) but as `FileSegment`s, which `openSegmentBlocks` reads by position.
 * Throws the file system's error (ENOENT) when `dir` cannot be read.
 */
export function sessionDirFileSegments(dir: string): FileSegment[] {
  return listSegments(dir).map(({ w, path }) => {
    const size = statSync(path).size;
    return {
      w,
      file: { path, size },
      open: (chunkBytes = 64 * KiB, signal?: AbortSignal, start = 0) =>
        start >= size ? [] : fileStream(path, start, size, chunkBytes, signal),
    };
  });
}

async function* fileStream(
  path: string,
  start: number,
  size: number,
  chunkBytes: number,
  signal: AbortSignal | undefined,
): AsyncGenerator<Uint8Array> {
  // Never with an aborted signal: Node 20 then leaks the descriptor (see FsSegmentStore.readSegment).
  signal?.throwIfAborted();
  yield* createReadStream(path, {
    start,
    end: size - 1,
    highWaterMark: chunkBytes,
    ...(signal ? { signal } : {}),
  });
}

function isFileSegment(s: ReplaySegment): s is FileSegment {
  const f = (s as Partial<FileSegment>).file;
  return typeof f === 'object' && f !== null && typeof f.path === 'string' && typeof f.size === 'number';
}

/**
 * Readers of `segments`' bytes in blocks, with memory and open descriptors bounded (see the file's header).
 * Nothing is opened before a reader's first `next()`. Call `closeAll()` when done, in any case (done, failed,
 * aborted): it waits for reads in flight and closes what is open.
 */
export function openSegmentBlocks(
  segments: readonly ReplaySegment[],
  options: SegmentBlockOptions = {},
): SegmentBlocks {
  const blockBytes = segmentBlockBytes(segments.length, options.budgetBytes);
  const pool = new SlotPool(Math.max(1, Math.floor(options.maxOpen ?? DEFAULT_MAX_OPEN)));
  const signal = options.signal;
  const readers: SegmentBlockReader[] = segments.map((s) =>
    isFileSegment(s) && !options.streams
      ? new FileBlockReader(s.w, s.file.path, s.file.size, blockBytes, pool, signal)
      : new StreamBlockReader(s, blockBytes, pool, signal),
  );
  const onAbort = () => {
    for (const r of readers) void r.close().catch(() => {});
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  return {
    readers,
    blockBytes,
    async closeAll() {
      signal?.removeEventListener('abort', onAbort);
      await Promise.all(readers.map((r) => r.close()));
    },
  };
}

/** What the pool can close to make room: a reader's idle descriptor or stream. */
interface Holder {
  /** closes what it holds; the slot is then the caller's */
  evict(): Promise<void>;
}

/**
 * `max` slots, each an open descriptor or stream (or one being opened or closed). A reader holds its slot
 * while it is open; between reads it is idle, and the least recently used idle holder is evicted to make
 * room for another. A slot passes from the evicted to the one that needed it only once the close is done,
 * so the descriptors open never exceed `max`.
 */
class SlotPool {
  private used = 0;
  /** idle holders, least recently used first (Map keeps insertion order) */
  private readonly idle = new Map<Holder, true>();
  private waiters: (() => void)[] = [];
  constructor(private readonly max: number) {}

  /** A slot for `h`, evicting an idle holder when all are used (waits when none is idle). */
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

/** A file read with positional reads into its own buffer, its descriptor from the pool. */
class FileBlockReader implements SegmentBlockReader, Holder {
  private offset = 0;
  private fd: number | null = null;
  private buf: Buffer | null = null;
  private pending: Promise<unknown> | null = null;
  private closed = false;

  constructor(
    readonly w: string,
    private readonly path: string,
    private readonly size: number,
    private readonly blockBytes: number,
    private readonly pool: SlotPool,
    private readonly signal: AbortSignal | undefined,
  ) {}

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
    if (this.closed || this.offset >= this.size) return null;
    if (this.fd === null) {
      await this.pool.take();
      try {
        // Aborted or closed while waiting for a slot: give it back without opening.
        this.signal?.throwIfAborted();
        if (this.closed) throw new Error(`segment ${this.w}: closed`);
        this.fd = await openFd(this.path);
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
      if (!this.buf || this.buf.length < want) this.buf = Buffer.allocUnsafe(want);
      const buf = this.buf;
      let got = 0;
      while (got < want) {
        const n = await readFd(fd, buf, got, want - got, this.offset + got);
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
      throw err;
    }
  }

  /** Closes the descriptor, if open, and frees its slot (never while a read uses it: see `close`). */
  private async release(): Promise<void> {
    if (this.offset >= this.size || this.closed) this.buf = null;
    if (this.fd === null) return;
    const fd = this.fd;
    this.fd = null;
    this.pool.busy(this); // not a victim while it closes: its slot is freed by give() below
    try {
      await closeFd(fd);
    } finally {
      this.pool.give(this);
    }
  }

  /** Evicted by the pool while idle: close the descriptor; the offset stays for the reopening. */
  async evict(): Promise<void> {
    const fd = this.fd;
    this.fd = null;
    if (fd !== null) await closeFd(fd);
  }

  async close(): Promise<void> {
    this.closed = true;
    // A read in flight closes its own descriptor when it ends: closing it under the read could let the
    // number be reused by another open and the read land in someone else's file.
    if (this.pending) await this.pending.catch(() => {});
    await this.release();
  }
}

/** Any `ReplaySegment`, read through its stream; a stream closed to make room is reopened at its offset. */
class StreamBlockReader implements SegmentBlockReader, Holder {
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

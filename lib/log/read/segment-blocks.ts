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
 * - a `FileSegment` (`sessionDirFileSegments`, the CLI's session directory) is read with positional reads
 *   into the reader's own buffer, from a descriptor in a pool of at most `maxOpen` (one syscall per block;
 *   no stream machinery). The bound on descriptors is exact. By default these calls are synchronous
 *   (`openSync`, `readSync`, `closeSync`): a block from the page cache takes microseconds, while a busy
 *   machine makes every trip through libuv's thread pool slow, and a reader that is evicted takes three
 *   (open, read, close). Measured on 2 cores under load (load average 12-18): 2,000 writers, 311 MB, read
 *   round-robin: 1.0-1.4 s synchronous against 5.7-10.5 s through the pool; at 64 writers, 315 MB, no clear
 *   difference (0.3-0.4 s either way, 115-130 ms of CPU). They block the event loop for one block, which a
 *   CLI can afford and a server should not (`syncFileReads: false`; a server reads its segments through
 *   `SegmentStore.readSegment`, not as `FileSegment`s).
 * - any other `ReplaySegment` (the server's, over `SegmentStore.readSegment`) through its `open(blockBytes,
 *   signal, start)` stream, at most `maxOpen` streams at once; a stream closed to make room is reopened with
 *   `start` at the first byte not yet given. Its chunks are the blocks (the store is asked for `blockBytes`).
 *   A stream's descriptor is released by its own machinery shortly after `return()`, so the count can pass
 *   `maxOpen` by the few closes still in flight; and the chunk a stream had read ahead when it was closed is
 *   read again.
 */
import { statSync } from 'node:fs';
import {
  ASYNC_IO,
  BufferShelf,
  FileBlockReader,
  type SegmentBlockReader,
  SlotPool,
  StreamBlockReader,
  SYNC_IO,
} from './segment-block-readers.js';
import { listSegments, type ReplaySegment, readFileRange } from './session-dir.js';

export type { SegmentBlockReader } from './segment-block-readers.js';

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
  /** `FileSegment`s with synchronous system calls (default true; see the file's header) */
  syncFileReads?: boolean;
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
/** Block buffers kept for reuse between readers (the scan reads 4 segments at a time). */
const SHELVED_BUFFERS = 8;

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
        start >= size ? [] : readFileRange(path, start, size, chunkBytes, signal),
    };
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
  // Readers that end leave their buffer to readers that have none yet (a pass over the segments in turn).
  const shelf = new BufferShelf(blockBytes, SHELVED_BUFFERS);
  const readers: SegmentBlockReader[] = segments.map((s) =>
    isFileSegment(s) && !options.streams
      ? new FileBlockReader(
          s.w,
          s.file,
          blockBytes,
          pool,
          signal,
          options.syncFileReads === false ? ASYNC_IO : SYNC_IO,
          shelf,
        )
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

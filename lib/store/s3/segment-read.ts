/**
 * How `S3SegmentStore.readSegment` reads a segment stored as one S3 object per chunk (DESIGN §3, §5;
 * issue 16.4): which byte ranges of which objects it GETs, how many it keeps in flight, and the listing
 * of a writer's chunk objects kept for a few seconds so that a reader reopened at an offset (the merge's
 * bounded block reader, lib/log/read/segment-blocks.ts) does not list again.
 *
 * Memory: a read holds at most `aheadBytes(window)` in flight, and everything past its first part is
 * taken from a `ReadBudget` shared by every read of the store (the merge of many writers holds every
 * writer's read open), so a process holds at most the budget plus one window per open read.
 * Requests: a ranged GET cannot span objects, so a segment of small chunk objects costs one GET per
 * object (1 KB chunks: ~1,000 GETs per MB); those GETs are issued many at a time and their bytes
 * yielded together, so throughput stays bounded by S3's request rate, not by round trips.
 */

import { SegmentDataLossError } from '../errors.js';
import { fewestObjectTiling, supersededObjects } from '../segment-objects.js';
import type { ByteRange, SegmentKey } from '../segments.js';

/** The smallest and largest window: a GET of less is dominated by its round trip, of more by its memory. */
export const MIN_WINDOW_BYTES = 64 * 1024;
export const MAX_WINDOW_BYTES = 8 * 1024 * 1024;
/**
 * The window when the caller gives no `chunkBytes` (a raw segment download): 256 KiB, as before issue
 * 16, with up to 8 of them in flight.
 */
export const DEFAULT_WINDOW_BYTES = 256 * 1024;
/** Bytes a read keeps in flight at least (more, up to `MAX_WINDOWS_AHEAD` windows, for small windows). */
const AHEAD_BYTES = 2 * 1024 * 1024;
const MIN_WINDOWS_AHEAD = 2;
const MAX_WINDOWS_AHEAD = 8;
/** GETs one read keeps in flight at most (small objects: one GET each), well under the SDK's 50 sockets. */
export const MAX_GETS_PER_READ = 16;
/** Bytes fetched ahead by all the reads of one store together, beyond each read's first part. */
export const DEFAULT_READ_BUDGET_BYTES = 64 * 1024 * 1024;

/** One object of a writer's segment as listed: a chunk object, or a compacted run of chunks (issue 17.2). */
export interface ListedChunk {
  key: string;
  offset: number;
  size: number;
  etag: string | undefined;
  /** `{offset:015}-{end:015}.jsonl`, written by the compactor (lib/store/s3/compaction.ts) */
  compacted: boolean;
}

/** Bytes `[from, to)` of one chunk object: one GET (ranged unless it is the whole object). */
export interface Part {
  chunk: ListedChunk;
  from: number;
  to: number;
}

/** The window for a `chunkBytes` hint: the hint clamped to [64 KiB, 8 MiB]; 256 KiB without one. */
export function windowBytes(chunkBytes?: number): number {
  if (chunkBytes === undefined || !Number.isFinite(chunkBytes)) return DEFAULT_WINDOW_BYTES;
  return Math.min(MAX_WINDOW_BYTES, Math.max(MIN_WINDOW_BYTES, Math.floor(chunkBytes)));
}

/** Bytes one read keeps in flight for a window: 2 to 8 windows, at least 2 MiB where 8 windows allow. */
export function aheadBytes(window: number): number {
  const windows = Math.min(MAX_WINDOWS_AHEAD, Math.max(MIN_WINDOWS_AHEAD, Math.ceil(AHEAD_BYTES / window)));
  return windows * window;
}

/**
 * The objects of `chunks` (sorted by offset, each starting before `end`) that tile `[0, end)`, before
 * anything is fetched (lib/store/segment-objects.ts `fewestObjectTiling`, `preferChunks`): the chunk
 * objects where they are all there, a compacted run where the chunk objects it holds are gone (the
 * compactor deletes them only once the run is stored and checked against the index), so an object under
 * a run's name beside intact chunk objects is never read in their place. Every listed object left out
 * must lie inside a compacted object of the tiling, or be a run over chunk objects of the tiling.
 * @throws SegmentDataLossError naming the first byte range of `[0, end)` no object holds
 * @throws Error naming a range held by two objects that no compaction explains
 */
export function checkTiling(
  key: SegmentKey,
  prefix: string,
  chunks: ListedChunk[],
  end: number,
): ListedChunk[] {
  const gap = firstGap(chunks, end);
  if (gap) throw new SegmentDataLossError(key, gap, { where: prefix });
  const tiling = fewestObjectTiling(chunks, end, { preferChunks: true });
  const odd = tiling ? supersededObjects(chunks, tiling).unexplained[0] : chunks[0];
  if (!tiling || odd) {
    throw new Error(
      `segment ${prefix} has overlapping chunks: ${odd?.key ?? '?'} (bytes from ${odd?.offset ?? '?'}) is not where the other objects end`,
    );
  }
  return tiling;
}

/**
 * The parts (each at most `window` bytes, within one object) that hold `[start, end)` of a segment whose
 * `chunks` tile `[0, end)` (`checkTiling`), in order; generated as read, so a listing of a million small
 * objects is not doubled into a million parts.
 */
export function* planParts(
  chunks: ListedChunk[],
  start: number,
  end: number,
  window: number,
): Generator<Part> {
  for (const chunk of chunks) {
    const to = Math.min(end, chunk.offset + chunk.size) - chunk.offset;
    for (let from = Math.max(start, chunk.offset) - chunk.offset; from < to; from += window) {
      yield { chunk, from, to: Math.min(to, from + window) };
    }
  }
}

/** The first range of `[0, end)` that no listed chunk (sorted by offset) holds, or null. */
export function firstGap(chunks: ListedChunk[], end: number): ByteRange | null {
  let next = 0;
  for (const chunk of chunks) {
    if (chunk.offset > next) return { start: next, end: chunk.offset };
    next = Math.max(next, chunk.offset + chunk.size);
  }
  return next < end ? { start: next, end } : null;
}

/**
 * Bytes that reads may fetch ahead of their consumers, shared by every read of one store. A read never
 * waits on it: its first part in flight is its own (so a merge waiting on one writer while others hold
 * the budget cannot deadlock), and it fetches further ahead only while `take` grants the bytes.
 */
export class ReadBudget {
  private free: number;
  /** the most ever taken at once (tests and the benchmark read it) */
  peak = 0;
  constructor(readonly bytes: number = DEFAULT_READ_BUDGET_BYTES) {
    this.free = bytes;
  }
  /** Takes `n` bytes if free; false (nothing taken) otherwise. */
  take(n: number): boolean {
    if (n > this.free) return false;
    this.free -= n;
    this.peak = Math.max(this.peak, this.bytes - this.free);
    return true;
  }
  give(n: number): void {
    this.free = Math.min(this.bytes, this.free + n);
  }
  /** bytes taken now */
  get taken(): number {
    return this.bytes - this.free;
  }
}

/** A part being fetched: its bytes once they came, and whether the shared budget holds them. */
interface InFlight {
  size: number;
  charged: boolean;
  fetching: Promise<Uint8Array>;
  bytes: Uint8Array | null;
}

export interface ReadPartsOptions {
  window: number;
  budget: ReadBudget;
  /** aborts every GET under way (the caller aborts it when the read ends early or fails) */
  signal: AbortSignal;
}

/**
 * Fetches `parts` with `fetchPart`, several at a time, and yields their bytes in order: parts already
 * fetched when their turn comes are yielded together, up to one window. In flight at once: at most
 * `aheadBytes(window)` bytes and `MAX_GETS_PER_READ` GETs, all but the first part taken from the budget,
 * each part's bytes given back once the consumer asks for what follows them. A failed GET rejects the
 * read when its turn comes; the caller aborts the rest through `signal`.
 */
export async function* readParts(
  parts: Iterator<Part>,
  fetchPart: (part: Part, signal: AbortSignal) => Promise<Uint8Array>,
  o: ReadPartsOptions,
): AsyncGenerator<Uint8Array> {
  const limit = aheadBytes(o.window);
  const queue: InFlight[] = [];
  let inFlight = 0;
  let pending: Part | null = null;
  let exhausted = false;
  const release = (f: InFlight) => {
    inFlight -= f.size;
    if (f.charged) o.budget.give(f.size);
  };
  try {
    for (;;) {
      // Start what the limits allow; the first part in flight needs no budget.
      while (!exhausted && queue.length < MAX_GETS_PER_READ) {
        if (!pending) {
          const next = parts.next();
          if (next.done) {
            exhausted = true;
            break;
          }
          pending = next.value;
        }
        const size = pending.to - pending.from;
        const charged = queue.length > 0;
        if (charged && (inFlight + size > limit || !o.budget.take(size))) break;
        const f: InFlight = { size, charged, fetching: fetchPart(pending, o.signal), bytes: null };
        f.fetching.then(
          (b) => {
            f.bytes = b;
          },
          () => {}, // awaited in order below; until then a failure is not "unhandled"
        );
        queue.push(f);
        inFlight += size;
        pending = null;
      }
      const head = queue.shift();
      if (!head) return;
      const pieces = [await head.fetching];
      const taken = [head];
      let total = pieces[0]!.length;
      // Small parts already here go out with it, so 1 KB objects do not become 1 KB yields.
      while (queue[0]?.bytes && total + queue[0].bytes.length <= o.window) {
        const f = queue.shift()!;
        pieces.push(f.bytes!);
        taken.push(f);
        total += f.size;
      }
      try {
        yield pieces.length === 1 ? pieces[0]! : Buffer.concat(pieces, total);
      } finally {
        for (const f of taken) release(f);
      }
    }
  } finally {
    for (const f of queue) release(f);
  }
}

/** A listing kept: the chunks that tile `[0, end)`, as listed at `at` (ms). */
interface CachedListing {
  chunks: ListedChunk[];
  end: number;
  at: number;
}

/**
 * The last gap-free listings of writers' chunk objects, per prefix, for `ttlMs`. Sound because a chunk
 * object that starts before a writer's indexed length is acknowledged and never replaced
 * (S3SegmentStore.putChunk), so a listing that tiled `[0, end)` still does for any end up to `end`; a
 * longer read lists only the keys after the last one kept. The one exception, a compaction deleting
 * chunk objects it rewrote as one (issue 17.2), is met by the read: a GET of a listed object that is gone
 * makes it list afresh and go on from the byte it had reached. Not for `missingBytes` (it must see a
 * deletion), and the store forgets a prefix it writes to. Listings of more than `maxChunks` objects are
 * not kept (memory).
 */
export class ListingCache {
  private readonly entries = new Map<string, CachedListing>();
  constructor(
    private readonly ttlMs = 15_000,
    private readonly maxEntries = 64,
    private readonly maxChunks = 20_000,
  ) {}

  /** The kept listing of `prefix`, if still fresh. */
  get(prefix: string, now = Date.now()): CachedListing | null {
    const e = this.entries.get(prefix);
    if (!e) return null;
    if (now - e.at > this.ttlMs) {
      this.entries.delete(prefix);
      return null;
    }
    return e;
  }

  /** Keeps a listing that tiles `[0, end)` (the caller checked it). */
  set(prefix: string, chunks: ListedChunk[], end: number, now = Date.now()): void {
    this.entries.delete(prefix);
    if (chunks.length > this.maxChunks || this.ttlMs <= 0) return;
    this.entries.set(prefix, { chunks, end, at: now });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
  }

  forget(prefix: string): void {
    this.entries.delete(prefix);
  }
}

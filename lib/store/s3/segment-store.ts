/**
 * `S3SegmentStore`: segments as one S3 object per accepted chunk (DESIGN §1, §5), keyed
 * `tenants/{tenant}/sessions/{sid}/{w}/{offset:015}.jsonl` by the chunk's byte offset in the segment.
 * A chunk is written with a conditional put (`If-None-Match: *`) and a SHA-256 checksum that S3 verifies;
 * a segment is read by listing the writer's prefix, checking that the objects tile the range, and
 * streaming it in windows of bounded size (DESIGN §3: memory grows with the number of writers read, not
 * with their size). Runs of small chunk objects of a settled writer may be rewritten as one compacted
 * object `…/{offset:015}-{end:015}.jsonl` (issue 17.2, lib/store/s3/compaction.ts): a read takes the
 * chunk objects where they are all there, a run where the chunk objects it holds are gone.
 */
import { setMaxListeners } from 'node:events';
import { Readable } from 'node:stream';
import {
  GetObjectCommand,
  type GetObjectCommandOutput,
  PutObjectCommand,
  paginateListObjectsV2,
  type S3Client,
} from '@aws-sdk/client-s3';
import { ChunkConflictError, SegmentDataLossError } from '../errors.js';
import type { ByteRange, ReadSegmentOptions, SegmentKey, SegmentStore } from '../segments.js';
import { isConditionalConflict, isNotFound, isPreconditionFailed, sleep } from './errors.js';
import {
  byOffset,
  ChunkVanishedError,
  chunkObjectKey,
  chunkOffsetOf,
  fetchObjectPart,
  listedObject,
  writerPrefix,
} from './segment-objects.js';
import {
  checkTiling,
  firstGap,
  type ListedChunk,
  ListingCache,
  type Part,
  planParts,
  ReadBudget,
  readParts,
  windowBytes,
} from './segment-read.js';

/** How old unacknowledged bytes must be before another chunk may replace them: longer than any request. */
export const DEFAULT_STALE_AFTER_MS = 5 * 60 * 1000;

/** Puts of one chunk before giving up on a key that keeps changing under us (409s, lost If-Match races). */
const PUT_ATTEMPTS = 5;
/**
 * Listings in a row a read makes, with no byte read between them, when objects it listed vanish (a
 * compaction's deletes); and the bound on the listings of a gap (`GAP_LISTINGS`), which is listed again
 * until two listings in a row show the same one (a real loss: a listing that met a compaction's put and
 * deletes shows a gap the next does not, and a pass writes its runs in order, each a different range).
 */
const READ_LISTINGS = 4;
const GAP_LISTINGS = 32;
export interface S3SegmentStoreOptions {
  client: S3Client;
  bucket: string;
  /** ms after which unacknowledged bytes at an offset may be replaced (default 5 minutes) */
  staleAfterMs?: number;
  /** keys per ListObjectsV2 page, 1 to 1000 (default 1000; tests lower it to exercise pagination) */
  listPageSize?: number;
  /**
   * bytes all reads of this store may fetch ahead of their consumers together, beyond one part each
   * (default 64 MiB; lib/store/s3/segment-read.ts `ReadBudget`)
   */
  readBudgetBytes?: number;
  /** ms a gap-free listing of a writer's chunks is reused by later reads (default 15 s; 0: never) */
  listingTtlMs?: number;
}

/**
 * @example
 * const segments = new S3SegmentStore({ client: new S3Client({}), bucket: 'hansard-segments' });
 * await segments.putChunk({ tenant: 'acme', sid, w }, 0, firstLines);
 * for await (const bytes of segments.readSegment({ tenant: 'acme', sid, w }, firstLines.length)) …
 */
export class S3SegmentStore implements SegmentStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly staleAfterMs: number;
  private readonly listPageSize: number;
  /** what reads fetch ahead, all together (public: tests and the benchmark read its peak) */
  readonly budget: ReadBudget;
  private readonly listings: ListingCache;

  constructor(opts: S3SegmentStoreOptions) {
    this.client = opts.client;
    this.bucket = opts.bucket;
    this.staleAfterMs = opts.staleAfterMs ?? DEFAULT_STALE_AFTER_MS;
    this.listPageSize = Math.min(1000, Math.max(1, opts.listPageSize ?? 1000));
    this.budget = new ReadBudget(opts.readBudgetBytes);
    this.listings = new ListingCache(opts.listingTtlMs);
  }

  /**
   * Stores `bytes` as the object of the chunk at `offset`. The caller has checked that `offset` is the
   * indexed length, so an object already there was never acknowledged. Its life:
   *
   *   absent ──put If-None-Match:*──► written ──the index advances past it──► acknowledged, final
   *   written, the same bytes again  → resolve: a retry after a crash between the put and the index update
   *   written, other bytes, fresh    → ChunkConflictError: its writer may still be between its put and its
   *                                    index update; the service answers 409 and the client asks again
   *   written, other bytes, stale    → overwrite with If-Match:<its ETag>, so of two replacers one wins
   *
   * "Stale" is older than `staleAfterMs` (S3's Last-Modified, whole seconds, against this clock). An
   * acknowledged object is never replaced: a caller can only see its offset as the indexed length if it
   * read the index before that object's put, i.e. its request has run for longer than `staleAfterMs`.
   * A 409 (S3's `ConditionalRequestConflict`: two conditional writes of the key at once) is tried again,
   * at most `PUT_ATTEMPTS` puts in all.
   * @throws TypeError for an invalid key, RangeError for an invalid offset
   * @throws ChunkConflictError when other bytes at `offset` are fresh, or the key keeps changing (409s)
   * @throws S3ServiceException for any other S3 failure
   */
  async putChunk(key: SegmentKey, offset: number, bytes: Uint8Array): Promise<void> {
    const objectKey = chunkObjectKey(key, offset);
    // Only bytes past the indexed length are written, but a kept listing must not outlive a write.
    this.listings.forget(writerPrefix(key));
    for (let attempt = 1; attempt <= PUT_ATTEMPTS; attempt++) {
      const put = await this.conditionalPut(objectKey, bytes, { IfNoneMatch: '*' });
      if (put === 'stored') return;
      // A 409 says nothing of what is stored, and the key may not exist yet: put again rather than GET it
      // (a role that cannot list the bucket gets 403, not 404, for a key that does not exist).
      if (put !== 'exists') continue;
      // 412: an object is there (the service never deletes one), so this GET finds it.
      const there = await this.compareWith(objectKey, bytes);
      if (there === null) continue;
      if (there.same) return;
      const age = Date.now() - (there.lastModified?.getTime() ?? Date.now());
      if (there.etag === undefined || age < this.staleAfterMs) {
        throw new ChunkConflictError(
          `other bytes are already stored at offset ${offset} of writer ${key.w} (written ${Math.round(age / 1000)} s ago)`,
        );
      }
      // Lost to another replacer (412), raced (409) or gone (404): the next round sees what is there.
      if ((await this.conditionalPut(objectKey, bytes, { IfMatch: there.etag })) === 'stored') return;
    }
    throw new ChunkConflictError(`the chunk at offset ${offset} of writer ${key.w} kept changing: try again`);
  }

  /**
   * Streams bytes `[start, end)` of the segment: lists the writer's chunk objects (every page; a gap-free
   * listing of the last 15 s is reused, so a read reopened at an offset lists at most the keys after it),
   * checks that those starting before `end` tile `[0, end)` exactly, then GETs the range in parts of at
   * most one window (`chunkBytes` clamped to [64 KiB, 8 MiB], 256 KiB without it), each within one object,
   * conditional on the listed ETag and ranged where it is not the whole object (so a `start` inside an
   * object is one ranged GET). Of a compacted run and the chunk objects it holds, both listed, the chunk
   * objects are read, the run once they are gone (`checkTiling`); an object gone when its GET comes (a compaction's delete) makes
   * the read list again and go on from the byte it reached (`READ_LISTINGS` times in a row at most with
   * no byte read between them). Several
   * parts are in flight (lib/store/s3/segment-read.ts `readParts`: at most 2–8 windows and 16 GETs per
   * read, all but one part within the store's shared budget).
   * Stopping early aborts the GETs under way, and so does `options.signal` (the read then rejects with
   * the signal's reason).
   * @throws TypeError for an invalid key (before any request)
   * @throws SegmentDataLossError naming the first missing byte range when the chunks do not reach over
   *   `[0, end)`, Error naming overlapping chunks (both before yielding anything), or naming the object
   *   when one changes or comes back short while read
   */
  async *readSegment(
    key: SegmentKey,
    end: number,
    start = 0,
    chunkBytes?: number,
    options: ReadSegmentOptions = {},
  ): AsyncIterable<Uint8Array> {
    const prefix = writerPrefix(key);
    if (end <= start) return;
    const { signal } = options;
    signal?.throwIfAborted();
    // One controller for the listing and every GET: the caller's abort and an early stop both end them.
    const abort = new AbortController();
    // one listener per GET in flight (MAX_GETS_PER_READ) and the listing: Node warns past 10
    setMaxListeners(64, abort.signal);
    const onAbort = () => abort.abort(signal!.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const window = windowBytes(chunkBytes);
      const fetchPart = (part: Part, s: AbortSignal) => fetchObjectPart(this.client, this.bucket, part, s);
      // Where the read has reached: a listed object deleted by a compaction (its run's object is there
      // before its deletes start) is met by listing afresh and reading on from here.
      let at = start;
      // Listings since the read last moved on: a pass deletes run after run ahead of a slow reader, each
      // a vanish after progress; READ_LISTINGS vanishes with no byte read between them end the read.
      let reachedAt = at;
      for (let stuck = 1; ; ) {
        const chunks = await this.tiledChunks(key, prefix, end, abort.signal);
        try {
          for await (const bytes of readParts(planParts(chunks, at, end, window), fetchPart, {
            window,
            budget: this.budget,
            signal: abort.signal,
          })) {
            at += bytes.length;
            yield bytes;
            // Parts already fetched ahead are not handed out once the reader is gone.
            signal?.throwIfAborted();
          }
          return;
        } catch (err) {
          if (!(err instanceof ChunkVanishedError)) throw err;
          stuck = at > reachedAt ? 1 : stuck + 1;
          reachedAt = at;
          if (stuck > READ_LISTINGS) throw err;
          this.listings.forget(prefix);
        }
      }
    } catch (err) {
      // The SDK's own abort error says less than the caller's reason.
      if (signal?.aborted) throw signal.reason;
      throw err;
    } finally {
      signal?.removeEventListener('abort', onAbort);
      abort.abort();
    }
  }

  /**
   * The first range of `[0, end)` no chunk object holds, from a fresh listing (see the port), which a
   * read of the same range made next reuses. A listing is not a snapshot: one whose pages met a
   * compaction's put and deletes (the run's key sorts before the keys already listed, the chunk objects
   * after them are gone) shows a gap where the run holds every byte, so a gap is listed again until two
   * listings in a row show the same one (`GAP_LISTINGS` at most) before it is answered.
   */
  async missingBytes(key: SegmentKey, end: number): Promise<ByteRange | null> {
    if (end <= 0) return null;
    const prefix = writerPrefix(key);
    let last: ByteRange | null = null;
    for (let listing = 1; ; listing++) {
      const chunks = await this.listChunks(prefix, end);
      const gap = firstGap(chunks, end);
      if (!gap && tiles(key, prefix, chunks, end)) this.listings.set(prefix, chunks, end);
      if (!gap || sameRange(gap, last) || listing >= GAP_LISTINGS) return gap;
      last = gap;
    }
  }

  /**
   * Always null (see the port): a chunk object is written whole by one conditional PUT and checked by its
   * SHA-256 on upload, so no crash leaves it with a zero-filled tail; a missing one is `missingBytes`'.
   */
  async tornTail(_key: SegmentKey, _end: number): Promise<ByteRange | null> {
    return null;
  }

  /**
   * PutObject with a condition (every put of this store has one: the bucket policy denies a put without,
   * infra/storage.ts). `stored`; `exists` when the condition failed (412); `raced` when another
   * conditional write of the key was in flight (409 ConditionalRequestConflict, after a short pause);
   * `absent` when If-Match found no object (404).
   */
  private async conditionalPut(
    objectKey: string,
    bytes: Uint8Array,
    condition: { IfNoneMatch: '*' } | { IfMatch: string },
  ): Promise<'stored' | 'exists' | 'raced' | 'absent'> {
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: objectKey,
          Body: bytes,
          ContentLength: bytes.length,
          ContentType: 'application/x-ndjson',
          ChecksumAlgorithm: 'SHA256',
          ...condition,
        }),
      );
      return 'stored';
    } catch (err) {
      if (isConditionalConflict(err)) {
        await sleep(20 + Math.random() * 80); // another conditional write of this key is in flight
        return 'raced';
      }
      if (isPreconditionFailed(err)) return 'exists';
      if ('IfMatch' in condition && isNotFound(err)) return 'absent';
      throw err;
    }
  }

  /**
   * Compares the stored object with `bytes` as it streams (stops at the first difference); null when
   * there is no such object.
   */
  private async compareWith(
    objectKey: string,
    bytes: Uint8Array,
  ): Promise<{ same: boolean; etag: string | undefined; lastModified: Date | undefined } | null> {
    let out: GetObjectCommandOutput;
    try {
      out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: objectKey }));
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
    const body = asReadable(out.Body, objectKey);
    let same = out.ContentLength === undefined || out.ContentLength === bytes.length;
    let pos = 0;
    if (same) {
      for await (const piece of body as AsyncIterable<Buffer>) {
        if (pos + piece.length > bytes.length || !piece.equals(bytes.subarray(pos, pos + piece.length))) {
          same = false;
          break;
        }
        pos += piece.length;
      }
      same &&= pos === bytes.length;
    }
    body.destroy();
    return { same, etag: out.ETag, lastModified: out.LastModified };
  }

  /**
   * The chunk objects that tile `[0, end)`, from the kept listing when it covers them (extended by
   * listing the keys after its last one when it ends short of `end`), else from a new listing; kept.
   * A gap is listed again afresh until two listings in a row show the same one (`missingBytes`): a kept
   * listing extended past a compaction, or a listing whose pages met one, misses the run (its key sorts
   * before the keys listed) while the chunk objects it replaced are gone.
   * @throws SegmentDataLossError, Error for overlapping chunks (`checkTiling`)
   */
  private async tiledChunks(
    key: SegmentKey,
    prefix: string,
    end: number,
    abortSignal: AbortSignal,
  ): Promise<ListedChunk[]> {
    let last: ByteRange | null = null;
    for (let listing = 1; ; listing++) {
      try {
        return await this.listedTiling(key, prefix, end, abortSignal);
      } catch (err) {
        if (!(err instanceof SegmentDataLossError)) throw err;
        if (sameRange(err.range, last) || listing >= GAP_LISTINGS) throw err;
        last = err.range;
        this.listings.forget(prefix);
      }
    }
  }

  /** `tiledChunks` from one listing (the kept one, extended, or a new one). */
  private async listedTiling(
    key: SegmentKey,
    prefix: string,
    end: number,
    abortSignal: AbortSignal,
  ): Promise<ListedChunk[]> {
    const kept = this.listings.get(prefix);
    let chunks: ListedChunk[];
    if (kept && kept.end >= end) {
      chunks = kept.chunks.filter((c) => c.offset < end);
    } else {
      const after = kept?.chunks.at(-1)?.key;
      chunks = [...(kept?.chunks ?? []), ...(await this.listChunks(prefix, end, abortSignal, after))];
      chunks.sort(byOffset);
    }
    const tiling = checkTiling(key, prefix, chunks, end);
    if (!kept || kept.end < end) this.listings.set(prefix, chunks, end);
    return tiling;
  }

  /** Every chunk object of the writer that starts before `end` (and after key `startAfter`), by offset. */
  private async listChunks(
    prefix: string,
    end: number,
    abortSignal?: AbortSignal,
    startAfter?: string,
  ): Promise<ListedChunk[]> {
    const chunks: ListedChunk[] = [];
    // StartAfter rides on every page's request: S3 (and s3rver) start from the continuation token when
    // there is one, which lies past it.
    const pages = paginateListObjectsV2(
      { client: this.client, pageSize: this.listPageSize },
      {
        Bucket: this.bucket,
        Prefix: prefix,
        ...(startAfter !== undefined ? { StartAfter: startAfter } : {}),
      },
      abortSignal ? { abortSignal } : {},
    );
    listing: for await (const page of pages) {
      for (const obj of page.Contents ?? []) {
        const listed = listedObject(prefix, obj.Key ?? '', obj.Size ?? 0, obj.ETag);
        if (!listed) continue;
        // General purpose buckets list keys in UTF-8 binary order, so by offset: the rest lie past `end`.
        if (listed.offset >= end) break listing;
        chunks.push(listed);
      }
      const last = page.Contents?.at(-1)?.Key;
      if (last !== undefined && chunkOffsetOf(prefix, last) >= end) break;
    }
    return chunks.sort(byOffset);
  }
}

/** Whether the listed objects tile `[0, end)` as a read needs them to (`checkTiling`). */
function tiles(key: SegmentKey, prefix: string, chunks: ListedChunk[], end: number): boolean {
  try {
    checkTiling(key, prefix, chunks, end);
    return true;
  } catch {
    return false;
  }
}

function sameRange(a: ByteRange, b: ByteRange | null): boolean {
  return b !== null && a.start === b.start && a.end === b.end;
}

/** The SDK's GetObject body in Node is a Readable (an IncomingMessage with helpers mixed in). */
function asReadable(body: unknown, objectKey: string): Readable {
  if (body instanceof Readable) return body;
  throw new Error(`S3 answered GET ${objectKey} without a readable body`);
}

/**
 * The segments port (DESIGN §1, §5): the bytes of each writer's segment (S3: one object per chunk;
 * filesystem: one appended file per writer). Adapters: lib/store/fs/segment-store.ts,
 * lib/store/s3/segment-store.ts. The writer index that says how many of those bytes were accepted is
 * `WriterStore` (./writers.ts).
 */
import { z } from 'zod';
import { Count, SessionId, WriterId } from '../contract/ids.js';

/** Where one writer's segment lives. All three parts are validated ids before they reach a store. */
export const SegmentKey = z.object({ tenant: z.string(), sid: SessionId, w: WriterId });
export type SegmentKey = z.infer<typeof SegmentKey>;

/** A half-open byte range `[start, end)` of a segment. */
export const ByteRange = z.object({ start: Count, end: Count });
export type ByteRange = z.infer<typeof ByteRange>;

/** How a read of a segment may be stopped (`SegmentStore.readSegment`). */
export interface ReadSegmentOptions {
  /** aborted when the reader is gone (the client of a replay disconnected): the read stops and closes */
  signal?: AbortSignal | undefined;
}

/** The bytes of segments (S3: one object per chunk; filesystem: one appended file per writer). */
export interface SegmentStore {
  /**
   * Stores `bytes` as the chunk starting at byte `offset` of the segment. The caller has checked that
   * `offset` is the indexed length. Idempotent: when the same bytes are already there (a retry after a
   * crash between this write and the index update) it resolves. Bytes past `offset` left by a crashed
   * write are not part of the segment and may be replaced.
   * @throws ChunkConflictError when other bytes are already stored at `offset` and cannot be replaced
   */
  putChunk(key: SegmentKey, offset: number, bytes: Uint8Array): Promise<void>;
  /**
   * Streams bytes `[start, end)` of the segment (`end` is the indexed length; anything beyond it was never
   * acknowledged). Yields nothing for an empty range. `chunkBytes` is a hint for the size of the chunks
   * (a merge of many writers asks for small ones); an adapter may ignore it.
   *
   * Nothing is opened before the first read, and whatever is open (a file, a GET) is released as soon as
   * the stream ends, fails, is closed early by its consumer (`return()`), or `options.signal` is aborted;
   * an abort ends the stream with the signal's reason (an `AbortError`). An adapter reads at most a few
   * chunks ahead of its consumer.
   */
  readSegment(
    key: SegmentKey,
    end: number,
    start?: number,
    chunkBytes?: number,
    options?: ReadSegmentOptions,
  ): AsyncIterable<Uint8Array>;
  /**
   * The first byte range of `[0, end)` the store does not hold, or null when it holds all of it (`end` is
   * the indexed length). A range is data loss: bytes acknowledged and gone. Readers ask before they
   * stream, so a loss is answered with an error status instead of a short body (issue 8).
   */
  missingBytes(key: SegmentKey, end: number): Promise<ByteRange | null>;
  /**
   * A torn tail of `[0, end)`, asked once `missingBytes` found the bytes there: `end` is an indexed
   * length, and every chunk the service acknowledges ends with a newline, so byte `end - 1` must be one.
   * When it is not (a crash on ext4 or XFS often keeps a file's size but turns its tail into NUL bytes),
   * the range from the byte after the last newline before it to `end`: bytes that are not the ones
   * acknowledged (issue 8). Null when the byte is a newline, when `end` is 0, or when the store does not
   * hold `end` bytes (then `missingBytes` says so). A store whose chunks cannot be torn in place (S3: each
   * chunk an object written whole) answers null without reading.
   */
  tornTail(key: SegmentKey, end: number): Promise<ByteRange | null>;
}

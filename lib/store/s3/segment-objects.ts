/**
 * The objects of a writer's segment in S3 (DESIGN §5, ADR 9): their names (one object per accepted
 * chunk, `{offset:015}.jsonl`, or a compacted run, `{offset:015}-{end:015}.jsonl`), what a listed name
 * stands for, and the conditional GET of one part of one. Shared by the segment store's read and put
 * paths (lib/store/s3/segment-store.ts) and the compactor (lib/store/s3/compaction.ts).
 */
import { GetObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { assertSegmentKey } from '../keys.js';
import type { SegmentKey } from '../segments.js';
import { isNotFound, isPreconditionFailed } from './errors.js';
import type { ListedChunk, Part } from './segment-read.js';

/** Largest offset the 15-digit key can name. */
const MAX_OFFSET = 10 ** 15 - 1;

/** A chunk object's name, `{offset:015}.jsonl`, or a compacted run's, `{offset:015}-{end:015}.jsonl`. */
const CHUNK_NAME = /^(\d{15})(?:-(\d{15}))?\.jsonl$/;

/**
 * The prefix of a writer's chunk objects: `tenants/{tenant}/sessions/{sid}/{w}/` (DESIGN §5).
 * @throws TypeError for an invalid key
 */
export function writerPrefix(key: SegmentKey): string {
  assertSegmentKey(key);
  return `tenants/${key.tenant}/sessions/${key.sid}/${key.w}/`;
}

/**
 * The object key of the chunk at byte `offset`: `…/{w}/{offset:015}.jsonl`, e.g. `…/000000000004096.jsonl`.
 * @throws TypeError for an invalid key; RangeError for an offset that is not an integer in [0, 10^15)
 */
export function chunkObjectKey(key: SegmentKey, offset: number): string {
  const prefix = writerPrefix(key);
  if (!Number.isSafeInteger(offset) || offset < 0 || offset > MAX_OFFSET) {
    throw new RangeError(`chunk offset must be an integer from 0 to ${MAX_OFFSET}, not ${offset}`);
  }
  return `${prefix}${String(offset).padStart(15, '0')}.jsonl`;
}

/**
 * The object key of a compacted run of chunks holding bytes `[start, end)` of the segment:
 * `…/{w}/{start:015}-{end:015}.jsonl`, which lists just before the chunk object at `start` (`-` sorts
 * before `.`), so a listing stopped at an offset still sees every object starting before it.
 * @throws TypeError for an invalid key; RangeError unless 0 <= start < end < 10^15 are integers
 */
export function compactedObjectKey(key: SegmentKey, start: number, end: number): string {
  const first = chunkObjectKey(key, start);
  if (!Number.isSafeInteger(end) || end <= start || end > MAX_OFFSET) {
    throw new RangeError(`a compacted run must end after ${start} and by ${MAX_OFFSET}, not at ${end}`);
  }
  return `${first.slice(0, -'.jsonl'.length)}-${String(end).padStart(15, '0')}.jsonl`;
}

/**
 * The range an object name of a writer's prefix stands for (`chunkObjectKey`, `compactedObjectKey`), or
 * null for any other name. A compacted object's size must be its range's, else it is not one of ours.
 */
export function listedObject(
  prefix: string,
  objectKey: string,
  size: number,
  etag?: string,
): ListedChunk | null {
  if (!objectKey.startsWith(prefix)) return null;
  const m = CHUNK_NAME.exec(objectKey.slice(prefix.length));
  if (!m) return null;
  const offset = Number(m[1]);
  if (m[2] === undefined) return { key: objectKey, offset, size, etag, compacted: false };
  const end = Number(m[2]);
  if (end - offset !== size || end <= offset) return null;
  return { key: objectKey, offset, size, etag, compacted: true };
}

/** A listed object was gone (or changed) when its bytes were fetched: a compaction deleted it. */
export class ChunkVanishedError extends Error {
  override name = 'ChunkVanishedError';
}

/**
 * Fetches one part of a listed object whole: exactly its `to - from` bytes (a GET conditional on the
 * listed ETag, ranged unless it is the whole object).
 * @throws ChunkVanishedError when the object is gone or changed (404, 412); Error for a short answer
 */
export async function fetchObjectPart(
  client: S3Client,
  bucket: string,
  { chunk, from, to }: Part,
  abortSignal: AbortSignal,
): Promise<Uint8Array> {
  const whole = from === 0 && to === chunk.size;
  let bytes: Uint8Array;
  let first = 0;
  try {
    const out = await client.send(
      new GetObjectCommand({
        Bucket: bucket,
        Key: chunk.key,
        IfMatch: chunk.etag,
        Range: whole ? undefined : `bytes=${from}-${to - 1}`,
      }),
      { abortSignal },
    );
    // A server may answer a range with more than was asked (RFC 9110 lets it ignore Range): the
    // Content-Range says where its bytes begin, and only [from, to) is passed on.
    first = Number(/^bytes (\d+)-/.exec(out.ContentRange ?? '')?.[1] ?? 0);
    if (!out.Body) throw new Error(`S3 answered GET ${chunk.key} without a body`);
    bytes = await out.Body.transformToByteArray();
  } catch (err) {
    if (isPreconditionFailed(err) || isNotFound(err)) {
      throw new ChunkVanishedError(
        `chunk object ${chunk.key} changed or vanished while the segment was read`,
        {
          cause: err,
        },
      );
    }
    throw err;
  }
  const skip = from - first;
  const got = skip < 0 ? new Uint8Array() : bytes.subarray(skip, skip + (to - from));
  if (got.length !== to - from) {
    throw new Error(
      `chunk object ${chunk.key} gave ${got.length} of its bytes [${from}, ${to}) (segment bytes from ${chunk.offset + from})`,
    );
  }
  return got;
}

/** Listed objects by offset, the longer first where two start together (a run before its first chunk). */
export function byOffset(a: ListedChunk, b: ListedChunk): number {
  return a.offset - b.offset || b.size - a.size;
}

/** The offset an object name of `prefix` starts at, or -1 for a name that is not one of ours. */
export function chunkOffsetOf(prefix: string, objectKey: string): number {
  const m = CHUNK_NAME.exec(objectKey.slice(prefix.length));
  return m ? Number(m[1]) : -1;
}

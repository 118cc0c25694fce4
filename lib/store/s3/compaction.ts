/**
 * `S3SegmentCompactor`: the S3 side of compacting small chunk objects (issue 17.2, lib/store/segment-objects.ts
 * `SegmentCompactionStore`). It lists a writer's objects, reads a run of them as S3SegmentStore reads a
 * segment (one GET per small object, 16 in flight), writes the run as one object
 * `…/{w}/{start:015}-{end:015}.jsonl` with `If-None-Match: *` and a SHA-256 that S3 checks the body
 * against, and deletes the objects the run replaced (DeleteObjects, 1,000 keys a request). Which runs, and
 * the check of each chunk against the index before any of this, are lib/service/ingest/compaction.ts'.
 *
 * Its own file, not S3SegmentStore's: only the compactor's role may delete (infra/compaction.ts), and
 * test/infra/stack.test.ts derives the API's S3 grants from the commands s3/segment-store.ts sends.
 */
import { createHash } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import {
  DeleteObjectsCommand,
  GetObjectCommand,
  PutObjectCommand,
  paginateListObjectsV2,
  type S3Client,
} from '@aws-sdk/client-s3';
import {
  CompactionConflictError,
  type SegmentCompactionStore,
  type StoredSegmentObject,
} from '../segment-objects.js';
import type { SegmentKey } from '../segments.js';
import { isConditionalConflict, isNotFound, isPreconditionFailed, sleep } from './errors.js';
import { compactedObjectKey, fetchObjectPart, listedObject, writerPrefix } from './segment-objects.js';
import { type ListedChunk, MAX_WINDOW_BYTES, planParts, ReadBudget, readParts } from './segment-read.js';

/** Reads of a run at once, 16 GETs in flight each (the SDK's 50 sockets: 48). */
const READS_PER_RUN = 3;
/** Keys one DeleteObjects request may name (S3's limit). */
const DELETE_BATCH = 1000;
/** Puts of one compacted object before giving up on 409s (another conditional write of the key at once). */
const PUT_ATTEMPTS = 5;

/** A listed object with what S3 said of it: its ETag, which its GETs are conditional on. */
interface S3SegmentObject extends StoredSegmentObject {
  etag: string | undefined;
}

export interface S3SegmentCompactorOptions {
  client: S3Client;
  bucket: string;
  /** keys per ListObjectsV2 page, 1 to 1000 (default 1000) */
  listPageSize?: number;
}

/**
 * @example
 * const store = new S3SegmentCompactor({ client: new S3Client({}), bucket: 'hansard-segments' });
 * const objects = await store.listObjects(key, writer.length);
 */
export class S3SegmentCompactor implements SegmentCompactionStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly listPageSize: number;
  /** what a run's read fetches ahead (the run itself is held whole: at most 64 MiB) */
  private readonly budget = new ReadBudget(16 * 1024 * 1024);

  constructor(o: S3SegmentCompactorOptions) {
    this.client = o.client;
    this.bucket = o.bucket;
    this.listPageSize = Math.min(1000, Math.max(1, o.listPageSize ?? 1000));
  }

  async listObjects(key: SegmentKey, end: number): Promise<S3SegmentObject[]> {
    const prefix = writerPrefix(key);
    const out: S3SegmentObject[] = [];
    const pages = paginateListObjectsV2(
      { client: this.client, pageSize: this.listPageSize },
      { Bucket: this.bucket, Prefix: prefix },
    );
    listing: for await (const page of pages) {
      for (const obj of page.Contents ?? []) {
        const listed = listedObject(prefix, obj.Key ?? '', obj.Size ?? 0, obj.ETag);
        if (!listed) continue;
        // Keys list in UTF-8 binary order, so by offset: the rest start at `end` or past it.
        if (listed.offset >= end) break listing;
        out.push({ ...asObject(listed), etag: listed.etag });
      }
    }
    return out.sort((a, b) => a.offset - b.offset || b.size - a.size);
  }

  async readObjects(
    _key: SegmentKey,
    objects: readonly StoredSegmentObject[],
    start: number,
    end: number,
  ): Promise<Uint8Array> {
    const chunks: ListedChunk[] = objects.map((o) => ({
      key: o.name,
      offset: o.offset,
      size: o.size,
      etag: (o as S3SegmentObject).etag,
      compacted: o.compacted,
    }));
    const abort = new AbortController();
    // one listener per GET in flight
    setMaxListeners(4 * READS_PER_RUN * 16, abort.signal);
    const out = Buffer.allocUnsafe(end - start);
    // The run in READS_PER_RUN slices read at once (16 GETs in flight each): small objects cost a round
    // trip apiece, so the GETs in flight set the pace.
    const slices: ListedChunk[][] = [];
    const per = Math.ceil(chunks.length / READS_PER_RUN);
    for (let i = 0; i < chunks.length; i += per) slices.push(chunks.slice(i, i + per));
    const readSlice = async (slice: ListedChunk[]) => {
      const from = Math.max(start, slice[0]!.offset);
      const last = slice.at(-1)!;
      const to = Math.min(end, last.offset + last.size);
      let at = from;
      for await (const bytes of readParts(
        planParts(slice, from, to, MAX_WINDOW_BYTES),
        (part, signal) => fetchObjectPart(this.client, this.bucket, part, signal),
        { window: MAX_WINDOW_BYTES, budget: this.budget, signal: abort.signal },
      )) {
        out.set(bytes, at - start);
        at += bytes.length;
      }
      if (at !== to) throw new Error(`the objects read gave bytes [${from}, ${at}) of [${from}, ${to})`);
      return to - from;
    };
    try {
      const got = (await Promise.all(slices.map(readSlice))).reduce((n, b) => n + b, 0);
      if (got !== end - start) throw new Error(`the objects read gave ${got} of bytes [${start}, ${end})`);
    } finally {
      abort.abort();
    }
    return out;
  }

  async putCompacted(
    key: SegmentKey,
    start: number,
    bytes: Uint8Array,
    sha256: string,
  ): Promise<'stored' | 'exists'> {
    const objectKey = compactedObjectKey(key, start, start + bytes.length);
    for (let attempt = 1; attempt <= PUT_ATTEMPTS; attempt++) {
      try {
        await this.client.send(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key: objectKey,
            Body: bytes,
            ContentLength: bytes.length,
            ContentType: 'application/x-ndjson',
            // S3 computes the body's SHA-256 and refuses the put when it is not this one.
            ChecksumAlgorithm: 'SHA256',
            ChecksumSHA256: Buffer.from(sha256, 'hex').toString('base64'),
            IfNoneMatch: '*',
          }),
        );
        return 'stored';
      } catch (err) {
        if (isConditionalConflict(err)) {
          await sleep(20 + Math.random() * 80);
          continue;
        }
        if (!isPreconditionFailed(err)) throw err;
      }
      // 412: an object of that name is there. The same bytes (a crash after the put) are done.
      const there = await this.sha256Of(objectKey);
      if (there === null) continue;
      if (there === sha256) return 'exists';
      throw new CompactionConflictError(`other bytes are stored as ${objectKey}: left as they are`);
    }
    throw new CompactionConflictError(`the compacted object ${objectKey} kept changing: try again later`);
  }

  async deleteObjects(_key: SegmentKey, objects: readonly StoredSegmentObject[]): Promise<number> {
    let deleted = 0;
    for (let i = 0; i < objects.length; i += DELETE_BATCH) {
      const batch = objects.slice(i, i + DELETE_BATCH);
      const out = await this.client.send(
        new DeleteObjectsCommand({
          Bucket: this.bucket,
          Delete: { Objects: batch.map((o) => ({ Key: o.name })), Quiet: true },
        }),
      );
      const failed = out.Errors ?? [];
      if (failed.length > 0) {
        const first = failed[0]!;
        throw new Error(
          `S3 deleted ${batch.length - failed.length} of ${batch.length} objects; ${first.Key}: ${first.Code} ${first.Message ?? ''}`.trim(),
        );
      }
      deleted += batch.length;
    }
    return deleted;
  }

  /** The SHA-256 (hex) of the object's bytes, or null when it is gone. */
  private async sha256Of(objectKey: string): Promise<string | null> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: objectKey }));
      if (!out.Body) return null;
      const hash = createHash('sha256');
      for await (const piece of out.Body as AsyncIterable<Uint8Array>) hash.update(piece);
      return hash.digest('hex');
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
  }
}

function asObject(c: ListedChunk): StoredSegmentObject {
  return { name: c.key, offset: c.offset, size: c.size, compacted: c.compacted };
}

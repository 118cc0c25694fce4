/**
 * `ReplayArchive` on S3 (issue 17.2): stored replays of large sessions under `replays/` in the segments
 * bucket, outside `tenants/` (a lifecycle rule expires them; they are copies, made again on demand).
 *
 * - `store` streams the replay with a multipart upload (`@aws-sdk/lib-storage` `Upload`: parts of 8 MiB,
 *   4 in flight, so memory stays near 32 MiB whatever the size) and completes it with `If-None-Match: *`,
 *   so a copy another build finished first is never replaced (412 counts as stored); a failure aborts the
 *   upload and leaves no object.
 * - `find` is a HEAD and a presigned GET (`@aws-sdk/s3-request-presigner`). A role without s3:ListBucket
 *   gets 403, not 404, for a key that does not exist: both read as absent.
 * - `S3ReplayBuilds` starts a build by putting its job as a marker `<key>.building` (`If-None-Match: *`;
 *   a marker older than `staleAfterMs` is taken over with `If-Match` on its ETag, so of two requests only
 *   one starts the build); the bucket announces the marker to the builder function.
 */

import { Readable } from 'node:stream';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { BUILD_MARKER_SUFFIX, REPLAY_PREFIX } from './keys.js';
import { isConditionalConflict, isForbidden, isNotFound, isPreconditionFailed } from './s3-segment-store.js';

export { BUILD_MARKER_SUFFIX, REPLAY_PREFIX };

const PART_BYTES = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 4;

/** What `planReplay` hands a client (lib/service/large-replay.ts `ArchivedReplay`). */
export interface S3ArchivedReplay {
  url: string;
  bytes: number;
  expires_at: string;
}

export class S3ReplayArchive {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly now: () => Date;

  /** @param o.client the S3 client (its endpoint signs the URLs: an emulator's in tests) */
  constructor(o: { client: S3Client; bucket: string; now?: () => Date }) {
    this.client = o.client;
    this.bucket = o.bucket;
    this.now = o.now ?? (() => new Date());
  }

  /** The stored replay `key` and a GET URL valid `ttlSeconds`, or null. @throws other S3 errors */
  async find(key: string, ttlSeconds: number): Promise<S3ArchivedReplay | null> {
    const Key = REPLAY_PREFIX + key;
    let bytes: number;
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key }));
      bytes = head.ContentLength ?? 0;
    } catch (err) {
      if (isNotFound(err) || isForbidden(err)) return null;
      throw err;
    }
    const url = await getSignedUrl(this.client, new GetObjectCommand({ Bucket: this.bucket, Key }), {
      expiresIn: ttlSeconds,
    });
    return { url, bytes, expires_at: new Date(this.now().getTime() + ttlSeconds * 1000).toISOString() };
  }

  /**
   * Streams `body` into `key` (multipart past 8 MiB), never replacing a stored copy.
   * @throws the upload's error (the multipart upload is aborted first)
   */
  async store(key: string, body: AsyncIterable<Uint8Array | string>, contentType: string): Promise<void> {
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.bucket,
        Key: REPLAY_PREFIX + key,
        // lib-storage reads a Readable (not an async iterable) in parts
        Body: Readable.from(asBytes(body), { objectMode: false }),
        ContentType: contentType,
        IfNoneMatch: '*',
      },
      partSize: PART_BYTES,
      queueSize: PARTS_IN_FLIGHT,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      // Another build stored it first: the same bytes, by the key's construction.
      if (isPreconditionFailed(err)) return;
      throw err;
    }
  }
}

/** A build of a stored replay (lib/service/large-replay.ts `ReplayJob`), as its marker holds it. */
export interface S3ReplayJob {
  tenant: string;
  sid: string;
  format: 'ndjson' | 'text';
  raw: boolean;
  key: string;
  caller: { id: string; scopes: string[]; session: string | null };
}

/**
 * `ReplayBuilds` on S3: `start` writes the job as the marker object `replays/<key>.building`; the
 * bucket's event notification for that suffix invokes the builder function (functions/replay-build.ts),
 * which reads the job back with `readJob`. The marker is put with `If-None-Match: *`; one older than
 * `staleAfterMs` (a build that died) is replaced with `If-Match` on its ETag, so of two requests at once
 * one starts the build and the other finds it started.
 */
export class S3ReplayBuilds {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly now: () => Date;
  private readonly staleAfterMs: number;

  constructor(o: { client: S3Client; bucket: string; staleAfterMs: number; now?: () => Date }) {
    this.client = o.client;
    this.bucket = o.bucket;
    this.staleAfterMs = o.staleAfterMs;
    this.now = o.now ?? (() => new Date());
  }

  /** The marker's object key of a stored replay's key. */
  static markerKey(key: string): string {
    return `${REPLAY_PREFIX}${key}${BUILD_MARKER_SUFFIX}`;
  }

  /** Writes `job`'s marker unless a fresh one is there. @throws S3 errors other than lost races */
  async start(job: S3ReplayJob): Promise<void> {
    const Key = S3ReplayBuilds.markerKey(job.key);
    const marker = {
      Bucket: this.bucket,
      Key,
      Body: JSON.stringify({ ...job, started_at: this.now().toISOString() }),
      ContentType: 'application/json',
    };
    try {
      await this.client.send(new PutObjectCommand({ ...marker, IfNoneMatch: '*' }));
      return;
    } catch (err) {
      if (isConditionalConflict(err)) return; // another request is writing it now
      if (!isPreconditionFailed(err)) throw err;
    }
    let head: { ETag?: string; LastModified?: Date };
    try {
      head = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key }));
    } catch (err) {
      if (isNotFound(err) || isForbidden(err)) return;
      throw err;
    }
    const age = this.now().getTime() - (head.LastModified?.getTime() ?? this.now().getTime());
    if (age <= this.staleAfterMs || !head.ETag) return;
    try {
      await this.client.send(new PutObjectCommand({ ...marker, IfMatch: head.ETag }));
    } catch (err) {
      if (isPreconditionFailed(err) || isConditionalConflict(err) || isNotFound(err)) return;
      throw err;
    }
  }

  /**
   * The job a marker holds (`markerKey`), as the builder function reads it; null when the object is gone
   * or is not a marker. The caller validates its shape. @throws other S3 errors
   */
  async readJob(markerKey: string): Promise<unknown> {
    if (!markerKey.startsWith(REPLAY_PREFIX) || !markerKey.endsWith(BUILD_MARKER_SUFFIX)) return null;
    try {
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: markerKey }));
      const text = (await got.Body?.transformToString('utf8')) ?? '';
      return JSON.parse(text) as unknown;
    } catch (err) {
      if (isNotFound(err) || isForbidden(err) || err instanceof SyntaxError) return null;
      throw err;
    }
  }
}

/** The body's pieces as bytes (the text replay gives strings). */
async function* asBytes(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<Uint8Array> {
  for await (const piece of body) yield typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece;
}

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
 * - `S3ReplayBuilds` keeps one build marker per replay variant (`<tenant>/<sid>/<variant>.building`)
 *   holding the job and how its newest build stands; EventBridge announces each write of it to the
 *   builder function.
 */

import { Readable } from 'node:stream';
import { GetObjectCommand, HeadObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import { BUILD_MARKER_SUFFIX, REPLAY_PREFIX } from '../keys.js';
import { isConditionalConflict, isForbidden, isNotFound, isPreconditionFailed } from './errors.js';

export { BUILD_MARKER_SUFFIX, REPLAY_PREFIX };

const PART_BYTES = 8 * 1024 * 1024;
const PARTS_IN_FLIGHT = 4;

/** What `planReplay` hands a client (lib/service/sessions/large-replay.ts `ArchivedReplay`). */
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

/** A build of a stored replay (lib/service/sessions/large-replay.ts `ReplayJob`), as its marker holds it. */
export interface S3ReplayJob {
  tenant: string;
  sid: string;
  format: 'ndjson' | 'text';
  raw: boolean;
  caller: { id: string; scopes: string[]; session: string | null };
}

/** How a build stands (lib/service/sessions/large-replay.ts `BuildState`), with its job: a marker's body. */
export type S3BuildMarker = { job: S3ReplayJob; started_at: string } & (
  | { state: 'building' }
  | { state: 'done'; finished_at: string; key: string }
  | {
      state: 'failed';
      finished_at: string;
      error: { code: string; message: string; details: Record<string, unknown> };
    }
);

/**
 * `ReplayBuilds` on S3: one marker object per replay variant, `replays/<tenant>/<sid>/<variant>.building`,
 * whose body says how its newest build stands (`S3BuildMarker`). `start` writes a building marker
 * (`If-None-Match: *`, or `If-Match` on the ETag of one that is not building or went stale after
 * `staleAfterMs`); EventBridge announces each write of a marker and the builder function acts on those
 * that are building (`read`); `finish` records the outcome with `If-Match` on the marker it read, so a
 * newer build that took over is never overwritten. Of two requests at once, one starts the build.
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

  /** The marker's object key of a replay variant (`replayVariant`: `<tenant>/<sid>/<ndjson|raw|text>`). */
  static markerKey(variant: string): string {
    return `${REPLAY_PREFIX}${variant}${BUILD_MARKER_SUFFIX}`;
  }

  /** The variant's marker, or null. @throws S3 errors but a missing key */
  async status(variant: string): Promise<S3BuildMarker | null> {
    return (await this.read(S3ReplayBuilds.markerKey(variant)))?.marker ?? null;
  }

  /** Starts a build of `job` unless one is under way and fresh (see the class doc). @throws S3 errors */
  async start(job: S3ReplayJob): Promise<void> {
    const Key = S3ReplayBuilds.markerKey(variantOf(job));
    const body = JSON.stringify({ job, started_at: this.now().toISOString(), state: 'building' });
    if (await this.put(Key, body, { IfNoneMatch: '*' })) return;
    const had = await this.read(Key);
    if (!had) return; // it went away between the two: the next request starts one
    const age = this.now().getTime() - Date.parse(had.marker.started_at);
    if (had.marker.state === 'building' && age <= this.staleAfterMs) return;
    await this.put(Key, body, { IfMatch: had.etag });
  }

  /** Records how the build of `job` begun at `startedAt` ended, unless a newer one took over. */
  async finish(
    job: S3ReplayJob,
    startedAt: string,
    outcome: { key: string } | { error: { code: string; message: string; details: Record<string, unknown> } },
  ): Promise<void> {
    const Key = S3ReplayBuilds.markerKey(variantOf(job));
    const had = await this.read(Key);
    if (!had || had.marker.started_at !== startedAt) return;
    const finished = { job, started_at: startedAt, finished_at: this.now().toISOString() };
    const body =
      'key' in outcome
        ? { ...finished, state: 'done', key: outcome.key }
        : { ...finished, state: 'failed', error: outcome.error };
    await this.put(Key, JSON.stringify(body), { IfMatch: had.etag });
  }

  /**
   * The marker at `markerKey` with its ETag, as the builder function reads the one it was told of; null
   * when the object is gone, is not a marker, or its job does not name this very marker (a marker is
   * only ever the one of its own job's variant). The caller validates the job's shape.
   * @throws S3 errors but a missing key
   */
  async read(markerKey: string): Promise<{ marker: S3BuildMarker; etag: string } | null> {
    if (!markerKey.startsWith(REPLAY_PREFIX) || !markerKey.endsWith(BUILD_MARKER_SUFFIX)) return null;
    try {
      const got = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: markerKey }));
      const marker = JSON.parse((await got.Body?.transformToString('utf8')) ?? '') as S3BuildMarker;
      const job = marker?.job;
      if (!job || typeof job.tenant !== 'string' || typeof job.sid !== 'string') return null;
      if (S3ReplayBuilds.markerKey(variantOf(job)) !== markerKey || !got.ETag) return null;
      return { marker, etag: got.ETag };
    } catch (err) {
      if (isNotFound(err) || isForbidden(err) || err instanceof SyntaxError) return null;
      throw err;
    }
  }

  /** A conditional put: false when the condition failed or a concurrent write raced it. */
  private async put(
    Key: string,
    Body: string,
    cond: { IfNoneMatch: '*' } | { IfMatch: string },
  ): Promise<boolean> {
    try {
      await this.client.send(
        new PutObjectCommand({ Bucket: this.bucket, Key, Body, ContentType: 'application/json', ...cond }),
      );
      return true;
    } catch (err) {
      if (isPreconditionFailed(err) || isConditionalConflict(err) || isNotFound(err)) return false;
      throw err;
    }
  }
}

/** A job's variant, as lib/service/sessions/large-replay.ts `replayVariant` names it. */
function variantOf(job: S3ReplayJob): string {
  return `${job.tenant}/${job.sid}/${job.raw ? 'raw' : job.format}`;
}

/** The body's pieces as bytes (the text replay gives strings). */
async function* asBytes(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<Uint8Array> {
  for await (const piece of body) yield typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece;
}

/**
 * `S3DigestStore`: the signed audit digests on AWS (issue 15, DESIGN §6b) as S3 objects under the
 * session's prefix in the segments bucket, `tenants/{tenant}/sessions/{sid}/digests/{seq:09}.json`
 * (`digests` is not a writer id, so no writer's chunk objects share the prefix). Each object is written
 * once with `If-None-Match: *` and a SHA-256 checksum S3 verifies; an object already there is never
 * replaced.
 */
import { GetObjectCommand, PutObjectCommand, paginateListObjectsV2, type S3Client } from '@aws-sdk/client-s3';
import { DigestConflictError, type DigestStore } from '../digests.js';
import { assertSessionKey, digestName, digestSeqOf } from '../keys.js';
import { isConditionalConflict, isForbidden, isNotFound, isPreconditionFailed, sleep } from './errors.js';

/** Puts of one digest while S3 answers 409 (a concurrent conditional write of the same key). */
const PUT_ATTEMPTS = 5;

export interface S3DigestStoreOptions {
  client: S3Client;
  /** the segments bucket */
  bucket: string;
  /** keys per ListObjectsV2 page, 1 to 1000 (default 1000; tests lower it to exercise pagination) */
  listPageSize?: number;
  /**
   * true where the role may not list the bucket (the digester's, infra/lambda.ts `bindDigests`): S3 then
   * answers a GET of a key that does not exist with 403 AccessDenied, not 404 (GetObject's API reference,
   * "Permissions"), so `getDigest` reads a 403 as absent. The put that follows decides: it is
   * create-only, and a 403 on the read after its 412 (the object is there) is thrown. Default false.
   */
  forbiddenMeansAbsent?: boolean;
}

/**
 * The prefix of a session's digest objects: `tenants/{tenant}/sessions/{sid}/digests/`.
 * @throws TypeError for an invalid tenant or session id
 */
export function digestPrefix(tenant: string, sid: string): string {
  assertSessionKey(tenant, sid);
  return `tenants/${tenant}/sessions/${sid}/digests/`;
}

/**
 * The object key of digest `seq`: `…/digests/{seq:09}.json`.
 * @throws TypeError for an invalid tenant or session id; RangeError for a seq outside 1..999,999,999
 */
export function digestObjectKey(tenant: string, sid: string, seq: number): string {
  return `${digestPrefix(tenant, sid)}${digestName(seq)}`;
}

/**
 * @example
 * const digests = new S3DigestStore({ client: new S3Client({}), bucket: 'hansard-segments' });
 * await digests.putDigest('acme', sid, 1, Buffer.from(canonicalJson(signed)));
 */
export class S3DigestStore implements DigestStore {
  private readonly client: S3Client;
  private readonly bucket: string;
  private readonly listPageSize: number;
  private readonly forbiddenMeansAbsent: boolean;

  constructor(opts: S3DigestStoreOptions) {
    this.client = opts.client;
    this.bucket = opts.bucket;
    this.listPageSize = Math.min(1000, Math.max(1, opts.listPageSize ?? 1000));
    this.forbiddenMeansAbsent = opts.forbiddenMeansAbsent ?? false;
  }

  /**
   * Stores digest `seq` with `If-None-Match: *` (see the port). On a 412 the stored object is read and
   * compared: the same bytes resolve (a retry), other bytes throw. A 409 (another conditional write of
   * the key in flight) is tried again after a short pause.
   * @throws DigestConflictError when other bytes are stored at `seq`
   * @throws TypeError / RangeError for an invalid key or seq (before any request)
   * @throws S3ServiceException for any other S3 failure
   */
  async putDigest(tenant: string, sid: string, seq: number, bytes: Uint8Array): Promise<void> {
    const key = digestObjectKey(tenant, sid, seq);
    for (let attempt = 1; attempt <= PUT_ATTEMPTS; attempt++) {
      try {
        await this.client.send(
          new PutObjectCommand({
            Bucket: this.bucket,
            Key: key,
            Body: bytes,
            ContentLength: bytes.length,
            ContentType: 'application/json',
            ChecksumAlgorithm: 'SHA256',
            IfNoneMatch: '*',
          }),
        );
        return;
      } catch (err) {
        if (isConditionalConflict(err)) {
          await sleep(20 + Math.random() * 80);
          continue;
        }
        if (!isPreconditionFailed(err)) throw err;
      }
      // 412: the object is there, so a 403 here is a refusal, never "absent".
      const there = await this.read(key, false);
      if (there === null) continue; // removed between the 412 and the read: put again
      if (Buffer.from(there).equals(bytes)) return;
      throw new DigestConflictError(
        `digest ${seq} of session ${sid} is already stored with other bytes (${there.length} bytes, not ${bytes.length})`,
      );
    }
    throw new DigestConflictError(`digest ${seq} of session ${sid} kept changing while written: try again`);
  }

  /**
   * The bytes of digest `seq`, or null when there is no such object (404, or 403 with
   * `forbiddenMeansAbsent`: the digester probes the seq after the head, which usually does not exist).
   */
  async getDigest(tenant: string, sid: string, seq: number): Promise<Uint8Array | null> {
    return this.read(digestObjectKey(tenant, sid, seq), this.forbiddenMeansAbsent);
  }

  private async read(key: string, forbiddenMeansAbsent: boolean): Promise<Uint8Array | null> {
    try {
      const out = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!out.Body) throw new Error(`S3 answered GET ${key} without a body`);
      return await out.Body.transformToByteArray();
    } catch (err) {
      if (isNotFound(err) || (forbiddenMeansAbsent && isForbidden(err))) return null;
      throw err;
    }
  }

  /** The seqs of the session's digest objects (every page of the prefix), ascending. */
  async listDigests(tenant: string, sid: string): Promise<number[]> {
    const prefix = digestPrefix(tenant, sid);
    const seqs: number[] = [];
    const pages = paginateListObjectsV2(
      { client: this.client, pageSize: this.listPageSize },
      { Bucket: this.bucket, Prefix: prefix },
    );
    for await (const page of pages) {
      for (const obj of page.Contents ?? []) {
        if (!obj.Key?.startsWith(prefix)) continue;
        const seq = digestSeqOf(obj.Key.slice(prefix.length));
        if (seq !== null) seqs.push(seq);
      }
    }
    return seqs.sort((a, b) => a - b);
  }
}

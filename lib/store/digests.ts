/**
 * The storage side of the audit digests (issue 15, DESIGN §6b): where signed digests are kept
 * (`DigestStore`: files in the data directory, S3 objects under the session's prefix) and the small
 * records that say which digest is a session's newest and which sessions are due one (`DigestIndex`,
 * part of the `StateStore`: SQLite locally, DynamoDB on AWS). Adapters keep these as given; the rules
 * (what a digest holds, when one is due) live in lib/audit and lib/service.
 */
import { z } from 'zod';
import { DigestWriter } from '../audit/schemas.js';
import { SessionId } from '../contract/ids.js';

/** The signed digests of sessions, one immutable object per (tenant, sid, seq). */
export interface DigestStore {
  /**
   * Stores `bytes` (a signed digest's canonical JSON) as digest `seq` of the session, create-only:
   * `{data}/tenants/{t}/sessions/{sid}/digests/{seq:09}.json`, or the S3 object of the same key (`If-None-Match: *`).
   * Resolves when the bytes are durable (fsync / S3 acknowledged). The same bytes again resolve (a retry).
   * @throws DigestConflictError when other bytes are stored at `seq` (another process wrote that digest)
   */
  putDigest(tenant: string, sid: string, seq: number, bytes: Uint8Array): Promise<void>;
  /** The bytes of digest `seq`, or null when there is none. */
  getDigest(tenant: string, sid: string, seq: number): Promise<Uint8Array | null>;
  /** The seqs of the session's stored digests, ascending ([] for none). */
  listDigests(tenant: string, sid: string): Promise<number[]>;
}

/** A session's newest digest, as the digester needs it to write the next one. */
export const DigestHead = z.object({
  seq: z.int(),
  /** `digestHash` of it */
  sha256: z.string(),
  signature: z.string(),
  /** its `at` */
  at: z.string(),
  /** its `writers`: where the next digest's chunks start */
  writers: z.array(DigestWriter),
  /** its `next_due` was null: no digest follows until a chunk marks the session due */
  closed: z.boolean(),
  /** how many digests in a row (this one included) listed no chunk: the cadence doubles with each */
  unchanged: z.int(),
  /** the `at` of the last digest that listed chunks (the first digest's `at` before any) */
  changed_at: z.string(),
});
export type DigestHead = z.infer<typeof DigestHead>;

/** A session due a digest (`DigestIndex.listDigestsDue`). */
export const DigestDue = z.object({
  tenant: z.string(),
  sid: SessionId,
  /** ISO 8601 */
  due_at: z.string(),
});
export type DigestDue = z.infer<typeof DigestDue>;

/** The digest heads and the due marks, kept by the state store. */
export interface DigestIndex {
  getDigestHead(tenant: string, sid: string): Promise<DigestHead | null>;
  /**
   * Makes `head` the session's newest digest when the stored one's seq is `prevSeq` (null: none stored),
   * and sets when the session is due next: `nextDue` (ISO), or no mark when null (closed). When the
   * session's stored `bytes` (SessionRecord) are no longer `expectBytes` (a chunk came while the digest
   * was being written), the mark is set to `head.at` instead, so that chunk is attested at the next tick.
   * @throws StateConflictError when the stored head's seq is not `prevSeq` (another process wrote it)
   */
  putDigestHead(
    tenant: string,
    sid: string,
    prevSeq: number | null,
    head: DigestHead,
    nextDue: string | null,
    expectBytes: number,
  ): Promise<void>;
  /**
   * Sessions of any tenant whose due mark is at or before `now` (ISO), earliest first, at most `limit`.
   * A session gets a mark from `advanceWriter` (`WriterAdvance.digest_due`) and from `putDigestHead`.
   */
  listDigestsDue(now: string, limit: number): Promise<DigestDue[]>;
}

/** A different digest is already stored at this seq. */
export class DigestConflictError extends Error {
  override name = 'DigestConflictError';
}

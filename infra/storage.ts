/**
 * The segments bucket (DESIGN §5): private, SSE-S3, TLS only, versioned, retained with the record, with
 * the lifecycle rules of issue 17.3 and the bucket-policy Deny of issue 17.5 that makes a put without a
 * condition fail instead of overwriting.
 */
import { Duration, RemovalPolicy } from 'aws-cdk-lib';
import { AnyPrincipal, Effect, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import {
  BlockPublicAccess,
  Bucket,
  BucketEncryption,
  type LifecycleRule,
  ObjectLockRetention,
  ObjectOwnership,
  StorageClass,
} from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { REPLAY_PREFIX } from '../lib/store/keys.js';
import { SEGMENT_PREFIX } from './lambda.js';

/** The lifecycle of the bucket's objects; days, each 0 to turn its rule off. */
export interface SegmentLifecycle {
  /**
   * days after which a version that is no longer current is deleted. Only a stale, never acknowledged
   * chunk replaced by `If-Match` (lib/store/s3/segment-store.ts) or a delete leaves one (the compactor's,
   * issue 17.2: chunk objects rewritten as a compacted run); under Object Lock a locked version stays
   * until its retention ends. Default 30.
   */
  noncurrentVersionDays?: number;
  /**
   * days after which an object moves to S3 Intelligent-Tiering, whose cheaper tiers follow access (an
   * object not read for 30 and 90 days; docs/deploy.md has the prices). S3 moves no object under 128 KiB
   * by default, so small chunks stay Standard. Default 30.
   */
  coldTransitionDays?: number;
  /**
   * days after which an incomplete multipart upload is aborted (a stored replay whose merge died before
   * its abort, issue 17.2). Default 1.
   */
  abortMultipartDays?: number;
  /**
   * days after which a stored replay under `replays/` (a copy, merged again on demand) and its build
   * marker expire, their old versions a day later (issue 17.2). Default 1.
   */
  storedReplayDays?: number;
}

/** Defaults of `SegmentLifecycle` (docs/deploy.md "Storage lifecycle"). */
export const DEFAULT_LIFECYCLE: Required<SegmentLifecycle> = {
  noncurrentVersionDays: 30,
  coldTransitionDays: 30,
  abortMultipartDays: 1,
  storedReplayDays: 1,
};

/**
 * The Deny that makes every write of an object carry a condition (S3's condition keys `s3:if-none-match`
 * and `s3:if-match`, "Enforce conditional writes on Amazon S3 buckets", S3 User Guide): a PutObject or
 * CompleteMultipartUpload with neither header is refused with 403, so an SDK or a client that drops
 * `IfNoneMatch`/`IfMatch` fails instead of overwriting an acknowledged chunk. Both keys in one `Null`
 * block: denied only when both are absent. `s3:ObjectCreationOperation` true leaves out the parts of a
 * multipart upload (CreateMultipartUpload, UploadPart take no conditional header; the completion does).
 * A CopyObject into the bucket is refused too, with or without a header; hansard sends none.
 */
export const CONDITIONAL_PUT_DENY_SID = 'DenyPutWithoutCondition';

/** The Deny's condition (also what test/infra/bucket-policy.test.ts evaluates each recorded write against). */
export const CONDITIONAL_PUT_DENY_CONDITION = {
  Null: { 's3:if-none-match': 'true', 's3:if-match': 'true' },
  Bool: { 's3:ObjectCreationOperation': 'true' },
} as const;

export interface SegmentBucketProps {
  lifecycle?: SegmentLifecycle;
  /** S3 Object Lock (issue 15.4); off when absent */
  objectLock?: { mode: 'GOVERNANCE' | 'COMPLIANCE'; days: number };
}

/** The lifecycle rules for `l` (defaults filled in), on the segment prefix. */
export function lifecycleRules(l: SegmentLifecycle = {}): LifecycleRule[] {
  const { noncurrentVersionDays, coldTransitionDays, abortMultipartDays, storedReplayDays } = {
    ...DEFAULT_LIFECYCLE,
    ...l,
  };
  const rules: LifecycleRule[] = [];
  if (noncurrentVersionDays > 0) {
    rules.push({
      id: 'ExpireNoncurrentVersions',
      noncurrentVersionExpiration: Duration.days(noncurrentVersionDays),
      // A compaction's deletes (issue 17.2) leave a delete marker per chunk object; once its old
      // version has expired, the marker is removed too, so listings of a writer do not wade through them.
      expiredObjectDeleteMarker: true,
    });
  }
  if (coldTransitionDays > 0) {
    rules.push({
      id: 'ColdSegmentsToIntelligentTiering',
      prefix: SEGMENT_PREFIX,
      transitions: [
        {
          storageClass: StorageClass.INTELLIGENT_TIERING,
          transitionAfter: Duration.days(coldTransitionDays),
        },
      ],
    });
  }
  if (storedReplayDays > 0) {
    rules.push({
      id: 'ExpireStoredReplays',
      prefix: REPLAY_PREFIX,
      expiration: Duration.days(storedReplayDays),
      noncurrentVersionExpiration: Duration.days(1),
    });
  }
  if (abortMultipartDays > 0) {
    rules.push({
      id: 'AbortIncompleteMultipartUploads',
      abortIncompleteMultipartUploadAfter: Duration.days(abortMultipartDays),
    });
  }
  return rules;
}

/** The segments bucket of a stack, with its lifecycle and the conditional-put Deny. */
export function segmentBucket(scope: Construct, id: string, props: SegmentBucketProps): Bucket {
  const bucket = new Bucket(scope, id, {
    blockPublicAccess: BlockPublicAccess.BLOCK_ALL,
    encryption: BucketEncryption.S3_MANAGED,
    enforceSSL: true,
    versioned: true,
    objectOwnership: ObjectOwnership.BUCKET_OWNER_ENFORCED,
    removalPolicy: RemovalPolicy.RETAIN,
    lifecycleRules: lifecycleRules(props.lifecycle),
    ...(props.objectLock
      ? {
          objectLockEnabled: true,
          objectLockDefaultRetention:
            props.objectLock.mode === 'COMPLIANCE'
              ? ObjectLockRetention.compliance(Duration.days(props.objectLock.days))
              : ObjectLockRetention.governance(Duration.days(props.objectLock.days)),
        }
      : {}),
  });
  bucket.addToResourcePolicy(
    new PolicyStatement({
      sid: CONDITIONAL_PUT_DENY_SID,
      effect: Effect.DENY,
      principals: [new AnyPrincipal()],
      actions: ['s3:PutObject'],
      resources: [bucket.arnForObjects('*')],
      conditions: CONDITIONAL_PUT_DENY_CONDITION,
    }),
  );
  return bucket;
}

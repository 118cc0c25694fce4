/**
 * Stored replays of large sessions (issue 17.2, lib/service/sessions/large-replay.ts): the builder function, the
 * rule that runs it for each build marker the API writes, and each function's grants under `replays/`.
 *
 * The API (29 s) cannot merge a large session: it writes the job as `replays/<key>.building` and answers
 * 202; the bucket sends its object events to EventBridge (set on the bucket itself, so no custom resource
 * and no dependency of the bucket on the function), and a rule matching `replays/*.building` invokes the
 * builder, which merges the replay into `replays/<key>`. The replay function merges in the request
 * (15 minutes) and hands the copy out itself. The lifecycle rule of infra/storage.ts expires copies.
 */
import { Duration } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Match, Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { Bucket, CfnBucket } from 'aws-cdk-lib/aws-s3';
import type { Construct } from 'constructs';
import { replayBuildDynamoAccess } from '../functions/access.js';
import { BUILD_MARKER_SUFFIX, REPLAY_PREFIX } from '../lib/store/keys.js';
import { HansardFunction, type HansardFunctionProps } from './lambda.js';

/** A build of a 1 GB session merges in well under a minute; Lambda's limit leaves room for 10 GB. */
export const REPLAY_BUILD_TIMEOUT = Duration.minutes(15);
/** One full vCPU: the merge is CPU-bound. */
export const REPLAY_BUILD_MEMORY_MB = 1769;

/**
 * Adds the builder function and its rule to `scope`, and grants the API (`markers`) and the replay
 * function (`copies`) what their large-replay code sends. Returns the builder.
 */
export function addStoredReplays(
  scope: Construct,
  o: {
    bucket: Bucket;
    table: Table;
    common: Pick<HansardFunctionProps, 'logRetention' | 'logLevel'>;
    api: HansardFunction;
    replay: HansardFunction;
  },
): HansardFunction {
  // Object events to EventBridge, as a property of the bucket (CDK's notification resource would need a
  // Lambda of its own with a managed policy and s3:PutBucketNotification on *).
  (o.bucket.node.defaultChild as CfnBucket).notificationConfiguration = {
    eventBridgeConfiguration: { eventBridgeEnabled: true },
  };
  const builder = new HansardFunction(scope, 'ReplayBuildFunction', {
    ...o.common,
    entry: 'functions/replay-build.ts',
    description: 'hansard replay builder: merges a large session into replays/ for the API to hand out',
    timeout: REPLAY_BUILD_TIMEOUT,
    memorySize: REPLAY_BUILD_MEMORY_MB,
  });
  builder.bindBucket(o.bucket, 'read');
  builder.bindStoredReplays(o.bucket, 'copies');
  builder.bindTable(o.table, replayBuildDynamoAccess());
  o.api.bindStoredReplays(o.bucket, 'markers');
  o.replay.bindStoredReplays(o.bucket, 'copies');
  new Rule(scope, 'ReplayBuildRule', {
    description: 'hansard: merge a large replay when the API asks for it (a build marker under replays/)',
    eventPattern: {
      source: ['aws.s3'],
      detailType: ['Object Created'],
      detail: {
        bucket: { name: [o.bucket.bucketName] },
        object: { key: Match.wildcard(`${REPLAY_PREFIX}*${BUILD_MARKER_SUFFIX}`) },
      },
    },
    // A failed build is tried twice more; a request after BUILD_CLAIM_MS starts another.
    targets: [new LambdaFunction(builder, { retryAttempts: 2, maxEventAge: Duration.hours(1) })],
  });
  return builder;
}

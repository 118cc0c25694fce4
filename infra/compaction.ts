/**
 * Compaction of small chunk objects (issue 17.2, functions/compact.ts): the compactor function, its
 * grants, and the rule that runs it for each signed digest written (`Object Created` of a digest's key,
 * `DIGEST_OBJECTS`: `tenants/{t}/sessions/{sid}/digests/…`), announced through EventBridge as the
 * build markers are (infra/replays.ts). A digest follows a writer's end at once and a quiet session at a cadence that
 * doubles from 5 minutes (lib/service/shared/audit-config.ts), so no sweep of every session is needed: the
 * digests already visit each session that changed. Reserved concurrency 1: compactions run one at a time
 * in the deployment, so no two touch a writer at once; events beyond it wait (Lambda keeps a throttled
 * asynchronous event up to 6 hours).
 */
import { Duration } from 'aws-cdk-lib';
import type { Table } from 'aws-cdk-lib/aws-dynamodb';
import { Match, Rule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import { SnsDestination } from 'aws-cdk-lib/aws-lambda-destinations';
import type { Bucket } from 'aws-cdk-lib/aws-s3';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { Construct } from 'constructs';
import { compactDynamoAccess } from '../functions/access.js';
import { DIGEST_OBJECTS, HansardFunction, type HansardFunctionProps } from './lambda.js';

/** Lambda's limit: a pass stops starting runs 2 minutes before it (functions/compact.ts). */
export const COMPACT_TIMEOUT = Duration.minutes(15);
/** A run is held whole (at most 64 MiB) while it is checked; the rest is the SDK's and the listing's. */
export const COMPACT_MEMORY_MB = 1024;
/** One compaction at a time in the deployment. */
export const COMPACT_CONCURRENCY = 1;

/** Adds the compactor function and its rule to `scope`. Returns the compactor. */
export function addCompaction(
  scope: Construct,
  o: {
    bucket: Bucket;
    table: Table;
    common: Pick<HansardFunctionProps, 'logRetention' | 'logLevel'>;
    /** where an event goes once its passes have all failed (the alarm topic): it names the session */
    failures?: ITopic;
  },
): HansardFunction {
  const compactor = new HansardFunction(scope, 'CompactFunction', {
    ...o.common,
    entry: 'functions/compact.ts',
    description: 'hansard compactor: rewrites the small chunk objects of settled writers as compacted runs',
    timeout: COMPACT_TIMEOUT,
    memorySize: COMPACT_MEMORY_MB,
    reservedConcurrentExecutions: COMPACT_CONCURRENCY,
  });
  // A pass that ran out of time fails (functions/compact.ts): Lambda runs the event again, twice, each
  // pass going on from the runs written; an event waits up to 6 hours for the one instance.
  // An event whose three passes all failed (or that waited 6 hours) is sent to `failures`, so that an
  // operator learns which session to compact by hand (docs/deploy.md).
  compactor.configureAsyncInvoke({
    retryAttempts: 2,
    maxEventAge: Duration.hours(6),
    ...(o.failures ? { onFailure: new SnsDestination(o.failures) } : {}),
  });
  compactor.bindCompaction(o.bucket);
  compactor.bindTable(o.table, compactDynamoAccess());
  new Rule(scope, 'CompactRule', {
    description: 'hansard: compact the settled writers of a session when a digest of it is written',
    eventPattern: {
      source: ['aws.s3'],
      detailType: ['Object Created'],
      detail: {
        bucket: { name: [o.bucket.bucketName] },
        object: { key: Match.wildcard(DIGEST_OBJECTS) },
      },
    },
    // A failed pass is tried twice more; the session's next digest starts another anyway.
    targets: [new LambdaFunction(compactor, { retryAttempts: 2, maxEventAge: Duration.hours(6) })],
  });
  return compactor;
}

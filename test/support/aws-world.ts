/**
 * The AWS app over a stored-session world (harness/s3-replay-world.ts: s3rver and DynamoDB Local with a
 * bucket, a table and a tenant): the set-up the compaction and large-replay suites share
 * (test/store/s3/compaction, test/attack/compaction-races, compaction-replay-page, compaction-audit,
 * replay-large-tenancy).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { LOCAL_REGION } from '../../harness/dynamodb-local.js';
import type { S3ReplayWorld } from '../../harness/s3-replay-world.js';
import { createAwsApp } from '../../lib/deploy/aws.js';

/** The emulators' credentials (s3rver's own; DynamoDB Local takes any). */
export const WORLD_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/** A new client of the world's DynamoDB Local; the caller destroys it. */
export function worldDynamo(world: S3ReplayWorld): DynamoDBClient {
  return new DynamoDBClient({
    endpoint: world.dynamo.endpoint,
    region: LOCAL_REGION,
    credentials: WORLD_CREDENTIALS,
  });
}

/**
 * The AWS app (lib/deploy/aws.ts) over the world's bucket and table through `clients` (the S3 client a
 * new one of the world's when not given), without a rate limit, its errors on the console.
 */
export function worldApp(
  world: S3ReplayWorld,
  clients: { s3?: S3Client; dynamodb: DynamoDBClient },
): ReturnType<typeof createAwsApp> {
  return createAwsApp({
    clients: { s3: clients.s3 ?? world.s3.client(), dynamodb: clients.dynamodb },
    bucket: world.bucket,
    table: world.env.TABLE_NAME!,
    rateLimitPerMinute: 0,
    log: (m, err) => console.error(m, err),
  });
}

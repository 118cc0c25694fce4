/**
 * The AWS SDK clients of a function, made once per cold start from its configuration and reused by
 * every invocation (connections stay warm); lib/deploy/aws.ts makes them. Endpoint overrides point them
 * at local emulators in tests.
 */
import { type AwsClients, createAwsClients } from '../lib/deploy/aws-stores.js';
import type { LambdaConfig } from './config.js';

export type { AwsClients } from '../lib/deploy/aws-stores.js';

/** Clients for the configured region, or for the emulators named by `S3_ENDPOINT`/`DYNAMODB_ENDPOINT`. */
export function createClients(config: LambdaConfig): AwsClients {
  return createAwsClients({
    region: config.AWS_REGION,
    s3Endpoint: config.S3_ENDPOINT,
    dynamodbEndpoint: config.DYNAMODB_ENDPOINT,
    kmsEndpoint: config.KMS_ENDPOINT,
  });
}

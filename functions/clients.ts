/**
 * The AWS SDK clients of a function, made once per cold start from its configuration and reused by
 * every invocation (connections stay warm). Endpoint overrides point them at local emulators in tests:
 * S3 then uses path-style addressing, which emulators need.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import type { LambdaConfig } from './config.js';

export interface AwsClients {
  s3: S3Client;
  dynamodb: DynamoDBClient;
}

/** Clients for the configured region, or for the emulators named by `S3_ENDPOINT`/`DYNAMODB_ENDPOINT`. */
export function createClients(config: LambdaConfig): AwsClients {
  return {
    s3: new S3Client({
      region: config.AWS_REGION,
      ...(config.S3_ENDPOINT ? { endpoint: config.S3_ENDPOINT, forcePathStyle: true } : {}),
    }),
    dynamodb: new DynamoDBClient({
      region: config.AWS_REGION,
      ...(config.DYNAMODB_ENDPOINT ? { endpoint: config.DYNAMODB_ENDPOINT } : {}),
    }),
  };
}

/**
 * A suite's own bucket in the run's s3rver (harness/s3rver.ts), for the S3 adapter's attack and store
 * tests: `useS3Bucket` makes it in beforeAll with an admin client and closes it in afterAll; `readAll`
 * gathers what a segment read yields.
 */
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll } from 'vitest';
import { type LocalS3, startS3rver } from '../../harness/s3rver.js';

/** A bucket of a suite's own; read its fields in a test or hook (they exist from beforeAll on). */
export interface S3Bucket {
  /** the emulator's `http://127.0.0.1:PORT` */
  readonly endpoint: string;
  /** the bucket's fresh name */
  readonly bucket: string;
  /** a client made in beforeAll */
  readonly admin: S3Client;
  /** a new client of the emulator (destroyed in afterAll) */
  client(): S3Client;
}

/** Registers the beforeAll that makes the suite's bucket and the afterAll that closes its clients. */
export function useS3Bucket(): S3Bucket {
  let s3: LocalS3 | undefined;
  let bucket = '';
  let admin: S3Client | undefined;
  beforeAll(async () => {
    s3 = await startS3rver();
    bucket = await s3.createBucket();
    admin = s3.client();
  }, 120_000);
  afterAll(async () => {
    await s3?.close();
  });
  const live = () => {
    if (!s3 || !admin)
      throw new Error('useS3Bucket: the bucket is made in beforeAll; read it in a test or hook');
    return { s3, admin };
  };
  return {
    get endpoint() {
      return live().s3.endpoint;
    },
    get bucket() {
      live();
      return bucket;
    },
    get admin() {
      return live().admin;
    },
    client: () => live().s3.client(),
  };
}

/** Everything an async iterable of bytes yields (a segment read), in one buffer. */
export async function readAll(it: AsyncIterable<Uint8Array>): Promise<Buffer> {
  const parts: Uint8Array[] = [];
  for await (const p of it) parts.push(p);
  return Buffer.concat(parts);
}

/**
 * One measured read in a process of its own (harness/s3-replay-world.ts `runChild`): argv[2] is the
 * job as JSON. `replay`: the replay function's handler (functions/replay.ts, built from the job's
 * environment, the runtime's streaming global stubbed as in test/functions) answers a function URL event
 * for `GET /v1/sessions/{sid}/replay?raw=1` into a response stream that hashes and counts the bytes and
 * keeps none. `getobject`: a plain `GetObject` of each key, all at once, each body hashed as it streams.
 * `store`: `S3SegmentStore.readSegment` of each segment at the job's `chunkBytes`, all at once (no merge).
 * Prints one JSON line: bytes, SHA-256 (of the body; for getobject, of the keys' bodies in order), seconds,
 * peak RSS in MB, and the GetObject requests sent.
 */
import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Context } from 'aws-lambda';
import { S3SegmentStore } from '../lib/store/s3/segment-store.js';
import { apiEvent, lambdaContext, stubAwsLambdaGlobal, URL_DOMAIN } from './lambda-events.js';
import type { ChildJob } from './s3-replay-world.js';

const job = JSON.parse(process.argv[2]!) as ChildJob;
let gets = 0;
// Count what the function's S3 client sends: every S3Client made in this process gets the middleware.
const send = S3Client.prototype.send;
S3Client.prototype.send = function (
  this: S3Client,
  command: { constructor: { name: string } },
  ...rest: unknown[]
) {
  if (command.constructor.name === 'GetObjectCommand') gets++;
  return (send as (...a: unknown[]) => unknown).call(this, command, ...rest);
} as typeof send;

/** A response stream as Lambda hands it, hashing and counting what is written. */
class HashingStream extends Writable {
  readonly hash = createHash('sha256');
  bytes = 0;
  metadata: { statusCode?: number } | null = null;
  override _write(chunk: Buffer, _enc: BufferEncoding, done: (err?: Error | null) => void): void {
    this.hash.update(chunk);
    this.bytes += chunk.length;
    done();
  }
}

async function replay(j: Extract<ChildJob, { mode: 'replay' }>) {
  stubAwsLambdaGlobal();
  const { createReplayHandler } = await import('../functions/replay.js');
  const handler = createReplayHandler(j.env) as unknown as (
    event: unknown,
    stream: HashingStream,
    context: Context,
  ) => Promise<void>;
  const stream = new HashingStream();
  const started = performance.now();
  await handler(
    apiEvent({
      method: 'GET',
      path: `/v1/sessions/${j.sid}/replay`,
      query: 'raw=1',
      headers: { authorization: `Bearer ${j.token}` },
      domain: URL_DOMAIN,
    }),
    stream,
    lambdaContext('hansard-replay'),
  );
  const seconds = (performance.now() - started) / 1000;
  return {
    bytes: stream.bytes,
    sha256: stream.hash.digest('hex'),
    seconds,
    status: stream.metadata?.statusCode ?? 0,
  };
}

async function getObjects(j: Extract<ChildJob, { mode: 'getobject' }>) {
  const client = new S3Client({
    endpoint: j.env.S3_ENDPOINT,
    forcePathStyle: true,
    region: j.env.AWS_REGION,
  });
  const started = performance.now();
  const results = await Promise.all(
    j.keys.map(async (Key) => {
      const out = await client.send(new GetObjectCommand({ Bucket: j.env.BUCKET_NAME, Key }));
      const hash = createHash('sha256');
      let bytes = 0;
      for await (const piece of out.Body as AsyncIterable<Buffer>) {
        hash.update(piece);
        bytes += piece.length;
      }
      return { bytes, sha256: hash.digest('hex') };
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  client.destroy();
  return {
    bytes: results.reduce((n, r) => n + r.bytes, 0),
    sha256: createHash('sha256')
      .update(results.map((r) => r.sha256).join('\n'))
      .digest('hex'),
    seconds,
    status: 200,
  };
}

/** Every segment read at once by `S3SegmentStore.readSegment` with the job's `chunkBytes`, no merge. */
async function storeReads(j: Extract<ChildJob, { mode: 'store' }>) {
  const client = new S3Client({
    endpoint: j.env.S3_ENDPOINT,
    forcePathStyle: true,
    region: j.env.AWS_REGION,
  });
  const store = new S3SegmentStore({ client, bucket: j.env.BUCKET_NAME! });
  const started = performance.now();
  const results = await Promise.all(
    j.segments.map(async ({ end, ...key }) => {
      const hash = createHash('sha256');
      let bytes = 0;
      for await (const piece of store.readSegment(key, end, 0, j.chunkBytes)) {
        hash.update(piece);
        bytes += piece.length;
      }
      return { bytes, sha256: hash.digest('hex') };
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  client.destroy();
  return {
    bytes: results.reduce((n, r) => n + r.bytes, 0),
    sha256: createHash('sha256')
      .update(results.map((r) => r.sha256).join('\n'))
      .digest('hex'),
    seconds,
    status: 200,
  };
}

const result =
  job.mode === 'replay'
    ? await replay(job)
    : job.mode === 'store'
      ? await storeReads(job)
      : await getObjects(job);
const maxRss = process.resourceUsage().maxRSS / 1024;
process.stdout.write(`${JSON.stringify({ ...result, max_rss_mb: Math.round(maxRss * 10) / 10, gets })}\n`);
process.exit(0);

/**
 * A session stored on the AWS adapters (s3rver and DynamoDB Local) through the service's own ingest, and
 * the replay function's handler run over it in a child process of its own (so its peak RSS is the
 * replay's alone, not the emulator's), for test/functions/replay-s3-memory.test.ts and
 * bench/s3-replay.ts (issue 16.4).
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { build } from 'esbuild';
import { z } from 'zod';
import { createAwsApp } from '../lib/deploy/aws.js';
import { listSegments } from '../lib/log/read/session-dir.js';
import { ensureTenant } from '../lib/service/tenants/bootstrap.js';
import { createTableInput } from '../lib/store/dynamo/schema.js';
import { DynamoStateStore } from '../lib/store/dynamo/state-store.js';
import { type DynamoLocal, LOCAL_REGION, startDynamoLocal } from './dynamodb-local.js';
import { type LocalS3, startS3rver } from './s3rver.js';

/** One pair of credentials for both emulators (the function takes them from its environment). */
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const TENANT = 'acme';
/** The service's own limit on lines per chunk (lib/contract/limits.ts MAX_CHUNK_LINES). */
const MAX_CHUNK_LINES = 10_000;

export interface S3ReplayWorld {
  s3: LocalS3;
  dynamo: DynamoLocal;
  bucket: string;
  /** the replay function's environment (functions/config.ts) */
  env: Record<string, string>;
  /** the tenant's admin token */
  token: string;
  close(): Promise<void>;
}

/** Starts both emulators, a bucket, a table and tenant `acme`. */
export async function startS3ReplayWorld(): Promise<S3ReplayWorld> {
  const [s3, dynamo] = await Promise.all([startS3rver(), startDynamoLocal()]);
  const ddb = new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: LOCAL_REGION,
    credentials: CREDENTIALS,
  });
  const bucket = await s3.createBucket();
  const table = `hansard-replay-${Date.now().toString(36)}`;
  await ddb.send(new CreateTableCommand(createTableInput(table)));
  const created = await ensureTenant(
    new DynamoStateStore({ tableName: table, client: ddb }),
    TENANT,
    new Date(),
  );
  if (!created) throw new Error('the tenant existed already');
  ddb.destroy();
  const env = {
    BUCKET_NAME: bucket,
    TABLE_NAME: table,
    AWS_REGION: LOCAL_REGION,
    LOG_LEVEL: 'warn',
    S3_ENDPOINT: s3.endpoint,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
  };
  return {
    s3,
    dynamo,
    bucket,
    env,
    token: created.token,
    close: () => Promise.all([s3.close(), dynamo.stop()]).then(() => {}),
  };
}

/**
 * Uploads every segment of session directory `dir` through the service's ingest (`POST …/chunks`, the
 * AWS app in this process, rate limit off) in chunks of whole lines, at most `chunkBytes` and 10,000
 * lines each; each writer's whole segment is also put as one object `plain/{w}` for the `GetObject`
 * baseline. Returns the session id and each writer's object key and size.
 */
export async function storeSession(
  world: S3ReplayWorld,
  dir: string,
  chunkBytes: number,
): Promise<{
  sid: string;
  plain: Array<{ key: string; size: number }>;
  segments: Array<{ tenant: string; sid: string; w: string; end: number }>;
  chunks: number;
}> {
  const sid = dir.split('/').at(-1)!;
  const s3 = world.s3.client();
  const clients = {
    s3,
    dynamodb: new DynamoDBClient({
      endpoint: world.dynamo.endpoint,
      region: LOCAL_REGION,
      credentials: CREDENTIALS,
    }),
  };
  const app = createAwsApp({
    clients,
    bucket: world.bucket,
    table: world.env.TABLE_NAME!,
    rateLimitPerMinute: 0,
    log: (m, err) => console.error(m, err),
  });
  const plain: Array<{ key: string; size: number }> = [];
  const segments: Array<{ tenant: string; sid: string; w: string; end: number }> = [];
  let chunks = 0;
  for (const { w, path } of listSegments(dir)) {
    const bytes = readFileSync(path);
    let offset = 0;
    while (offset < bytes.length) {
      const end = chunkEnd(bytes, offset, chunkBytes);
      const res = await app.request(`/v1/sessions/${sid}/writers/${w}/chunks?offset=${offset}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${world.token}`, 'content-type': 'application/x-ndjson' },
        body: bytes.subarray(offset, end),
      });
      if (res.status !== 201 && res.status !== 200) {
        throw new Error(`POST chunk at ${offset} of ${w}: ${res.status} ${await res.text()}`);
      }
      offset = end;
      chunks++;
    }
    const key = `plain/${sid}/${w}.jsonl`;
    await s3.send(new PutObjectCommand({ Bucket: world.bucket, Key: key, Body: bytes }));
    plain.push({ key, size: bytes.length });
    segments.push({ tenant: TENANT, sid, w, end: bytes.length });
  }
  clients.dynamodb.destroy();
  return { sid, plain, segments, chunks };
}

/** The end of the chunk from `offset`: whole lines, at most `max` bytes and 10,000 lines. */
function chunkEnd(bytes: Buffer, offset: number, max: number): number {
  let end = offset;
  let lines = 0;
  for (;;) {
    const nl = bytes.indexOf(0x0a, end);
    const next = nl < 0 ? bytes.length : nl + 1;
    if (end > offset && (next - offset > max || lines >= MAX_CHUNK_LINES)) return end;
    end = next;
    lines++;
    if (end >= bytes.length) return end;
  }
}

/** What the child process measured. */
export const ChildResult = z.object({
  bytes: z.number(),
  sha256: z.string(),
  seconds: z.number(),
  /** peak resident set of the child, MB (process.resourceUsage().maxRSS / 1024) */
  max_rss_mb: z.number(),
  status: z.number(),
  /** GetObject requests the child's S3 client sent */
  gets: z.number(),
});
export type ChildResult = z.infer<typeof ChildResult>;

export type ChildJob =
  | { mode: 'replay'; env: Record<string, string>; token: string; sid: string }
  | { mode: 'getobject'; env: Record<string, string>; keys: string[] }
  | {
      mode: 'store';
      env: Record<string, string>;
      segments: Array<{ tenant: string; sid: string; w: string; end: number }>;
      chunkBytes: number;
    };

let bundled: Promise<string> | null = null;

/**
 * harness/s3-replay-child.ts bundled by esbuild as the stack bundles a function (ESM, the AWS SDK
 * left out and loaded from node_modules), so the child's memory is the function's, not tsx's compiler's;
 * written once per process under node_modules/.cache.
 */
function childBundle(): Promise<string> {
  bundled ??= (async () => {
    const root = join(import.meta.dirname, '..');
    const outfile = join(root, `node_modules/.cache/hansard-s3-replay/child-${process.pid}.mjs`);
    mkdirSync(dirname(outfile), { recursive: true });
    process.once('exit', () => rmSync(outfile, { force: true }));
    await build({
      entryPoints: [join(import.meta.dirname, 's3-replay-child.ts')],
      absWorkingDir: root,
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      mainFields: ['module', 'main'],
      external: ['@aws-sdk/*'],
      banner: {
        js: "import { createRequire as __hansardRequire } from 'node:module'; const require = __hansardRequire(import.meta.url);",
      },
      outfile,
      logLevel: 'silent',
    });
    return outfile;
  })();
  return bundled;
}

/** Runs harness/s3-replay-child.ts (bundled) with `job` and parses its one JSON line. */
export async function runChild(job: ChildJob): Promise<ChildResult> {
  const child = await childBundle();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      // HANSARD_CHILD_NODE_ARGS: flags for the child's node (e.g. --cpu-prof, which NODE_OPTIONS refuses)
      [
        ...(process.env.HANSARD_CHILD_NODE_ARGS?.split(' ').filter(Boolean) ?? []),
        child,
        JSON.stringify(job),
      ],
      { maxBuffer: 16 * 1024 * 1024, env: { ...process.env, ...job.env } },
      (err, stdout, stderr) => {
        if (err) return reject(new Error(`${err.message}\n${stderr}`));
        try {
          resolve(ChildResult.parse(JSON.parse(stdout.trim().split('\n').at(-1)!)));
        } catch (e) {
          reject(new Error(`child answered ${stdout.slice(-2000)}\n${stderr.slice(-2000)}`, { cause: e }));
        }
      },
    );
  });
}

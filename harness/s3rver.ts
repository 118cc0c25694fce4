/**
 * s3rver, the local S3 emulator, on 127.0.0.1 with an OS-chosen port, for the S3 adapter's tests (DESIGN
 * §1: the AWS adapters pass the contract suite against local emulators, over the real SDK and real HTTP).
 *
 * Where s3rver differs from S3 in what the adapter relies on, `s3Shim` (a Koa middleware put before all
 * of s3rver's own) makes it answer as S3 does:
 * - conditional writes: s3rver ignores `If-None-Match: *` and `If-Match` on PUT and overwrites. S3 answers
 *   412 PreconditionFailed when the key exists (If-None-Match) or its ETag differs (If-Match), and 404
 *   NoSuchKey to an If-Match on a key that does not exist.
 * - `If-Match` on GET: ignored by s3rver; S3 answers 412 when the ETag differs.
 * - atomic objects: s3rver writes the object's file as the body streams in, answers a PUT before the file
 *   has landed, and streams a GET from the file while a later PUT rewrites it; S3 shows an object whole or
 *   not at all, and a conditional write is decided atomically. The shim runs the requests of one key one
 *   at a time (each until its response is closed) and answers a PUT only once the file holds all its bytes.
 * - checksums: s3rver ignores `x-amz-checksum-sha256` and `Content-MD5`; S3 checks them and answers 400
 *   BadDigest. The shim checks them.
 * - multipart uploads (the stored replays, issue 17.2): s3rver has no AbortMultipartUpload (405), and a
 *   CompleteMultipartUpload with `If-None-Match: *` replaces an existing key. The shim answers the abort
 *   204 (the parts stay in s3rver's folder) and the conditional complete 412 as S3 does.
 * Not shimmed, handled elsewhere:
 * - paginated ListObjectsV2: s3rver's continuation token uses DES, which Node 20's OpenSSL 3 refuses
 *   (ERR_OSSL_EVP_UNSUPPORTED) unless Node runs with `--openssl-legacy-provider` (vitest.config.ts).
 * - `Range: bytes=0-0` gets the whole object (s3rver reads an end of 0 as "no end"); the adapter passes
 *   on only the bytes it asked for, from the Content-Range, as it must for any server (RFC 9110 §14.2).
 */
// A .d.ts next to a .ts of the same name is left out of the program unless referenced.
/// <reference path="./s3rver.d.ts" />
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { sharedEndpoint } from './shared.js';

/** A running emulator. */
export interface LocalS3 {
  /** `http://127.0.0.1:PORT` */
  endpoint: string;
  /** A real SDK client for it (path-style, region us-east-1, s3rver's own dummy account). */
  client(): S3Client;
  /** Creates a bucket with a fresh name and returns the name. */
  createBucket(): Promise<string>;
  /** Destroys the clients made here; stops the server if this process started it. */
  close(): Promise<void>;
}

/** s3rver running in this process. */
export interface S3rverServer {
  /** `http://127.0.0.1:PORT` */
  endpoint: string;
  /** Stops the server and removes its directory. */
  close(): Promise<void>;
}

/**
 * Runs s3rver with the shim in this process (which needs `--openssl-legacy-provider`, see the module doc);
 * objects live in a fresh temp directory.
 */
export async function runS3rver(): Promise<S3rverServer> {
  const directory = mkdtempSync(join(tmpdir(), 'hansard-s3rver-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  server.middleware.unshift(s3Shim(server));
  // s3rver's `silent` only silences its transport, and close() removes the transport: a request still
  // under way then (an aborted read's GET) makes winston console.error "no transports", which vitest
  // reports as an unhandled error once the file's worker has gone (CI on 374826e). A silent logger
  // writes nothing at all.
  (server as unknown as { logger: { silent: boolean } }).logger.silent = true;
  const { port } = await server.run();
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async close() {
      await server.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * The run's shared s3rver (test/support/services.ts: one per vitest run, in its own process), or, outside
 * such a run, one started in this process. Each caller's buckets have fresh names (`createBucket`).
 */
export async function startS3rver(): Promise<LocalS3> {
  const shared = await sharedEndpoint('s3');
  const own = shared === null ? await runS3rver() : null;
  const endpoint = shared ?? own!.endpoint;
  const clients: S3Client[] = [];
  const client = () => {
    const c = new S3Client({
      endpoint,
      forcePathStyle: true,
      region: 'us-east-1',
      // s3rver checks signatures against its one account, S3RVER / S3RVER
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    });
    clients.push(c);
    return c;
  };
  const admin = client();
  return {
    endpoint,
    client,
    async createBucket() {
      const name = `hansard-test-${randomBytes(6).toString('hex')}`;
      await admin.send(new CreateBucketCommand({ Bucket: name }));
      return name;
    },
    async close() {
      for (const c of clients) c.destroy();
      await own?.close();
    },
  };
}

/** The S3 behaviours s3rver lacks (see the module doc), for object requests `/{bucket}/{key}`. */
function s3Shim(server: S3rver): S3rver.Middleware {
  const serial = keyedSerializer();
  return async (ctx, next) => {
    const upload = multipartOf(ctx);
    if (upload) {
      // AbortMultipartUpload: s3rver has none (405); S3 answers 204 and drops the parts.
      if (ctx.method === 'DELETE') {
        ctx.status = 204;
        return;
      }
      // CompleteMultipartUpload with If-None-Match: * over an existing key: S3 answers 412.
      if (ctx.method === 'POST' && header(ctx, 'if-none-match') === '*') {
        const exists = await server.store.getMetadata(upload.bucket, upload.key).then(
          () => true,
          () => false,
        );
        if (exists) {
          return s3Error(
            ctx,
            412,
            'PreconditionFailed',
            'At least one of the pre-conditions you specified did not hold',
          );
        }
      }
      return next();
    }
    const target = objectOf(ctx);
    if (!target) return next();
    const release = await serial(`${target.bucket}/${target.key}`);
    const res = (ctx as unknown as { res: ServerResponse }).res;
    if (res.closed) release();
    else res.once('close', release);

    const current = await server.store.getMetadata(target.bucket, target.key).then(
      (m) => unquote(m.etag),
      () => null,
    );
    const ifMatch = header(ctx, 'if-match');
    if (ctx.method === 'GET' || ctx.method === 'HEAD') {
      if (ifMatch !== undefined && current !== null && unquote(ifMatch) !== current) {
        return s3Error(
          ctx,
          412,
          'PreconditionFailed',
          'At least one of the pre-conditions you specified did not hold',
        );
      }
      return next();
    }
    if (ctx.method !== 'PUT' || header(ctx, 'x-amz-copy-source') !== undefined) return next();

    const body = await readAll(ctx.req);
    const sha256 = header(ctx, 'x-amz-checksum-sha256');
    if (sha256 !== undefined && createHash('sha256').update(body).digest('base64') !== sha256) {
      return s3Error(
        ctx,
        400,
        'BadDigest',
        'The SHA256 you specified did not match the calculated checksum.',
      );
    }
    const md5 = header(ctx, 'content-md5');
    if (md5 !== undefined && createHash('md5').update(body).digest('base64') !== md5) {
      return s3Error(ctx, 400, 'BadDigest', 'The Content-MD5 you specified did not match what we received.');
    }
    if (header(ctx, 'if-none-match') === '*' && current !== null) {
      return s3Error(
        ctx,
        412,
        'PreconditionFailed',
        'At least one of the pre-conditions you specified did not hold',
      );
    }
    if (ifMatch !== undefined && current === null) {
      return s3Error(ctx, 404, 'NoSuchKey', 'The specified key does not exist.');
    }
    if (ifMatch !== undefined && unquote(ifMatch) !== current) {
      return s3Error(
        ctx,
        412,
        'PreconditionFailed',
        'At least one of the pre-conditions you specified did not hold',
      );
    }
    ctx.req = Readable.from([body]);
    await next();
    if (ctx.status === 200)
      await landed(server.store.getResourcePath(target.bucket, target.key, 'object'), body.length);
  };
}

/** Waits until s3rver's file of an object holds `size` bytes (it answers before its write stream ends). */
async function landed(path: string, size: number): Promise<void> {
  for (let i = 0; i < 2000; i++) {
    if ((await stat(path).catch(() => null))?.size === size) return;
    await new Promise((r) => setTimeout(r, 2));
  }
  throw new Error(`s3rver did not finish writing ${path}`);
}

/** Bucket and key of a plain object request (no subresource such as `?uploadId` or `?tagging`). */
function objectOf(ctx: S3rver.Context): { bucket: string; key: string } | null {
  const m = /^\/([^/]+)\/(.+)$/.exec(ctx.path);
  if (!m?.[1] || !m[2]) return null;
  if (Object.keys(ctx.query).some((q) => q !== 'x-id')) return null;
  return { bucket: decodeURIComponent(m[1]), key: m[2].split('/').map(decodeURIComponent).join('/') };
}

/** The object of a request about one of its multipart uploads (`?uploadId=…`), or null. */
function multipartOf(ctx: S3rver.Context): { bucket: string; key: string } | null {
  const m = /^\/([^/]+)\/(.+)$/.exec(ctx.path);
  if (!m?.[1] || !m[2] || !('uploadId' in ctx.query)) return null;
  return { bucket: decodeURIComponent(m[1]), key: m[2].split('/').map(decodeURIComponent).join('/') };
}

/** One request per key at a time: resolves with the function that lets the next one in. */
function keyedSerializer(): (id: string) => Promise<() => void> {
  const tails = new Map<string, Promise<void>>();
  return async (id) => {
    const before = tails.get(id) ?? Promise.resolve();
    let release = () => {};
    const mine = new Promise<void>((r) => {
      release = r;
    });
    const tail = before.then(() => mine);
    tails.set(id, tail);
    await before;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      release();
      if (tails.get(id) === tail) tails.delete(id);
    };
  };
}

function header(ctx: S3rver.Context, name: string): string | undefined {
  const v = ctx.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function unquote(etag: string | undefined): string | null {
  return etag === undefined ? null : etag.replace(/^W\//, '').replace(/^"|"$/g, '');
}

async function readAll(stream: AsyncIterable<unknown> | NodeJS.ReadableStream): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const p of stream as AsyncIterable<Buffer | string>) parts.push(Buffer.from(p));
  return Buffer.concat(parts);
}

/** An S3 error answer, as S3 writes it. */
function s3Error(ctx: S3rver.Context, status: number, code: string, message: string): void {
  ctx.status = status;
  ctx.type = 'application/xml';
  ctx.body = `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>s3rver-shim</RequestId></Error>`;
}

/**
 * What S3 answers that s3rver never does (issue 17.5), put in front of s3rver by msw so that the real
 * SDK, the stores and the app meet them over real HTTP:
 * - 409 ConditionalRequestConflict: two conditional writes of one key at once (S3 User Guide,
 *   "conditional writes"; s3rver runs a key's requests one at a time, so it never answers it). The
 *   stores put again (no GET of a key that may not exist yet); when it persists, ingest answers 409
 *   `offset_mismatch` with nothing indexed, never a 500.
 * - 403 AccessDenied for a key that does not exist, which is what S3 answers a role without s3:ListBucket
 *   (GetObject's API reference): the digester's role lists nothing, and its probe of the next digest
 *   must read a 403 as absent, or it fails every session.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '@aws-lambda-powertools/logger';
import { bypass, HttpResponse, http } from 'msw';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { createDigestHandler as CreateDigestHandler } from '../../../functions/digest.js';
import { type DynamoLocal, startDynamoLocal } from '../../../harness/dynamodb-local.js';
import { type LocalS3, startS3rver } from '../../../harness/s3rver.js';
import { createAwsApp } from '../../../lib/deploy/aws.js';
import { newId } from '../../../lib/log/index.js';
import { ensureTenant } from '../../../lib/service/tenants/bootstrap.js';
import { DynamoStateStore } from '../../../lib/store/dynamo/state-store.js';
import { ChunkConflictError } from '../../../lib/store/index.js';
import { S3DigestStore } from '../../../lib/store/s3/digest-store.js';
import { S3SegmentStore } from '../../../lib/store/s3/segment-store.js';
import { awsWorld } from '../../support/digest-world.js';
import { fakeKms, kmsTestClient } from '../../support/kms.js';
import { writeSession } from '../../support/segments.js';

const ARN = 'arn:aws:kms:us-east-1:111122223333:key/1111aaaa-2222-3333-4444-555566667777';
const msw = setupServer();
const root = mkdtempSync(join(tmpdir(), 'hansard-s3-faults-'));
let s3: LocalS3;
let dynamo: DynamoLocal;
let createDigestHandler: typeof CreateDigestHandler;

/** One S3 request as msw saw it. */
interface Seen {
  method: string;
  path: string;
  ifNoneMatch: string | null;
  ifMatch: string | null;
  status: number;
}
const seen: Seen[] = [];

/** Sends `request` on to s3rver (its body read first, without the Expect header fetch refuses). */
async function passOn(request: Request): Promise<Response> {
  const headers = new Headers(request.headers);
  headers.delete('expect');
  const body = ['GET', 'HEAD'].includes(request.method) ? undefined : await request.clone().arrayBuffer();
  return fetch(bypass(request, { headers, ...(body ? { body } : {}) }));
}

/** An S3 error answer as S3 writes it. */
function s3Error(status: number, code: string): Response {
  return new HttpResponse(
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${code}</Message><RequestId>msw</RequestId></Error>`,
    { status, headers: { 'content-type': 'application/xml' } },
  );
}

/**
 * Every object request to s3rver goes through `answer` (null: on to s3rver), and is recorded with the
 * status it got. Bucket requests pass untouched.
 */
function intercept(answer: (request: Request) => Promise<Response | null> | Response | null) {
  const handle = async ({ request }: { request: Request }) => {
    const url = new URL(request.url);
    if (!/^\/[^/]+\/.+/.test(url.pathname)) return passOn(request);
    const res = (await answer(request)) ?? (await passOn(request));
    seen.push({
      method: request.method,
      path: url.pathname,
      ifNoneMatch: request.headers.get('if-none-match'),
      ifMatch: request.headers.get('if-match'),
      status: res.status,
    });
    return res;
  };
  msw.use(http.all(`${s3.endpoint}/*`, handle));
}

/** 409 ConditionalRequestConflict to the first `times` PUTs of an object (all of them: Infinity). */
function conflictOnPuts(times: number): void {
  let n = 0;
  intercept((request) =>
    request.method === 'PUT' && n++ < times ? s3Error(409, 'ConditionalRequestConflict') : null,
  );
}

/** A role without s3:ListBucket: S3 answers 403, not 404, to a GET or HEAD of a key that is not there. */
function cannotList(): void {
  intercept(async (request) => {
    if (request.method !== 'GET' && request.method !== 'HEAD') return null;
    const res = await passOn(request);
    return res.status === 404 ? s3Error(403, 'AccessDenied') : res;
  });
}

beforeAll(async () => {
  [s3, dynamo] = await Promise.all([startS3rver(), startDynamoLocal()]);
  msw.listen({ onUnhandledRequest: 'bypass' });
  // functions/digest.ts builds its own handler from process.env when loaded: give it one it accepts.
  Object.assign(process.env, {
    BUCKET_NAME: 'hansard-module-load',
    TABLE_NAME: 'hansard-module-load',
    AWS_REGION: 'us-east-1',
    SIGNING_KEY_ARN: ARN,
  });
  ({ createDigestHandler } = await import('../../../functions/digest.js'));
}, 120_000);
afterEach(() => {
  msw.resetHandlers();
  seen.length = 0;
});
afterAll(async () => {
  msw.close();
  await s3?.close();
  await dynamo?.stop();
  rmSync(root, { recursive: true, force: true });
});

const chunkKey = () => ({ tenant: 'acme', sid: newId('s'), w: newId('w') });

async function readAll(it: AsyncIterable<Uint8Array>): Promise<string> {
  const parts: Uint8Array[] = [];
  for await (const p of it) parts.push(p);
  return Buffer.concat(parts).toString();
}

describe('409 ConditionalRequestConflict', () => {
  it('the segment store puts again, If-None-Match each time, without a GET of the key, and stores the chunk', async () => {
    const bucket = await s3.createBucket();
    const store = new S3SegmentStore({ client: s3.client(), bucket });
    const key = chunkKey();
    conflictOnPuts(2);
    await store.putChunk(key, 0, Buffer.from('{"a":1}\n'));
    const object = seen.filter((r) => r.path.endsWith('/000000000000000.jsonl'));
    expect(object.map((r) => [r.method, r.status, r.ifNoneMatch])).toEqual([
      ['PUT', 409, '*'],
      ['PUT', 409, '*'],
      ['PUT', 200, '*'],
    ]);
    expect(await readAll(store.readSegment(key, 8))).toBe('{"a":1}\n');
  });

  it('the segment store gives up after 5 puts with ChunkConflictError (a retry for the client), storing nothing', async () => {
    const bucket = await s3.createBucket();
    const store = new S3SegmentStore({ client: s3.client(), bucket });
    const key = chunkKey();
    conflictOnPuts(Number.POSITIVE_INFINITY);
    await expect(store.putChunk(key, 0, Buffer.from('{"a":1}\n'))).rejects.toBeInstanceOf(ChunkConflictError);
    expect(seen.map((r) => [r.method, r.status])).toEqual(Array(5).fill(['PUT', 409]));
    msw.resetHandlers();
    expect(await store.missingBytes(key, 8)).toEqual({ start: 0, end: 8 });
  });

  it('the digest store puts again and stores the digest', async () => {
    const bucket = await s3.createBucket();
    const digests = new S3DigestStore({ client: s3.client(), bucket });
    const sid = newId('s');
    conflictOnPuts(1);
    await digests.putDigest('acme', sid, 1, Buffer.from('{"seq":1}'));
    expect(seen.map((r) => [r.method, r.status])).toEqual([
      ['PUT', 409],
      ['PUT', 200],
    ]);
    expect(Buffer.from((await digests.getDigest('acme', sid, 1))!).toString()).toBe('{"seq":1}');
  });

  it('through the AWS app: a passing conflict is a 201, a lasting one a 409 offset_mismatch with nothing indexed, never a 500', async () => {
    const bucket = await s3.createBucket();
    const table = await dynamo.freshTable();
    const state = new DynamoStateStore({ tableName: table, client: dynamo.client });
    const token = (await ensureTenant(state, 'acme', new Date()))!.token;
    const errors: unknown[] = [];
    const app = createAwsApp({
      clients: { s3: s3.client(), dynamodb: dynamo.client },
      bucket,
      table,
      log: (_m: string, err?: unknown) => errors.push(err),
    });
    const seg = writeSession(mkdtempSync(join(root, 'app-')));
    const first = Buffer.concat(seg.lines.slice(0, 3));
    const rest = Buffer.concat(seg.lines.slice(3));
    const post = (offset: number, body: Buffer) =>
      app.request(`/v1/sessions/${seg.sid}/writers/${seg.w}/chunks?offset=${offset}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
        body,
      });

    conflictOnPuts(1);
    expect((await post(0, first)).status).toBe(201);
    msw.resetHandlers();

    conflictOnPuts(Number.POSITIVE_INFINITY);
    const refused = await post(first.length, rest);
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({
      error: { code: 'offset_mismatch', details: { expected_offset: first.length } },
    });
    expect((await state.getWriter('acme', seg.sid, seg.w))?.length).toBe(first.length);
    msw.resetHandlers();

    // the client's retry of the same chunk, once the key is quiet
    expect((await post(first.length, rest)).status).toBe(201);
    expect((await state.getWriter('acme', seg.sid, seg.w))?.length).toBe(seg.bytes.length);
    expect(errors).toEqual([]);
    await state.close();
  });
});

describe('403 for a key that does not exist (a role that cannot list)', () => {
  it('the digest store reads it as absent only when told its role cannot list', async () => {
    const bucket = await s3.createBucket();
    const sid = newId('s');
    cannotList();
    const listing = new S3DigestStore({ client: s3.client(), bucket });
    await expect(listing.getDigest('acme', sid, 1)).rejects.toMatchObject({
      name: 'AccessDenied',
      $metadata: { httpStatusCode: 403 },
    });
    const digester = new S3DigestStore({ client: s3.client(), bucket, forbiddenMeansAbsent: true });
    expect(await digester.getDigest('acme', sid, 1)).toBeNull();
    await digester.putDigest('acme', sid, 1, Buffer.from('{"seq":1}'));
    await digester.putDigest('acme', sid, 1, Buffer.from('{"seq":1}')); // 412, then the stored bytes compared
    expect(Buffer.from((await digester.getDigest('acme', sid, 1))!).toString()).toBe('{"seq":1}');
  });

  it('the digest function writes the due digest when S3 answers its probe of the next digest 403', async () => {
    fakeKms(msw, [ARN]);
    cannotList();
    const world = await awsWorld(root, dynamo, s3);
    const seg = world.segment({ open: true });
    await world.ingest(seg, 0, 3);
    const errors: string[] = [];
    const logger = {
      info: () => {},
      error: (message: string) => errors.push(message),
    } as unknown as Logger;
    const handler = createDigestHandler(
      {
        BUCKET_NAME: world.aws!.bucket,
        TABLE_NAME: world.aws!.table,
        AWS_REGION: 'us-east-1',
        SIGNING_KEY_ARN: ARN,
      },
      { clients: { s3: s3.client(), dynamodb: dynamo.client, kms: kmsTestClient() }, logger, now: world.now },
    );
    expect(await handler()).toEqual({ due: 1, written: 1, skipped: 0, failed: 0 });
    expect(errors).toEqual([]);
    // the probe was answered 403: the digester read it as "not written yet"
    expect(
      seen.filter((r) => r.method === 'GET' && r.path.endsWith('/digests/000000001.json'))[0]?.status,
    ).toBe(403);
    msw.resetHandlers();
    expect(await world.stored(seg.sid)).toHaveLength(1);
    await world.close();
  });
});

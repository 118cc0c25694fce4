/**
 * A large export on AWS (issue 15.3, docs/audit.md "Large sessions on AWS"), through the two Lambda
 * handlers as Lambda invokes them, over s3rver and DynamoDB Local with KMS answered by msw (real Ed25519,
 * test/support/kms.ts): the API function (functions/api.ts, buffered, behind API Gateway) signs an export
 * digest (`POST …/digests`); the replay function (functions/replay.ts, streamed, public URL) serves
 * `GET …/export?head=N` of a session larger than Lambda's 6 MB buffered answer, asking KMS only for
 * public keys (never Sign) and its state store only what its role allows; the bundle verifies offline.
 * The replay function refuses `POST …/digests` as every route it does not stream (404), and without a
 * stored digest its export answers 409 `no_digest`.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Logger } from '@aws-lambda-powertools/logger';
import { CreateTableCommand } from '@aws-sdk/client-dynamodb';
import type { Context } from 'aws-lambda';
import { setupServer } from 'msw/node';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateSession } from '../../bench/gen.js';
import { REPLAY_SIGNING_ACTIONS } from '../../functions/access.js';
import type { createApiHandler as CreateApiHandler } from '../../functions/api.js';
import { type DynamoLocal, startDynamoLocal } from '../../harness/dynamodb-local.js';
import {
  type ApiRequest,
  apiEvent,
  type LambdaAnswer,
  lambdaContext,
  ResponseStream,
  readResult,
  stubAwsLambdaGlobal,
  URL_DOMAIN,
} from '../../harness/lambda-events.js';
import { type LocalS3, startS3rver } from '../../harness/s3rver.js';
import { listSegments } from '../../lib/log/index.js';
import { ensureTenant } from '../../lib/service/tenants/bootstrap.js';
import { createTableInput } from '../../lib/store/dynamo/schema.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import { runHansard } from '../support/cli.js';
import { type FakeKms, fakeKms, kmsTestClient } from '../support/kms.js';

const ARN = 'arn:aws:kms:us-east-1:111122223333:key/1111aaaa-2222-3333-4444-555566667777';
const TENANT = 'acme';
/** Lambda's cap on a buffered answer: the bundle must be larger. */
const BUFFERED_LIMIT = 6 * 1024 * 1024;

type ApiHandler = ReturnType<typeof CreateApiHandler>;
type StreamingHandler = (event: unknown, stream: ResponseStream, context: Context) => Promise<void>;

const msw = setupServer();
const work = mkdtempSync(join(tmpdir(), 'hansard-export-replay-'));
let s3: LocalS3;
let dynamo: DynamoLocal;
let kms: FakeKms;
let admin: string;
let api: ApiHandler;
let replay: StreamingHandler;

beforeAll(async () => {
  [s3, dynamo] = await Promise.all([startS3rver(), startDynamoLocal()]);
  msw.listen({ onUnhandledRequest: 'bypass' });
  kms = fakeKms(msw, [ARN]);
  const bucket = await s3.createBucket();
  const table = `hansard-export-${Date.now().toString(36)}`;
  await dynamo.client.send(new CreateTableCommand(createTableInput(table)));
  const created = await ensureTenant(
    new DynamoStateStore({ tableName: table, client: dynamo.client }),
    TENANT,
    new Date(),
  );
  admin = created!.token;
  const env = { BUCKET_NAME: bucket, TABLE_NAME: table, AWS_REGION: 'us-east-1', SIGNING_KEY_ARN: ARN };
  // Importing an entry module builds its `handler` from process.env (as at cold start).
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  stubAwsLambdaGlobal();
  const [apiModule, replayModule] = await Promise.all([
    import('../../functions/api.js'),
    import('../../functions/replay.js'),
  ]);
  const overrides = () => ({
    clients: { s3: s3.client(), dynamodb: dynamo.client, kms: kmsTestClient() },
    logger: new Logger({ serviceName: 'hansard', logLevel: 'SILENT' }),
  });
  api = apiModule.createApiHandler(env, overrides());
  replay = replayModule.createReplayHandler(env, overrides()) as unknown as StreamingHandler;
}, 90_000);

afterAll(async () => {
  msw.close();
  vi.unstubAllEnvs();
  delete (globalThis as { awslambda?: unknown }).awslambda;
  await Promise.all([s3?.close(), dynamo?.stop()]);
  rmSync(work, { recursive: true, force: true });
});

const auth = (r: ApiRequest): ApiRequest => ({
  ...r,
  headers: { ...r.headers, authorization: `Bearer ${admin}` },
});

/** One invocation of the API function through the HTTP API (buffered). */
async function callApi(r: ApiRequest): Promise<LambdaAnswer> {
  const event = apiEvent(auth(r));
  const result = await api(event as unknown as Parameters<ApiHandler>[0], lambdaContext('ApiFunction'));
  return readResult(result);
}

/** One invocation of the replay function through its URL, the streamed body collected. */
async function callReplay(r: ApiRequest): Promise<LambdaAnswer> {
  const stream = new ResponseStream();
  await replay(apiEvent(auth({ ...r, domain: URL_DOMAIN })), stream, lambdaContext('ReplayFunction'));
  return stream.answer();
}

/** Uploads every segment of `dir` through the API function in chunks of whole lines of about 2 MiB. */
async function uploadDir(dir: string, sid: string): Promise<number> {
  let total = 0;
  for (const { w, path } of listSegments(dir)) {
    const bytes = readFileSync(path);
    let offset = 0;
    while (offset < bytes.length) {
      let end = Math.min(bytes.length, offset + 2 * 1024 * 1024);
      end = bytes.lastIndexOf(0x0a, end - 1) + 1;
      const a = await callApi({
        method: 'POST',
        path: `/v1/sessions/${sid}/writers/${w}/chunks`,
        query: `offset=${offset}`,
        headers: { 'content-type': 'application/x-ndjson' },
        body: bytes.subarray(offset, end),
        base64: true,
      });
      expect(a.status, a.text).toBe(201);
      offset = end;
    }
    total += bytes.length;
  }
  return total;
}

describe('a large export on AWS: the API signs, the replay function streams', { timeout: 120_000 }, () => {
  it('serves GET …/export?head=N of a session over 6 MB from the replay function, and it verifies', async () => {
    const dir = await generateSession(work, 24_000, 1);
    const sid = dir.split('/').pop()!;
    const size = await uploadDir(dir, sid);
    expect(size).toBeGreaterThan(BUFFERED_LIMIT);

    const made = await callApi({ method: 'POST', path: `/v1/sessions/${sid}/digests` });
    expect(made.status, made.text).toBe(201);
    const n = made.json.seq as number;

    const kmsCallsBefore = kms.calls.length;
    const res = await callReplay({ method: 'GET', path: `/v1/sessions/${sid}/export`, query: `head=${n}` });
    expect(res.status, res.text.slice(0, 500)).toBe(200);
    expect(res.headers['hansard-head-seq']).toBe(String(n));
    expect(res.headers['hansard-head-sha256']).toBe(made.json.sha256);
    expect(res.bytes.length).toBeGreaterThan(BUFFERED_LIMIT);
    // The replay function asked KMS for public keys only, as its role allows (infra: REPLAY_SIGNING_ACTIONS).
    const ops = kms.calls.slice(kmsCallsBefore).map((c) => `kms:${c.op}`);
    expect(ops.length).toBeGreaterThan(0);
    for (const op of ops) expect(REPLAY_SIGNING_ACTIONS as readonly string[]).toContain(op);

    // Without head it bundles the newest stored digest (it cannot sign one).
    const newest = await callReplay({ method: 'GET', path: `/v1/sessions/${sid}/export` });
    expect(newest.status).toBe(200);
    expect(newest.headers['hansard-head-seq']).toBe(String(n));

    const file = join(work, 'big.tar');
    writeFileSync(file, res.bytes);
    const keys = join(work, 'keys.json');
    writeFileSync(keys, (await callApi({ method: 'GET', path: '/v1/keys' })).text);
    const v = await runHansard(['verify', '--digests', file, '--public-key', keys], { cwd: work });
    expect(v.code, `${v.out}${v.err}`).toBe(0);
    expect(v.out).toMatch(/^verified: /m);
  });

  it('refuses POST …/digests on the replay URL (404, as every route it does not stream)', async () => {
    const dir = await generateSession(work, 20, 1);
    const sid = dir.split('/').pop()!;
    await uploadDir(dir, sid);
    const kmsCallsBefore = kms.calls.length;
    const refused = await callReplay({ method: 'POST', path: `/v1/sessions/${sid}/digests` });
    expect(refused.status).toBe(404);
    expect(refused.json.error.code).toBe('not_found');
    expect(refused.json.error.message).toContain('use the API URL');
    // No digest was written: the replay URL's export has none to bundle and says where to make one.
    const none = await callReplay({ method: 'GET', path: `/v1/sessions/${sid}/export` });
    expect(none.status).toBe(409);
    expect(none.json.error.code).toBe('no_digest');
    expect(none.json.error.message).toContain(`POST /v1/sessions/${sid}/digests on the API URL`);
    expect(kms.calls.slice(kmsCallsBefore).filter((c) => c.op === 'Sign')).toEqual([]);
  });
});

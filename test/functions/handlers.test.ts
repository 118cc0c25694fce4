/**
 * The Lambda handlers (functions/api.ts, functions/replay.ts) invoked as Lambda invokes them, with API
 * Gateway HTTP API / function URL events (payload format 2.0) and a Lambda context, over s3rver and
 * DynamoDB Local: the handlers are built by their factories from an environment that names the bucket,
 * the table and the emulators' endpoints, with credentials from the environment as in Lambda.
 *
 * A session goes in as chunks through the API handler; replay through both handlers equals the library's
 * local replay of the same segment; the replay handler serves only its routes and checks the token. The
 * functions' JSON log lines (Powertools, on stdout and stderr) carry the request id and the tenant, never
 * a token, an id from the path, or an event's text.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateTableCommand, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Context } from 'aws-lambda';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { createApiHandler } from '../../functions/api.js';
import { ConfigError } from '../../functions/config.js';
import type { createReplayHandler } from '../../functions/replay.js';
import { type DynamoLocal, LOCAL_REGION, startDynamoLocal } from '../../harness/dynamodb-local.js';
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
import { ensureTenant } from '../../lib/service/tenants/bootstrap.js';
import { createTableInput } from '../../lib/store/dynamo/schema.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import { type LocalSegment, localReplay, writeSession } from '../support/segments.js';

/**
 * s3rver checks signatures against its one account; DynamoDB Local keeps one database per access key. The
 * functions take credentials from the environment, one pair for both clients, so both emulators see it.
 */
const CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const TENANT = 'acme';
/** what the session's events say: none of it may reach a log line */
const EVENT_TEXTS = [
  'move the quarterly zebra migration to friday',
  'systemctl restart payments',
  'The payments worker is restarted.',
];
const STATUS_NOTE = 'wiring the okapi ledger; tests next';

type ApiHandler = ReturnType<typeof createApiHandler>;
type StreamingHandler = (event: unknown, stream: ResponseStream, context: Context) => Promise<void>;

let s3: LocalS3;
let dynamo: DynamoLocal;
let ddb: DynamoDBClient;
let env: Record<string, string>;
let admin: string;
let api: ApiHandler;
let replay: StreamingHandler;
let factories: {
  createApiHandler: typeof createApiHandler;
  createReplayHandler: typeof createReplayHandler;
};
let workDir: string;
let seg: LocalSegment;
let first: Buffer;
let second: Buffer;
/** every JSON line the functions' logger printed */
const logLines: string[] = [];

/** Keeps the logger's lines (JSON with `"service":"hansard"`); anything else is written through. */
function captureLogs(): void {
  for (const stream of [process.stdout, process.stderr]) {
    const write = stream.write.bind(stream) as (...args: unknown[]) => boolean;
    const spy = (chunk: unknown, ...rest: unknown[]): boolean => {
      const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk as Uint8Array).toString('utf8');
      if (!text.includes('"service":"hansard"')) return write(chunk, ...rest);
      logLines.push(...text.split('\n').filter((l) => l.trim() !== ''));
      return true;
    };
    vi.spyOn(stream, 'write').mockImplementation(spy as unknown as typeof stream.write);
  }
}

beforeAll(async () => {
  [s3, dynamo] = await Promise.all([startS3rver(), startDynamoLocal()]);
  ddb = new DynamoDBClient({ endpoint: dynamo.endpoint, region: LOCAL_REGION, credentials: CREDENTIALS });
  const bucket = await s3.createBucket();
  const table = `hansard-fn-${Date.now().toString(36)}`;
  await ddb.send(new CreateTableCommand(createTableInput(table)));
  const created = await ensureTenant(
    new DynamoStateStore({ tableName: table, client: ddb }),
    TENANT,
    new Date(),
  );
  if (!created) throw new Error('the tenant existed already');
  admin = created.token;

  env = {
    BUCKET_NAME: bucket,
    TABLE_NAME: table,
    AWS_REGION: LOCAL_REGION,
    LOG_LEVEL: 'info',
    S3_ENDPOINT: s3.endpoint,
    DYNAMODB_ENDPOINT: dynamo.endpoint,
    AWS_ACCESS_KEY_ID: CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: CREDENTIALS.secretAccessKey,
  };
  // Importing an entry module builds its `handler` from process.env (as at cold start), so the
  // environment and the runtime's streaming global are in place first.
  for (const [k, v] of Object.entries(env)) vi.stubEnv(k, v);
  for (const k of ['AWS_SESSION_TOKEN', 'AWS_PROFILE', 'POWERTOOLS_DEV', '_X_AMZN_TRACE_ID']) {
    vi.stubEnv(k, undefined);
  }
  stubAwsLambdaGlobal();
  const [apiModule, replayModule] = await Promise.all([
    import('../../functions/api.js'),
    import('../../functions/replay.js'),
  ]);
  factories = {
    createApiHandler: apiModule.createApiHandler,
    createReplayHandler: replayModule.createReplayHandler,
  };
  captureLogs();
  api = factories.createApiHandler(env);
  replay = factories.createReplayHandler(env) as unknown as StreamingHandler;

  workDir = mkdtempSync(join(tmpdir(), 'hansard-fn-'));
  seg = writeSession(workDir, { text: EVENT_TEXTS[0]! });
  first = Buffer.concat(seg.lines.slice(0, 3));
  second = Buffer.concat(seg.lines.slice(3));
});

afterAll(async () => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  delete (globalThis as { awslambda?: unknown }).awslambda;
  ddb?.destroy();
  await Promise.all([s3?.close(), dynamo?.stop()]);
  if (workDir) rmSync(workDir, { recursive: true, force: true });
});

interface Call extends LambdaAnswer {
  requestId: string;
  awsRequestId: string;
}

function withToken(r: ApiRequest, token: string | null): ApiRequest {
  return token === null ? r : { ...r, headers: { ...r.headers, authorization: `Bearer ${token}` } };
}

/** One invocation of the API function through the HTTP API. */
async function callApi(r: ApiRequest, token: string | null = admin): Promise<Call> {
  const event = apiEvent(withToken(r, token));
  const context = lambdaContext('Hansard-ApiFunction');
  const result = await api(event as unknown as Parameters<ApiHandler>[0], context);
  return {
    ...readResult(result),
    requestId: event.requestContext.requestId,
    awsRequestId: context.awsRequestId,
  };
}

/** One invocation of the replay function through its URL, the streamed body collected. */
async function callReplay(r: ApiRequest, token: string | null = admin): Promise<Call> {
  const event = apiEvent(withToken({ ...r, domain: URL_DOMAIN }, token));
  const context = lambdaContext('Hansard-ReplayFunction');
  const stream = new ResponseStream();
  await replay(event, stream, context);
  return {
    ...stream.answer(),
    requestId: event.requestContext.requestId,
    awsRequestId: context.awsRequestId,
  };
}

const chunksPath = () => `/v1/sessions/${seg.sid}/writers/${seg.w}/chunks`;

/** `POST …/chunks?offset=N` as a client sends it: NDJSON, which API Gateway passes on base64-encoded. */
const postChunk = (offset: number, body: Buffer) =>
  callApi({
    method: 'POST',
    path: chunksPath(),
    query: `offset=${offset}`,
    headers: { 'content-type': 'application/x-ndjson' },
    body,
    base64: true,
  });

/** Request ids of calls whose log lines the last test checks. */
const seen: { ingest?: Call; replayed?: Call; refused?: Call } = {};

describe('API handler (HTTP API events)', () => {
  it('appends a chunk with 201 and answers {writer,length,lines,last_seq}', async () => {
    const a = await postChunk(0, first);
    expect(a.status, a.text).toBe(201);
    expect(a.base64).toBe(false);
    expect(a.headers['content-type']).toContain('application/json');
    expect(a.json).toEqual({ writer: seg.w, length: first.length, lines: 3, last_seq: 3 });
    seen.ingest = a;
  });

  it('answers the same chunk again with 200 and the same answer', async () => {
    const a = await postChunk(0, first);
    expect(a.status, a.text).toBe(200);
    expect(a.json).toEqual({ writer: seg.w, length: first.length, lines: 3, last_seq: 3 });
  });

  it('refuses a chunk at a wrong offset with 409 and the expected offset', async () => {
    const a = await postChunk(first.length + 7, second);
    expect(a.status, a.text).toBe(409);
    expect(a.json.error).toMatchObject({
      code: 'offset_mismatch',
      details: { expected_offset: first.length },
    });
  });

  it('appends the second chunk and shows the writer', async () => {
    const a = await postChunk(first.length, second);
    expect(a.status, a.text).toBe(201);
    expect(a.json).toEqual({
      writer: seg.w,
      length: seg.bytes.length,
      lines: seg.lines.length,
      last_seq: seg.lines.length,
    });
    const w = await callApi({ method: 'GET', path: `/v1/sessions/${seg.sid}/writers/${seg.w}` });
    expect(w.status, w.text).toBe(200);
    expect(w.json).toMatchObject({
      writer: seg.w,
      length: seg.bytes.length,
      lines: seg.lines.length,
      last_seq: seg.lines.length,
      ended: true,
      agent: 'test-agent',
    });
  });

  it('stores a status report (201), shows it (GET status) and on the board', async () => {
    const report = { state: 'working', note: STATUS_NOTE, events: [{ kind: 'plan', evidence: [] }] };
    const a = await callApi({
      method: 'POST',
      path: `/v1/sessions/${seg.sid}/status`,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(report),
    });
    expect(a.status, a.text).toBe(201);
    expect(a.json).toMatchObject({ sid: seg.sid, ...report });
    const got = await callApi({ method: 'GET', path: `/v1/sessions/${seg.sid}/status` });
    expect(got.status, got.text).toBe(200);
    expect(got.json).toEqual(a.json);
    const board = await callApi({ method: 'GET', path: '/v1/board' });
    expect(board.status, board.text).toBe(200);
    expect(board.json.tenant).toBe(TENANT);
    const row = board.json.sessions.find((s: { sid: string }) => s.sid === seg.sid);
    expect(row).toMatchObject({ sid: seg.sid, state: 'working', note: STATUS_NOTE });
  });

  it('replays the session as the library replays the local segment (ndjson base64-encoded, text as text)', async () => {
    const ndjson = await callApi({ method: 'GET', path: `/v1/sessions/${seg.sid}/replay` });
    expect(ndjson.status, ndjson.text).toBe(200);
    expect(ndjson.headers['content-type']).toBe('application/x-ndjson');
    // API Gateway gets a body hono does not take as text base64-encoded.
    expect(ndjson.base64).toBe(true);
    expect(ndjson.text).toBe(await localReplay(seg.dir, 'ndjson'));
    const text = await callApi({
      method: 'GET',
      path: `/v1/sessions/${seg.sid}/replay`,
      query: 'format=text',
    });
    expect(text.status, text.text).toBe(200);
    expect(text.headers['content-type']).toMatch(/^text\/plain/);
    expect(text.base64).toBe(false);
    // The library's replay of the directory, then the agent's status report as a Declared row (docs/status.md).
    const local = await localReplay(seg.dir, 'text');
    expect(text.text.slice(0, local.length)).toBe(local);
    expect(text.text.slice(local.length)).toMatch(
      /^\S+Z {2}declared {8}status\.report {8}Declared: working "[^"]+"; plan\n$/,
    );
    expect(text.text).toContain(EVENT_TEXTS[0]);
  });

  it('refuses a request without a token, or with a wrong one, with 401', async () => {
    const none = await callApi({ method: 'GET', path: `/v1/sessions/${seg.sid}/replay` }, null);
    expect(none.status, none.text).toBe(401);
    expect(none.json.error.code).toBe('unauthorized');
    seen.refused = none;
    const wrong = await callApi({ method: 'GET', path: '/v1/board' }, `${admin.slice(0, -4)}AAAA`);
    expect(wrong.status, wrong.text).toBe(401);
    const post = await callApi(
      {
        method: 'POST',
        path: chunksPath(),
        query: `offset=${seg.bytes.length}`,
        headers: { 'content-type': 'application/x-ndjson' },
        body: seg.lines[1]!,
        base64: true,
      },
      null,
    );
    expect(post.status, post.text).toBe(401);
    const w = await callApi({ method: 'GET', path: `/v1/sessions/${seg.sid}/writers/${seg.w}` });
    expect(w.json.length).toBe(seg.bytes.length);
  });
});

describe('replay handler (function URL events, streamed)', () => {
  it('streams the replay the library gives for the local segment, ndjson and text', async () => {
    const ndjson = await callReplay({ method: 'GET', path: `/v1/sessions/${seg.sid}/replay` });
    expect(ndjson.status, ndjson.text).toBe(200);
    expect(ndjson.headers['content-type']).toBe('application/x-ndjson');
    expect(ndjson.text).toBe(await localReplay(seg.dir, 'ndjson'));
    seen.replayed = ndjson;
    const text = await callReplay({
      method: 'GET',
      path: `/v1/sessions/${seg.sid}/replay`,
      query: 'format=text',
    });
    expect(text.status, text.text).toBe(200);
    // The library's replay of the directory, then the agent's status report as a Declared row (docs/status.md).
    const local = await localReplay(seg.dir, 'text');
    expect(text.text.slice(0, local.length)).toBe(local);
    expect(text.text.slice(local.length)).toMatch(
      /^\S+Z {2}declared {8}status\.report {8}Declared: working "[^"]+"; plan\n$/,
    );
  });

  it('streams the raw segment as uploaded', async () => {
    const raw = await callReplay({ method: 'GET', path: `/v1/sessions/${seg.sid}/writers/${seg.w}/segment` });
    expect(raw.status, raw.text).toBe(200);
    expect(raw.bytes.equals(seg.bytes)).toBe(true);
  });

  it('refuses routes other than replay with 404, even with a valid token, and stores nothing', async () => {
    for (const r of [
      { method: 'POST', path: chunksPath(), query: `offset=${seg.bytes.length}`, body: seg.lines[1]! },
      { method: 'POST', path: `/v1/sessions/${seg.sid}/status`, body: '{"state":"done"}' },
      { method: 'GET', path: '/v1/board' },
      { method: 'GET', path: `/v1/sessions/${seg.sid}/writers/${seg.w}` },
    ]) {
      const a = await callReplay(r);
      expect(a.status, `${r.method} ${r.path}`).toBe(404);
      expect(a.json.error.code).toBe('not_found');
    }
    const w = await callApi({ method: 'GET', path: `/v1/sessions/${seg.sid}/writers/${seg.w}` });
    expect(w.json.length).toBe(seg.bytes.length);
    const status = await callApi({ method: 'GET', path: `/v1/sessions/${seg.sid}/status` });
    expect(status.json.state).toBe('working');
  });

  it('checks the bearer token: 401 without one or with a wrong one', async () => {
    const none = await callReplay({ method: 'GET', path: `/v1/sessions/${seg.sid}/replay` }, null);
    expect(none.status, none.text).toBe(401);
    expect(none.json.error.code).toBe('unauthorized');
    expect(none.text).not.toContain(EVENT_TEXTS[0]);
    const wrong = await callReplay(
      { method: 'GET', path: `/v1/sessions/${seg.sid}/writers/${seg.w}/segment` },
      `${admin.slice(0, -4)}AAAA`,
    );
    expect(wrong.status, wrong.text).toBe(401);
  });
});

describe('handler factories', () => {
  it('throw a ConfigError naming every bad key, never a value', () => {
    const refusal = (make: () => unknown): ConfigError => {
      try {
        make();
      } catch (err) {
        expect(err).toBeInstanceOf(ConfigError);
        return err as ConfigError;
      }
      throw new Error('the factory accepted a bad environment');
    };
    const missing = refusal(() => factories.createApiHandler({ AWS_REGION: 'us-east-1' }));
    expect(missing.keys).toEqual(['BUCKET_NAME', 'TABLE_NAME']);
    expect(missing.message).toBe('invalid Lambda environment: BUCKET_NAME (required); TABLE_NAME (required)');
    const bad = refusal(() =>
      factories.createReplayHandler({ ...env, DYNAMODB_ENDPOINT: 'dynamo.internal:8000', LOG_LEVEL: 'loud' }),
    );
    expect(bad.keys).toEqual(['LOG_LEVEL', 'DYNAMODB_ENDPOINT']);
    expect(bad.message).toMatch(/^invalid Lambda environment: LOG_LEVEL \(expected one of/);
    expect(bad.message).toContain('DYNAMODB_ENDPOINT (expected an http(s) URL');
    for (const value of ['dynamo.internal', 'loud', env.BUCKET_NAME!])
      expect(bad.message).not.toContain(value);
  });
});

describe('function logs', () => {
  const parsed = () => logLines.map((l) => JSON.parse(l) as Record<string, unknown>);
  const lineOf = (call: Call | undefined) => {
    expect(call).toBeDefined();
    const found = parsed().filter((l) => l.request_id === call!.requestId);
    expect(found).toHaveLength(1);
    return found[0]!;
  };

  it('are one JSON request line per invocation with the request ids and tenant', () => {
    expect(logLines.length).toBeGreaterThan(10);
    expect(lineOf(seen.ingest)).toMatchObject({
      level: 'INFO',
      message: 'request',
      service: 'hansard',
      method: 'POST',
      route: '/v1/sessions/:sid/writers/:w/chunks',
      status: 201,
      tenant: TENANT,
      request_id: seen.ingest!.requestId,
      function_request_id: seen.ingest!.awsRequestId,
      function_name: 'Hansard-ApiFunction',
    });
    expect(lineOf(seen.replayed)).toMatchObject({
      message: 'request',
      route: '/v1/sessions/:sid/replay',
      status: 200,
      tenant: TENANT,
      function_request_id: seen.replayed!.awsRequestId,
      function_name: 'Hansard-ReplayFunction',
    });
    const refused = lineOf(seen.refused);
    expect(refused).toMatchObject({ message: 'request', route: '/v1/sessions/:sid/replay', status: 401 });
    // Powertools leaves out null attributes: an unauthenticated request's line has no tenant.
    expect(refused.tenant ?? null).toBeNull();
    // No unhandled errors were logged.
    expect(parsed().filter((l) => l.level !== 'INFO')).toEqual([]);
  });

  it('never hold a token, an id from a path, a query, or what an event or report says', () => {
    const all = logLines.join('\n');
    for (const secret of [
      admin,
      admin.slice(-24),
      seg.sid,
      seg.w,
      'format=text',
      STATUS_NOTE,
      ...EVENT_TEXTS,
    ]) {
      expect(all).not.toContain(secret);
    }
  });
});

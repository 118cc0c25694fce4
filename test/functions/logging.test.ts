/**
 * The functions' request log and the replay function's route filter (functions/logging.ts,
 * functions/app.ts), on the app the Lambda entries serve. No AWS calls are made: these requests are
 * answered before any store is touched.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { describe, expect, it, vi } from 'vitest';
import { createLambdaApp, type Serves } from '../../functions/app.js';
import { parseConfig } from '../../functions/config.js';

const config = parseConfig({
  BUCKET_NAME: 'hansard-test',
  TABLE_NAME: 'hansard-test',
  AWS_REGION: 'us-east-1',
});
const SID = 's_01JDZQ8N7X3YV2K5M9P4R6T8WA';

function appWithLog(serves: Serves) {
  const logger = { addContext: vi.fn(), info: vi.fn(), error: vi.fn() };
  const clients = {
    s3: new S3Client({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9' }),
    dynamodb: new DynamoDBClient({ region: 'us-east-1', endpoint: 'http://127.0.0.1:9' }),
  };
  const app = createLambdaApp({ config, clients, logger: logger as unknown as Logger, serves });
  return { app, logger };
}

describe('request log', () => {
  it('logs method, route pattern, status, duration, tenant and request id as one line', async () => {
    const { app, logger } = appWithLog('all');
    const env = { requestContext: { requestId: 'apigw-1' }, lambdaContext: { awsRequestId: 'aws-1' } };
    const res = await app.request('/healthz', {}, env);
    expect(res.status).toBe(200);
    expect(logger.addContext).toHaveBeenCalledWith(env.lambdaContext);
    expect(logger.info).toHaveBeenCalledTimes(1);
    const [message, line] = logger.info.mock.calls[0]!;
    expect(message).toBe('request');
    expect(line).toEqual({
      method: 'GET',
      route: '/healthz',
      status: 200,
      duration_ms: expect.any(Number),
      tenant: null,
      request_id: 'apigw-1',
    });
  });

  it('logs the route pattern of a refused request, never its path, query or token', async () => {
    const { app, logger } = appWithLog('all');
    const token = 'not-a-real-token-but-secret';
    const res = await app.request(`/v1/sessions/${SID}/replay?format=text`, {
      headers: { authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(401);
    const logged = JSON.stringify(logger.info.mock.calls);
    expect(logger.info.mock.calls[0]![1]).toMatchObject({ route: '/v1/sessions/:sid/replay', status: 401 });
    for (const secret of [token, SID, 'format=text']) expect(logged).not.toContain(secret);
  });

  it('logs an unmatched route as such', async () => {
    const { app, logger } = appWithLog('all');
    expect((await app.request('/no/such/page')).status).toBe(404);
    expect(logger.info.mock.calls[0]![1]).toMatchObject({ route: 'unmatched', status: 404 });
  });
});

describe('replay function routes', () => {
  it('serves GET replay, segment and healthz; answers 404 to anything else before authentication', async () => {
    const { app } = appWithLog('replay');
    expect((await app.request('/healthz')).status).toBe(200);
    // Served routes reach the app's own bearer-token check.
    expect((await app.request(`/v1/sessions/${SID}/replay`)).status).toBe(401);
    expect(
      (await app.request(`/v1/sessions/${SID}/writers/w_01JDZQ8N7X3YV2K5M9P4R6T8WB/segment`)).status,
    ).toBe(401);
    for (const [method, path] of [
      ['POST', `/v1/sessions/${SID}/writers/w_01JDZQ8N7X3YV2K5M9P4R6T8WB/chunks?offset=0`],
      ['GET', '/v1/sessions'],
      ['POST', '/v1/tokens'],
      ['GET', '/'],
      ['DELETE', `/v1/sessions/${SID}/replay`],
    ] as const) {
      const res = await app.request(path, { method });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(await res.json()).toMatchObject({ error: { code: 'not_found' } });
    }
  });
});

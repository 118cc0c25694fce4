/**
 * The replay function behind the edge (functions/app.ts, lib/http/origin-secret.ts): with
 * EDGE_ORIGIN_SECRET set, a request without CloudFront's `x-hansard-origin-secret` (or with another value)
 * answers 403 `forbidden` before routing or authentication, on every path; with it, the request goes on
 * as before (liveness 200, a streamed route 401 for want of a token). The API function never asks for it.
 * No emulator: a refused request reaches no store, and a passed one stops at the missing token.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { describe, expect, it } from 'vitest';
import { createLambdaApp, type Serves } from '../../functions/app.js';
import { createClients } from '../../functions/clients.js';
import { ConfigError, parseConfig } from '../../functions/config.js';
import { ORIGIN_SECRET_HEADER, requireOriginSecret } from '../../lib/http/origin-secret.js';
import { newId } from '../../lib/log/index.js';

const SECRET = 'Zq7Kd2mW9xPa4Lr8Ns3Bv6Tc1Hy5Fg0Je2Ru7Io4Qp9Aw3Sx';
const base = {
  AWS_REGION: 'us-east-1',
  BUCKET_NAME: 'origin-secret',
  TABLE_NAME: 'origin-secret',
  // Endpoints nothing listens on: a test that reached a store would fail loudly.
  S3_ENDPOINT: 'http://127.0.0.1:9',
  DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
};

function app(serves: Serves, env: Record<string, string> = { EDGE_ORIGIN_SECRET: SECRET }) {
  const config = parseConfig({ ...base, ...env });
  return createLambdaApp({
    config,
    clients: createClients(config),
    logger: new Logger({ serviceName: 'hansard', logLevel: 'SILENT' }),
    serves,
  });
}

const replayPath = () => `/v1/sessions/${newId('s')}/replay`;

describe('the replay function URL behind the edge', () => {
  const replay = app('replay');

  it('refuses a request without the origin header, or with another value, 403 forbidden on every path', async () => {
    const wrong: Array<Record<string, string>> = [
      {},
      { [ORIGIN_SECRET_HEADER]: '' },
      { [ORIGIN_SECRET_HEADER]: SECRET.slice(0, -1) },
      { [ORIGIN_SECRET_HEADER]: `${SECRET.slice(0, -1)}X` },
      // (surrounding blanks are not part of a field value: HTTP trims them, so they are not tried here)
      { [ORIGIN_SECRET_HEADER]: `${SECRET}${SECRET}` },
      { [ORIGIN_SECRET_HEADER]: SECRET.toLowerCase() },
      // the secret anywhere but in its header
      { authorization: `Bearer ${SECRET}` },
    ];
    for (const headers of wrong) {
      for (const [method, path] of [
        ['GET', replayPath()],
        ['HEAD', replayPath()],
        ['GET', '/healthz'],
        ['POST', '/v1/status'],
      ] as const) {
        const res = await replay.request(path, { method, headers });
        expect(res.status, `${method} ${path} ${JSON.stringify(headers)}`).toBe(403);
        if (method === 'HEAD') continue;
        const text = await res.text();
        expect(text).not.toContain(SECRET);
        const body = JSON.parse(text) as { error: { code: string; message: string; details: unknown } };
        expect(body.error.code).toBe('forbidden');
        expect(body.error.message).toContain('ReplayEdgeUrl');
        expect(body.error.details).toEqual({ header: ORIGIN_SECRET_HEADER });
      }
    }
  });

  it('passes a request with the secret on to the app as before', async () => {
    const headers = { [ORIGIN_SECRET_HEADER]: SECRET };
    expect((await replay.request('/healthz', { headers })).status).toBe(200);
    expect((await replay.request(replayPath(), { headers })).status).toBe(401);
    expect((await replay.request(replayPath(), { method: 'HEAD', headers })).status).toBe(401);
    // routing still refuses what the replay URL does not serve
    expect((await replay.request('/v1/status', { method: 'POST', headers })).status).toBe(404);
  });

  it('is open as before without EDGE_ORIGIN_SECRET, and the API function never asks for the header', async () => {
    const open = app('replay', {});
    expect((await open.request('/healthz')).status).toBe(200);
    expect((await open.request(replayPath())).status).toBe(401);
    const api = app('all');
    expect((await api.request('/healthz')).status).toBe(200);
  });

  it('refuses a secret shorter than 32 characters, at start-up', () => {
    expect(() => parseConfig({ ...base, EDGE_ORIGIN_SECRET: 'x'.repeat(31) })).toThrow(ConfigError);
    expect(() => parseConfig({ ...base, EDGE_ORIGIN_SECRET: 'x'.repeat(31) })).toThrow(/EDGE_ORIGIN_SECRET/);
    expect(parseConfig({ ...base, EDGE_ORIGIN_SECRET: 'x'.repeat(32) }).EDGE_ORIGIN_SECRET).toBe(
      'x'.repeat(32),
    );
    expect(() => requireOriginSecret('short')).toThrow(RangeError);
  });
});

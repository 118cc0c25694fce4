/**
 * Which routes the replay function's URL serves (functions/app.ts): the routes whose declarations say
 * their answer streams (lib/http/routes/), and `/healthz`; every other declared route answers 404 before
 * authentication. No emulator is needed: a refused route reaches no store, and a served one stops at the
 * missing token (401) before any.
 */
import { Logger } from '@aws-lambda-powertools/logger';
import { describe, expect, it } from 'vitest';
import { createLambdaApp } from '../../functions/app.js';
import { createClients } from '../../functions/clients.js';
import { parseConfig } from '../../functions/config.js';
import { ROUTES } from '../../lib/http/routes/index.js';
import { newId } from '../../lib/log/index.js';

// Endpoints nothing listens on: a test that reached a store would fail loudly.
const config = parseConfig({
  AWS_REGION: 'us-east-1',
  BUCKET_NAME: 'replay-routes',
  TABLE_NAME: 'replay-routes',
  S3_ENDPOINT: 'http://127.0.0.1:9',
  DYNAMODB_ENDPOINT: 'http://127.0.0.1:9',
});
const app = createLambdaApp({
  config,
  clients: createClients(config),
  logger: new Logger({ serviceName: 'hansard', logLevel: 'SILENT' }),
  serves: 'replay',
});

/** A declared path with fresh ids in its parameters. */
function concrete(path: string): string {
  return path
    .replace('{sid}', newId('s'))
    .replace('{w}', newId('w'))
    .replace('{id}', `tok_${newId('e').slice(2)}`);
}

describe('the replay function URL', () => {
  it('serves the streamed reads DESIGN §4 gives it, and liveness: exactly the declared streamed routes', () => {
    const streamed = ROUTES.filter((op) => op.streamed).map((op) => `${op.method.toUpperCase()} ${op.path}`);
    expect(streamed.sort()).toEqual([
      'GET /v1/sessions/{sid}/export',
      'GET /v1/sessions/{sid}/replay',
      'GET /v1/sessions/{sid}/writers/{w}/segment',
    ]);
  });

  it('passes each streamed route and /healthz on to the app (GET and HEAD), which asks for a token', async () => {
    for (const op of ROUTES.filter((o) => o.streamed)) {
      for (const method of ['GET', 'HEAD']) {
        const res = await app.request(concrete(op.path), { method });
        expect(res.status, `${method} ${op.path}`).toBe(401);
      }
    }
    const health = await app.request('/healthz');
    expect(health.status).toBe(200);
  });

  it('answers every other declared route 404 before authentication, naming the routes it serves', async () => {
    const others = ROUTES.filter((op) => !op.streamed && op.path !== '/healthz');
    expect(others.length).toBeGreaterThan(20);
    for (const op of others) {
      const res = await app.request(concrete(op.path), { method: op.method.toUpperCase() });
      expect(res.status, `${op.method} ${op.path}`).toBe(404);
      const body = (await res.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('not_found');
      expect(body.error.message).toBe(
        'this URL serves only GET /v1/sessions/{sid}/replay, GET /v1/sessions/{sid}/writers/{w}/segment and GET /v1/sessions/{sid}/export; use the API URL for everything else',
      );
    }
  });
});

/**
 * The SDK clients of the AWS deployment give up (issue 17.5): against a server that accepts the
 * connection and never answers, an S3 and a DynamoDB request fail with the SDK's TimeoutError after
 * their tries instead of waiting for the Lambda timeout; and the clients the functions make carry the
 * stated timeouts and tries (lib/deploy/aws-stores.ts `S3_TIMEOUTS`, `DYNAMODB_TIMEOUTS`).
 */
import { createServer, type Server, type Socket } from 'node:net';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAwsClients, DYNAMODB_TIMEOUTS, S3_TIMEOUTS } from '../../lib/deploy/aws-stores.js';

let server: Server;
let endpoint: string;
const sockets = new Set<Socket>();
let accepted = 0;

beforeAll(async () => {
  // Reads whatever comes and never writes a byte back.
  server = createServer((socket) => {
    accepted += 1;
    sockets.add(socket);
    socket.on('data', () => {});
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  if (!address || typeof address === 'string') throw new Error('no port');
  endpoint = `http://127.0.0.1:${address.port}`;
});
afterAll(async () => {
  for (const s of sockets) s.destroy();
  await new Promise((r) => server.close(r));
});

const credentials = { accessKeyId: 'test', secretAccessKey: 'test' };
const quick = { connectionTimeoutMs: 500, requestTimeoutMs: 400, socketTimeoutMs: 400, maxAttempts: 2 };

describe('the AWS clients against a server that never answers', () => {
  it('S3 fails with a TimeoutError after its tries, in about tries x requestTimeout', async () => {
    const { s3 } = createAwsClients({ region: 'us-east-1', s3Endpoint: endpoint, s3Timeouts: quick });
    s3.config.credentials = async () => credentials;
    const before = accepted;
    const started = Date.now();
    await expect(s3.send(new GetObjectCommand({ Bucket: 'b', Key: 'k' }))).rejects.toMatchObject({
      name: 'TimeoutError',
    });
    const ms = Date.now() - started;
    expect(ms).toBeGreaterThanOrEqual(2 * 400 - 50);
    expect(ms).toBeLessThan(5_000);
    expect(accepted - before).toBe(2);
    s3.destroy();
  });

  it('DynamoDB fails the same way', async () => {
    const { dynamodb } = createAwsClients({
      region: 'us-east-1',
      dynamodbEndpoint: endpoint,
      dynamodbTimeouts: quick,
    });
    dynamodb.config.credentials = async () => credentials;
    const started = Date.now();
    await expect(
      dynamodb.send(new GetItemCommand({ TableName: 't', Key: { pk: { S: 'x' }, sk: { S: 'y' } } })),
    ).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(Date.now() - started).toBeLessThan(5_000);
    dynamodb.destroy();
  });
});

describe('the clients the functions make', () => {
  it('carry the stated timeouts, an error on a request over its timeout, and the stated tries', async () => {
    const { s3, dynamodb } = createAwsClients({ region: 'us-east-1' });
    for (const [client, t] of [
      [s3, S3_TIMEOUTS],
      [dynamodb, DYNAMODB_TIMEOUTS],
    ] as const) {
      // NodeHttpHandler resolves its options into `configProvider` (what `handle` then uses)
      const handler = client.config.requestHandler as unknown as { configProvider: Promise<unknown> };
      expect(await handler.configProvider).toMatchObject({
        connectionTimeout: t.connectionTimeoutMs,
        requestTimeout: t.requestTimeoutMs,
        socketTimeout: t.socketTimeoutMs,
        throwOnRequestTimeout: true,
      });
      expect(await client.config.maxAttempts()).toBe(t.maxAttempts);
      client.destroy();
    }
    // inside the API function's 29 s even when every try of a request times out
    expect(S3_TIMEOUTS.maxAttempts * S3_TIMEOUTS.requestTimeoutMs).toBeLessThan(29_000);
    expect(DYNAMODB_TIMEOUTS.maxAttempts * DYNAMODB_TIMEOUTS.requestTimeoutMs).toBeLessThan(29_000);
  });
});

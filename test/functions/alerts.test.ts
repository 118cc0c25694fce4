/**
 * Alerts on the AWS path (issue 28 items 4 and 6) against DynamoDB Local and s3rver, with KMS answered by
 * msw (a symmetric key that encrypts for real under the encryption context, test/support/kms-symmetric.ts)
 * and a real receiver on loopback that verifies with the `standardwebhooks` package:
 *
 * - the API function (functions/app.ts) makes a target and seals its secret with KMS Encrypt under
 *   `{tenant, purpose}`, never Decrypt (its role has kms:Encrypt alone), and refuses a private address;
 * - the delivery function (functions/alerts.ts), woken by a stream batch, opens the secret with Decrypt
 *   and delivers the target's test event signed; its state store answers only `ALERTS_STATE_METHODS`
 *   (its IAM role), so a call the worker adds fails here too;
 * - a target that fails is no failure of the invocation (the attempt is recorded, to be retried); an
 *   error of ours is, logged with its URLs cut and rethrown masked; no pass starts 20 s before the end.
 */
import type { Logger } from '@aws-lambda-powertools/logger';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { createAlertsHandler as CreateAlertsHandler } from '../../functions/alerts.js';
import { createLambdaApp } from '../../functions/app.js';
import { createClients } from '../../functions/clients.js';
import { ConfigError, parseConfig } from '../../functions/config.js';
import { createLogger } from '../../functions/logging.js';
import { type S3ReplayWorld, startS3ReplayWorld } from '../../harness/s3-replay-world.js';
import { maskUrls } from '../../lib/deploy/aws-alerts.js';
import { ALERT_SECRET_PURPOSE } from '../../lib/deploy/aws-sealer.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import { kmsTestClient } from '../support/kms.js';
import { type FakeSymmetricKms, fakeSymmetricKms } from '../support/kms-symmetric.js';
import { startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver.js';

const KEY = 'arn:aws:kms:us-east-1:111122223333:key/2222bbbb-2222-3333-4444-555566667777';
const msw = setupServer();
let world: S3ReplayWorld;
let env: Record<string, string>;
let receiver: WebhookReceiver;
let createAlertsHandler: typeof CreateAlertsHandler;
let kms: FakeSymmetricKms;

beforeAll(async () => {
  world = await startS3ReplayWorld();
  env = { ...world.env, ALERT_KMS_KEY_ID: KEY, LOG_LEVEL: 'SILENT' };
  // The module builds its handler from process.env when loaded: give it one it accepts.
  Object.assign(process.env, env);
  ({ createAlertsHandler } = await import('../../functions/alerts.js'));
  receiver = await startWebhookReceiver();
  msw.listen({ onUnhandledRequest: 'bypass' });
}, 120_000);

afterEach(() => {
  msw.resetHandlers();
  receiver.mode = 'ok';
});

afterAll(async () => {
  msw.close();
  await receiver?.close();
  await world?.close();
});

/** The functions' clients on the emulators, KMS's through msw. */
const clients = () => ({ ...createClients(parseConfig(env)), kms: kmsTestClient() });
const silent = (): Logger => createLogger({ LOG_LEVEL: 'SILENT' });
const streamBatch = (n: number): DynamoDBStreamEvent => ({
  Records: Array.from({ length: n }, (_, i) => ({
    eventID: `e${i}`,
    eventName: 'INSERT' as const,
    eventSource: 'aws:dynamodb',
    dynamodb: { Keys: { pk: { S: 'ALERT_OUT#0' }, sk: { S: `acme#msg_${i}` } } },
  })),
});
const minute = { getRemainingTimeInMillis: () => 60_000 };

/** A target made through the API function (sealed with KMS), then pointed at the loopback receiver. */
async function targetOnReceiver(): Promise<{ id: string; secret: string }> {
  const app = createLambdaApp({
    config: parseConfig(env),
    clients: clients(),
    logger: silent(),
    serves: 'all',
  });
  const auth = { authorization: `Bearer ${world.token}`, 'content-type': 'application/json' };
  const added = await app.request('/v1/alerts', {
    method: 'POST',
    headers: auth,
    body: JSON.stringify({ url: 'https://1.1.1.1/hook', label: 'aws path' }),
  });
  expect(added.status, await added.clone().text()).toBe(201);
  const { id, secret } = (await added.json()) as { id: string; secret: string };
  // Only here may it be pointed at a loopback address: the API refuses one on AWS.
  const state = new DynamoStateStore({ tableName: env.TABLE_NAME!, client: clients().dynamodb });
  const t = (await state.getAlertTarget('acme', id))!;
  await state.putAlertTarget({ ...t, url: receiver.url, version: t.version + 1 });
  const test = await app.request(`/v1/alerts/${id}/test`, { method: 'POST', headers: auth });
  expect(test.status, await test.clone().text()).toBe(202);
  return { id, secret };
}

describe('the alerts on AWS', () => {
  it('the API seals with Encrypt only and refuses a private address; the delivery function opens with Decrypt and delivers signed', async () => {
    kms = fakeSymmetricKms(msw, KEY);
    const app = createLambdaApp({
      config: parseConfig(env),
      clients: clients(),
      logger: silent(),
      serves: 'all',
    });
    const refused = await app.request('/v1/alerts', {
      method: 'POST',
      headers: { authorization: `Bearer ${world.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ url: receiver.url }),
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { code: 'invalid_target' } });

    const { secret } = await targetOnReceiver();
    expect(kms.calls.map((c) => c.op)).toEqual(['Encrypt']);
    expect(kms.calls[0]!.body.EncryptionContext).toEqual({ tenant: 'acme', purpose: ALERT_SECRET_PURPOSE });
    receiver.secrets = [secret];

    const handler = createAlertsHandler(env, {
      clients: clients(),
      logger: silent(),
      allowPrivateTargets: true,
    });
    const answer = await handler(streamBatch(2), minute);
    expect(answer).toMatchObject({
      trigger: 'stream',
      records: 2,
      events: 1,
      deliveries: 1,
      stopped: 'idle',
    });
    expect(receiver.received).toHaveLength(1);
    expect(receiver.received[0]!.error).toBeNull();
    expect(receiver.received[0]!.payload).toMatchObject({ type: 'alert.test' });
    expect(kms.calls.map((c) => c.op)).toEqual(['Encrypt', 'Decrypt']);
    expect(kms.calls[1]!.body.EncryptionContext).toEqual({ tenant: 'acme', purpose: ALERT_SECRET_PURPOSE });
    // the next run finds nothing due
    expect(await handler({} as Record<string, never>, minute)).toMatchObject({
      trigger: 'invoke',
      passes: 1,
      events: 0,
      deliveries: 0,
    });
  }, 60_000);

  it('a target that fails is no failure of the invocation: the attempt is recorded and tried again later', async () => {
    kms = fakeSymmetricKms(msw, KEY);
    const { id, secret } = await targetOnReceiver();
    receiver.secrets = [secret];
    receiver.mode = 'fail';
    const before = receiver.received.length;
    const handler = createAlertsHandler(env, {
      clients: clients(),
      logger: silent(),
      allowPrivateTargets: true,
    });
    const answer = await handler(streamBatch(1), minute);
    expect(answer).toMatchObject({ events: 1, deliveries: 1, stopped: 'idle' });
    expect(receiver.received.length).toBe(before + 1);
    const state = new DynamoStateStore({ tableName: env.TABLE_NAME!, client: clients().dynamodb });
    const [d] = await state.listDeliveries('acme', { target: id, limit: 5 });
    expect(d).toMatchObject({ status: 'pending', attempts: 1, last_status: 500 });
    expect(Date.parse(d!.next_at!)).toBeGreaterThan(Date.now());
  }, 60_000);

  it('starts no pass within 20 s of the end', async () => {
    kms = fakeSymmetricKms(msw, KEY);
    await targetOnReceiver();
    const before = receiver.received.length;
    const handler = createAlertsHandler(env, {
      clients: clients(),
      logger: silent(),
      allowPrivateTargets: true,
    });
    const answer = await handler(streamBatch(1), { getRemainingTimeInMillis: () => 15_000 });
    expect(answer).toMatchObject({ passes: 0, stopped: 'deadline' });
    expect(receiver.received.length).toBe(before);
  }, 60_000);

  it('fails on an error of ours (the table), logged and rethrown with its URLs cut', async () => {
    const logger = silent();
    const logged = vi.spyOn(logger, 'error');
    const handler = createAlertsHandler(
      { ...env, TABLE_NAME: 'no-such-table' },
      { clients: clients(), logger, allowPrivateTargets: true },
    );
    const err = await handler(streamBatch(1), minute).catch((e: unknown) => e);
    expect((err as Error).name).toBe('AlertDrainError');
    expect((err as Error).message).toMatch(/ResourceNotFoundException/);
    expect(logged).toHaveBeenCalledWith(
      'alerts: the drain failed',
      expect.objectContaining({
        trigger: 'stream',
        error: expect.objectContaining({ name: 'ResourceNotFoundException' }),
      }),
    );
  }, 60_000);

  it('refuses an environment without ALERT_KMS_KEY_ID, naming it', () => {
    const { ALERT_KMS_KEY_ID: _, ...without } = env;
    expect(() => createAlertsHandler(without)).toThrow(ConfigError);
    expect(() => createAlertsHandler(without)).toThrow(/ALERT_KMS_KEY_ID/);
    expect(() => createAlertsHandler({ ...env, BOARD_ORIGIN: 'https://board.example.com/x' })).toThrow(
      /BOARD_ORIGIN/,
    );
    expect(() => parseConfig({ ...env, ALERT_KMS_KEY_ID: 'my key' })).toThrow(/ALERT_KMS_KEY_ID/);
    // an origin as the stack sets it (the API's URL, with its slash) reads as the origin alone
    expect(
      parseConfig({ ...env, BOARD_ORIGIN: 'https://abc.execute-api.us-east-1.amazonaws.com/' }),
    ).toMatchObject({
      BOARD_ORIGIN: 'https://abc.execute-api.us-east-1.amazonaws.com',
      ALERT_KMS_KEY_ID: KEY,
    });
  });

  it('cuts every URL in a logged error to its host, credentials dropped (a Slack webhook URL is a secret)', () => {
    expect(
      maskUrls(
        'POST https://hooks.slack.com/services/T000/B000/XXXXSECRET failed; see http://user:pw@10.0.0.1:8080/a?b=c.',
      ),
    ).toBe('POST https://hooks.slack.com/… failed; see http://10.0.0.1:8080/…');
  });
});

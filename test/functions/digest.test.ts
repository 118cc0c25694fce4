/**
 * The digest function (functions/digest.ts), as EventBridge invokes it every minute, over DynamoDB Local
 * and s3rver with KMS answered by msw (real Ed25519, test/support/kms.ts): it writes the due sessions'
 * digests signed by the KMS key, and when KMS refuses it writes none, logs one line per session and
 * ends without failing (the sessions stay due). Its state store answers only what its role allows.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from '@aws-lambda-powertools/logger';
import { setupServer } from 'msw/node';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createLambdaApp } from '../../functions/app.js';
import { parseConfig } from '../../functions/config.js';
import type { createDigestHandler as CreateDigestHandler } from '../../functions/digest.js';
import { type DynamoLocal, startDynamoLocal } from '../../harness/dynamodb-local.js';
import { type LocalS3, startS3rver } from '../../harness/s3rver.js';
import { keyIdOf, signingInput } from '../../lib/audit/chain.js';
import { KeysAnswer } from '../../lib/audit/schemas.js';
import { verifySignature } from '../../lib/audit/signature.js';
import { awsWorld, type DigestWorld } from '../support/digest-world.js';
import { fakeKms, kmsTestClient } from '../support/kms.js';

const ARN = 'arn:aws:kms:us-east-1:111122223333:key/1111aaaa-2222-3333-4444-555566667777';
const msw = setupServer();
const root = mkdtempSync(join(tmpdir(), 'hansard-digest-fn-'));
let dynamo: DynamoLocal;
let s3: LocalS3;
let createDigestHandler: typeof CreateDigestHandler;
const worlds: DigestWorld[] = [];

beforeAll(async () => {
  [dynamo, s3] = await Promise.all([startDynamoLocal(), startS3rver()]);
  msw.listen({ onUnhandledRequest: 'bypass' });
  // The module builds its own handler from process.env when loaded: give it one it accepts.
  Object.assign(process.env, {
    BUCKET_NAME: 'hansard-module-load',
    TABLE_NAME: 'hansard-module-load',
    AWS_REGION: 'us-east-1',
    SIGNING_KEY_ARN: ARN,
  });
  ({ createDigestHandler } = await import('../../functions/digest.js'));
}, 120_000);
afterEach(() => msw.resetHandlers());
afterAll(async () => {
  msw.close();
  for (const w of worlds) await w.close();
  await dynamo?.stop();
  await s3?.close();
  rmSync(root, { recursive: true, force: true });
});

/** A logger that keeps what the function logs. */
function keptLogger() {
  const lines: { level: string; message: string; extra?: unknown }[] = [];
  const logger = {
    info: (message: string, extra?: unknown) => lines.push({ level: 'info', message, extra }),
    error: (message: string, extra?: unknown) => lines.push({ level: 'error', message, extra }),
  } as unknown as Logger;
  return { logger, lines };
}

async function setUp() {
  const world = await awsWorld(root, dynamo, s3);
  worlds.push(world);
  const seg = world.segment({ open: true });
  await world.ingest(seg, 0, 3);
  const { logger, lines } = keptLogger();
  const handler = createDigestHandler(
    {
      BUCKET_NAME: world.aws!.bucket,
      TABLE_NAME: world.aws!.table,
      AWS_REGION: 'us-east-1',
      SIGNING_KEY_ARN: ARN,
    },
    {
      clients: { s3: s3.client(), dynamodb: dynamo.client, kms: kmsTestClient() },
      logger,
      now: world.now,
    },
  );
  return { world, seg, handler, lines };
}

describe('functions/digest.ts', () => {
  it('writes the due digests signed by the KMS key and logs the counts', async () => {
    const kms = fakeKms(msw, [ARN]);
    const { world, seg, handler, lines } = await setUp();
    expect(await handler()).toEqual({ due: 1, written: 1, skipped: 0, failed: 0 });
    const [d] = await world.stored(seg.sid);
    const pem = kms.keys.get(ARN)!.publicKey.export({ type: 'spki', format: 'pem' }).toString();
    expect(verifySignature(pem, signingInput(d!), d!.signature)).toBe(true);
    expect(lines).toEqual([
      { level: 'info', message: 'digests', extra: { due: 1, written: 1, skipped: 0, failed: 0 } },
    ]);
    // nothing due now: the next run writes nothing
    expect(await handler()).toMatchObject({ due: 0, written: 0 });
  });

  it('KMS AccessDenied: no digest, one error line naming the session, the run ends normally', async () => {
    fakeKms(msw, [ARN], { denySign: true });
    const { world, seg, handler, lines } = await setUp();
    expect(await handler()).toEqual({ due: 1, written: 0, skipped: 0, failed: 1 });
    expect(await world.stores.digests.listDigests('acme', seg.sid)).toEqual([]);
    const errors = lines.filter((l) => l.level === 'error');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toContain(seg.sid);
    expect(errors[0]!.message).toContain('AccessDeniedException');
  });

  it('refuses to start without SIGNING_KEY_ARN, naming it', () => {
    expect(() =>
      createDigestHandler({ BUCKET_NAME: 'hansard-b', TABLE_NAME: 'hansard-t', AWS_REGION: 'us-east-1' }),
    ).toThrow(/SIGNING_KEY_ARN/);
  });

  it('the API function serves GET /v1/keys from the KMS key (retired keys from RETIRED_SIGNING_KEYS); the replay URL does not', async () => {
    const OLD = 'arn:aws:kms:us-east-1:111122223333:key/0000aaaa-2222-3333-4444-555566667777';
    const kms = fakeKms(msw, [OLD, ARN]);
    const config = parseConfig({
      BUCKET_NAME: 'hansard-b',
      TABLE_NAME: 'hansard-t',
      AWS_REGION: 'us-east-1',
      SIGNING_KEY_ARN: ARN,
      RETIRED_SIGNING_KEYS: JSON.stringify([{ key: OLD, retired_at: '2026-11-01T00:00:00.000Z' }]),
    });
    const clients = { s3: s3.client(), dynamodb: dynamo.client, kms: kmsTestClient() };
    const { logger } = keptLogger();
    const api = createLambdaApp({ config, clients, logger, serves: 'all' });
    const res = await api.request('/v1/keys');
    expect(res.status).toBe(200);
    const keys = KeysAnswer.parse(await res.json()).keys;
    const idOf = (arn: string) =>
      keyIdOf(kms.keys.get(arn)!.publicKey.export({ type: 'spki', format: 'pem' }).toString());
    expect(keys.map((k) => [k.key_id, k.retired_at])).toEqual([
      [idOf(OLD), '2026-11-01T00:00:00.000Z'],
      [idOf(ARN), null],
    ]);
    const replay = createLambdaApp({ config, clients, logger, serves: 'replay' });
    expect((await replay.request('/v1/keys')).status).toBe(404);
  });
});

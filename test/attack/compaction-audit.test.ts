/**
 * Attack 4 on compaction (issue 17.2): an audit bundle exported (GET …/export, a local keyring) and a
 * verify (GET …/verify) while the compactor compacts the session under them: the compactor's whole pass
 * (`awsCompactor`, s3rver + DynamoDB Local) runs from a middleware of the API's S3 client at the API's
 * first GET of a chunk object of the session's second writer, i.e. after the bundle or the verify has
 * listed both writers and begun reading. The bundle must verify offline (verifyBundle: every chunk at
 * its offset with its SHA-256) and hold the bytes a bundle exported with no compaction holds.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSession } from '../../bench/gen.js';
import { type S3ReplayWorld, startS3ReplayWorld, storeSession } from '../../harness/s3-replay-world.js';
import { LocalKeyring } from '../../lib/audit/local-keyring.js';
import { verifyBundle } from '../../lib/audit/verify-bundle.js';
import { createAwsApp } from '../../lib/deploy/aws.js';
import { awsCompactor } from '../../lib/deploy/aws-compaction.js';
import { writerPrefix } from '../../lib/store/s3/segment-objects.js';
import { worldDynamo } from '../support/aws-world.js';

const TENANT = 'acme';

let world: S3ReplayWorld;
let root: string;
let ddb: DynamoDBClient;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'hansard-attack4-audit-'));
  world = await startS3ReplayWorld();
  ddb = worldDynamo(world);
}, 120_000);

afterAll(async () => {
  ddb?.destroy();
  await world?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

const auth = () => ({ authorization: `Bearer ${world.token}` });

/** An app whose S3 client runs the compactor's pass once, at its first GET of a chunk object under `prefix`. */
function appCompactingAt(prefix: string, sid: string, keyring?: LocalKeyring) {
  const client = world.s3.client();
  let ran: Promise<unknown> | null = null;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const key = (args.input as { Key?: string }).Key ?? '';
      if (
        context.commandName === 'GetObjectCommand' &&
        !ran &&
        /^\d{15}\.jsonl$/.test(key.slice(prefix.length)) &&
        key.startsWith(prefix)
      ) {
        ran = awsCompactor({
          clients: { s3: world.s3.client(), dynamodb: ddb },
          bucket: world.bucket,
          table: world.env.TABLE_NAME!,
        })(TENANT, sid);
        const out = (await ran) as { outcome: string }[];
        expect(out.map((r) => r.outcome)).toEqual(['compacted', 'compacted']);
      }
      return next(args);
    },
    { step: 'initialize', name: 'compactMidRead' },
  );
  const app = createAwsApp({
    clients: { s3: client, dynamodb: ddb },
    bucket: world.bucket,
    table: world.env.TABLE_NAME!,
    rateLimitPerMinute: 0,
    ...(keyring ? { signer: keyring } : {}),
    log: (m, err) => console.error(m, err),
  });
  return { app, ran: () => ran !== null };
}

describe('export and verify while the session is compacted under them', () => {
  it('held: the bundle verifies offline with every chunk, and verify is ok', async () => {
    const { keyring } = LocalKeyring.open(mkdtempSync(join(root, 'keys-')));
    const { sid, chunks, segments } = await storeSession(world, await generateSession(root, 400, 2), 1024);
    const second = writerPrefix(segments[1]!);
    const plain = createAwsApp({
      clients: { s3: world.s3.client(), dynamodb: ddb },
      bucket: world.bucket,
      table: world.env.TABLE_NAME!,
      rateLimitPerMinute: 0,
      signer: keyring,
      log: () => {},
    });
    const raw = async (app: typeof plain) => {
      const res = await app.request(`/v1/sessions/${sid}/replay?raw=1`, { headers: auth() });
      expect(res.status).toBe(200);
      return Buffer.from(await res.arrayBuffer());
    };
    const before = await raw(plain);

    const { app, ran } = appCompactingAt(second, sid, keyring);
    const res = await app.request(`/v1/sessions/${sid}/export`, { headers: auth() });
    const body = Buffer.from(await res.arrayBuffer());
    expect(res.status, body.subarray(0, 300).toString()).toBe(200);
    expect(ran()).toBe(true);
    const file = join(root, 'during.tar');
    writeFileSync(file, body);
    const report = await verifyBundle(file, { trustedKeys: keyring.list() });
    expect(report.findings.filter((f) => f.severity === 'error')).toEqual([]);
    expect(report.ok).toBe(true);
    expect(report.chunks).toBe(chunks);
    expect(report.bytes).toBe(segments.reduce((n, x) => n + x.end, 0));
    expect((await raw(plain)).equals(before)).toBe(true);
  }, 300_000);

  it('held: a verify during the compaction is ok', async () => {
    const { sid, segments } = await storeSession(world, await generateSession(root, 300, 2), 1024);
    const { app, ran } = appCompactingAt(writerPrefix(segments[1]!), sid);
    const res = await app.request(`/v1/sessions/${sid}/verify`, { headers: auth() });
    const out = (await res.json()) as { ok: boolean };
    expect(res.status, JSON.stringify(out).slice(0, 400)).toBe(200);
    expect(ran()).toBe(true);
    expect(out.ok).toBe(true);
  }, 300_000);
});

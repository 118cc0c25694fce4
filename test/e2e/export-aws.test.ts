/**
 * The export path on the AWS adapters (issue 15.3, 15.4): the app over S3SegmentStore and S3DigestStore
 * on s3rver and DynamoStateStore on DynamoDB Local (test/support), on loopback, signing with a
 * LocalKeyring (the KMS signer has its own suite, test/audit/kms-signer.test.ts). The multi-writer
 * fixture uploaded through the CLI, exported through the CLI, verified offline with the key from
 * `GET /v1/keys`, its segments replayed byte-identical to the server's replay; a tampered copy fails.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../harness/dynamodb-local.js';
import { type LocalS3, startS3rver } from '../../harness/s3rver.js';
import { LocalKeyring } from '../../lib/audit/local-keyring.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import type { Stores } from '../../lib/store/index.js';
import { S3DigestStore } from '../../lib/store/s3/digest-store.js';
import { S3SegmentStore } from '../../lib/store/s3/segment-store.js';
import { runHansard } from '../support/cli.js';
import { request } from '../support/http.js';
import { useServer } from '../support/server.js';

const SID = 's_01M8MB9XXBAS3J6TGHM02TT9G4';
const FIXTURE = `test/fixtures/multi-writer/${SID}`;

let s3: LocalS3;
let dynamo: DynamoLocal;
let stores: Stores;
const tmp = mkdtempSync(join(tmpdir(), 'hansard-export-aws-'));
const { keyring } = LocalKeyring.open(join(tmp, 'keys'));

// Registered before useServer's own beforeAll, so the emulators run when the server opens its stores.
beforeAll(async () => {
  [s3, dynamo] = await Promise.all([startS3rver(), startDynamoLocal()]);
  const bucket = await s3.createBucket();
  const client = s3.client();
  stores = {
    segments: new S3SegmentStore({ client, bucket }),
    state: new DynamoStateStore({ tableName: await dynamo.freshTable(), client: dynamo.client }),
    digests: new S3DigestStore({ client, bucket }),
  };
}, 90_000);

const srv = useServer({
  stores: () => stores,
  tokens: { reader: ['read'] },
  deps: { signer: keyring },
});

afterAll(async () => {
  await s3?.close();
  await dynamo?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const cli = (args: string[], token?: string) =>
  runHansard(args, {
    cwd: process.cwd(),
    env: { HANSARD_URL: srv.url, ...(token ? { HANSARD_TOKEN: token } : {}) },
  });

describe('export on S3 + DynamoDB', { timeout: 60_000 }, () => {
  it('uploads, exports, verifies offline with the served key, and replays the same bytes', async () => {
    cpSync(FIXTURE, join(tmp, SID), { recursive: true });
    const up = await cli(['upload', join(tmp, SID)], srv.tenant.admin);
    expect(up.code, up.err).toBe(0);
    const file = join(tmp, 'aws.tar.gz');
    const ex = await cli(['export', SID, '--out', file, '--json'], srv.tokens.reader);
    expect(ex.code, ex.err).toBe(0);
    const result = JSON.parse(ex.out) as { head_seq: number; bytes: number };
    expect(result.bytes).toBe(readFileSync(file).length);
    // The digests are S3 objects under the session's prefix.
    expect(await stores.digests.listDigests('local', SID)).toContain(result.head_seq);

    const keys = join(tmp, 'keys.json');
    writeFileSync(keys, (await request(srv, 'GET', '/v1/keys')).text);
    const v = await cli(['verify', '--digests', file, '--public-key', keys]);
    expect(v.code, v.out).toBe(0);
    expect(v.out).toMatch(/^verified: \d+ digests?, 3 chunks/m);

    // Extracted: the segments replay as the server replays the session.
    const dir = mkdtempSync(join(tmp, 'x-'));
    const { execFileSync } = await import('node:child_process');
    execFileSync('tar', ['-xzf', file, '-C', dir]);
    const local = await cli(['replay', join(dir, SID, 'segments'), '--raw']);
    const server = await request(srv, 'GET', `/v1/sessions/${SID}/replay?raw=1`, {
      token: srv.tokens.reader,
    });
    expect(local.code).toBe(0);
    expect(Buffer.from(local.out).equals(server.bytes)).toBe(true);

    // A changed byte in the extracted copy is found.
    const seg = join(dir, SID, 'segments', 'w_01M8MBA0V84D2TG7VSTPW3CTDY.jsonl');
    const bytes = readFileSync(seg);
    bytes[bytes.indexOf('"seq":10,') + 6] = '2'.charCodeAt(0);
    writeFileSync(seg, bytes);
    const bad = await cli(['verify', '--digests', join(dir, SID), '--public-key', keys]);
    expect(bad.code).toBe(1);
    expect(bad.out).toMatch(/chunk_modified\s+w_01M8MBA0V84D2TG7VSTPW3CTDY/);
  });
});

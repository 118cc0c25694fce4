/**
 * The S3 side of large replays (issue 17.2, lib/store/s3/replay-archive.ts) against s3rver with the real
 * SDK: a stored copy is found with a presigned URL that GETs its bytes; a missing one is null; a body that
 * fails half way (past the first 8 MiB part: a multipart upload) leaves no object and no open upload; a
 * copy already there is not replaced; a variant's build marker starts one build at a time (again once
 * the build ended or went stale), records how it ended, never lets an old build overwrite a newer one, and
 * is read only as its own job's.
 */
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalS3, startS3rver } from '../../../harness/s3rver.js';
import { REPLAY_PREFIX, S3ReplayArchive, S3ReplayBuilds } from '../../../lib/store/s3/replay-archive.js';

let s3: LocalS3;
let bucket: string;
beforeAll(async () => {
  s3 = await startS3rver();
  bucket = await s3.createBucket();
}, 120_000);
afterAll(() => s3?.close());

async function* pieces(n: number, size: number, failAt = -1): AsyncGenerator<Uint8Array> {
  for (let i = 0; i < n; i++) {
    if (i === failAt) throw new Error('the merge failed');
    yield Buffer.alloc(size, 0x61 + (i % 26));
  }
}

const job = (sid = 's_01J00000000000000000000000') => ({
  tenant: 'acme',
  sid,
  format: 'ndjson' as const,
  raw: false,
  caller: { id: 'tok_1', scopes: ['read'], session: null },
});

describe('S3ReplayArchive', () => {
  it('stores a body of several parts and hands out a URL that GETs it', async () => {
    const archive = new S3ReplayArchive({ client: s3.client(), bucket });
    expect(await archive.find('acme/s/one.ndjson', 60)).toBeNull();
    // 3 MiB pieces: 18 MiB in all, three 8 MiB parts at most
    await archive.store('acme/s/one.ndjson', pieces(6, 3 * 2 ** 20), 'application/x-ndjson');
    const found = await archive.find('acme/s/one.ndjson', 60);
    expect(found?.bytes).toBe(18 * 2 ** 20);
    const res = await fetch(found!.url);
    expect(res.status).toBe(200);
    const got = Buffer.from(await res.arrayBuffer());
    expect(got.length).toBe(18 * 2 ** 20);
    expect(got[0]).toBe(0x61);
    expect(got.at(-1)).toBe(0x66);
  }, 60_000);

  it('leaves no object, and aborts its upload, when the body fails past its first part', async () => {
    const client = s3.client();
    const sent: string[] = [];
    client.middlewareStack.add(
      (next, context) => (args) => {
        sent.push(context.commandName ?? '?');
        return next(args);
      },
      { step: 'initialize', name: 'recordCommands' },
    );
    const archive = new S3ReplayArchive({ client, bucket });
    await expect(
      archive.store('acme/s/broken.ndjson', pieces(6, 3 * 2 ** 20, 4), 'application/x-ndjson'),
    ).rejects.toThrow('the merge failed');
    expect(await archive.find('acme/s/broken.ndjson', 60)).toBeNull();
    // (s3rver lists no multipart uploads: the abort is what S3 needs to drop the parts)
    expect(sent).toContain('CreateMultipartUploadCommand');
    expect(sent).toContain('AbortMultipartUploadCommand');
    expect(sent).not.toContain('CompleteMultipartUploadCommand');
  }, 60_000);

  it('keeps a stored copy: a second store of the same key resolves and changes nothing', async () => {
    const archive = new S3ReplayArchive({ client: s3.client(), bucket });
    await archive.store('acme/s/small.ndjson', pieces(1, 10), 'application/x-ndjson');
    await archive.store('acme/s/small.ndjson', pieces(2, 10), 'application/x-ndjson');
    expect((await archive.find('acme/s/small.ndjson', 60))?.bytes).toBe(10);
    // and a multipart one (its complete is conditional too)
    await archive.store('acme/s/big.ndjson', pieces(3, 4 * 2 ** 20), 'application/x-ndjson');
    await archive.store('acme/s/big.ndjson', pieces(4, 4 * 2 ** 20), 'application/x-ndjson');
    expect((await archive.find('acme/s/big.ndjson', 60))?.bytes).toBe(12 * 2 ** 20);
  }, 60_000);
});

describe('S3ReplayBuilds', () => {
  it('starts a build once, not again while it is fresh, and again once stale or ended', async () => {
    let now = new Date('2026-12-01T10:00:00Z');
    const builds = new S3ReplayBuilds({
      client: s3.client(),
      bucket,
      staleAfterMs: 15 * 60_000,
      now: () => now,
    });
    const j = job('s_01J00000000000000000000001');
    const variant = `acme/${j.sid}/ndjson`;
    const marker = S3ReplayBuilds.markerKey(variant);
    expect(marker).toBe(`${REPLAY_PREFIX}${variant}.building`);
    expect(await builds.status(variant)).toBeNull();
    await builds.start(j);
    expect(await builds.status(variant)).toEqual({
      job: j,
      state: 'building',
      started_at: '2026-12-01T10:00:00.000Z',
    });
    const etag = async () =>
      (await s3.client().send(new HeadObjectCommand({ Bucket: bucket, Key: marker }))).ETag;
    const before = await etag();
    now = new Date('2026-12-01T10:05:00Z');
    await builds.start(j);
    expect(await etag()).toBe(before);
    // ended: the next start begins another build at once
    await builds.finish(j, '2026-12-01T10:00:00.000Z', { key: 'acme/x/ndjson-1.ndjson' });
    expect(await builds.status(variant)).toMatchObject({ state: 'done', key: 'acme/x/ndjson-1.ndjson' });
    await builds.start(j);
    expect(await builds.status(variant)).toMatchObject({ state: 'building', started_at: now.toISOString() });
    // a build that never ends is taken over after staleAfterMs
    now = new Date(now.getTime() + 16 * 60_000);
    await builds.start(j);
    expect((await builds.status(variant))?.started_at).toBe(now.toISOString());
  });

  it('records a failure, and leaves alone a marker a newer build took over', async () => {
    let now = new Date('2026-12-01T11:00:00Z');
    const builds = new S3ReplayBuilds({ client: s3.client(), bucket, staleAfterMs: 60_000, now: () => now });
    const j = job('s_01J00000000000000000000002');
    const variant = `acme/${j.sid}/ndjson`;
    await builds.start(j);
    const first = (await builds.status(variant))!.started_at;
    now = new Date('2026-12-01T11:02:00Z');
    await builds.start(j); // stale: taken over
    await builds.finish(j, first, { key: 'old' }); // the first build ends late: ignored
    expect(await builds.status(variant)).toMatchObject({ state: 'building', started_at: now.toISOString() });
    const error = { code: 'data_loss', message: 'bytes are gone', details: { w: 'w_1' } };
    await builds.finish(j, now.toISOString(), { error });
    expect(await builds.status(variant)).toMatchObject({ state: 'failed', error });
  });

  it('reads no marker from a key that is not one, one that is gone, or one that names another job', async () => {
    const builds = new S3ReplayBuilds({ client: s3.client(), bucket, staleAfterMs: 1000 });
    expect(await builds.read('tenants/acme/sessions/x.jsonl')).toBeNull();
    expect(await builds.read(S3ReplayBuilds.markerKey('acme/s_never/ndjson'))).toBeNull();
    // a marker whose job is another variant's (a forged or misplaced one)
    const key = S3ReplayBuilds.markerKey('acme/s_01J00000000000000000000003/ndjson');
    const other = {
      job: job('s_01J00000000000000000000004'),
      started_at: '2026-12-01T00:00:00Z',
      state: 'building',
    };
    await s3
      .client()
      .send(
        new PutObjectCommand({ Bucket: bucket, Key: key, Body: JSON.stringify(other), IfNoneMatch: '*' }),
      );
    expect(await builds.read(key)).toBeNull();
  });
});

/**
 * Compaction of small chunk objects (issue 17.2), on s3rver and DynamoDB Local through the service's own
 * ingest (1 KB chunks, as hooks ship them): a session's replay and verify are byte-identical before and
 * after, reads GET ~1,100 objects per MiB before and a few after; a read is right while both a compacted
 * object and its chunk objects are listed, after some of those are deleted, and when its kept listing
 * names objects deleted under it; a compaction that stopped between its put and its deletes is finished
 * by the next pass; bytes that do not match the index are never compacted; ingest after compaction
 * appends, answers a retry of an old chunk 200 and other bytes at an old offset 409; an audit bundle
 * exported before and after verifies offline, every chunk at its offset with its SHA-256.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSession } from '../../../bench/gen.js';
import { type S3ReplayWorld, startS3ReplayWorld, storeSession } from '../../../harness/s3-replay-world.js';
import { LocalKeyring } from '../../../lib/audit/local-keyring.js';
import { verifyBundle } from '../../../lib/audit/verify-bundle.js';
import { createAwsApp } from '../../../lib/deploy/aws.js';
import { awsCompactor } from '../../../lib/deploy/aws-compaction.js';
import { newId } from '../../../lib/log/index.js';
import { compactWriter } from '../../../lib/service/ingest/compaction.js';
import { DynamoStateStore } from '../../../lib/store/dynamo/state-store.js';
import type { SegmentKey } from '../../../lib/store/index.js';
import { S3SegmentCompactor } from '../../../lib/store/s3/compaction.js';
import { writerPrefix } from '../../../lib/store/s3/segment-objects.js';
import { S3SegmentStore } from '../../../lib/store/s3/segment-store.js';
import { WORLD_CREDENTIALS, worldApp, worldDynamo } from '../../support/aws-world.js';
import { readAll } from '../../support/s3-bucket.js';

const CREDENTIALS = WORLD_CREDENTIALS;
const TENANT = 'acme';

let world: S3ReplayWorld;
let root: string;
let ddb: DynamoDBClient;
let s3: S3Client;
// biome-ignore lint/suspicious/noExplicitAny: the app's env type is not needed here
let app: Hono<any>;
let state: DynamoStateStore;

/** A client of s3rver counting the GETs and LISTs it sends. */
function countingClient() {
  const sent = { get: 0, list: 0, put: 0, delete: 0 };
  const client = new S3Client({
    endpoint: world.s3.endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: CREDENTIALS,
  });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const c = context.commandName;
      if (c === 'GetObjectCommand') sent.get++;
      if (c === 'ListObjectsV2Command') sent.list++;
      if (c === 'PutObjectCommand') sent.put++;
      if (c === 'DeleteObjectsCommand') sent.delete++;
      return next(args);
    },
    { step: 'initialize', name: 'countCommands' },
  );
  return { client, sent };
}

const auth = () => ({ authorization: `Bearer ${world.token}` });
const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

async function keysOf(key: SegmentKey): Promise<string[]> {
  const out: string[] = [];
  let token: string | undefined;
  do {
    const page = await s3.send(
      new ListObjectsV2Command({ Bucket: world.bucket, Prefix: writerPrefix(key), ContinuationToken: token }),
    );
    for (const o of page.Contents ?? []) out.push(o.Key!.slice(writerPrefix(key).length));
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return out;
}

async function replay(sid: string, query: string): Promise<Buffer> {
  const res = await app.request(`/v1/sessions/${sid}/replay${query}`, { headers: auth() });
  expect(res.status).toBe(200);
  return Buffer.from(await res.arrayBuffer());
}

async function post(sid: string, w: string, offset: number, body: Uint8Array) {
  const res = await app.request(`/v1/sessions/${sid}/writers/${w}/chunks?offset=${offset}`, {
    method: 'POST',
    headers: { ...auth(), 'content-type': 'application/x-ndjson' },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Every chunk of a writer (from its records) with its bytes read back from a fresh store. */
async function chunksOf(key: SegmentKey): Promise<{ offset: number; length: number; sha256: string }[]> {
  const out: { offset: number; length: number; sha256: string }[] = [];
  for (let from = 0; ; ) {
    const page = await state.listChunks(key.tenant, key.sid, key.w, from, 1000);
    if (page.length === 0) return out;
    out.push(...page);
    from = page.at(-1)!.offset + 1;
  }
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'hansard-compaction-'));
  world = await startS3ReplayWorld();
  s3 = world.s3.client();
  ddb = worldDynamo(world);
  state = new DynamoStateStore({ tableName: world.env.TABLE_NAME!, client: ddb });
  app = worldApp(world, { s3, dynamodb: ddb });
}, 120_000);

afterAll(async () => {
  ddb?.destroy();
  await world?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

describe('a session of 1 KB chunk objects, compacted', () => {
  let sid: string;
  let segments: { tenant: string; sid: string; w: string; end: number }[];
  const before: Record<string, Buffer> = {};

  beforeAll(async () => {
    // ~2,000 events over 2 writers, each ending with writer.end: ~600 KB in ~700 chunks of ~1 KB
    const dir = await generateSession(root, 2000, 2);
    ({ sid, segments } = await storeSession(world, dir, 1024));
    for (const q of ['?raw=1', '', '?format=text']) before[q] = await replay(sid, q);
  }, 600_000);

  it('reads the same bytes with a few GETs per MiB instead of one per chunk, and verifies', async () => {
    const bytes = segments.reduce((n, s) => n + s.end, 0);
    const mib = bytes / 2 ** 20;
    const readEach = async () => {
      const { client, sent } = countingClient();
      const store = new S3SegmentStore({ client, bucket: world.bucket, listingTtlMs: 0 });
      const got = [];
      for (const s of segments) got.push(await readAll(store.readSegment(s, s.end)));
      client.destroy();
      return { got, gets: sent.get };
    };
    const pre = await readEach();
    const objectsBefore = (await Promise.all(segments.map((s) => keysOf(s)))).flat().length;
    expect(pre.gets).toBe(objectsBefore);
    expect(pre.gets / mib).toBeGreaterThan(900);

    const { client, sent } = countingClient();
    const compact = awsCompactor({
      clients: { s3: client, dynamodb: ddb },
      bucket: world.bucket,
      table: world.env.TABLE_NAME!,
    });
    const result = await compact(TENANT, sid);
    expect(result.map((r) => r.outcome)).toEqual(['compacted', 'compacted']);
    // one run per writer (each is well under 64 MiB), every chunk object deleted
    for (const r of result) {
      expect(r.runs).toBe(1);
      expect(r.objects_after).toBe(1);
      expect(r.deleted).toBe(r.objects_before);
    }
    expect(sent.put).toBe(2);
    for (const s of segments) {
      expect(await keysOf(s)).toEqual([`000000000000000-${String(s.end).padStart(15, '0')}.jsonl`]);
    }

    const post = await readEach();
    expect(post.got).toEqual(pre.got);
    expect(post.gets / mib).toBeLessThanOrEqual(2 / mib + 4); // one GET per writer (in 8 MiB windows)
    console.log(
      `GETs per MiB: ${(pre.gets / mib).toFixed(0)} before, ${(post.gets / mib).toFixed(1)} after (${mib.toFixed(2)} MiB, ${objectsBefore} objects)`,
    );
    for (const q of Object.keys(before)) expect((await replay(sid, q)).equals(before[q]!)).toBe(true);
    const verify = await app.request(`/v1/sessions/${sid}/verify`, { headers: auth() });
    expect(verify.status).toBe(200);
    expect(((await verify.json()) as { ok: boolean }).ok).toBe(true);

    // a second pass finds nothing to do
    const again = await compact(TENANT, sid);
    expect(again.map((r) => r.outcome)).toEqual(['nothing_to_do', 'nothing_to_do']);
    client.destroy();
  }, 300_000);

  it('keeps ingest as it was: an old chunk again is 200, other bytes there 409, a late chunk appends', async () => {
    const s = segments[0]!;
    const chunks = await chunksOf(s);
    const second = chunks[1]!;
    const store = new S3SegmentStore({ client: s3, bucket: world.bucket });
    const bytes = await readAll(store.readSegment(s, second.offset + second.length, second.offset));
    expect(sha(bytes)).toBe(second.sha256);
    const retry = await post(sid, s.w, second.offset, bytes);
    expect(retry.status).toBe(200);
    expect(retry.body).toMatchObject({ length: second.offset + second.length });
    const other = Buffer.from(bytes);
    other[0] = other[0] === 0x20 ? 0x21 : 0x20;
    const conflict = await post(sid, s.w, second.offset, other);
    expect(conflict.status).toBe(409);
    expect((conflict.body.error as { details: unknown }).details).toEqual({ expected_offset: s.end });

    const line = `${JSON.stringify({ v: 3, sid, w: s.w, seq: 999_999, id: newId('e'), ts: '2030-01-01T00:00:00.000000Z', mono: 1, type: 'note', author: 'late', text: 'after compaction' })}\n`;
    const late = await post(sid, s.w, s.end, Buffer.from(line));
    expect(late.status).toBe(201);
    expect(await keysOf(s)).toEqual([
      `000000000000000-${String(s.end).padStart(15, '0')}.jsonl`,
      `${String(s.end).padStart(15, '0')}.jsonl`,
    ]);
    const raw = await replay(sid, '?raw=1');
    expect(raw.length).toBe(before['?raw=1']!.length + line.length);
    expect(raw.includes(Buffer.from(line))).toBe(true);
    // the late chunk's retry is 200 too, and its segment reads whole
    expect((await post(sid, s.w, s.end, Buffer.from(line))).status).toBe(200);
    const whole = await readAll(
      new S3SegmentStore({ client: s3, bucket: world.bucket }).readSegment(s, s.end + line.length),
    );
    expect(whole.subarray(s.end).toString()).toBe(line);
    // the next pass takes the late chunk into a new run with the (small) run before it, one object again
    const next = await awsCompactor({
      clients: { s3, dynamodb: ddb },
      bucket: world.bucket,
      table: world.env.TABLE_NAME!,
    })(TENANT, sid);
    expect(next.map((r) => [r.outcome, r.runs, r.deleted])).toEqual([
      ['compacted', 1, 2],
      ['nothing_to_do', 0, 0],
    ]);
    const end = s.end + line.length;
    expect(await keysOf(s)).toEqual([`000000000000000-${String(end).padStart(15, '0')}.jsonl`]);
    expect((await replay(sid, '?raw=1')).equals(raw)).toBe(true);
    expect((await post(sid, s.w, second.offset, bytes)).status).toBe(200);
  }, 120_000);
});

describe('reads while a compaction is under way (objects put by hand)', () => {
  const payload = (i: number) => Buffer.from(`${JSON.stringify({ i }).padEnd(1000, ' ')}\n`);
  let key: SegmentKey;
  let bytes: Buffer;
  let chunks: Buffer[];

  beforeAll(async () => {
    key = { tenant: TENANT, sid: newId('s'), w: newId('w') };
    const store = new S3SegmentStore({ client: s3, bucket: world.bucket });
    chunks = Array.from({ length: 40 }, (_, i) => payload(i));
    let offset = 0;
    for (const c of chunks) {
      await store.putChunk(key, offset, c);
      offset += c.length;
    }
    bytes = Buffer.concat(chunks);
  }, 120_000);

  it('reads the chunk objects while they are all there, and the run where they are gone', async () => {
    const compactor = new S3SegmentCompactor({ client: s3, bucket: world.bucket });
    // a run of chunks 10..29 written, none of its chunk objects deleted yet
    const start = chunks.slice(0, 10).reduce((n, c) => n + c.length, 0);
    const run = Buffer.concat(chunks.slice(10, 30));
    expect(await compactor.putCompacted(key, start, run, sha(run))).toBe('stored');
    // the same bytes again: a compaction that crashed after its put
    expect(await compactor.putCompacted(key, start, run, sha(run))).toBe('exists');

    const read = async () => {
      const { client, sent } = countingClient();
      const got = await readAll(
        new S3SegmentStore({ client, bucket: world.bucket, listingTtlMs: 0 }).readSegment(key, bytes.length),
      );
      client.destroy();
      return { got, gets: sent.get };
    };
    // a run beside all its chunk objects is not read in their place (they are what ingest acknowledged;
    // the compactor deletes them only once the run is stored and checked)
    const both = await read();
    expect(both.got.equals(bytes)).toBe(true);
    expect(both.gets).toBe(40);
    const { client, sent } = countingClient();
    const inner = await readAll(
      new S3SegmentStore({ client, bucket: world.bucket }).readSegment(key, start + 5000, start + 100),
    );
    expect(inner.equals(bytes.subarray(start + 100, start + 5000))).toBe(true);
    expect(sent.get).toBe(5);
    client.destroy();

    // some of its chunk objects deleted
    const objects = await compactor.listObjects(key, bytes.length);
    const held = objects.filter((o) => !o.compacted && o.offset >= start && o.offset < start + run.length);
    expect(held).toHaveLength(20);
    await compactor.deleteObjects(key, held.slice(0, 7));
    // the run where they are gone, one GET for its 20 chunks
    const some = await read();
    expect(some.got.equals(bytes)).toBe(true);
    expect(some.gets).toBe(10 + 1 + 10);
    // a range inside the run is one ranged GET of it
    const ranged = countingClient();
    const part = await readAll(
      new S3SegmentStore({ client: ranged.client, bucket: world.bucket }).readSegment(
        key,
        start + 5000,
        start + 100,
      ),
    );
    expect(part.equals(bytes.subarray(start + 100, start + 5000))).toBe(true);
    expect(ranged.sent.get).toBe(1);
    ranged.client.destroy();
  }, 120_000);

  it('lists again when objects of a kept listing were deleted under it, and reads on', async () => {
    const k = { tenant: TENANT, sid: newId('s'), w: newId('w') };
    const store = new S3SegmentStore({ client: s3, bucket: world.bucket });
    let offset = 0;
    for (const c of chunks) {
      await store.putChunk(k, offset, c);
      offset += c.length;
    }
    // the listing is kept for 15 s by this store
    expect((await readAll(store.readSegment(k, bytes.length))).equals(bytes)).toBe(true);
    const compactor = new S3SegmentCompactor({ client: s3, bucket: world.bucket });
    const objects = await compactor.listObjects(k, bytes.length);
    expect(await compactor.putCompacted(k, 0, bytes, sha(bytes))).toBe('stored');
    await compactor.deleteObjects(k, objects);
    // every listed object is gone: the read lists again and takes the run
    expect((await readAll(store.readSegment(k, bytes.length))).equals(bytes)).toBe(true);
    // and mid-way: a read started over the kept listing, the objects deleted after its first bytes
    const k2 = { tenant: TENANT, sid: newId('s'), w: newId('w') };
    offset = 0;
    for (const c of chunks) {
      await store.putChunk(k2, offset, c);
      offset += c.length;
    }
    const parts: Buffer[] = [];
    let deleted = false;
    for await (const p of store.readSegment(k2, bytes.length, 0, 64 * 1024)) {
      parts.push(Buffer.from(p));
      if (!deleted) {
        deleted = true;
        const listed = await compactor.listObjects(k2, bytes.length);
        await compactor.putCompacted(k2, 0, bytes, sha(bytes));
        await compactor.deleteObjects(k2, listed);
      }
    }
    expect(Buffer.concat(parts).equals(bytes)).toBe(true);
  }, 120_000);
});

describe('a slow reader that a pass overtakes run after run', () => {
  it('lists again at each vanished object and reads on, more times than a stuck read may', async () => {
    const key = { tenant: TENANT, sid: newId('s'), w: newId('w') };
    const chunks = Array.from({ length: 60 }, (_, i) =>
      Buffer.from(`${JSON.stringify({ i }).padEnd(999, ' ')}\n`),
    );
    const store = new S3SegmentStore({ client: s3, bucket: world.bucket });
    for (const [i, c] of chunks.entries()) await store.putChunk(key, i * 1000, c);
    const bytes = Buffer.concat(chunks);
    const compactor = new S3SegmentCompactor({ client: s3, bucket: world.bucket });
    // Before the reader's GET of chunk 10, 20, … 50: the run of the 10 chunks from it put, its chunk
    // objects deleted (the reader listed them): five vanishes, each after the read moved on.
    const done = new Set<number>();
    const { client, sent } = countingClient();
    // one compaction per listing of the reader, so that each vanish is met by a listing of its own
    let listedAt = 0;
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const k = (args.input as { Key?: string }).Key ?? '';
        const m = /\/(\d{15})\.jsonl$/.exec(k);
        const i = m ? Number(m[1]) / 1000 : -1;
        const due = i >= 10 && i % 10 === 0 && !done.has(i) && sent.list > listedAt;
        if (context.commandName === 'GetObjectCommand' && due) {
          done.add(i);
          listedAt = sent.list;
          const run = Buffer.concat(chunks.slice(i, i + 10));
          const held = (await compactor.listObjects(key, bytes.length)).filter(
            (o) => !o.compacted && o.offset >= i * 1000 && o.offset < (i + 10) * 1000,
          );
          await compactor.putCompacted(key, i * 1000, run, sha(run));
          await compactor.deleteObjects(key, held);
        }
        return next(args);
      },
      { step: 'initialize', name: 'compactAhead' },
    );
    const reader = new S3SegmentStore({ client, bucket: world.bucket });
    expect((await readAll(reader.readSegment(key, bytes.length))).equals(bytes)).toBe(true);
    // five vanishes, each after the read moved on, each met by a listing: more than READ_LISTINGS (4)
    expect(done.size).toBe(5);
    expect(sent.list).toBe(6);
    client.destroy();
  }, 120_000);
});

describe('compaction of an indexed writer', () => {
  /** A writer of 30 chunks of ~1 KB ingested through the app (writer.start first, writer.end last). */
  async function ingestWriter(): Promise<{ key: SegmentKey; end: number }> {
    const sid = newId('s');
    const w = newId('w');
    let seq = 0;
    const line = (type: string, extra: Record<string, unknown>) =>
      `${JSON.stringify({ v: 3, sid, w, seq: ++seq, id: type === 'writer.start' ? w : newId('e'), ts: `2030-01-01T00:00:${String(seq % 60).padStart(2, '0')}.000000Z`, mono: seq, type, ...extra })}\n`;
    let offset = 0;
    for (let i = 0; i < 30; i++) {
      const body =
        i === 0
          ? line('writer.start', { meta: {} })
          : i === 29
            ? line('writer.end', { reason: null })
            : line('note', { author: 'a', text: 'x'.repeat(900) });
      const r = await post(sid, w, offset, Buffer.from(body));
      expect(r.status).toBe(201);
      offset += Buffer.byteLength(body);
    }
    return { key: { tenant: TENANT, sid, w }, end: offset };
  }

  it('finishes a compaction that stopped between its put and its deletes', async () => {
    const { key, end } = await ingestWriter();
    const compactor = new S3SegmentCompactor({ client: s3, bucket: world.bucket });
    const whole = await readAll(
      new S3SegmentStore({ client: s3, bucket: world.bucket }).readSegment(key, end),
    );
    expect(await compactor.putCompacted(key, 0, whole, sha(whole))).toBe('stored');
    const r = await compactWriter({ state, store: compactor, now: () => new Date() }, key, end);
    expect(r).toMatchObject({
      outcome: 'compacted',
      runs: 0,
      deleted: 30,
      objects_before: 31,
      objects_after: 1,
    });
    expect(await keysOf(key)).toEqual([`000000000000000-${String(end).padStart(15, '0')}.jsonl`]);
    expect(
      (await readAll(new S3SegmentStore({ client: s3, bucket: world.bucket }).readSegment(key, end))).equals(
        whole,
      ),
    ).toBe(true);
  }, 120_000);

  it('refuses to compact bytes that do not match their chunk record, and deletes nothing', async () => {
    const { key, end } = await ingestWriter();
    const chunks = await chunksOf(key);
    const victim = chunks[12]!;
    const objectKey = `${writerPrefix(key)}${String(victim.offset).padStart(15, '0')}.jsonl`;
    const store = new S3SegmentStore({ client: s3, bucket: world.bucket, listingTtlMs: 0 });
    const stored = await readAll(store.readSegment(key, victim.offset + victim.length, victim.offset));
    const forged = Buffer.from(stored);
    forged[forged.length - 3] = forged[forged.length - 3] === 0x78 ? 0x79 : 0x78; // same length, other bytes
    // (s3rver lets a put without a condition through; on AWS the bucket policy denies it)
    await s3.send(new PutObjectCommand({ Bucket: world.bucket, Key: objectKey, Body: forged }));
    const keys = await keysOf(key);
    const compactor = new S3SegmentCompactor({ client: s3, bucket: world.bucket });
    const r = await compactWriter({ state, store: compactor, now: () => new Date() }, key, end);
    expect(r).toMatchObject({ outcome: 'mismatch', offset: victim.offset, runs: 0, deleted: 0 });
    expect(await keysOf(key)).toEqual(keys);

    // a leftover run whose bytes do not match is not trusted either: nothing it holds is deleted
    const whole = await readAll(store.readSegment(key, end));
    await s3.send(new PutObjectCommand({ Bucket: world.bucket, Key: objectKey, Body: stored }));
    expect(await compactor.putCompacted(key, 0, whole, sha(whole))).toBe('stored');
    const again = await compactWriter({ state, store: compactor, now: () => new Date() }, key, end);
    expect(again).toMatchObject({ outcome: 'mismatch', offset: victim.offset, deleted: 0 });
    expect(await keysOf(key)).toHaveLength(keys.length + 1);
  }, 120_000);

  it('leaves a writer that is still being written (no writer.end, a chunk within the hour)', async () => {
    const sid = newId('s');
    const w = newId('w');
    const start = `${JSON.stringify({ v: 3, sid, w, seq: 1, id: w, ts: '2030-01-01T00:00:00.000000Z', mono: 0, type: 'writer.start', meta: {} })}\n`;
    expect((await post(sid, w, 0, Buffer.from(start))).status).toBe(201);
    const note = `${JSON.stringify({ v: 3, sid, w, seq: 2, id: newId('e'), ts: '2030-01-01T00:00:01.000000Z', mono: 1, type: 'note', author: 'a', text: 'b' })}\n`;
    expect((await post(sid, w, Buffer.byteLength(start), Buffer.from(note))).status).toBe(201);
    const compact = awsCompactor({
      clients: { s3, dynamodb: ddb },
      bucket: world.bucket,
      table: world.env.TABLE_NAME!,
    });
    expect((await compact(TENANT, sid)).map((r) => r.outcome)).toEqual(['live']);
    // an hour later it is settled
    const later = awsCompactor({
      clients: { s3, dynamodb: ddb },
      bucket: world.bucket,
      table: world.env.TABLE_NAME!,
      now: () => new Date(Date.now() + 3_600_001),
    });
    expect((await later(TENANT, sid)).map((r) => r.outcome)).toEqual(['compacted']);
  }, 60_000);
});

describe('an audit bundle of a compacted session', () => {
  it('verifies before and after: every chunk at its offset with its SHA-256', async () => {
    const { keyring } = LocalKeyring.open(mkdtempSync(join(root, 'keys-')));
    const signing = createAwsApp({
      clients: { s3, dynamodb: ddb },
      bucket: world.bucket,
      table: world.env.TABLE_NAME!,
      rateLimitPerMinute: 0,
      signer: keyring,
      log: (m, err) => console.error(m, err),
    });
    const { sid, chunks, segments } = await storeSession(world, await generateSession(root, 400, 2), 1024);
    const exported = async (name: string) => {
      const res = await signing.request(`/v1/sessions/${sid}/export`, { headers: auth() });
      expect(res.status).toBe(200);
      const file = join(root, name);
      writeFileSync(file, Buffer.from(await res.arrayBuffer()));
      const report = await verifyBundle(file, { trustedKeys: keyring.list() });
      expect(report.findings.filter((f) => f.severity === 'error')).toEqual([]);
      expect(report.ok).toBe(true);
      // every chunk attested and checked against the segment bytes the bundle holds
      expect(report.chunks).toBe(chunks);
      expect(report.bytes).toBe(segments.reduce((n, x) => n + x.end, 0));
      return report;
    };
    await exported('before.tar');
    const result = await awsCompactor({
      clients: { s3, dynamodb: ddb },
      bucket: world.bucket,
      table: world.env.TABLE_NAME!,
    })(TENANT, sid);
    expect(result.map((r) => r.outcome)).toEqual(['compacted', 'compacted']);
    await exported('after.tar');
  }, 300_000);
});

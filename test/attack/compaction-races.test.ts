/**
 * Attack 4 on compaction of small chunk objects (issue 17.2, docs/adr/0009), on s3rver and DynamoDB
 * Local through the service's own ingest, replay and verify (the AWS app) and the compactor's own code
 * (`compactWriter` over `S3SegmentCompactor` and the DynamoDB state store; `createCompactHandler`):
 * ingest racing the compactor, two compactors at once, a pass crashing between its put and its deletes,
 * chunk records that disagree with the objects, a run object with other bytes under a run's name, and
 * an operator's request naming another tenant. Faults are injected in the compactor's S3 client
 * middleware at exact moments (before its PutObject, at its DeleteObjects).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import {
  DeleteObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import type { Hono } from 'hono';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { createCompactHandler as CreateCompactHandler } from '../../functions/compact.js';
import { type S3ReplayWorld, startS3ReplayWorld } from '../../harness/s3-replay-world.js';
import { newId } from '../../lib/log/index.js';
import { type CompactionDeps, compactWriter } from '../../lib/service/ingest/compaction.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import type { SegmentKey } from '../../lib/store/index.js';
import { S3SegmentCompactor } from '../../lib/store/s3/compaction.js';
import { writerPrefix } from '../../lib/store/s3/segment-objects.js';
import { S3SegmentStore } from '../../lib/store/s3/segment-store.js';
import { worldApp, worldDynamo } from '../support/aws-world.js';
import { readAll } from '../support/s3-bucket.js';

const TENANT = 'acme';

let world: S3ReplayWorld;
let ddb: DynamoDBClient;
let s3: S3Client;
// biome-ignore lint/suspicious/noExplicitAny: the app's env type is not needed here
let app: Hono<any>;
let state: DynamoStateStore;
let createCompactHandler: typeof CreateCompactHandler;

beforeAll(async () => {
  world = await startS3ReplayWorld();
  // The module builds its handler from process.env when loaded: give it one it accepts.
  Object.assign(process.env, world.env);
  ({ createCompactHandler } = await import('../../functions/compact.js'));
  s3 = world.s3.client();
  ddb = worldDynamo(world);
  state = new DynamoStateStore({ tableName: world.env.TABLE_NAME!, client: ddb });
  app = worldApp(world, { s3, dynamodb: ddb });
}, 120_000);

afterAll(async () => {
  ddb?.destroy();
  await world?.close();
});

const auth = () => ({ authorization: `Bearer ${world.token}` });
function eventLine(sid: string, w: string, seq: number): Buffer {
  const base = {
    v: 3,
    sid,
    w,
    seq,
    ts: `2030-01-01T00:00:${String(seq % 60).padStart(2, '0')}.000000Z`,
    mono: seq,
  };
  const ev =
    seq === 1
      ? {
          ...base,
          id: w,
          type: 'writer.start',
          writer_id: w,
          meta: { agent: 'bot', app: null, hansard_version: '0.1.0', host: 'attack4', pid: 1 },
          redacted: [],
        }
      : { ...base, id: newId('e'), type: 'note', author: 'a', text: `line ${seq} `.padEnd(160, 'x') };
  return Buffer.from(`${JSON.stringify(ev)}\n`);
}

async function post(sid: string, w: string, offset: number, body: Uint8Array) {
  const res = await app.request(`/v1/sessions/${sid}/writers/${w}/chunks?offset=${offset}`, {
    method: 'POST',
    headers: { ...auth(), 'content-type': 'application/x-ndjson' },
    body,
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A writer of `n` one-line chunks stored through ingest. */
async function ingestWriter(n: number, sid = newId('s')) {
  const w = newId('w');
  const chunks: Buffer[] = [];
  let offset = 0;
  for (let seq = 1; seq <= n; seq++) {
    const c = eventLine(sid, w, seq);
    const r = await post(sid, w, offset, c);
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    chunks.push(c);
    offset += c.length;
  }
  const key: SegmentKey = { tenant: TENANT, sid, w };
  return { sid, w, key, chunks, bytes: Buffer.concat(chunks) };
}

async function append(t: { sid: string; w: string; chunks: Buffer[]; bytes: Buffer }) {
  const c = eventLine(t.sid, t.w, t.chunks.length + 1);
  const r = await post(t.sid, t.w, t.bytes.length, c);
  expect(r.status, JSON.stringify(r.body)).toBe(201);
  t.chunks.push(c);
  t.bytes = Buffer.concat([t.bytes, c]);
}

async function replayRaw(sid: string): Promise<{ status: number; body: Buffer }> {
  const res = await app.request(`/v1/sessions/${sid}/replay?raw=1`, { headers: auth() });
  return { status: res.status, body: Buffer.from(await res.arrayBuffer()) };
}

async function verify(sid: string): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await app.request(`/v1/sessions/${sid}/verify`, { headers: auth() });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

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

const freshRead = (key: SegmentKey, end: number) =>
  readAll(new S3SegmentStore({ client: s3, bucket: world.bucket, listingTtlMs: 0 }).readSegment(key, end));

/** The compactor's deps over a client of its own (hooks at `PutObjectCommand` / `DeleteObjectsCommand`). */
function compactor(
  hooks: { beforePut?: () => Promise<void>; onDelete?: () => Promise<void> } = {},
  limits?: CompactionDeps['limits'],
  listPageSize?: number,
): CompactionDeps {
  const client = world.s3.client();
  client.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName === 'PutObjectCommand') await hooks.beforePut?.();
      if (context.commandName === 'DeleteObjectsCommand') await hooks.onDelete?.();
      return next(args);
    },
    { step: 'initialize', name: 'compactorHooks' },
  );
  return {
    state,
    store: new S3SegmentCompactor({
      client,
      bucket: world.bucket,
      ...(listPageSize ? { listPageSize } : {}),
    }),
    now: () => new Date(),
    ...(limits ? { limits } : {}),
  };
}

async function lengthOf(sid: string, w: string): Promise<number> {
  return (await state.getWriter(TENANT, sid, w))!.length;
}

describe('ingest racing the compactor', () => {
  it('held: a late chunk accepted between the run read and its put is kept, read, verified and compacted later', async () => {
    const t = await ingestWriter(12);
    const length = t.bytes.length;
    let raced = false;
    const deps = compactor({
      beforePut: async () => {
        if (raced) return;
        raced = true;
        await append(t); // the writer gets a chunk while its run is being put
      },
    });
    const r = await compactWriter(deps, t.key, length);
    expect(r).toMatchObject({ outcome: 'compacted', runs: 1, deleted: 12 });
    expect(await keysOf(t.key)).toEqual([
      `000000000000000-${String(length).padStart(15, '0')}.jsonl`,
      `${String(length).padStart(15, '0')}.jsonl`,
    ]);
    expect((await freshRead(t.key, t.bytes.length)).equals(t.bytes)).toBe(true);
    const replay = await replayRaw(t.sid);
    expect(replay.status).toBe(200);
    expect(replay.body.equals(t.bytes)).toBe(true);
    expect((await verify(t.sid)).body).toMatchObject({ ok: true });
    // the next pass takes the late chunk with the run
    const next = await compactWriter(compactor(), t.key, await lengthOf(t.sid, t.w));
    expect(next).toMatchObject({ outcome: 'compacted', runs: 1, deleted: 2 });
    expect((await replayRaw(t.sid)).body.equals(t.bytes)).toBe(true);
  }, 180_000);

  it('held: a late chunk while the deletes run; a compactor working from a stale length compacts only what it read', async () => {
    const t = await ingestWriter(10);
    const stale = t.bytes.length;
    await append(t);
    await append(t);
    let once = false;
    const deps = compactor({
      onDelete: async () => {
        if (once) return;
        once = true;
        await append(t);
      },
    });
    // the length a stale (eventually consistent) read of the writer gave: 10 chunks, not 12
    const r = await compactWriter(deps, t.key, stale);
    expect(r).toMatchObject({ outcome: 'compacted', runs: 1, deleted: 10 });
    expect((await freshRead(t.key, t.bytes.length)).equals(t.bytes)).toBe(true);
    expect((await replayRaw(t.sid)).body.equals(t.bytes)).toBe(true);
    expect((await verify(t.sid)).body).toMatchObject({ ok: true });
  }, 180_000);
});

describe('two compactors at once (an operator invoke beside an event)', () => {
  it('held: same writer, both passes interleaved at every put, several runs, one with a longer length', async () => {
    const t = await ingestWriter(40);
    const l1 = t.bytes.length;
    const limits = { maxRunBytes: 8 * 170 };
    // A waits before each put until B has made one step, and the other way round
    let turn: 'a' | 'b' = 'a';
    const wait = async (me: 'a' | 'b') => {
      for (let i = 0; i < 200 && turn !== me; i++) await new Promise((r) => setTimeout(r, 5));
      turn = me === 'a' ? 'b' : 'a';
    };
    await append(t);
    await append(t);
    const l2 = t.bytes.length;
    const a = compactor({ beforePut: () => wait('a'), onDelete: () => wait('a') }, limits, 3);
    const b = compactor({ beforePut: () => wait('b'), onDelete: () => wait('b') }, limits, 7);
    const outcomes = await Promise.allSettled([compactWriter(a, t.key, l1), compactWriter(b, t.key, l2)]);
    // either may fail (an object it read deleted by the other): nothing may be lost either way
    for (const o of outcomes) if (o.status === 'fulfilled') expect(o.value.outcome).not.toBe('layout');
    expect((await freshRead(t.key, l2)).equals(t.bytes)).toBe(true);
    expect((await replayRaw(t.sid)).body.equals(t.bytes)).toBe(true);
    expect((await verify(t.sid)).body).toMatchObject({ ok: true });
    // and a third pass leaves a clean layout: no leftovers, reads still whole
    const c = await compactWriter(compactor({}, limits), t.key, l2);
    expect(['compacted', 'nothing_to_do']).toContain(c.outcome);
    const again = await compactWriter(compactor({}, limits), t.key, l2);
    expect(again.outcome).toBe('nothing_to_do');
    expect(again.objects_before).toBe(again.objects_after);
    expect((await freshRead(t.key, l2)).equals(t.bytes)).toBe(true);
  }, 240_000);

  it('held: five passes at once on one writer (no turns): bytes intact, a later pass cleans up', async () => {
    const t = await ingestWriter(30);
    const limits = { maxRunBytes: 5 * 170 };
    const outcomes = await Promise.allSettled(
      [1, 2, 3, 4, 5].map((p) => compactWriter(compactor({}, limits, p), t.key, t.bytes.length)),
    );
    for (const o of outcomes) if (o.status === 'fulfilled') expect(o.value.outcome).not.toBe('layout');
    expect((await freshRead(t.key, t.bytes.length)).equals(t.bytes)).toBe(true);
    await compactWriter(compactor({}, limits), t.key, t.bytes.length);
    expect((await compactWriter(compactor({}, limits), t.key, t.bytes.length)).outcome).toBe('nothing_to_do');
    expect((await replayRaw(t.sid)).body.equals(t.bytes)).toBe(true);
    expect((await verify(t.sid)).body).toMatchObject({ ok: true });
  }, 240_000);
});

describe('a pass that crashes between its put and its deletes', () => {
  it('held: crash at the deletes, a read, a late chunk, then a pass with another run limit', async () => {
    const t = await ingestWriter(20);
    const crash = compactor({
      onDelete: async () => {
        throw new Error('the Lambda timed out (injected)');
      },
    });
    await expect(compactWriter(crash, t.key, t.bytes.length)).rejects.toThrow(/injected/);
    expect(await keysOf(t.key)).toHaveLength(21);
    expect((await replayRaw(t.sid)).body.equals(t.bytes)).toBe(true);
    await append(t);
    expect((await verify(t.sid)).body).toMatchObject({ ok: true });
    const r = await compactWriter(compactor({}, { maxRunBytes: 6 * 170 }), t.key, t.bytes.length);
    expect(r.outcome).toBe('compacted');
    expect((await freshRead(t.key, t.bytes.length)).equals(t.bytes)).toBe(true);
    const last = await compactWriter(compactor(), t.key, t.bytes.length);
    expect(['compacted', 'nothing_to_do']).toContain(last.outcome);
    expect(await keysOf(t.key)).toEqual([
      `000000000000000-${String(t.bytes.length).padStart(15, '0')}.jsonl`,
    ]);
    expect((await replayRaw(t.sid)).body.equals(t.bytes)).toBe(true);
    expect((await verify(t.sid)).body).toMatchObject({ ok: true });
  }, 240_000);
});

describe('chunk records that disagree with the objects', () => {
  it('held: an unacknowledged object past the indexed length (a failed request) is never compacted nor deleted', async () => {
    const t = await ingestWriter(8);
    const length = t.bytes.length;
    const name = `${writerPrefix(t.key)}${String(length).padStart(15, '0')}.jsonl`;
    const unacked = eventLine(t.sid, t.w, 99);
    await s3.send(new PutObjectCommand({ Bucket: world.bucket, Key: name, Body: unacked }));
    const r = await compactWriter(compactor(), t.key, length);
    expect(r).toMatchObject({ outcome: 'compacted', runs: 1, deleted: 8 });
    expect(await keysOf(t.key)).toEqual([
      `000000000000000-${String(length).padStart(15, '0')}.jsonl`,
      `${String(length).padStart(15, '0')}.jsonl`,
    ]);
    expect((await replayRaw(t.sid)).body.equals(t.bytes)).toBe(true);
    // its retry (the same bytes) is accepted at last, and reads after the run
    expect((await post(t.sid, t.w, length, unacked)).status).toBe(201);
    expect((await freshRead(t.key, length + unacked.length)).equals(Buffer.concat([t.bytes, unacked]))).toBe(
      true,
    );
  }, 120_000);

  it('held: a chunk object missing is a layout fault: nothing written, nothing deleted', async () => {
    const t = await ingestWriter(8);
    const third = t.chunks.slice(0, 3).reduce((n, c) => n + c.length, 0);
    const gone = `${String(third).padStart(15, '0')}.jsonl`;
    await s3.send(new DeleteObjectCommand({ Bucket: world.bucket, Key: `${writerPrefix(t.key)}${gone}` }));
    const before = await keysOf(t.key);
    expect(before).toHaveLength(7);
    expect(before).not.toContain(gone);
    const r = await compactWriter(compactor(), t.key, t.bytes.length);
    expect(['layout', 'mismatch']).toContain(r.outcome);
    expect(await keysOf(t.key)).toEqual(before);
  }, 120_000);

  it('held: a run object with other bytes (right size) next to its chunk objects: the compactor deletes nothing', async () => {
    const t = await ingestWriter(10);
    const forged = Buffer.from(t.bytes);
    forged.write('FORGED', 400);
    const name = `${writerPrefix(t.key)}000000000000000-${String(t.bytes.length).padStart(15, '0')}.jsonl`;
    await s3.send(new PutObjectCommand({ Bucket: world.bucket, Key: name, Body: forged }));
    const r = await compactWriter(compactor(), t.key, t.bytes.length);
    expect(r.outcome).toBe('mismatch');
    expect(await keysOf(t.key)).toHaveLength(11);
    // reads take the intact chunk objects, not the run beside them (preferChunks): verify finds nothing
    // wrong with the acknowledged bytes (before that fix it read the forged run and reported the chunk)
    const v = await verify(t.sid);
    expect(v.body.ok).toBe(true);
  }, 120_000);

  // FAULT: the read path trusts a run's name: a `{start}-{end}.jsonl` object of the right size is read
  // in place of the chunk objects (the fewest-object tiling) without any check against the chunk
  // records, even while every chunk object is still there. An object with other bytes under a run's name
  // (written by anything that can put a `*-*.jsonl` key: the compactor role, or a put not through the
  // compactor) makes replay answer 200 with bytes that are not the acknowledged ones; only verify
  // notices. The compactor checks runs it writes, but no reader checks runs it reads.
  // Repro: put tenants/acme/sessions/{sid}/{w}/000000000000000-{len:015}.jsonl with one byte changed
  // beside intact chunk objects, GET /v1/sessions/{sid}/replay?raw=1 -> 200 with the changed byte.
  // Fixed: a read takes a run only where the chunk objects it holds are gone (fewestObjectTiling's
  // preferChunks), which the compactor deletes only once the run is stored and checked.
  it('a replay never answers 200 with bytes that are not the chunk records', async () => {
    const t = await ingestWriter(6);
    const forged = Buffer.from(t.bytes);
    forged.write('FORGED', 200);
    const name = `${writerPrefix(t.key)}000000000000000-${String(t.bytes.length).padStart(15, '0')}.jsonl`;
    await s3.send(new PutObjectCommand({ Bucket: world.bucket, Key: name, Body: forged }));
    const replay = await replayRaw(t.sid);
    if (replay.status === 200) expect(replay.body.equals(t.bytes)).toBe(true);
  }, 120_000);
});

describe("an operator's request naming another tenant's session", () => {
  it('held: compacts nothing of the session it does not own, and an invalid tenant is not a session', async () => {
    const t = await ingestWriter(4);
    const handler = createCompactHandler(world.env, { settledAfterMs: 0 });
    const other = await handler({ tenant: 'bravo', sid: t.sid });
    expect(other.writers).toEqual([]);
    expect(await keysOf(t.key)).toHaveLength(4);
    for (const tenant of ['acme#x', '../acme', 'ACME', '']) {
      expect((await handler({ tenant, sid: t.sid })).outcome).toBe('not_a_session');
    }
    expect((await handler({ tenant: 'acme', sid: `${t.sid}/../x` })).outcome).toBe('not_a_session');
    expect(await keysOf(t.key)).toHaveLength(4);
  }, 120_000);
});

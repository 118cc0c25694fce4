/**
 * A retry is told from other bytes by their SHA-256, not only their length (DESIGN §4 chunk route, §5;
 * issue 8.10): a chunk at an already accepted offset with the same length as the stored chunk but other
 * bytes is refused with 409, never answered 200 "already stored". `createApp` over every pair of stores
 * a deployment uses (files or S3 on s3rver, for the bytes; SQLite or DynamoDB Local, for the index and
 * its chunk records, which hold the digest), requests through `app.request`: in sequence, and racing
 * (two different chunks of one length at the same new offset: exactly one 201, the other 409). On S3 the
 * race also runs between two apps sharing the bucket and the table, as two Lambda instances do.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../harness/dynamodb-local.js';
import { type LocalS3, startS3rver } from '../../harness/s3rver.js';
import { createApp } from '../../lib/http/app.js';
import { ensureTenant } from '../../lib/service/tenants/bootstrap.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';
import type { SegmentStore, StateStore } from '../../lib/store/index.js';
import { S3SegmentStore } from '../../lib/store/s3/segment-store.js';
import { SqliteStateStore } from '../../lib/store/sqlite/state-store.js';
import { type LocalSegment, writeSession } from '../support/segments.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-digest-'));
let s3: LocalS3;
let dynamo: DynamoLocal;
const closers: (() => Promise<void>)[] = [];

beforeAll(async () => {
  [s3, dynamo] = await Promise.all([startS3rver(), startDynamoLocal()]);
}, 60_000);

afterAll(async () => {
  for (const close of closers) await close();
  await s3?.close();
  await dynamo?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** Where a deployment's bytes and index live; `instance()` opens one more app over the same ones. */
interface Backends {
  segments: () => SegmentStore;
  state: () => StateStore;
  /** whether a second app over the same backends is a supported deployment (S3: Lambda instances) */
  shared: boolean;
}

const backends: Record<string, () => Promise<Backends>> = {
  'files + SQLite': async () => {
    const dir = mkdtempSync(join(tmp, 'local-'));
    return {
      segments: () => new FsSegmentStore(join(dir, 'tenants')),
      state: () => new SqliteStateStore(join(dir, 'state.sqlite')),
      shared: false,
    };
  },
  'files + DynamoDB': async () => {
    const dir = mkdtempSync(join(tmp, 'fs-'));
    const table = await dynamo.freshTable();
    return {
      segments: () => new FsSegmentStore(dir),
      state: () => new DynamoStateStore({ tableName: table, client: dynamo.client }),
      shared: false,
    };
  },
  'S3 + SQLite': async () => {
    const bucket = await s3.createBucket();
    const dir = mkdtempSync(join(tmp, 'sqlite-'));
    return {
      segments: () => new S3SegmentStore({ client: s3.client(), bucket }),
      state: () => new SqliteStateStore(join(dir, 'state.sqlite')),
      shared: true,
    };
  },
  'S3 + DynamoDB': async () => {
    const bucket = await s3.createBucket();
    const table = await dynamo.freshTable();
    return {
      segments: () => new S3SegmentStore({ client: s3.client(), bucket }),
      state: () => new DynamoStateStore({ tableName: table, client: dynamo.client }),
      shared: true,
    };
  },
};

type App = ReturnType<typeof createApp>;

/** One app over the backends; the first made creates the tenant and returns its admin token. */
async function open(b: Backends): Promise<{ app: App; state: StateStore }> {
  const state = b.state();
  closers.push(() => state.close());
  const app = createApp({
    segments: b.segments(),
    state,
    log: (m, e) => {
      throw new Error(`unexpected server error: ${m} ${String(e)}`);
    },
  });
  return { app, state };
}

/** The same bytes with one letter of the message changed: same length, another SHA-256. */
function otherBytes(chunk: Buffer): Buffer {
  const text = chunk.toString('utf8');
  const changed = Buffer.from(text.replace('restart the', 'RESTART the'));
  expect(changed.length).toBe(chunk.length);
  expect(changed.equals(chunk)).toBe(false);
  return changed;
}

describe.each(Object.keys(backends))('a chunk of the same length but other bytes, on %s', (name) => {
  let b: Backends;
  let one: App;
  let apps: [App, App];
  let token: string;
  beforeAll(async () => {
    b = await backends[name]!();
    const first = await open(b);
    one = first.app;
    token = (await ensureTenant(first.state, 'acme', new Date()))!.token;
    apps = b.shared ? [one, (await open(b)).app] : [one, one];
  });

  const post = async (app: App, seg: LocalSegment, offset: number, body: Buffer) => {
    const res = await app.request(`/v1/sessions/${seg.sid}/writers/${seg.w}/chunks?offset=${offset}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
      body,
    });
    // biome-ignore lint/suspicious/noExplicitAny: the answer is read field by field
    return { status: res.status, json: (await res.json()) as any };
  };
  const stored = async (seg: LocalSegment) => {
    const headers = { authorization: `Bearer ${token}` };
    const base = `/v1/sessions/${seg.sid}/writers/${seg.w}`;
    const res = await one.request(`${base}/segment`, { headers });
    expect(res.status).toBe(200);
    const writer = (await (await one.request(base, { headers })).json()) as { length: number };
    return { bytes: Buffer.from(await res.arrayBuffer()), length: writer.length };
  };

  it('in sequence, at an accepted offset: 409 offset_mismatch and the stored chunk kept; the same bytes: 200', async () => {
    const seg = writeSession(mkdtempSync(join(tmp, 'work-')));
    const head = Buffer.concat(seg.lines.slice(0, 2));
    const mid = Buffer.concat(seg.lines.slice(2, 5)); // holds the message
    const end = head.length + mid.length;
    expect((await post(one, seg, 0, head)).status).toBe(201);
    expect((await post(one, seg, head.length, mid)).status).toBe(201);

    // At the last accepted offset, and at offset 0 (the first chunk), other bytes of the same length.
    for (const [offset, chunk] of [
      [head.length, mid],
      [0, Buffer.concat([head, mid])],
    ] as const) {
      const refused = await post(one, seg, offset, otherBytes(chunk));
      expect(refused.status, JSON.stringify(refused.json)).toBe(409);
      expect(refused.json).toMatchObject({
        error: { code: 'offset_mismatch', details: { expected_offset: end } },
      });
    }
    // The retry of what was stored is still a retry.
    const retry = await post(one, seg, head.length, mid);
    expect(retry.status).toBe(200);
    expect(retry.json).toMatchObject({ length: end, lines: 5 });
    expect(await stored(seg)).toEqual({ bytes: Buffer.concat([head, mid]), length: end });
  });

  it('racing at a new offset: exactly one 201, the other 409, the winner stored whole', async () => {
    for (let round = 0; round < 6; round++) {
      // Alternate which app sends which version (one app, or two sharing the stores where supported).
      const [a, c] = round % 2 === 0 ? apps : [apps[1], apps[0]];
      const seg = writeSession(mkdtempSync(join(tmp, 'work-')));
      const head = Buffer.concat(seg.lines.slice(0, 2));
      const mine = Buffer.concat(seg.lines.slice(2, 5));
      const theirs = otherBytes(mine);
      expect((await post(one, seg, 0, head)).status).toBe(201);
      const [ra, rb] = await Promise.all([
        post(a, seg, head.length, mine),
        post(c, seg, head.length, theirs),
      ]);
      expect([ra.status, rb.status].sort(), JSON.stringify([ra.json, rb.json])).toEqual([201, 409]);
      const loser = ra.status === 409 ? ra : rb;
      expect(loser.json.error.code).toBe('offset_mismatch');
      const winner = ra.status === 201 ? mine : theirs;
      expect(await stored(seg)).toEqual({
        bytes: Buffer.concat([head, winner]),
        length: head.length + winner.length,
      });
      // And afterwards, in sequence: the loser's bytes again are still refused, the winner's a retry.
      expect((await post(a, seg, head.length, winner === mine ? theirs : mine)).status).toBe(409);
      expect((await post(c, seg, head.length, winner)).status).toBe(200);
    }
  });
});

/**
 * The ingest guarantee on the S3 store (DESIGN §4 chunk route, §5 "Ingest writes the bytes first …"):
 * concurrent uploads of a writer's next chunk lose nothing and duplicate nothing; the stored segment is
 * exactly the accepted chunks. `createApp` over `S3SegmentStore` (s3rver, real SDK and HTTP) and
 * `SqliteStateStore` (a temp file), requests through `app.request`. Run with one app, where ingest's
 * in-process writer lock orders the requests, and with two apps sharing the bucket and the database, as
 * two Lambda instances do, where only the conditional put and the conditional index advance order them.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalS3, startS3rver } from '../../harness/s3rver.js';
import { createApp } from '../../lib/http/app.js';
import { ensureTenant } from '../../lib/service/index.js';
import { S3SegmentStore } from '../../lib/store/s3/segment-store.js';
import { SqliteStateStore } from '../../lib/store/sqlite/state-store.js';
import { writeSession } from '../support/segments.js';

let s3: LocalS3;
let bucket: string;
let dir: string;
let token: string;
const closers: (() => Promise<void>)[] = [];
const logged: string[] = [];

/** One deployment instance: its own S3 client and store, its own connection to the shared database. */
function instance() {
  const client = s3.client();
  const state = new SqliteStateStore(join(dir, 'state.sqlite'));
  closers.push(async () => {
    await state.close();
    client.destroy();
  });
  const app = createApp({
    segments: new S3SegmentStore({ client, bucket }),
    state,
    log: (m, e) => logged.push(`${m} ${String(e ?? '')}`),
  });
  return { app, state };
}

type Instance = ReturnType<typeof instance>;

beforeAll(async () => {
  s3 = await startS3rver();
  bucket = await s3.createBucket();
  dir = await mkdtemp(join(tmpdir(), 'hansard-s3-ingest-'));
  const created = await ensureTenant(instance().state, 'acme', new Date());
  token = created!.token;
});

afterAll(async () => {
  for (const close of closers) await close();
  await s3?.close();
  await rm(dir, { recursive: true, force: true });
});

async function post(inst: Instance, sid: string, w: string, offset: number, body: Buffer) {
  const res = await inst.app.request(`/v1/sessions/${sid}/writers/${w}/chunks?offset=${offset}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
    body,
  });
  // biome-ignore lint/suspicious/noExplicitAny: the answer is read field by field
  return { status: res.status, json: (await res.json()) as any };
}

async function get(inst: Instance, path: string): Promise<Response> {
  return inst.app.request(path, { headers: { authorization: `Bearer ${token}` } });
}

const variants: [string, () => [Instance, Instance]][] = [
  [
    'one app',
    () => {
      const one = instance();
      return [one, one];
    },
  ],
  ['two apps sharing the bucket and the database', () => [instance(), instance()]],
];

describe.each(variants)('concurrent chunk uploads on S3, %s', (_name, make) => {
  it('accept each chunk once: no loss, no duplicate, the segment is exactly the accepted chunks', async () => {
    const [a, b] = make();
    const work = await mkdtemp(join(tmpdir(), 'hansard-s3-ingest-work-'));
    for (let round = 0; round < 4; round++) {
      const seg = writeSession(work);
      const { sid, w } = seg;
      const cat = (from: number, to: number) => Buffer.concat(seg.lines.slice(from, to));
      const accepted: Buffer[] = [];
      let length = 0;

      // The first chunk of a new writer, the same bytes from both at once: one 201, one 200, same answer.
      const first = cat(0, 3);
      const r1 = await Promise.all([post(a, sid, w, 0, first), post(b, sid, w, 0, first)]);
      expect(r1.map((r) => r.status).sort()).toEqual([200, 201]);
      expect(r1[0]!.json).toEqual(r1[1]!.json);
      accepted.push(first);
      length += first.length;

      // The next chunk, the same bytes from both at once.
      const next = cat(3, 5);
      const r2 = await Promise.all([post(a, sid, w, length, next), post(b, sid, w, length, next)]);
      expect(r2.map((r) => r.status).sort()).toEqual([200, 201]);
      expect(r2[0]!.json).toEqual({ writer: w, length: length + next.length, lines: 5, last_seq: 5 });
      expect(r2[1]!.json).toEqual(r2[0]!.json);
      accepted.push(next);
      length += next.length;

      // Different chunks at the same offset: exactly one is accepted, the other is told to resync.
      const mine = cat(5, 7);
      const line5 = seg.lines[5]!.toString();
      expect(line5).toContain('"restarted"');
      const theirs = Buffer.concat([
        Buffer.from(line5.replace('"restarted"', '"failed to restart"')),
        seg.lines[6]!,
      ]);
      const r3 = await Promise.all([post(a, sid, w, length, mine), post(b, sid, w, length, theirs)]);
      expect(r3.map((r) => r.status).sort()).toEqual([201, 409]);
      const loser = r3.find((r) => r.status === 409)!;
      expect(loser.json.error.code).toBe('offset_mismatch');
      const winner = r3[0]!.status === 201 ? mine : theirs;
      accepted.push(winner);
      length += winner.length;

      // The rest, from the stored length.
      const rest = cat(7, seg.lines.length);
      expect((await post(b, sid, w, length, rest)).status).toBe(201);
      accepted.push(rest);
      length += rest.length;

      const expected = Buffer.concat(accepted);
      for (const inst of [a, b]) {
        const res = await get(inst, `/v1/sessions/${sid}/writers/${w}/segment`);
        expect(res.status).toBe(200);
        expect(Buffer.from(await res.arrayBuffer()).equals(expected)).toBe(true);
        const writer = await (await get(inst, `/v1/sessions/${sid}/writers/${w}`)).json();
        expect(writer).toMatchObject({ length: expected.length, lines: seg.lines.length, ended: true });
      }
      // One object per accepted chunk, named by its offset: nothing lost, nothing twice.
      const listed = await s3
        .client()
        .send(new ListObjectsV2Command({ Bucket: bucket, Prefix: `tenants/acme/sessions/${sid}/${w}/` }));
      const offsets = accepted.map((_, i) => accepted.slice(0, i).reduce((n, c) => n + c.length, 0));
      expect(listed.Contents?.map((o) => [Number(o.Key?.slice(-21, -6)), o.Size])).toEqual(
        offsets.map((o, i) => [o, accepted[i]!.length]),
      );
    }
    await rm(work, { recursive: true, force: true });
    expect(logged).toEqual([]);
  });
});

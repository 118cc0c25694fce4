/**
 * How `S3SegmentStore.readSegment` reads (issue 16.4), over s3rver with the real SDK: the GETs it makes
 * (recorded by a middleware on the client: command, key, Range), the bytes it keeps ahead of a paused
 * consumer, a read that starts inside an object, the listing reused when a read is reopened, a segment of
 * many 1 KB chunk objects, and the sockets an aborted read leaves (counted on the client's own agent).
 */
import { Agent } from 'node:http';
import { S3Client } from '@aws-sdk/client-s3';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalS3, startS3rver } from '../../../harness/s3rver.js';
import { newId } from '../../../lib/log/index.js';
import type { SegmentKey } from '../../../lib/store/index.js';
import { S3SegmentStore } from '../../../lib/store/s3/segment-store.js';

interface Sent {
  command: string;
  key: string | undefined;
  range: string | undefined;
  startAfter: string | undefined;
}

let s3: LocalS3;
let bucket: string;
const clients: S3Client[] = [];

/** A client of s3rver recording every command it sends, on its own agent. */
function recordingClient(agent = new Agent({ keepAlive: true, maxSockets: 50 })) {
  const sent: Sent[] = [];
  const gets = { now: 0, max: 0 };
  const client = new S3Client({
    endpoint: s3.endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
    requestHandler: new NodeHttpHandler({ httpAgent: agent }),
  });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Key?: string; Range?: string; StartAfter?: string };
      sent.push({
        command: context.commandName ?? '?',
        key: input.Key,
        range: input.Range,
        startAfter: input.StartAfter,
      });
      if (context.commandName !== 'GetObjectCommand') return next(args);
      gets.max = Math.max(gets.max, ++gets.now);
      try {
        return await next(args);
      } finally {
        gets.now--;
      }
    },
    { step: 'initialize', name: 'recordCommands' },
  );
  clients.push(client);
  return { client, sent, agent, gets };
}

/** Deterministic bytes of `n` lines of 64 bytes, numbered from `first`. */
function lines(first: number, n: number): Buffer {
  return Buffer.from(
    Array.from({ length: n }, (_, i) => `${JSON.stringify({ i: first + i }).padEnd(63, ' ')}\n`).join(''),
  );
}

async function readAll(it: AsyncIterable<Uint8Array>): Promise<{ bytes: Buffer; yields: number }> {
  const parts: Uint8Array[] = [];
  for await (const p of it) parts.push(p);
  return { bytes: Buffer.concat(parts), yields: parts.length };
}

const key = (): SegmentKey => ({ tenant: 'acme', sid: newId('s'), w: newId('w') });
const gets = (sent: Sent[]) => sent.filter((s) => s.command === 'GetObjectCommand');
const lists = (sent: Sent[]) => sent.filter((s) => s.command === 'ListObjectsV2Command');

beforeAll(async () => {
  s3 = await startS3rver();
  bucket = await s3.createBucket();
});
afterAll(async () => {
  for (const c of clients) c.destroy();
  await s3?.close();
});

describe('S3SegmentStore.readSegment', () => {
  it('GETs windows of the chunkBytes asked for, clamped to [64 KiB, 8 MiB]', async () => {
    const { client, sent } = recordingClient();
    const store = new S3SegmentStore({ client, bucket });
    const k = key();
    const bytes = lines(0, 65_536); // one 4 MiB object
    await store.putChunk(k, 0, bytes);
    for (const [chunkBytes, window] of [
      [1024 * 1024, 1024 * 1024],
      [16 * 1024, 64 * 1024],
      [64 * 1024 * 1024, 4 * 1024 * 1024],
    ] as const) {
      sent.length = 0;
      const got = await readAll(store.readSegment(k, bytes.length, 0, chunkBytes));
      expect(got.bytes.equals(bytes)).toBe(true);
      const ranges = gets(sent).map((g) => g.range);
      expect(ranges).toHaveLength(bytes.length / window);
      if (window < bytes.length) expect(ranges[1]).toBe(`bytes=${window}-${2 * window - 1}`);
      else expect(ranges).toEqual([undefined]); // the whole object, unranged
    }
  });

  it('starts inside an object with one ranged GET, never fetching the objects before it', async () => {
    const { client, sent } = recordingClient();
    const store = new S3SegmentStore({ client, bucket });
    const k = key();
    const chunks = [lines(0, 5000), lines(5000, 5000), lines(10_000, 5000)]; // 320,000 bytes each
    let offset = 0;
    for (const c of chunks) {
      await store.putChunk(k, offset, c);
      offset += c.length;
    }
    const all = Buffer.concat(chunks);
    const start = 320_000 + 123_457;
    sent.length = 0;
    const got = await readAll(store.readSegment(k, all.length, start, 1024 * 1024));
    expect(got.bytes.equals(all.subarray(start))).toBe(true);
    const g = gets(sent);
    expect(g.map((x) => x.key?.slice(-21))).toEqual(['000000000320000.jsonl', '000000000640000.jsonl']);
    expect(g[0]!.range).toBe('bytes=123457-319999');
    expect(g[1]!.range).toBeUndefined();
    // and a start and an end inside the same object
    const mid = await readAll(store.readSegment(k, 700_000, 650_000, 1024 * 1024));
    expect(mid.bytes.equals(all.subarray(650_000, 700_000))).toBe(true);
  });

  it('lists once for the loss check and every reopening of the same range, and lists only new keys for a longer one', async () => {
    const { client, sent } = recordingClient();
    const store = new S3SegmentStore({ client, bucket, listPageSize: 2 });
    const k = key();
    const chunks = Array.from({ length: 5 }, (_, i) => lines(i * 100, 100)); // 6,400 bytes each
    for (let i = 0; i < chunks.length; i++) await store.putChunk(k, i * 6400, chunks[i]!);
    const all = Buffer.concat(chunks);
    sent.length = 0;
    expect(await store.missingBytes(k, 19_200)).toBeNull();
    const first = lists(sent).length;
    expect(first).toBe(2); // pages of 2 keys: 3 chunks start before 19,200
    for (const start of [0, 7000, 13_000]) {
      const got = await readAll(store.readSegment(k, 19_200, start, 64 * 1024));
      expect(got.bytes.equals(all.subarray(start, 19_200))).toBe(true);
    }
    expect(lists(sent)).toHaveLength(first);
    // the whole segment: only the keys after the last one kept
    const whole = await readAll(store.readSegment(k, all.length, 0, 64 * 1024));
    expect(whole.bytes.equals(all)).toBe(true);
    const more = lists(sent).slice(first);
    expect(more[0]!.startAfter).toMatch(/000000000012800\.jsonl$/);
  });

  it('reads 400 chunk objects of 1 KB with one GET each, up to 16 at once', async () => {
    const { client, sent, gets: concurrent } = recordingClient();
    const store = new S3SegmentStore({ client, bucket });
    const k = key();
    const chunks = Array.from({ length: 400 }, (_, i) => lines(i * 16, 16)); // 1,024 bytes each
    await Promise.all(chunks.map((c, i) => store.putChunk(k, i * 1024, c)));
    sent.length = 0;
    const got = await readAll(store.readSegment(k, 1024 * 400, 0, 64 * 1024));
    expect(got.bytes.equals(Buffer.concat(chunks))).toBe(true);
    expect(gets(sent)).toHaveLength(400);
    expect(got.yields).toBeLessThanOrEqual(400);
    // many GETs at once (16 per read): a round trip per object would make 1 KB objects a crawl
    expect(concurrent.max).toBeGreaterThan(8);
  });

  it('fetches ahead of paused consumers only within the shared budget, one part each beyond it', async () => {
    const { client, sent } = recordingClient();
    const budget = 1024 * 1024;
    const store = new S3SegmentStore({ client, bucket, readBudgetBytes: budget });
    const writers = Array.from({ length: 12 }, key);
    const bytes = lines(0, 32_768); // 2 MiB each
    await Promise.all(writers.map((k) => store.putChunk(k, 0, bytes)));
    sent.length = 0;
    const window = 256 * 1024;
    const readers = writers.map((k) => store.readSegment(k, bytes.length, 0, window)[Symbol.asyncIterator]());
    // Every writer's first piece, as a merge takes them; then its consumer pauses.
    for (const r of readers) expect((await r.next()).done).toBe(false);
    await new Promise((r) => setTimeout(r, 300));
    const requested = gets(sent).length * window;
    expect(requested).toBeLessThanOrEqual(budget + writers.length * window);
    expect(store.budget.peak).toBeLessThanOrEqual(budget);
    for (const r of readers) await r.return?.(undefined);
    expect(store.budget.taken).toBe(0);
  });

  it('leaves no request open on its agent once a read is aborted mid-way', async () => {
    const agent = new Agent({ keepAlive: true, maxSockets: 50 });
    const { client, sent } = recordingClient(agent);
    const store = new S3SegmentStore({ client, bucket });
    const k = key();
    const bytes = lines(0, 131_072); // 8 MiB
    await store.putChunk(k, 0, bytes);
    const busy = () => Object.values(agent.sockets).reduce((n, list) => n + (list?.length ?? 0), 0);
    const ac = new AbortController();
    const it = store
      .readSegment(k, bytes.length, 0, 64 * 1024, { signal: ac.signal })
      [Symbol.asyncIterator]();
    await it.next();
    // GETs of the parts ahead are under way when the client goes
    expect(busy()).toBeGreaterThan(0);
    ac.abort(new Error('client gone'));
    await expect(it.next()).rejects.toThrow('client gone');
    for (let i = 0; i < 100 && busy() > 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(busy()).toBe(0);
    expect(gets(sent).length).toBeLessThan(bytes.length / (64 * 1024));
    expect(store.budget.taken).toBe(0);
  });
});

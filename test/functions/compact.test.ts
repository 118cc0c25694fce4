/**
 * The compactor's handler (functions/compact.ts, issue 17.2) against s3rver and DynamoDB Local: the
 * `Object Created` event of a session's digest compacts its ended writers (its state store calls only
 * what its role allows, `COMPACT_STATE_METHODS`), an operator's `{tenant, sid}` does the same, and an
 * event that names no session (another key, a forged tenant or session id) touches nothing. A writer
 * whose bytes no longer match the index is left as it is and logged as one JSON line with
 * `"level":"ERROR"`, the field the stack's CompactLogErrors metric filter counts (infra/alarms.ts).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateSession } from '../../bench/gen.js';
import type { createCompactHandler as CreateCompactHandler } from '../../functions/compact.js';
import { createLogger } from '../../functions/logging.js';
import { type S3ReplayWorld, startS3ReplayWorld, storeSession } from '../../harness/s3-replay-world.js';

let world: S3ReplayWorld;
let root: string;
let createCompactHandler: typeof CreateCompactHandler;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'hansard-compact-fn-'));
  world = await startS3ReplayWorld();
  // The module builds its handler from process.env when loaded: give it one it accepts.
  Object.assign(process.env, world.env);
  ({ createCompactHandler } = await import('../../functions/compact.js'));
}, 120_000);

afterAll(async () => {
  await world?.close();
  if (root) rmSync(root, { recursive: true, force: true });
});

async function objectsOf(sid: string): Promise<string[]> {
  const out = await world.s3
    .client()
    .send(new ListObjectsV2Command({ Bucket: world.bucket, Prefix: `tenants/acme/sessions/${sid}/` }));
  return (out.Contents ?? []).map((o) => o.Key!.split('/').slice(4).join('/'));
}

const event = (key: string) => ({
  source: 'aws.s3' as const,
  'detail-type': 'Object Created' as const,
  detail: { bucket: { name: world.bucket }, object: { key } },
});

describe('the compactor function', () => {
  it("compacts a session's ended writers for its digest's event, and for an operator's request", async () => {
    const handler = createCompactHandler(world.env);
    const one = await storeSession(world, await generateSession(root, 300, 2), 1024);
    expect((await objectsOf(one.sid)).length).toBe(one.chunks);
    const answer = await handler(event(`tenants/acme/sessions/${one.sid}/digests/000000001.json`), {
      getRemainingTimeInMillis: () => 900_000,
    });
    expect(answer).toMatchObject({ tenant: 'acme', sid: one.sid, outcome: 'compacted' });
    expect(answer.writers.map((w) => w.outcome)).toEqual(['compacted', 'compacted']);
    const after = await objectsOf(one.sid);
    expect(after).toHaveLength(2);
    for (const s of one.segments) {
      expect(after).toContain(`${s.w}/000000000000000-${String(s.end).padStart(15, '0')}.jsonl`);
    }

    const two = await storeSession(world, await generateSession(root, 200, 1), 1024);
    const asked = await handler({ tenant: 'acme', sid: two.sid });
    expect(asked.writers.map((w) => [w.outcome, w.objects_after])).toEqual([['compacted', 1]]);
    expect(await objectsOf(two.sid)).toHaveLength(1);
  }, 300_000);

  it('fails a pass that ran out of time, so that Lambda runs its event again', async () => {
    const handler = createCompactHandler(world.env);
    const four = await storeSession(world, await generateSession(root, 60, 1), 1024);
    const before = await objectsOf(four.sid);
    await expect(
      handler({ tenant: 'acme', sid: four.sid }, { getRemainingTimeInMillis: () => 60_000 }),
    ).rejects.toThrow(/ran out of time before writers w_/);
    expect(await objectsOf(four.sid)).toEqual(before);
    // the next invocation, with its time, finishes it
    expect((await handler({ tenant: 'acme', sid: four.sid })).writers.map((w) => w.outcome)).toEqual([
      'compacted',
    ]);
  }, 120_000);

  it('leaves a writer whose bytes changed as it is, and logs it as an ERROR line the alarm counts', async () => {
    // Powertools writes through a Console of its own, errors to stderr: what CloudWatch Logs gets.
    const lines: string[] = [];
    const spies = [process.stdout, process.stderr].map((stream) => {
      const write = stream.write.bind(stream);
      return vi.spyOn(stream, 'write').mockImplementation(((chunk: string | Uint8Array, ...rest: never[]) => {
        const text = typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8');
        if (!text.startsWith('{')) return write(chunk, ...rest);
        lines.push(...text.split('\n').filter(Boolean));
        return true;
      }) as typeof stream.write);
    });
    try {
      // The Lambda's own logger, at the stack's level: what CloudWatch Logs gets.
      const handler = createCompactHandler(world.env, { logger: createLogger({ LOG_LEVEL: 'INFO' }) });
      const five = await storeSession(world, await generateSession(root, 60, 1), 1024);
      const before = await objectsOf(five.sid);
      expect(before.length).toBeGreaterThan(2);
      const client = world.s3.client();
      const key = `tenants/acme/sessions/${five.sid}/${before[1]}`;
      const got = await client.send(new GetObjectCommand({ Bucket: world.bucket, Key: key }));
      const bytes = Buffer.from(await got.Body!.transformToByteArray());
      bytes[0] = bytes[0] === 0x20 ? 0x21 : 0x20; // same length, other bytes
      await client.send(new PutObjectCommand({ Bucket: world.bucket, Key: key, Body: bytes }));

      const answer = await handler({ tenant: 'acme', sid: five.sid });
      expect(answer.writers.map((w) => w.outcome)).toEqual(['mismatch']);
      expect(await objectsOf(five.sid)).toEqual(before);
      const logged = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
      const error = logged.find((l) => l.message === 'compaction left a writer as it is');
      expect(error).toMatchObject({ level: 'ERROR', sid: five.sid, outcome: 'mismatch' });
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
  }, 120_000);

  it('leaves alone an event that names no session', async () => {
    const handler = createCompactHandler(world.env);
    const three = await storeSession(world, await generateSession(root, 60, 1), 1024);
    const before = await objectsOf(three.sid);
    for (const e of [
      event(`replays/acme/${three.sid}/ndjson.building`),
      event(`tenants/acme/sessions/${three.sid}/w_x/000000000000000.jsonl`),
      event(`tenants/ACME/sessions/${three.sid}/digests/000000001.json`),
      event('tenants/acme/sessions/s_nope/digests/000000001.json'),
    ]) {
      expect((await handler(e)).outcome).toBe('not_a_session');
    }
    expect(await handler({ tenant: 'acme', sid: '../x' } as never)).toMatchObject({
      outcome: 'not_a_session',
    });
    expect(await objectsOf(three.sid)).toEqual(before);
  }, 120_000);
});

/**
 * How `planReplay` (issue 17.2) answers by a session's size: stream it (at most `inlineBytes`, the text
 * replay counted three times), merge a copy in the request (at most `inRequestBytes`, or any size without
 * a builder), or start a build and say so; a stored copy is handed out first, whatever the size. The
 * stores are stand-ins that record what they are asked (the S3 side: test/store/s3-replay-archive.test.ts,
 * the whole path: test/functions/large-replay.test.ts).
 */
import { describe, expect, it } from 'vitest';
import type { ServiceContext } from '../../lib/service/context.js';
import { type LargeReplays, planReplay, type ReplayJob } from '../../lib/service/large-replay.js';
import type { StateStore, TokenRecord } from '../../lib/store/index.js';

const SID = 's_01J00000000000000000000000';
const MB = 1000 * 1000;

function world(sessionBytes: number, large: Partial<LargeReplays> & { inlineBytes: number }) {
  const started: ReplayJob[] = [];
  const stored: string[] = [];
  const archive = {
    find: async (key: string) =>
      stored.includes(key)
        ? { url: `https://copy/${key}`, bytes: 1, expires_at: '2026-12-01T00:15:00Z' }
        : null,
    store: async (key: string) => {
      stored.push(key);
    },
  };
  const state = {
    listWriters: async () => [
      { w: 'w_01J00000000000000000000001', length: sessionBytes / 2 },
      { w: 'w_01J00000000000000000000002', length: sessionBytes / 2 },
    ],
    getStatus: async () => null,
  } as unknown as StateStore;
  const ctx = {
    tenant: 'acme',
    caller: { id: 'tok', scopes: ['read'], session: null } as unknown as TokenRecord,
    state,
    // the checks storedSegments makes before a replay; the stand-in archive never reads the body
    segments: {
      missingBytes: async () => null,
      tornTail: async () => null,
    } as unknown as ServiceContext['segments'],
    now: () => new Date('2026-12-01T00:00:00Z'),
    largeReplays: {
      archive,
      builds: { start: async (job: ReplayJob) => void started.push(job) },
      ...large,
    },
  } as ServiceContext;
  return { ctx, started, stored };
}

describe('planReplay', () => {
  it('streams a session at most the inline size; the text replay counts three times', async () => {
    const w = world(10 * MB, { inlineBytes: 10 * MB });
    expect(await planReplay({ ctx: w.ctx, sid: SID, format: 'ndjson', raw: false })).toEqual({
      kind: 'inline',
      bytes: 10 * MB,
    });
    const text = await planReplay({ ctx: w.ctx, sid: SID, format: 'text', raw: false });
    expect(text.kind).toBe('building');
    // raw is NDJSON whatever the format says
    expect((await planReplay({ ctx: w.ctx, sid: SID, format: 'text', raw: true })).kind).toBe('inline');
  });

  it('starts a build past the in-request size, once per request, and hands out the copy once there', async () => {
    const w = world(100 * MB, { inlineBytes: 10 * MB, inRequestBytes: 50 * MB });
    const first = await planReplay({ ctx: w.ctx, sid: SID, format: 'ndjson', raw: false });
    expect(first).toEqual({ kind: 'building', bytes: 100 * MB, retry_after: 5 });
    expect(w.started).toHaveLength(1);
    expect(w.started[0]).toMatchObject({ tenant: 'acme', sid: SID, format: 'ndjson', raw: false });
    expect(w.started[0]!.caller).toEqual({ id: 'tok', scopes: ['read'], session: null });
    w.stored.push(w.started[0]!.key);
    const ready = await planReplay({ ctx: w.ctx, sid: SID, format: 'ndjson', raw: false });
    expect(ready).toMatchObject({ kind: 'archived', replay: { url: `https://copy/${w.started[0]!.key}` } });
    expect(w.started).toHaveLength(1);
  });

  it('merges in the request between the inline and the in-request sizes, or at any size without a builder', async () => {
    for (const large of [
      { inlineBytes: 10 * MB, inRequestBytes: 50 * MB },
      { inlineBytes: 10 * MB, builds: undefined },
    ]) {
      const w = world(40 * MB, large);
      const plan = await planReplay({ ctx: w.ctx, sid: SID, format: 'ndjson', raw: false });
      expect(plan.kind).toBe('archived');
      expect(w.stored).toHaveLength(1);
      expect(w.started).toEqual([]);
    }
  });

  it('names the copy by format, raw and the writers lengths', async () => {
    const keys = new Set<string>();
    for (const [bytes, format, raw] of [
      [40 * MB, 'ndjson', false],
      [40 * MB, 'ndjson', true],
      [40 * MB, 'text', false],
      [42 * MB, 'ndjson', false],
    ] as const) {
      const w = world(bytes, { inlineBytes: 1 });
      await planReplay({ ctx: w.ctx, sid: SID, format, raw });
      keys.add(w.started[0]!.key);
    }
    expect(keys.size).toBe(4);
  });
});

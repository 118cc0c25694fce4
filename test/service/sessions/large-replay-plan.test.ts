/**
 * How `planReplay` (issue 17.2) answers by a session's size: stream it (at most `inlineBytes`, the text
 * replay counted three times), merge a copy in the request (at most `inRequestBytes`, or any size without
 * a builder), or start a build and say so; a stored copy is handed out first, whatever the size. The
 * stores are stand-ins that record what they are asked (the S3 side: test/store/s3/replay-archive.test.ts,
 * the whole path: test/functions/large-replay.test.ts).
 */
import { describe, expect, it } from 'vitest';
import {
  type BuildState,
  type LargeReplays,
  planReplay,
  type ReplayJob,
  replayArchiveKey,
  replayVariant,
} from '../../../lib/service/sessions/large-replay.js';
import type { ServiceContext } from '../../../lib/service/shared/context.js';
import type { StateStore, TokenRecord } from '../../../lib/store/index.js';

const SID = 's_01J00000000000000000000000';
const MB = 1000 * 1000;

function world(sessionBytes: number, large: Partial<LargeReplays> & { inlineBytes: number }) {
  const started: ReplayJob[] = [];
  const stored: string[] = [];
  /** each variant's newest build, as the builds keep it */
  const states = new Map<string, BuildState & { job: ReplayJob }>();
  let clock = Date.parse('2026-12-01T00:00:00Z');
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
  const writers = () => [
    { w: 'w_01J00000000000000000000001', length: sessionBytes / 2 },
    { w: 'w_01J00000000000000000000002', length: sessionBytes / 2 },
  ];
  const builds = {
    status: async (variant: string) => states.get(variant) ?? null,
    start: async (job: ReplayJob) => {
      started.push(job);
      states.set(replayVariant(job.tenant, job.sid, job), {
        job,
        state: 'building',
        started_at: new Date(clock).toISOString(),
      });
    },
    finish: async () => {},
  };
  /** what the builder does: the copy of the session as it is, the variant's build done */
  const finishBuild = (job: ReplayJob, outcome: 'done' | 'failed' = 'done') => {
    const key = replayArchiveKey(job.tenant, job.sid, job, writers());
    const at = { started_at: new Date(clock).toISOString(), finished_at: new Date(clock).toISOString() };
    if (outcome === 'done') stored.push(key);
    states.set(
      replayVariant(job.tenant, job.sid, job),
      outcome === 'done'
        ? { job, state: 'done', key, ...at }
        : {
            job,
            state: 'failed',
            error: { code: 'data_loss', message: 'lost', details: { w: 'w_1' } },
            ...at,
          },
    );
    return key;
  };
  const ctx = {
    tenant: 'acme',
    caller: { id: 'tok', scopes: ['read'], session: null } as unknown as TokenRecord,
    state,
    // the checks storedSegments makes before a replay; the stand-in archive never reads the body
    segments: {
      missingBytes: async () => null,
      tornTail: async () => null,
    } as unknown as ServiceContext['segments'],
    now: () => new Date(clock),
    largeReplays: { archive, builds, ...large },
  } as ServiceContext;
  return {
    ctx,
    started,
    stored,
    finishBuild,
    grow: (bytes: number) => {
      sessionBytes += bytes;
    },
    tick: (ms: number) => {
      clock += ms;
    },
  };
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

  it('starts a build past the in-request size, once, and hands out the copy once there', async () => {
    const w = world(100 * MB, { inlineBytes: 10 * MB, inRequestBytes: 50 * MB });
    const first = await planReplay({ ctx: w.ctx, sid: SID, format: 'ndjson', raw: false });
    expect(first).toEqual({ kind: 'building', bytes: 100 * MB, retry_after: 5 });
    expect(w.started).toHaveLength(1);
    expect(w.started[0]).toEqual({
      tenant: 'acme',
      sid: SID,
      format: 'ndjson',
      raw: false,
      caller: { id: 'tok', scopes: ['read'], session: null },
    });
    // a poll while it builds starts nothing
    expect((await planReplay({ ctx: w.ctx, sid: SID, format: 'ndjson', raw: false })).kind).toBe('building');
    expect(w.started).toHaveLength(1);
    const key = w.finishBuild(w.started[0]!);
    const ready = await planReplay({ ctx: w.ctx, sid: SID, format: 'ndjson', raw: false });
    expect(ready).toMatchObject({ kind: 'archived', replay: { url: `https://copy/${key}` } });
    expect(w.started).toHaveLength(1);
  });

  it('answers a live session with its last copy for a minute, then builds again', async () => {
    const w = world(100 * MB, { inlineBytes: 10 * MB });
    await planReplay({ ctx: w.ctx, sid: SID, format: 'ndjson', raw: false });
    const key = w.finishBuild(w.started[0]!);
    w.grow(2);
    w.tick(30_000);
    const live = await planReplay({ ctx: w.ctx, sid: SID, format: 'ndjson', raw: false });
    expect(live).toMatchObject({ kind: 'archived', replay: { url: `https://copy/${key}` } });
    expect(w.started).toHaveLength(1);
    w.tick(31_000);
    expect((await planReplay({ ctx: w.ctx, sid: SID, format: 'ndjson', raw: false })).kind).toBe('building');
    expect(w.started).toHaveLength(2);
  });

  it("answers a failed build's error for a minute, then tries again", async () => {
    const w = world(100 * MB, { inlineBytes: 10 * MB });
    await planReplay({ ctx: w.ctx, sid: SID, format: 'ndjson', raw: false });
    w.finishBuild(w.started[0]!, 'failed');
    await expect(planReplay({ ctx: w.ctx, sid: SID, format: 'ndjson', raw: false })).rejects.toMatchObject({
      code: 'data_loss',
      details: { w: 'w_1' },
    });
    w.tick(61_000);
    expect((await planReplay({ ctx: w.ctx, sid: SID, format: 'ndjson', raw: false })).kind).toBe('building');
    expect(w.started).toHaveLength(2);
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

  it('names the copy by format, raw and the writers lengths, under its tenant and session', () => {
    const writers = [{ w: 'w_01J00000000000000000000001', length: 40 }];
    const keys = new Set<string>();
    for (const [format, raw, length] of [
      ['ndjson', false, 40],
      ['ndjson', true, 40],
      ['text', true, 40],
      ['text', false, 40],
      ['ndjson', false, 41],
    ] as const) {
      const key = replayArchiveKey('acme', SID, { format, raw }, [{ ...writers[0]!, length }]);
      expect(key.startsWith(`acme/${SID}/`)).toBe(true);
      keys.add(key);
    }
    // raw is raw whatever the format says
    expect(keys.size).toBe(4);
  });
});

/**
 * Attack on usage kept as chunks arrive (issue 27 item 5, docs/usage.md "Where totals are kept") with
 * faults and races, over real HTTP on loopback with the real SQLite store (a subclass that fails when
 * told): a count whose write went through but whose answer was lost, a count whose read fails, writers of
 * one session uploaded at once, one writer's chunks sent by two clients at once, recompute while chunks
 * arrive, and a second server on the same data directory. Every total is compared with the
 * hand-computed tables of test/support/usage-sessions.ts, and a fresh recompute must change nothing.
 *
 * What holds is an ordinary test; what gives way is `it.fails` with a comment saying what should happen.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startServer as startServe } from '../../lib/deploy/local-serve.js';
import { newId } from '../../lib/log/index.js';
import { FsDigestStore } from '../../lib/store/fs/digest-store.js';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';
import type { UsageChange, WriterUsage } from '../../lib/store/index.js';
import { SqliteStateStore } from '../../lib/store/sqlite/state-store.js';
import { expectError, request } from '../support/http.js';
import type { LocalSegment } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { postChunk } from '../support/stored.js';
import { CLAUDE, CODEX, claudeSession, codexSession, TODAY } from '../support/usage-sessions.js';

const faults = {
  /** the next applyWriterUsage calls write, then throw (the answer lost after the commit) */
  failAfterWrite: 0,
  /** the next getWriterUsage calls throw */
  readFails: 0,
};

class FaultyStore extends SqliteStateStore {
  override async getWriterUsage(tenant: string, sid: string, w: string): Promise<WriterUsage | null> {
    if (faults.readFails > 0) {
      faults.readFails -= 1;
      throw new Error('the usage table is unreachable (injected read fault)');
    }
    return super.getWriterUsage(tenant, sid, w);
  }
  override async applyWriterUsage(
    tenant: string,
    sid: string,
    w: string,
    expectUpto: number | null,
    change: UsageChange,
  ): Promise<void> {
    await super.applyWriterUsage(tenant, sid, w, expectUpto, change);
    if (faults.failAfterWrite > 0) {
      faults.failAfterWrite -= 1;
      throw new Error('connection reset after the commit (injected)');
    }
  }
}

const srv = useServer({
  mayLog: /injected/,
  stores: (dataDir) => {
    mkdirSync(dataDir, { recursive: true });
    return {
      segments: new FsSegmentStore(dataDir),
      state: new FaultyStore(join(dataDir, 'state.sqlite')),
      digests: new FsDigestStore(dataDir),
    };
  },
});

const usageOf = async (sid: string, q = '') => {
  const a = await request(srv, 'GET', `/v1/sessions/${sid}/usage${q}`, { token: srv.admin });
  expect(a.status, a.text).toBe(200);
  return a.json;
};
const tenantTotal = async () => {
  const a = await request(srv, 'GET', `/v1/usage?group_by=model&from=${TODAY}&to=${TODAY}`, {
    token: srv.admin,
  });
  expect(a.status, a.text).toBe(200);
  return a.json;
};

/** Uploads a segment a line per chunk; each answered 201. */
async function uploadLines(seg: LocalSegment): Promise<void> {
  let offset = 0;
  for (const line of seg.lines) {
    const a = await postChunk(srv, srv.admin, seg.sid, seg.w, offset, line);
    expect(a.status, a.text).toBe(201);
    offset += line.length;
  }
}

/** Sum of `n` copies of a hand-computed total's counters. */
const times = (t: typeof CLAUDE, n: number) => ({
  ...t,
  input_tokens: t.input_tokens * n,
  output_tokens: t.output_tokens * n,
  cache_read_tokens: t.cache_read_tokens * n,
  cache_write_tokens: t.cache_write_tokens * n,
  cost_micros: t.cost_micros * n,
  cost_usd: Number(((t.cost_micros * n) / 1e6).toFixed(6)),
  records: t.records * n,
  turns: t.turns * n,
  unknown_turns: t.unknown_turns * n,
});

async function recomputeChangesNothing(sid?: string): Promise<void> {
  const r = await request(srv, 'POST', `/v1/usage/recompute${sid ? `?sid=${sid}` : ''}`, {
    token: srv.admin,
  });
  expect(r.status, r.text).toBe(200);
  expect(r.json).toMatchObject({ changed_writers: 0, changed_buckets: 0 });
}

describe('store faults', () => {
  it('the count commits but its answer is lost: 503, nothing indexed; the retry counts nothing more', async () => {
    const seg = claudeSession(srv.workDir);
    const first = seg.lines[0]!;
    expect((await postChunk(srv, srv.admin, seg.sid, seg.w, 0, first)).status).toBe(201);
    const rest = Buffer.concat(seg.lines.slice(1));
    faults.failAfterWrite = 1;
    const failed = await postChunk(srv, srv.admin, seg.sid, seg.w, first.length, rest);
    expectError(srv, failed, 503);
    const writer = await request(srv, 'GET', `/v1/sessions/${seg.sid}/writers/${seg.w}`, {
      token: srv.admin,
    });
    expect(writer.json.length).toBe(first.length);
    const retried = await postChunk(srv, srv.admin, seg.sid, seg.w, first.length, rest);
    expect(retried.status, retried.text).toBe(201);
    expect((await usageOf(seg.sid)).total).toEqual(CLAUDE);
    await recomputeChangesNothing(seg.sid);
  });

  it('the same, a line per chunk, the answer lost on every other counting chunk: each retried until 2xx, counted once', async () => {
    const seg = codexSession(srv.workDir);
    const before = await tenantTotal();
    let offset = 0;
    let lost = 0;
    for (const [i, line] of seg.lines.entries()) {
      faults.failAfterWrite = i % 2;
      for (let attempt = 0; ; attempt++) {
        expect(attempt).toBeLessThan(3);
        const a = await postChunk(srv, srv.admin, seg.sid, seg.w, offset, line);
        if (a.status === 503) {
          lost += 1;
          continue;
        }
        expect([200, 201], a.text).toContain(a.status);
        break;
      }
      faults.failAfterWrite = 0;
      offset += line.length;
    }
    expect(lost).toBeGreaterThan(2);
    expect((await usageOf(seg.sid)).total).toEqual(CODEX);
    const after = await tenantTotal();
    expect(after.total.cost_micros - (before.total.cost_micros ?? 0)).toBe(CODEX.cost_micros);
    expect(after.total.records - before.total.records).toBe(CODEX.records);
    await recomputeChangesNothing(seg.sid);
  });

  it("the writer's usage record cannot be read: 503, nothing indexed, the retry counts once", async () => {
    const seg = claudeSession(srv.workDir);
    const first = seg.lines[0]!;
    expect((await postChunk(srv, srv.admin, seg.sid, seg.w, 0, first)).status).toBe(201);
    const rest = Buffer.concat(seg.lines.slice(1));
    faults.readFails = 1;
    const failed = await postChunk(srv, srv.admin, seg.sid, seg.w, first.length, rest);
    expectError(srv, failed, 503);
    expect(failed.text).not.toContain('injected');
    const writer = await request(srv, 'GET', `/v1/sessions/${seg.sid}/writers/${seg.w}`, {
      token: srv.admin,
    });
    expect(writer.json.length).toBe(first.length);
    expect((await postChunk(srv, srv.admin, seg.sid, seg.w, first.length, rest)).status).toBe(201);
    expect((await usageOf(seg.sid)).total).toEqual(CLAUDE);
  });
});

describe('races', () => {
  it('four writers of one session uploaded at once, a line per chunk: the session and the tenant exact', async () => {
    const sid = newId('s');
    const segs = [0, 1, 2, 3].map(() => claudeSession(srv.workDir, sid));
    const before = await tenantTotal();
    await Promise.all(segs.map(uploadLines));
    const r = await usageOf(sid, '?by=writer');
    expect(r.total).toEqual(times(CLAUDE, 4));
    expect(r.groups).toHaveLength(4);
    const after = await tenantTotal();
    expect(after.total.cost_micros - (before.total.cost_micros ?? 0)).toBe(4 * CLAUDE.cost_micros);
    expect(after.total.turns - before.total.turns).toBe(4 * CLAUDE.turns);
    await recomputeChangesNothing(sid);
  });

  it('one writer sent by two clients at once (the same chunks, and overlapping ones): counted once', async () => {
    const seg = claudeSession(srv.workDir);
    const before = await tenantTotal();
    // client A: a line per chunk; client B: two lines per chunk; each retries from the offset the server
    // says it expects when told 409, until the whole segment is stored
    const client = async (per: number) => {
      let offset = 0;
      let guard = 0;
      while (offset < seg.bytes.length) {
        expect(++guard).toBeLessThan(200);
        let end = offset;
        for (let n = 0; n < per && end < seg.bytes.length; n++) end = seg.bytes.indexOf(0x0a, end) + 1;
        const a = await postChunk(srv, srv.admin, seg.sid, seg.w, offset, seg.bytes.subarray(offset, end));
        if (a.status === 201 || a.status === 200) offset = end;
        else if (a.status === 409) {
          const expected = a.json.error.details.expected_offset ?? a.json.error.details.length;
          expect(typeof expected, a.text).toBe('number');
          offset = expected;
        } else expect.fail(`${a.status} ${a.text}`);
      }
    };
    await Promise.all([client(1), client(2), client(1)]);
    expect((await usageOf(seg.sid)).total).toEqual(CLAUDE);
    const after = await tenantTotal();
    expect(after.total.cost_micros - (before.total.cost_micros ?? 0)).toBe(CLAUDE.cost_micros);
    await recomputeChangesNothing(seg.sid);
  });

  it('a recompute of the session between every two chunks (the no-op chunks remembered in memory too): exact', async () => {
    for (const [seg, table] of [
      [claudeSession(srv.workDir), CLAUDE],
      [codexSession(srv.workDir), CODEX],
    ] as const) {
      let offset = 0;
      for (const line of seg.lines) {
        const a = await postChunk(srv, srv.admin, seg.sid, seg.w, offset, line);
        expect(a.status, a.text).toBe(201);
        offset += line.length;
        const r = await request(srv, 'POST', `/v1/usage/recompute?sid=${seg.sid}`, { token: srv.admin });
        expect(r.status, r.text).toBe(200);
      }
      expect((await usageOf(seg.sid)).total).toEqual(table);
      await recomputeChangesNothing(seg.sid);
    }
  });

  it('recompute of the tenant while chunks arrive: afterwards equal to a fresh recompute, and to the tables', async () => {
    const segs = [claudeSession(srv.workDir), codexSession(srv.workDir), claudeSession(srv.workDir)];
    let uploading = true;
    const answers: number[] = [];
    const recomputes = (async () => {
      while (uploading) {
        const r = await request(srv, 'POST', '/v1/usage/recompute', { token: srv.admin });
        answers.push(r.status);
        if (r.status !== 200) expectError(srv, r, r.status);
      }
    })();
    await Promise.all(segs.map(uploadLines));
    uploading = false;
    await recomputes;
    expect(answers.length).toBeGreaterThan(0);
    // a recompute that met a chunk says so (409, run again) or counted right: never 500
    for (const s of answers) expect([200, 409, 429, 503]).toContain(s);
    const sessions = await Promise.all(segs.map((s) => usageOf(s.sid)));
    expect(sessions.map((s) => s.total)).toEqual([CLAUDE, CODEX, CLAUDE]);
    const tenantNow = await tenantTotal();
    await recomputeChangesNothing();
    expect(await tenantTotal()).toEqual(tenantNow);
  });
});

describe('two servers on one data directory', () => {
  // the real `hansard serve` (it holds the data directory's lock), not the in-process app above
  const real = useServer({ real: true, digester: false });

  it('the second is refused while the first serves; the first still counts', async () => {
    const lines: string[] = [];
    await expect(
      startServe({
        port: 0,
        host: '127.0.0.1',
        data: real.dataDir,
        print: (l) => lines.push(l),
        log: (l) => lines.push(l),
        rateLimit: 0,
        digester: false,
      }),
    ).rejects.toThrow(/lock|in use|another|already|holds/i);
    const seg = codexSession(real.workDir);
    let offset = 0;
    for (const line of seg.lines) {
      const a = await postChunk(real, real.admin, seg.sid, seg.w, offset, line);
      expect(a.status, a.text).toBe(201);
      offset += line.length;
    }
    const u = await request(real, 'GET', `/v1/sessions/${seg.sid}/usage`, { token: real.admin });
    expect(u.json.total).toEqual(CODEX);
  });
});

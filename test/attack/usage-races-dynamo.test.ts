/**
 * The faults and races of test/attack/usage-races.test.ts on DynamoDB Local (lib/store/dynamo/usage.ts:
 * the writer's usage item Put on condition of its `upto`, the session counters and the tenant's buckets
 * ADDed after it), over real HTTP on loopback: a count whose Put went through but whose answer was lost,
 * writers of one session uploaded at once, one writer sent by three clients at once. The writer records
 * (what `GET /v1/sessions/{sid}/usage` sums) must equal the hand-computed tables of
 * test/support/usage-sessions.ts; with no follow-up failing, the tenant's buckets must too; and a
 * recompute must change nothing.
 */
import { mkdirSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../harness/dynamodb-local.js';
import { newId } from '../../lib/log/index.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import { FsDigestStore } from '../../lib/store/fs/digest-store.js';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';
import type { UsageChange } from '../../lib/store/index.js';
import { expectError, request } from '../support/http.js';
import type { LocalSegment } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { postChunk } from '../support/stored.js';
import { CLAUDE, CODEX, claudeSession, codexSession, TODAY } from '../support/usage-sessions.js';

const faults = { failAfterWrite: 0 };

class FaultyDynamo extends DynamoStateStore {
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
      throw new Error('connection reset after the Put (injected)');
    }
  }
}

let dynamo: DynamoLocal | undefined;
let table = '';
beforeAll(async () => {
  dynamo = await startDynamoLocal();
  table = await dynamo.freshTable();
}, 60_000);
afterAll(async () => {
  await dynamo?.stop();
});
const srv = useServer({
  mayLog: /injected/,
  stores: (dataDir) => {
    mkdirSync(dataDir, { recursive: true });
    return {
      segments: new FsSegmentStore(dataDir),
      state: new FaultyDynamo({ tableName: table, client: dynamo!.client }),
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
  return a.json.total;
};
async function uploadLines(seg: LocalSegment): Promise<void> {
  let offset = 0;
  for (const line of seg.lines) {
    const a = await postChunk(srv, srv.admin, seg.sid, seg.w, offset, line);
    expect(a.status, a.text).toBe(201);
    offset += line.length;
  }
}
async function recomputeChangesNothing(sid: string): Promise<void> {
  const r = await request(srv, 'POST', `/v1/usage/recompute?sid=${sid}`, { token: srv.admin });
  expect(r.status, r.text).toBe(200);
  expect(r.json).toMatchObject({ changed_writers: 0, changed_buckets: 0 });
}

describe('on DynamoDB', () => {
  it('the Put commits but its answer is lost on every other counting chunk: each retried, counted once', async () => {
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
          expectError(srv, a, 503);
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
    // the ADDs ran once per Put: the buckets (eventually consistent) reach the same figures
    await expect
      .poll(async () => (await tenantTotal()).cost_micros - (before.cost_micros ?? 0), { timeout: 5_000 })
      .toBe(CODEX.cost_micros);
    await recomputeChangesNothing(seg.sid);
  });

  it('four writers of one session at once, a line per chunk: exact', async () => {
    const sid = newId('s');
    const segs = [0, 1, 2, 3].map(() => claudeSession(srv.workDir, sid));
    const before = await tenantTotal();
    await Promise.all(segs.map(uploadLines));
    const r = await usageOf(sid);
    expect(r.total).toMatchObject({
      cost_micros: 4 * CLAUDE.cost_micros,
      records: 8,
      turns: 8,
      unknown_turns: 4,
    });
    await expect
      .poll(async () => (await tenantTotal()).cost_micros - (before.cost_micros ?? 0), { timeout: 5_000 })
      .toBe(4 * CLAUDE.cost_micros);
    await recomputeChangesNothing(sid);
  });

  it('one writer sent by three clients at once: counted once', async () => {
    const seg = claudeSession(srv.workDir);
    const before = await tenantTotal();
    const client = async (per: number) => {
      let offset = 0;
      let guard = 0;
      while (offset < seg.bytes.length) {
        expect(++guard).toBeLessThan(200);
        let end = offset;
        for (let n = 0; n < per && end < seg.bytes.length; n++) end = seg.bytes.indexOf(0x0a, end) + 1;
        const a = await postChunk(srv, srv.admin, seg.sid, seg.w, offset, seg.bytes.subarray(offset, end));
        if (a.status === 201 || a.status === 200) offset = end;
        else if (a.status === 409) offset = a.json.error.details.expected_offset;
        else if (a.status === 503)
          expectError(srv, a, 503); // a count that met another's: sent again
        else expect.fail(`${a.status} ${a.text}`);
      }
    };
    await Promise.all([client(1), client(2), client(1)]);
    expect((await usageOf(seg.sid)).total).toEqual(CLAUDE);
    await expect
      .poll(async () => (await tenantTotal()).cost_micros - (before.cost_micros ?? 0), { timeout: 5_000 })
      .toBe(CLAUDE.cost_micros);
    await recomputeChangesNothing(seg.sid);
  });
});

/**
 * Attack on the size of a writer's usage item on DynamoDB (lib/store/dynamo/usage.ts; an item holds at
 * most 400 KB): the fold cuts names to 64 UTF-16 units and models to 100 (fold.ts NAME_CHARS,
 * KEY_CHARS) and a writer keeps at most WRITER_BUCKETS_MAX = 200 buckets, but a unit of CJK text is 3
 * bytes of UTF-8. A writer whose every turn answers a new person with a 64-unit CJK name and names a new
 * 100-unit CJK model fills all 200 buckets with the longest keys the rules keep. Over real HTTP on loopback
 * with DynamoDB Local: every chunk must be counted (201), the totals exact, and a recompute must agree.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../harness/dynamodb-local.js';
import { newId, openSession } from '../../lib/log/index.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import { FsDigestStore } from '../../lib/store/fs/digest-store.js';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';
import { WRITER_BUCKETS_MAX } from '../../lib/store/index.js';
import { request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { useServer } from '../support/server.js';
import { postChunk } from '../support/stored.js';

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
  stores: (dataDir) => {
    mkdirSync(dataDir, { recursive: true });
    return {
      segments: new FsSegmentStore(dataDir),
      state: new DynamoStateStore({ tableName: table, client: dynamo!.client }),
      digests: new FsDigestStore(dataDir),
    };
  },
});

/** `n` units of CJK text distinct per `i` (3 bytes of UTF-8 a unit). */
const cjk = (i: number, n: number) => {
  const head = String.fromCharCode(0x4e00 + (i % 20_000), 0x4e00 + Math.floor(i / 20_000));
  return (head + '漢'.repeat(n)).slice(0, n);
};

describe('the widest buckets a writer can keep', () => {
  it(`${WRITER_BUCKETS_MAX * 2} turns, each a new 64-unit CJK person and a new 100-unit CJK model: all counted`, async () => {
    mkdirSync(srv.workDir, { recursive: true });
    const s = openSession(mkdtempSync(join(srv.workDir, 'wide-')), {
      sid: newId('s'),
      agent: cjk(999_999, 64),
      provenance: 'hook',
    });
    const n = WRITER_BUCKETS_MAX * 2;
    for (let i = 0; i < n; i++) {
      const m = s.message({ user_id: cjk(i, 64), text: 'go' });
      const t = s.turnStart({ context_message_ids: [m.id] });
      s.note(
        { author: 'claude-code', text: 'token usage' },
        {
          extra: {
            import_kind: 'token_usage',
            usage_source: 'claude_message',
            message_id: `msg_${cjk(i, 100)}`,
            model: cjk(i, 100),
            usage: { input_tokens: 10, output_tokens: 5 },
          },
        },
      );
      s.turnEnd({ turn_id: t.turn_id, status: 'completed' });
    }
    s.close();
    const seg = readLocal({ sid: s.sid, w: s.w, dir: s.dir, path: s.path });
    let offset = 0;
    for (let i = 0; i < seg.lines.length; i += 100) {
      const body = Buffer.concat(seg.lines.slice(i, i + 100));
      const a = await postChunk(srv, srv.admin, seg.sid, seg.w, offset, body);
      expect(a.status, `chunk at line ${i}: ${a.text.slice(0, 300)}`).toBe(201);
      offset += body.length;
    }
    const u = await request(srv, 'GET', `/v1/sessions/${seg.sid}/usage`, { token: srv.admin });
    expect(u.status, u.text).toBe(200);
    expect(u.json.total).toMatchObject({ records: n, turns: n, unknown_turns: 0, input_tokens: 10 * n });
    const r = await request(srv, 'POST', `/v1/usage/recompute?sid=${seg.sid}`, { token: srv.admin });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toMatchObject({ changed_writers: 0, changed_buckets: 0 });
  }, 180_000);
});

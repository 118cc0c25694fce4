/**
 * Attack on the size of a writer's usage record (lib/log/analyse/usage/fold.ts `FoldState`, "JSON,
 * bounded: the ingest path stores it with the writer"; commit c119242: "so a writer's stored state stays
 * small whatever its lines hold (a megabyte name once would have made its DynamoDB usage item too large
 * and stuck every later chunk)"): an hcn writer whose `message`-scope usage notes name thousands of
 * distinct models. Over real HTTP on loopback, on the real SQLite store and on DynamoDB Local (the AWS
 * deployment's store, whose items hold at most 400 KB): the writer's stored state must stay small, and
 * every chunk, the later ones too, must be counted (201), not refused for good.
 */
import { mkdirSync, mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../harness/dynamodb-local.js';
import { newId, openSession } from '../../lib/log/index.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import { FsDigestStore } from '../../lib/store/fs/digest-store.js';
import { FsSegmentStore } from '../../lib/store/fs/segment-store.js';
import { request } from '../support/http.js';
import { readLocal } from '../support/segments.js';
import { type SuiteServer, useServer } from '../support/server.js';
import { postChunk } from '../support/stored.js';

/** Distinct models named by the writer's notes: far past every cap the fold has (32 and 200). */
const MODELS = 3_000;
/** Bytes of a writer's usage record the stores can always hold (DynamoDB: 400 KB an item, all of it). */
const STATE_MAX = 64 * 1024;

/** An hcn writer: a turn, MODELS message-scope records of distinct models, then one of a known model. */
function hcnWriter(root: string) {
  mkdirSync(root, { recursive: true });
  const s = openSession(mkdtempSync(join(root, 'hcn-')), {
    sid: newId('s'),
    agent: 'hcn',
    provenance: 'harness',
  });
  const t = s.turnStart({ context_message_ids: null });
  for (let i = 0; i < MODELS; i++)
    s.note(
      { author: 'hcn', text: 'usage' },
      {
        extra: {
          import_kind: 'token_usage',
          usage_source: 'hcn',
          scope: 'message',
          callId: `call_${i}`,
          model: `model-${i}-${'m'.repeat(80)}`,
          inputTokens: 10,
          outputTokens: 5,
        },
      },
    );
  s.note(
    { author: 'hcn', text: 'usage' },
    {
      extra: {
        import_kind: 'token_usage',
        usage_source: 'hcn',
        scope: 'message',
        callId: 'call_last',
        model: 'gpt-5',
        inputTokens: 1000,
        outputTokens: 100,
      },
    },
  );
  s.turnEnd({ turn_id: t.turn_id, status: 'completed' });
  s.close();
  return readLocal({ sid: s.sid, w: s.w, dir: s.dir, path: s.path });
}

async function attack(srv: SuiteServer<'local', 'x'>) {
  const seg = hcnWriter(srv.workDir);
  // chunks of 500 lines, as a shipper catching up would send them
  const statuses: number[] = [];
  let offset = 0;
  for (let i = 0; i < seg.lines.length; i += 500) {
    const body = Buffer.concat(seg.lines.slice(i, i + 500));
    const a = await postChunk(srv, srv.admin, seg.sid, seg.w, offset, body);
    statuses.push(a.status);
    if (a.status !== 201) break;
    offset += body.length;
  }
  const stored = await srv.stores.state.getWriterUsage(srv.tenant.name, seg.sid, seg.w);
  const stateBytes = Buffer.byteLength(JSON.stringify(stored?.state ?? {}));
  const recordBytes = Buffer.byteLength(JSON.stringify(stored ?? {}));
  return { seg, statuses, stateBytes, recordBytes, offset };
}

describe('SQLite', () => {
  const srv = useServer<'local', 'x'>({ tokens: { x: ['read'] } });

  // Was a DEFECT (fixed): `hcn_counted` (what each model counted, for the retraction when a wider scope appears) has
  // one entry per model for `message` and `turn` scope with no cap (only `session` snapshots are capped
  // at HCN_MODELS_MAX), so 3,000 models make a stored state of about 1.3 MB, read and written again with
  // every later chunk of the writer. It should stay bounded as the rest of the state is (models past the
  // cap counted under one key, as WRITER_BUCKETS_MAX does for buckets).
  // Fixed: models past HCN_MODELS_MAX are summed under one key. The record's 200 buckets (WRITER_BUCKETS_MAX)
  // are most of what is left: well under DynamoDB's 400 KB (usage-dynamo-wide.test.ts holds the worst case).
  it("3,000 models in message-scope notes: the writer's stored usage record stays small", async () => {
    const { statuses, stateBytes, recordBytes } = await attack(srv);
    expect(statuses.every((s) => s === 201)).toBe(true);
    expect(stateBytes).toBeLessThan(STATE_MAX);
    expect(recordBytes).toBeLessThan(300 * 1024);
  }, 120_000);
});

describe('DynamoDB', () => {
  // test/support/dynamo-server.ts's setup, with what the server logs when the item is refused allowed
  let dynamo: DynamoLocal | undefined;
  let table = '';
  beforeAll(async () => {
    dynamo = await startDynamoLocal();
    table = await dynamo.freshTable();
  }, 60_000);
  afterAll(async () => {
    await dynamo?.stop();
  });
  const srv = useServer<'local', 'x'>({
    tokens: { x: ['read'] },
    mayLog: /ValidationException|[Ii]tem size|usage/,
    stores: (dataDir) => {
      mkdirSync(dataDir, { recursive: true });
      return {
        segments: new FsSegmentStore(dataDir),
        state: new DynamoStateStore({ tableName: table, client: dynamo!.client }),
        digests: new FsDigestStore(dataDir),
      };
    },
  });

  // Was a DEFECT (fixed): the same state on DynamoDB is one item of the writer's usage: past 400 KB the write is
  // refused (ValidationException), the chunk answers 503 and so does every retry and every later chunk
  // of the writer, whose segment then never grows again: the writer is stuck for good. Every chunk should
  // be counted (201) and the session's usage hold all MODELS + 1 records.
  it('3,000 models in message-scope notes: every chunk is counted, none refused for good', async () => {
    const { seg, statuses, offset } = await attack(srv);
    expect(
      statuses.every((s) => s === 201),
      `answers: ${statuses.join(',')}`,
    ).toBe(true);
    expect(offset).toBe(seg.bytes.length);
    const u = await request(srv, 'GET', `/v1/sessions/${seg.sid}/usage`, { token: srv.admin });
    expect(u.json.total.records).toBe(MODELS + 1);
  }, 180_000);
});

/**
 * What the DynamoDB state adapter has of its own, beside the entity contracts both adapters run
 * (test/store/contract/, run by test/store/contract/{sqlite,dynamo}.test.ts): its item layout, TTL, the
 * SDK's errors kept, and concurrent ingest through the whole app on DynamoDB. SQLite's own:
 * test/store/sqlite/state-store.test.ts.
 *
 * Where DynamoDB Local differs from AWS: its GSIs are updated synchronously (AWS: eventually consistent,
 * so listings right after a write would need polling there); it accepts the TTL setting but never
 * deletes expired items; it runs transactions one at a time, so the concurrent cases reach the
 * condition checks but never a `TransactionConflict` cancellation (injected below to test the retry).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DescribeTimeToLiveCommand,
  DynamoDBClient,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../../harness/dynamodb-local.js';
import { createApp } from '../../../lib/http/app.js';
import { newId } from '../../../lib/log/format/ids.js';
import { ensureTenant } from '../../../lib/service/tenants/bootstrap.js';
import { boardShard, keys, USAGE_SHARDS, usageShard } from '../../../lib/store/dynamo/schema.js';
import { DynamoStateStore } from '../../../lib/store/dynamo/state-store.js';
import { FsSegmentStore } from '../../../lib/store/fs/segment-store.js';
import { StateConflictError } from '../../../lib/store/index.js';
import { storeWithItems } from '../../support/dynamo-items.js';
import { writeSession } from '../../support/segments.js';
import { advanceOf, tokenRecord } from '../contract/records.js';

const tmp = mkdtempSync(join(tmpdir(), 'hansard-state-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('on DynamoDB Local', () => {
  let local: DynamoLocal;
  beforeAll(async () => {
    local = await startDynamoLocal();
  });
  afterAll(async () => {
    await local?.stop();
  });

  const newStore = async () =>
    new DynamoStateStore({ tableName: await local.freshTable(), client: local.client });

  describe('DynamoStateStore', () => {
    it('stores its items under the DESIGN §5 keys, with the GSI keys of the listings', async () => {
      const { store, get } = await storeWithItems(local);
      const sid = newId('s');
      const w = newId('w');
      const token = tokenRecord('acme', { created_at: '2026-01-01T00:00:00.000Z' });
      await store.createTenant('acme', '2026-01-01T00:00:00.000Z');
      await store.putToken(token);
      await store.advanceWriter('acme', sid, w, 0, advanceOf(0, 12, { lines: 1, when: 1 }));
      await store.advanceWriter('acme', sid, w, 12, advanceOf(12, 8, { lines: 2, when: 2 }));
      await store.putStatus({
        tenant: 'acme',
        sid,
        reports: [
          {
            state: 'working',
            note: '',
            events: [],
            events_dropped: 0,
            reported_by: token.id,
            reported_at: '2026-01-01T00:00:03.000Z',
          },
        ],
        dropped_events: 0,
        dropped_reports: 0,
        version: 1,
      });
      expect(await get({ pk: 'TENANT#acme', sk: 'TENANT' })).toBeDefined();
      expect(await get({ pk: `TOKEN#${token.hash}`, sk: 'TOKEN' })).toMatchObject({
        gsi1pk: 'T#acme#TOKENS',
        gsi1sk: `2026-01-01T00:00:00.000Z#${token.id}`,
      });
      expect(await get({ pk: `TOKENID#${token.id}`, sk: 'TOKENID' })).toMatchObject({ hash: token.hash });
      expect(await get({ pk: 'T#acme', sk: `S#${sid}` })).toMatchObject({
        gsi1pk: `T#acme#BOARD#${boardShard(sid)}`,
        gsi1sk: `2026-01-01T00:00:03.000Z#${sid}`,
        writers: 1,
        bytes: 20,
      });
      // chunk records under C# (issue 17.6): the writer items alone under W#, one query lists them
      expect(await get({ pk: `T#acme#S#${sid}`, sk: `W#${w}` })).toMatchObject({
        length: 20,
        lines: 2,
        chunk_keys: 2,
      });
      expect(await get({ pk: `T#acme#S#${sid}`, sk: `C#${w}#000000000000012` })).toMatchObject({
        offset: 12,
        length: 8,
      });
      expect(keys.chunk('acme', sid, w, 12).sk).toBe(`C#${w}#000000000000012`);
      expect(await get({ pk: `T#acme#S#${sid}`, sk: `W#${w}#C#000000000000012` })).toBeUndefined();
      const status = await get({ pk: `T#acme#S#${sid}`, sk: 'STATUS' });
      expect(status).toMatchObject({ version: 1 });
      expect(JSON.parse(status!.record_json as string).reports[0]).toMatchObject({ state: 'working' });
      await store.close();
    });

    it("keeps a tenant's usage in USAGE# shards of its partition, a session always in one shard", async () => {
      const table = await local.freshTable();
      const store = new DynamoStateStore({ tableName: table, client: local.client });
      const doc = DynamoDBDocumentClient.from(local.client);
      const sid = newId('s');
      const w = newId('w');
      await store.advanceWriter('acme', sid, w, 0, advanceOf(0, 12, { lines: 1, when: 1 }));
      await store.advanceWriter('acme', sid, w, 12, advanceOf(12, 8, { lines: 2, when: 2 }));
      const shard = usageShard(sid);
      expect(shard).toBeGreaterThanOrEqual(0);
      expect(shard).toBeLessThan(USAGE_SHARDS);
      const item = (await doc.send(new GetCommand({ TableName: table, Key: keys.usage('acme', shard) })))
        .Item;
      expect(item).toMatchObject({ pk: 'T#acme', sk: `USAGE#${shard}`, bytes: 20 });
      // Sessions spread over the shards (FNV-1a of the id), and the sum is the same whatever the spread.
      const shards = new Set(Array.from({ length: 64 }, () => usageShard(newId('s'))));
      expect(shards.size).toBeGreaterThan(USAGE_SHARDS / 2);
      // Usage items are not sessions: the board listing does not show them.
      expect((await store.listSessions('acme', 10, null)).items.map((x) => x.sid)).toEqual([sid]);
      await store.close();
    });

    it('links a child token beside its parent id guard, sorted by expiry, and keeps server secrets apart', async () => {
      const { store, get } = await storeWithItems(local);
      const parent = tokenRecord('acme');
      const child = tokenRecord('acme', {
        parent: parent.id,
        root: parent.id,
        expires_at: '2026-01-02T00:00:00.000Z',
      });
      await store.putToken(parent);
      await store.putToken(child);
      const linkKey = { pk: `TOKENID#${parent.id}`, sk: `CHILD#2026-01-02T00:00:00.000Z#${child.id}` };
      expect(keys.tokenChild(parent.id, child.expires_at, child.id)).toEqual(linkKey);
      expect(await get(linkKey)).toEqual({ ...linkKey, tenant: 'acme', id: child.id });
      expect(await get({ pk: `TOKEN#${child.hash}`, sk: 'TOKEN' })).toMatchObject({
        parent: parent.id,
        root: parent.id,
      });
      // A root token has no link and no parent attribute (absent reads back as null).
      expect(await get({ pk: `TOKEN#${parent.hash}`, sk: 'TOKEN' })).not.toHaveProperty('parent');
      await store.revokeToken('acme', child.id, '2026-01-01T00:00:05.000Z');
      expect(await get(linkKey)).toMatchObject({ revoked_at: '2026-01-01T00:00:05.000Z' });
      await store.serverSecret('cursor-hmac-sha256-v1', 'k1');
      expect(await get({ pk: 'SECRET#cursor-hmac-sha256-v1', sk: 'SECRET' })).toMatchObject({ value: 'k1' });
      await store.close();
    });

    it('creates the table with TTL on expires_at', async () => {
      const table = await local.freshTable();
      const ttl = await local.client.send(new DescribeTimeToLiveCommand({ TableName: table }));
      expect(ttl.TimeToLiveDescription).toMatchObject({
        AttributeName: 'expires_at',
        TimeToLiveStatus: 'ENABLED',
      });
    });

    it('refuses the losing advance by the transaction condition, when both passed the read before it', async () => {
      // A barrier in the client holds each TransactWriteItems until both have been sent: both advances
      // have then read the writer at 0, and only the condition on the writer item can tell them apart.
      const waiting: Array<() => void> = [];
      const client = new DynamoDBClient(local.config);
      client.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === 'TransactWriteItemsCommand') {
            await new Promise<void>((release) => {
              waiting.push(release);
              if (waiting.length === 2) for (const r of waiting) r();
            });
          }
          return next(args);
        },
        { step: 'initialize', name: 'transactionBarrier' },
      );
      const store = new DynamoStateStore({ tableName: await local.freshTable(), client });
      const sid = newId('s');
      const w = newId('w');
      const settled = await Promise.allSettled([
        store.advanceWriter('acme', sid, w, 0, advanceOf(0, 10, { lines: 1, when: 1 })),
        store.advanceWriter('acme', sid, w, 0, advanceOf(0, 20, { lines: 2, when: 1 })),
      ]);
      expect(waiting).toHaveLength(2);
      const lost = settled.filter((r) => r.status === 'rejected');
      expect(lost).toHaveLength(1);
      const winnerLength = settled[0]!.status === 'fulfilled' ? 10 : 20;
      expect((lost[0] as PromiseRejectedResult).reason).toMatchObject({
        name: 'StateConflictError',
        message: `writer ${w} is at ${winnerLength} bytes, not 0`,
        currentLength: winnerLength,
      });
      expect(await store.getSession('acme', sid)).toMatchObject({ writers: 1, bytes: winnerLength });
      client.destroy();
    });

    // DynamoDB Local runs transactions one at a time and never cancels one for a `TransactionConflict`;
    // AWS does when two transactions touch one item (two writers of a session, one session index entry).
    // So the cancellation is injected here, in the real client's middleware, with the SDK's own error.
    it('tries a transaction cancelled by a TransactionConflict again, counted, and gives up after 10 tries', async () => {
      let conflicts = 0;
      const client = new DynamoDBClient(local.config);
      client.middlewareStack.add(
        (next, context) => async (args) => {
          if (context.commandName === 'TransactWriteItemsCommand' && conflicts > 0) {
            conflicts -= 1;
            throw new TransactionCanceledException({
              message:
                'Transaction cancelled, please refer cancellation reasons for specific reasons [None, None, TransactionConflict]',
              $metadata: {},
              CancellationReasons: [{ Code: 'None' }, { Code: 'None' }, { Code: 'TransactionConflict' }],
            });
          }
          return next(args);
        },
        { step: 'initialize', name: 'injectTransactionConflict' },
      );
      const store = new DynamoStateStore({ tableName: await local.freshTable(), client });
      const sid = newId('s');
      const w = newId('w');
      conflicts = 2;
      await store.advanceWriter('acme', sid, w, 0, advanceOf(0, 10, { lines: 1, when: 1 }));
      expect(conflicts).toBe(0);
      expect(await store.getSession('acme', sid)).toMatchObject({ writers: 1, lines: 1, bytes: 10 });
      expect(store.retries).toMatchObject({ conflicts: 2, exhausted: 0 });
      conflicts = 10;
      const advance = store.advanceWriter('acme', sid, w, 10, advanceOf(10, 5, { lines: 2, when: 2 }));
      await expect(advance).rejects.toBeInstanceOf(TransactionCanceledException);
      expect(conflicts).toBe(0);
      expect(store.retries).toMatchObject({ conflicts: 11, exhausted: 1 });
      expect((await store.getWriter('acme', sid, w))?.length).toBe(10);
      client.destroy();
    });

    it("passes on the SDK's own errors, not a conflict, when the table is missing", async () => {
      const store = new DynamoStateStore({ tableName: 'no-such-table', client: local.client });
      const advance = store.advanceWriter(
        'acme',
        newId('s'),
        newId('w'),
        0,
        advanceOf(0, 1, { lines: 1, when: 1 }),
      );
      await expect(advance).rejects.toMatchObject({ name: 'ResourceNotFoundException' });
      await expect(store.createTenant('acme', '2026-01-01T00:00:00.000Z')).rejects.toMatchObject({
        name: 'ResourceNotFoundException',
      });
      await expect(store.putToken(tokenRecord('acme'))).rejects.not.toBeInstanceOf(StateConflictError);
      await expect(store.touchToken('0'.repeat(64), '2026-01-01T00:00:00.000Z')).rejects.toMatchObject({
        name: 'ResourceNotFoundException',
      });
    });
  });

  // Issue 4: "concurrent ingest loses nothing and duplicates nothing", through createApp.
  describe('ingest through createApp on DynamoStateStore + FsSegmentStore', () => {
    /**
     * A session of a few lines, an app over a new store and file segments (any server error fails the
     * case; the deployment's quota `quotaOf` the session's first three lines' bytes, when given), tenant
     * acme with its admin token, and `post`, which sends a chunk of the session's writer at `offset`.
     */
    const ingestWorld = async (quotaOf?: (head: number) => number) => {
      const state = await newStore();
      const seg = writeSession(mkdtempSync(join(tmp, 'work-')));
      const head = Buffer.concat(seg.lines.slice(0, 3));
      const app = createApp({
        segments: new FsSegmentStore(mkdtempSync(join(tmp, 'segments-'))),
        state,
        ...(quotaOf ? { limits: { tenantQuotaBytes: quotaOf(head.length) } } : {}),
        log: (m, e) => {
          throw new Error(`unexpected server error: ${m} ${String(e)}`);
        },
      });
      const admin = (await ensureTenant(state, 'acme', new Date()))!.token;
      const headers = { authorization: `Bearer ${admin}`, 'content-type': 'application/x-ndjson' };
      const post = (offset: number, body: Buffer) =>
        app.request(`/v1/sessions/${seg.sid}/writers/${seg.w}/chunks?offset=${offset}`, {
          method: 'POST',
          headers,
          body,
        });
      return { state, app, seg, head, headers, post };
    };

    it('keeps exactly the accepted bytes when two POSTs race for one writer', async () => {
      const { state, app, seg, headers, post: send } = await ingestWorld();
      const post = async (offset: number, body: Buffer) => {
        const res = await send(offset, body);
        return { status: res.status, json: (await res.json()) as Record<string, unknown> };
      };

      // Two different first chunks at offset 0: one is accepted, the other told where the segment ends.
      const short = Buffer.concat(seg.lines.slice(0, 2));
      const long = Buffer.concat(seg.lines.slice(0, 4));
      const [a, b] = await Promise.all([post(0, short), post(0, long)]);
      expect([a.status, b.status].sort()).toEqual([201, 409]);
      const accepted = a.status === 201 ? short : long;
      const refused = a.status === 201 ? b : a;
      expect(refused.json).toMatchObject({
        error: { code: 'offset_mismatch', details: { expected_offset: accepted.length } },
      });

      // The rest, sent twice at once: one append, one retry answered the same, nothing twice.
      const rest = seg.bytes.subarray(accepted.length);
      const [c, d] = await Promise.all([post(accepted.length, rest), post(accepted.length, rest)]);
      expect([c.status, d.status].sort()).toEqual([200, 201]);
      expect(c.json).toEqual(d.json);
      expect(c.json).toMatchObject({ length: seg.bytes.length, lines: seg.lines.length });

      const writer = await app.request(`/v1/sessions/${seg.sid}/writers/${seg.w}`, { headers });
      expect(await writer.json()).toMatchObject({ length: seg.bytes.length, lines: seg.lines.length });
      const stored = await app.request(`/v1/sessions/${seg.sid}/writers/${seg.w}/segment`, { headers });
      expect(Buffer.from(await stored.arrayBuffer()).equals(seg.bytes)).toBe(true);
      expect(await state.getSession('acme', seg.sid)).toMatchObject({
        writers: 1,
        lines: seg.lines.length,
        bytes: seg.bytes.length,
      });
      await state.close();
    });

    it('refuses a chunk past the tenant quota from the DynamoDB usage total, storing nothing', async () => {
      const { state, seg, head, post } = await ingestWorld((n) => n + 1);
      expect((await post(0, head)).status).toBe(201);
      const refused = await post(head.length, seg.lines[3]!);
      expect(refused.status).toBe(413);
      expect(await refused.json()).toMatchObject({
        error: {
          code: 'quota_exceeded',
          details: {
            quota_bytes: head.length + 1,
            used_bytes: head.length,
            chunk_bytes: seg.lines[3]!.length,
          },
        },
      });
      expect(await state.tenantUsage('acme')).toEqual({ bytes: head.length });
      expect(await state.getWriter('acme', seg.sid, seg.w)).toMatchObject({ length: head.length, lines: 3 });
      await state.close();
    });

    it("refuses a chunk past the tenant's own quota on its tenant item, the deployment's being larger", async () => {
      const { state, seg, head, post } = await ingestWorld((n) => 10 * n);
      await state.setTenantSettings('acme', { quota_bytes: head.length + 1 }, new Date().toISOString());
      expect((await post(0, head)).status).toBe(201);
      const refused = await post(head.length, seg.lines[3]!);
      expect(refused.status).toBe(413);
      expect(await refused.json()).toMatchObject({
        error: { code: 'quota_exceeded', details: { quota_bytes: head.length + 1, used_bytes: head.length } },
      });
      expect(await state.getWriter('acme', seg.sid, seg.w)).toMatchObject({ length: head.length, lines: 3 });
      await state.close();
    });
  });
});

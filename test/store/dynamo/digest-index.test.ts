import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../../harness/dynamodb-local.js';
import { newId } from '../../../lib/log/format/ids.js';
import { accessKey, type DynamoAccess } from '../../../lib/store/dynamo/access.js';
import { DIGEST_DUE_SHARDS, digestDueShard, keys } from '../../../lib/store/dynamo/schema.js';
import { DynamoStateStore } from '../../../lib/store/dynamo/state-store.js';
import { storeWithItems } from '../../support/dynamo-items.js';
import { recordingClient } from '../../support/dynamo-recorder.js';
import { advanceOf, at, headOf } from '../contract/records.js';

describe('on DynamoDB Local', () => {
  let local: DynamoLocal;
  beforeAll(async () => {
    local = await startDynamoLocal();
  }, 60_000);
  afterAll(async () => {
    await local?.stop();
  });

  describe('DynamoStateStore digest items', () => {
    it('keeps the head at T#{t}#S#{sid}/DIGEST and the due mark at DIGEST_DUE#{shard}/{t}#{sid}', async () => {
      const { store, get } = await storeWithItems(local);
      const sid = newId('s');
      const w = newId('w');
      const a = advanceOf(0, 10, { lines: 1, when: 1, digest_due: true });
      await store.advanceWriter('acme', sid, w, 0, a);
      const shard = digestDueShard('acme', sid);
      expect(shard).toBeGreaterThanOrEqual(0);
      expect(shard).toBeLessThan(DIGEST_DUE_SHARDS);
      expect(keys.digestDue('acme', sid)).toEqual({ pk: `DIGEST_DUE#${shard}`, sk: `acme#${sid}` });
      expect(await get({ pk: `DIGEST_DUE#${shard}`, sk: `acme#${sid}` })).toEqual({
        pk: `DIGEST_DUE#${shard}`,
        sk: `acme#${sid}`,
        tenant: 'acme',
        sid,
        due_at: at(1),
      });
      expect(await get({ pk: `T#acme#S#${sid}`, sk: `W#${w}` })).toMatchObject({ chain: a.chain });
      expect(await get({ pk: `T#acme#S#${sid}`, sk: `C#${w}#000000000000000` })).toMatchObject({
        chain: a.chain,
      });
      await store.putDigestHead('acme', sid, null, headOf(1, 2), null, 10);
      expect(await get({ pk: `T#acme#S#${sid}`, sk: 'DIGEST' })).toMatchObject({
        seq: 1,
        signature: 'sig-1',
      });
      // closed: the mark item is deleted, not left behind
      expect(await get({ pk: `DIGEST_DUE#${shard}`, sk: `acme#${sid}` })).toBeUndefined();
      // the head is not a writer
      expect((await store.listWriters('acme', sid)).map((x) => x.w)).toEqual([w]);
      // marks spread over the shards
      const shards = new Set(Array.from({ length: 64 }, () => digestDueShard('acme', newId('s'))));
      expect(shards.size).toBeGreaterThan(DIGEST_DUE_SHARDS / 2);
      await store.close();
    });

    it('finds due sessions in every one of the 16 shards', async () => {
      const store = new DynamoStateStore({ tableName: await local.freshTable(), client: local.client });
      const bySid = new Map<number, string>();
      while (bySid.size < DIGEST_DUE_SHARDS) {
        const sid = newId('s');
        bySid.set(digestDueShard('acme', sid), sid);
      }
      const sids = [...bySid.values()];
      for (const [i, sid] of sids.entries()) {
        await store.advanceWriter(
          'acme',
          sid,
          newId('w'),
          0,
          advanceOf(0, 1, { lines: 1, when: i, digest_due: true }),
        );
      }
      const due = await store.listDigestsDue(at(1000), 100);
      expect(due.map((d) => d.sid)).toEqual(sids);
      await store.close();
    });

    // Issue 17.1: the transaction holds the writer's own items only (the session's counts and the usage
    // follow it, outside); the due mark joins it for the chunks that make the session due.
    it("writes no due mark for an ordinary chunk: a transaction of the writer's own two items", async () => {
      const table = await local.freshTable();
      const sent: DynamoAccess[][] = [];
      const client = recordingClient(local.config, (a) => sent.push(a));
      const store = new DynamoStateStore({ tableName: table, client });
      const sid = newId('s');
      const w = newId('w');
      await store.advanceWriter('acme', sid, w, 0, advanceOf(0, 10, { lines: 1, when: 1 }));
      const transaction = sent.find((a) => a.length > 1)!;
      expect(transaction.map(accessKey)).toEqual(['UpdateItem T#', 'PutItem T#']);
      const doc = DynamoDBDocumentClient.from(local.client);
      for (let shard = 0; shard < DIGEST_DUE_SHARDS; shard++) {
        const res = await doc.send(
          new QueryCommand({
            TableName: table,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: { ':pk': `DIGEST_DUE#${shard}` },
          }),
        );
        expect(res.Items ?? []).toEqual([]);
      }
      sent.length = 0;
      await store.advanceWriter(
        'acme',
        sid,
        w,
        10,
        advanceOf(10, 5, { lines: 2, when: 2, digest_due: true }),
      );
      expect(sent.find((a) => a.length > 1)!.map(accessKey)).toEqual([
        'UpdateItem T#',
        'PutItem T#',
        'PutItem DIGEST_DUE#',
      ]);
      client.destroy();
    });
  });
});

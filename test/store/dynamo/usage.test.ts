/**
 * What only the DynamoDB usage adapter has (issue 27, lib/store/dynamo/usage.ts), on DynamoDB Local with
 * the real SDK; the contract (test/store/contract/usage.contract.ts) has the rest:
 * - where its items sit (the writer's record beside its writer item, the session's counters in the
 *   session's partition, buckets in the session's shard with day-first escaped sort keys), and that the
 *   writer index does not read them as writers;
 * - a follow-up ADD that fails for good (throttling injected in the client's middleware, as
 *   hot-keys.test.ts does) is kept on the writer's usage item and added by the writer's next apply.
 */
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../../harness/dynamodb-local.js';
import { COUNTER_KEYS } from '../../../lib/log/analyse/usage/index.js';
import { newId } from '../../../lib/log/format/ids.js';
import { keys, usageBucketPk, usageBucketShard } from '../../../lib/store/dynamo/schema.js';
import { DynamoStateStore } from '../../../lib/store/dynamo/state-store.js';
import type { StoredUsageCounters, UsageBucket } from '../../../lib/store/index.js';
import { clientWith, keyOf, throttled } from '../../support/dynamo-faults.js';
import { advanceOf, at } from '../contract/records.js';

let local: DynamoLocal;
beforeAll(async () => {
  local = await startDynamoLocal();
}, 120_000);
afterAll(async () => {
  await local?.stop();
});

const countersOf = (base: number) =>
  Object.fromEntries(COUNTER_KEYS.map((k, i) => [k, base + i])) as unknown as StoredUsageCounters;
const plus = (a: StoredUsageCounters, b: StoredUsageCounters) =>
  Object.fromEntries(COUNTER_KEYS.map((k) => [k, a[k] + b[k]])) as unknown as StoredUsageCounters;
const bucket = (agent: string, model: string, base: number): UsageBucket => ({
  day: '2026-12-07',
  agent,
  person: 'priya',
  model,
  counters: countersOf(base),
});
const record = (upto: number, buckets: UsageBucket[]) => ({
  upto,
  state: { v: 1, agent: 'claude-code' },
  buckets,
  updated_at: at(upto),
});

describe('DynamoStateStore usage items (issue 27)', () => {
  it('keeps the writer record beside the writer, and buckets in the session shard under escaped day-first keys', async () => {
    const table = await local.freshTable();
    const store = new DynamoStateStore({ tableName: table, client: local.client });
    const doc = DynamoDBDocumentClient.from(local.client);
    const [sid, w] = [newId('s'), newId('w')];
    await store.advanceWriter('acme', sid, w, 0, advanceOf(0, 40, { lines: 3, when: 1 }));
    const b = bucket('team#bots', 'claude-sonnet-4-5', 10);
    await store.applyWriterUsage('acme', sid, w, null, { next: record(40, [b]), deltas: [b] });

    const writerItem = await doc.send(
      new GetCommand({ TableName: table, Key: keys.writerUsage('acme', sid, w) }),
    );
    expect(writerItem.Item).toMatchObject({ pk: `T#acme#S#${sid}`, sk: `USAGE#${w}`, upto: 40 });
    expect(writerItem.Item).not.toHaveProperty('unapplied');
    const sessionItem = await doc.send(
      new GetCommand({ TableName: table, Key: keys.sessionUsage('acme', sid) }),
    );
    expect(sessionItem.Item).toMatchObject({ pk: `T#acme#S#${sid}`, sk: 'USAGE', input_tokens: 10 });
    const shard = await doc.send(
      new QueryCommand({
        TableName: table,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': usageBucketPk('acme', usageBucketShard(sid)) },
      }),
    );
    expect(shard.Items).toHaveLength(1);
    expect(shard.Items?.[0]).toMatchObject({
      sk: '2026-12-07#team%23bots#priya#claude-sonnet-4-5',
      agent: 'team#bots',
      input_tokens: 10,
    });
    // the writer index reads its writers only, and the session stays one writer
    expect((await store.listWriters('acme', sid)).map((r) => r.w)).toEqual([w]);
    expect(await store.getSession('acme', sid)).toMatchObject({ writers: 1, lines: 3, bytes: 40 });
  });

  it('keeps the counters of a follow-up that failed for good on the writer record, and adds them at its next apply', async () => {
    let failing = false;
    const client = clientWith(local.config, (command, input) => {
      if (!failing || command !== 'UpdateItemCommand') return;
      const [pk, sk] = [keyOf(input, 'pk'), keyOf(input, 'sk')];
      // the session's counters, and the bucket of model `lost` (not the other bucket, not the writer's item)
      if (sk === 'USAGE' || (pk.startsWith('T#acme#USAGE#') && sk.endsWith('#lost'))) throw throttled();
    });
    const table = await local.freshTable();
    const store = new DynamoStateStore({ tableName: table, client });
    const [sid, w] = [newId('s'), newId('w')];
    const lost = bucket('claude-code', 'lost', 1);
    const kept = bucket('claude-code', 'kept', 100);
    failing = true;
    await store.applyWriterUsage('acme', sid, w, null, {
      next: record(10, [lost, kept]),
      deltas: [lost, kept],
    });
    failing = false;
    expect(store.retries.deferred).toBe(1);
    // the record is written and reads as the port has it; the soft figures lack what failed
    expect(await store.getWriterUsage('acme', sid, w)).toEqual(record(10, [lost, kept]));
    expect(await store.getSessionUsageCounters('acme', sid)).toBeNull();
    expect(await store.listUsageBuckets('acme', '2026-12-07', '2026-12-07')).toEqual([kept]);
    const doc = DynamoDBDocumentClient.from(local.client);
    const item = await doc.send(new GetCommand({ TableName: table, Key: keys.writerUsage('acme', sid, w) }));
    expect(item.Item?.unapplied).toHaveLength(1);

    // the writer's next chunk: its deltas and the ones kept, added once
    const more = bucket('claude-code', 'lost', 1_000);
    const next = record(20, [{ ...lost, counters: plus(lost.counters, more.counters) }, kept]);
    await store.applyWriterUsage('acme', sid, w, 10, { next, deltas: [more] });
    expect(await store.getSessionUsageCounters('acme', sid)).toEqual(
      plus(plus(lost.counters, kept.counters), more.counters),
    );
    const listed = await store.listUsageBuckets('acme', '2026-12-07', '2026-12-07');
    expect(listed.find((b) => b.model === 'lost')?.counters).toEqual(plus(lost.counters, more.counters));
    expect(listed.find((b) => b.model === 'kept')?.counters).toEqual(kept.counters);
    const after = await doc.send(new GetCommand({ TableName: table, Key: keys.writerUsage('acme', sid, w) }));
    expect(after.Item).not.toHaveProperty('unapplied');
    // and not again at the one after
    await store.applyWriterUsage('acme', sid, w, 20, { next: record(30, next.buckets), deltas: [] });
    expect(await store.getSessionUsageCounters('acme', sid)).toEqual(
      plus(plus(lost.counters, kept.counters), more.counters),
    );
    client.destroy();
  }, 120_000);
});

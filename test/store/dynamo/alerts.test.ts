/**
 * What only the DynamoDB alerts adapter has (issue 28, lib/store/dynamo/alerts.ts), on DynamoDB Local with
 * the real SDK; the contract (test/store/contract/alerts.contract.ts) has the rest:
 * - where its items sit (targets, outbox events in their shard, deliveries in their session's partition
 *   and on gsi1 by target, a tenant-wide event's under `~`), a finished delivery's TTL 30 days out and no
 *   due time, and a session's due mark made by the fan-out and removed once nothing is pending;
 * - the worker's listing reads a session's deliveries only once one of its queue heads may be due (the
 *   mark's bound: a retry or a claim ahead keeps it unread, a new event or an attempt brings it forward);
 * - a change without events costs what it did: `claimKey`, `putStatus`, `putWork` send no transaction
 *   they did not send before; with events, one transaction;
 * - the listing passes over, unread, the sessions whose marks name only excluded or full targets (a
 *   target's backlog costs no reads), and reads a mark of unknown targets (one from before them) once;
 * - the tenant's count of targets (`ALERT#{tenant}`/`COUNT`) holds under concurrent adds from two
 *   instances over one table (two Lambdas), and deletions take from it once each;
 * - an item that does not parse (a damaged target, event or delivery) is left out of every listing.
 */
import { DynamoDBDocumentClient, GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../../harness/dynamodb-local.js';
import { newId } from '../../../lib/log/format/ids.js';
import { ALERT_SHARDS, GSI1, keys } from '../../../lib/store/dynamo/schema.js';
import { DynamoStateStore } from '../../../lib/store/dynamo/state-store.js';
import { LimitReachedError } from '../../../lib/store/index.js';
import { clientWith } from '../../support/dynamo-faults.js';
import { delivered, deliveryOf, eventOf, targetOf } from '../contract/alert-records.js';
import { at, statusOf } from '../contract/records.js';

let local: DynamoLocal;
beforeAll(async () => {
  local = await startDynamoLocal();
}, 120_000);
afterAll(async () => {
  await local?.stop();
});

describe('DynamoStateStore alert items (issue 28)', () => {
  it('keeps targets, events, deliveries and due marks where schema.ts says, finished ones with a TTL', async () => {
    const table = await local.freshTable();
    const store = new DynamoStateStore({ tableName: table, client: local.client });
    const doc = DynamoDBDocumentClient.from(local.client);
    const get = async (key: { pk: string; sk: string }) =>
      (await doc.send(new GetCommand({ TableName: table, Key: key }))).Item;

    const target = targetOf('acme', 1);
    await store.putAlertTarget(target);
    expect(await get(keys.alertTarget('acme', target.id))).toMatchObject({
      pk: 'ALERT#acme',
      sk: `TARGET#${target.id}`,
      version: 1,
    });

    const e = eventOf('acme', 10);
    const wide = eventOf('acme', 11, { sid: null, kind: 'quota.near' });
    await store.putOutboxEvents([e, wide]);
    const outbox = await get(keys.alertOutbox('acme', e.id));
    expect(outbox).toMatchObject({ sk: `acme#${e.id}`, due_at: e.due_at });
    expect(outbox?.pk).toMatch(new RegExp(`^ALERT_OUT#[0-${ALERT_SHARDS - 1}]$`));

    const d = deliveryOf(e, target.id);
    const dw = deliveryOf(wide, target.id);
    await store.fanOut(e, [d]);
    await store.fanOut(wide, [dw]);
    expect(await get(keys.alertOutbox('acme', e.id))).toBeUndefined();
    const item = await get(keys.alertDelivery('acme', e.sid, target.id, d.order, e.id));
    expect(item).toMatchObject({
      pk: `ALERT#acme#S#${e.sid}`,
      sk: `D#${target.id}#${d.order}#${e.id}`,
      gsi1pk: `ALERT#acme#T#${target.id}`,
      gsi1sk: `${d.order}#${e.id}`,
      status: 'pending',
      next_at: d.next_at,
    });
    expect(item).not.toHaveProperty('expires_at');
    expect(await get(keys.alertDelivery('acme', null, target.id, dw.order, wide.id))).toMatchObject({
      pk: 'ALERT#acme#S#~',
    });
    expect(await get(keys.alertDue('acme', e.sid))).toMatchObject({ sk: `acme#${e.sid}` });
    expect(await get(keys.alertDue('acme', null))).toMatchObject({ sk: 'acme#~' });

    // finished: no due time, no claim, the TTL 30 days out; the marks go at the next listing
    expect(await store.claimDelivery(d, at(10), at(40))).toBe(true);
    const before = Math.floor(Date.now() / 1000);
    await store.finishAttempt(d, delivered(d, 11));
    await store.finishAttempt(dw, { ...delivered(dw, 12), status: 'dead', delivered_at: null });
    const done = await get(keys.alertDelivery('acme', e.sid, target.id, d.order, e.id));
    expect(done).toMatchObject({ status: 'delivered', attempts: 1, delivered_at: at(11) });
    expect(done).not.toHaveProperty('next_at');
    expect(done).not.toHaveProperty('claimed_until');
    expect(done?.expires_at).toBeGreaterThanOrEqual(before + 30 * 86_400);
    expect(done?.expires_at).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 30 * 86_400);
    expect(await get(keys.alertDue('acme', e.sid))).toBeDefined();
    expect(await store.listDueDeliveries(at(1000), 10)).toEqual([]);
    expect(await get(keys.alertDue('acme', e.sid))).toBeUndefined();
    expect(await get(keys.alertDue('acme', null))).toBeUndefined();

    // the deleted target's deliveries go, off the index too
    await store.deleteAlertTarget('acme', target.id);
    const indexed = await doc.send(
      new QueryCommand({
        TableName: table,
        IndexName: GSI1,
        KeyConditionExpression: 'gsi1pk = :pk',
        ExpressionAttributeValues: { ':pk': `ALERT#acme#T#${target.id}` },
      }),
    );
    expect(indexed.Items).toEqual([]);
    await store.close();
  });

  it('reads a session only once a head of it may be due: a retry an hour away, a claim, skip it', async () => {
    const sessionReads: string[] = [];
    const client = clientWith(local.config, (command, input) => {
      const pk = (input.ExpressionAttributeValues as Record<string, unknown> | undefined)?.[':pk'];
      if (command === 'QueryCommand' && String(pk).startsWith('ALERT#')) sessionReads.push(String(pk));
    });
    const table = await local.freshTable();
    const store = new DynamoStateStore({ tableName: table, client });
    const target = `at_${'C'.repeat(26)}`;
    const [e1, e2] = [eventOf('acme', 10), eventOf('acme', 20)];
    await store.putOutboxEvents([e1!, e2!]);
    // e2's session waits for a rule's after_seconds (100 s)
    await store.fanOut(e1!, [deliveryOf(e1!, target)]);
    await store.fanOut(e2!, [deliveryOf(e2!, target, 100)]);
    const listed = async (when: number) => {
      sessionReads.length = 0;
      return (await store.listDueDeliveries(at(when), 10)).map((d) => d.event_id);
    };
    expect(await listed(5)).toEqual([]);
    expect(sessionReads).toEqual([]);
    expect(await listed(15)).toEqual([e1!.id]);
    expect(sessionReads).toEqual([`ALERT#acme#S#${e1!.sid}`]);
    // claimed until 45: its session is not read before
    const d1 = deliveryOf(e1!, target);
    expect(await store.claimDelivery(d1, at(15), at(45))).toBe(true);
    expect(await listed(16)).toEqual([]);
    expect(sessionReads).toEqual([`ALERT#acme#S#${e1!.sid}`]);
    expect(await listed(30)).toEqual([]);
    expect(sessionReads).toEqual([]);
    // a failed attempt, retried an hour later: not read until then
    await store.finishAttempt(d1, {
      status: 'pending',
      attempts: 1,
      next_at: at(3_600),
      last_status: 500,
      last_error: 'Internal Server Error',
      delivered_at: null,
      skipped_reason: null,
    });
    expect(await listed(40)).toEqual([]);
    expect(sessionReads).toEqual([`ALERT#acme#S#${e1!.sid}`]);
    expect(await listed(120)).toEqual([e2!.id]);
    expect(sessionReads).toEqual([`ALERT#acme#S#${e2!.sid}`]);
    expect(await listed(3_600)).toEqual([e2!.id, e1!.id]);
    // a new event of the waiting session brings its bound forward
    const e3 = eventOf('acme', 200, { sid: e1!.sid });
    const other = `at_${'D'.repeat(26)}`;
    await store.putOutboxEvents([e3]);
    await store.fanOut(e3, [deliveryOf(e3, other)]);
    expect(await listed(1_000)).toEqual([e2!.id, e3.id]);
    client.destroy();
  });

  it('sends a change without events as before, and one transaction with them', async () => {
    const sent: string[] = [];
    const client = clientWith(local.config, (command) => {
      sent.push(command);
    });
    const table = await local.freshTable();
    const store = new DynamoStateStore({ tableName: table, client });
    const sid = newId('s');

    sent.length = 0;
    await store.claimKey('acme', 'scope', 'one', 'v');
    expect(sent).toEqual(['PutItemCommand']);
    sent.length = 0;
    await store.claimKey('acme', 'scope', 'two', 'v', [eventOf('acme', 1)]);
    expect(sent).toEqual(['TransactWriteItemsCommand']);
    sent.length = 0;
    // lost: the claim's condition cancels the transaction, and the holder's value is read
    expect(await store.claimKey('acme', 'scope', 'two', 'w', [eventOf('acme', 2)])).toBe('v');
    expect(sent).toEqual(['TransactWriteItemsCommand', 'GetItemCommand']);

    sent.length = 0;
    await store.putStatus(statusOf('acme', sid, 5));
    await store.putStatus(statusOf('acme', sid, 6, 2), [eventOf('acme', 6, { sid })]);
    expect(sent).toEqual(['TransactWriteItemsCommand', 'TransactWriteItemsCommand']);
    // an older report (the session's index is newer): the record alone, and its events with it
    sent.length = 0;
    await store.putStatus(statusOf('acme', sid, 1, 3), [eventOf('acme', 1, { sid })]);
    expect(sent).toEqual(['TransactWriteItemsCommand', 'TransactWriteItemsCommand']);
    expect(await store.listDueEvents(at(100), 10)).toHaveLength(3);
    client.destroy();
  });

  it('passes over the sessions of an excluded or full target unread: a backlog costs no reads', async () => {
    const sessionReads: string[] = [];
    const client = clientWith(local.config, (command, input) => {
      const pk = (input.ExpressionAttributeValues as Record<string, unknown> | undefined)?.[':pk'];
      if (command === 'QueryCommand' && String(pk).startsWith('ALERT#')) sessionReads.push(String(pk));
    });
    const table = await local.freshTable();
    const store = new DynamoStateStore({ tableName: table, client });
    const doc = DynamoDBDocumentClient.from(local.client);
    const [busy, other] = [`at_${'E'.repeat(26)}`, `at_${'F'.repeat(26)}`];
    const backlog = Array.from({ length: 40 }, (_, i) => eventOf('acme', 10 + i));
    const late = eventOf('acme', 100);
    await store.putOutboxEvents([...backlog, late]);
    for (const e of backlog) await store.fanOut(e, [deliveryOf(e, busy)]);
    await store.fanOut(late, [deliveryOf(late, other)]);
    const listed = async (o: { perTarget?: number; exclude?: string[] }) => {
      sessionReads.length = 0;
      return (await store.listDueDeliveries(at(1_000), 10, o)).map((d) => d.target_id);
    };
    // excluded: none of its 40 sessions is read, the other target's is listed
    expect(await listed({ exclude: [`acme/${busy}`] })).toEqual([other]);
    expect(sessionReads).toEqual([`ALERT#acme#S#${late.sid}`]);
    // at most 2 of it: once 2 are listed its other marks are passed over (one round of 16 reads at most)
    expect(await listed({ perTarget: 2 })).toEqual([busy, busy, other]);
    expect(sessionReads.length).toBeLessThanOrEqual(17);
    // a mark from before its targets were named is read once, and names them from then on
    const first = backlog[0]!;
    await doc.send(
      new UpdateCommand({
        TableName: table,
        Key: keys.alertDue('acme', first.sid),
        UpdateExpression: 'REMOVE targets',
      }),
    );
    expect(await listed({ exclude: [`acme/${busy}`] })).toEqual([other]);
    expect(sessionReads.sort()).toEqual([`ALERT#acme#S#${first.sid}`, `ALERT#acme#S#${late.sid}`].sort());
    expect(await listed({ exclude: [`acme/${busy}`] })).toEqual([other]);
    expect(sessionReads).toEqual([`ALERT#acme#S#${late.sid}`]);
    // a new target's delivery in a passed-over session is listed: the fan-out added it to the mark
    const more = eventOf('acme', 200, { sid: backlog[5]!.sid });
    await store.putOutboxEvents([more]);
    await store.fanOut(more, [deliveryOf(more, busy), deliveryOf(more, other)]);
    expect(await listed({ exclude: [`acme/${busy}`] })).toEqual([other, other]);
    client.destroy();
  }, 60_000);

  it('counts targets in the write: sixty adds from two instances under fifty make fifty', async () => {
    const table = await local.freshTable();
    const stores = [0, 1].map(() => new DynamoStateStore({ tableName: table, client: local.client }));
    const doc = DynamoDBDocumentClient.from(local.client);
    const count = async () =>
      (await doc.send(new GetCommand({ TableName: table, Key: keys.alertTargetCount('acme') }))).Item?.n;
    const adds = Array.from({ length: 60 }, (_, i) => targetOf('acme', i));
    const answers = await Promise.allSettled(
      adds.map((t, i) => stores[i % 2]!.putAlertTarget(t, { maxTargets: 50 })),
    );
    const refused = answers.flatMap((a) => (a.status === 'rejected' ? [a.reason] : []));
    expect(answers.filter((a) => a.status === 'fulfilled')).toHaveLength(50);
    expect(refused).toHaveLength(10);
    for (const r of refused) expect(r).toBeInstanceOf(LimitReachedError);
    const made = await stores[0]!.listAlertTargets('acme');
    expect(made).toHaveLength(50);
    expect(await count()).toBe(50);
    // deletions from both at once, each twice, and of absent ones: each made one takes one from the count
    const gone = made.slice(0, 10);
    await Promise.all(
      [...gone, ...gone, targetOf('acme', 99)].map((t, i) => stores[i % 2]!.deleteAlertTarget('acme', t.id)),
    );
    expect(await count()).toBe(40);
    expect(await stores[1]!.listAlertTargets('acme')).toHaveLength(40);
    for (const s of stores) await s.close();
  }, 60_000);

  it('leaves out of every listing an item that does not parse, and lists the others', async () => {
    const table = await local.freshTable();
    const store = new DynamoStateStore({ tableName: table, client: local.client });
    const doc = DynamoDBDocumentClient.from(local.client);
    const damage = (key: { pk: string; sk: string }, set: string, values: Record<string, unknown>) =>
      doc.send(
        new UpdateCommand({
          TableName: table,
          Key: key,
          UpdateExpression: set,
          ExpressionAttributeValues: values,
        }),
      );
    const [good, bad] = [targetOf('acme', 1), targetOf('acme', 2)];
    await store.putAlertTarget(good);
    await store.putAlertTarget(bad);
    await damage(keys.alertTarget('acme', bad.id), 'SET target_json = :j', { ':j': '{broken' });
    expect(await store.getAlertTarget('acme', bad.id)).toBeNull();
    expect(await store.listAlertTargets('acme')).toEqual([good]);

    const sid = newId('s');
    const [e0, e1, e2, e3] = [
      eventOf('acme', 10, { sid }),
      eventOf('acme', 11),
      eventOf('acme', 12),
      eventOf('acme', 13),
    ];
    await store.putOutboxEvents([e0!, e1!, e2!, e3!]);
    await damage(keys.alertOutbox('acme', e2!.id), 'SET event_json = :j', { ':j': '{broken' });
    await damage(keys.alertOutbox('acme', e3!.id), 'SET due_at = :d', { ':d': 'soon' });
    expect((await store.listDueEvents(at(100), 10)).map((e) => e.id).sort()).toEqual([e0!.id, e1!.id].sort());

    await store.fanOut(e0!, [deliveryOf(e0!, good.id)]);
    await store.fanOut(e1!, [deliveryOf(e1!, good.id)]);
    const e4 = eventOf('acme', 20, { sid });
    await store.putOutboxEvents([e4]);
    await store.fanOut(e4, [deliveryOf(e4, good.id)]);
    const d0 = deliveryOf(e0!, good.id);
    await damage(keys.alertDelivery('acme', sid, good.id, d0.order, e0!.id), 'SET attempts = :a', {
      ':a': 'x',
    });
    // not listed, and still heads its (target, session) queue: e4 waits behind it
    expect((await store.listDueDeliveries(at(100), 10)).map((d) => d.event_id)).toEqual([e1!.id]);
    expect(
      (await store.listDeliveries('acme', { target: good.id, limit: 10 })).map((d) => d.event_id),
    ).toEqual([e4.id, e1!.id]);
    expect((await store.listDeliveries('acme', { sid, limit: 10 })).map((d) => d.event_id)).toEqual([e4.id]);
    await store.close();
  });
});

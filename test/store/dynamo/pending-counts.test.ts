/**
 * The pending counts of `DynamoStateStore` (lib/store/dynamo/pending.ts; docs/adr/0008-no-hot-keys-on-
 * ingest.md), on DynamoDB Local with the real SDK; a follow-up failing for good, a
 * sweep's transaction failing, or its reply lost after it committed, injected in the client's middleware
 * (at `initialize`, before the SDK's own retries), as test/store/dynamo/hot-keys.test.ts does:
 * - a crash between applying a pending item and deleting it cannot happen, nor count twice: a failed
 *   transaction leaves the item whole and nothing applied, a later sweep applies it once; a transaction
 *   that committed but whose reply was lost is sent again and refused by its own condition;
 * - a deferral that lands while a sweep reads is not lost: that sweep's condition fails, the next applies
 *   both; nor is one that lands after another process applied the item a sweep read (the item pending
 *   again, with as many deferrals as the copy read, but another tag);
 * - two deferrals of one writer add up in its item, another process applies them, and the board moves to
 *   the deferred chunk's time;
 * - counts a writer item holds from before (`uncounted_*`) are carried by its next advance, once;
 * - a sweep with nothing pending costs one query (0.5 RRU), at a process's first advance of the tenant
 *   and then at most every interval.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../../harness/dynamodb-local.js';
import { newId } from '../../../lib/log/format/ids.js';
import { SWEEP_INTERVAL_MS } from '../../../lib/store/dynamo/pending.js';
import { keys, usageShard } from '../../../lib/store/dynamo/schema.js';
import { DynamoStateStore } from '../../../lib/store/dynamo/state-store.js';
import { attrText, keyOf, throttled } from '../../support/dynamo-faults.js';
import { advanceOf, at } from '../contract/records.js';

let local: DynamoLocal;
let doc: DynamoDBDocumentClient;
beforeAll(async () => {
  local = await startDynamoLocal();
  doc = DynamoDBDocumentClient.from(local.client);
}, 120_000);
afterAll(async () => {
  await local?.stop();
});

/**
 * What the faulty client does; each switch on until turned off, counters down to 0. The transaction
 * faults and the hook act on a sweep's transactions only (those holding a Delete): the advance's own
 * transaction, which comes first in every advance, goes through untouched.
 */
interface Faults {
  /** the session follow-up (UpdateItem of `S#…`) fails */
  session: boolean;
  /** the usage follow-up (UpdateItem of `USAGE#…`) fails */
  usage: boolean;
  /** a sweep's transactions fail before they are sent (nothing written): how many more */
  transactBefore: number;
  /** a sweep's transactions are sent, commit, and then answer throttled: how many more */
  transactAfter: number;
  /** run once before a sweep's next transaction is sent */
  beforeTransact: (() => Promise<void>) | null;
  /** transactions seen (every one), with what they held */
  transacts: string[][];
}

function faultyClient(): { client: DynamoDBClient; f: Faults } {
  const f: Faults = {
    session: false,
    usage: false,
    transactBefore: 0,
    transactAfter: 0,
    beforeTransact: null,
    transacts: [],
  };
  const client = new DynamoDBClient(local.config);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = context.commandName ?? '';
      const input = args.input as Record<string, unknown>;
      const sk = keyOf(input, 'sk');
      if (
        command === 'UpdateItemCommand' &&
        ((f.session && sk.startsWith('S#')) || (f.usage && sk.startsWith('USAGE#')))
      )
        throw throttled();
      if (command !== 'TransactWriteItemsCommand') return next(args);
      const items = (input.TransactItems as Array<Record<string, { Key?: Record<string, unknown> }>>).flatMap(
        (entry) => Object.entries(entry).map(([kind, it]) => `${kind} ${attrText(it.Key?.sk)}`),
      );
      f.transacts.push(items);
      if (!items.some((x) => x.startsWith('Delete '))) return next(args);
      const hook = f.beforeTransact;
      f.beforeTransact = null;
      await hook?.();
      if (f.transactBefore > 0) {
        f.transactBefore -= 1;
        throw throttled();
      }
      const out = await next(args);
      if (f.transactAfter > 0) {
        f.transactAfter -= 1;
        throw throttled();
      }
      return out;
    },
    { step: 'initialize', name: 'fault' },
  );
  return { client, f };
}

const item = async (table: string, key: { pk: string; sk: string }) =>
  (await doc.send(new GetCommand({ TableName: table, Key: key }))).Item;
const listed = async (store: DynamoStateStore, sid: string) =>
  (await store.listSessions('acme', 50, null)).items.find((s) => s.sid === sid);
const usageOf = async (table: string) =>
  (await new DynamoStateStore({ tableName: table, client: local.client }).tenantUsage('acme')).bytes;

describe('pending counts (issue 17.1): applied once, by any later advance of the tenant', () => {
  it('a crash between applying and deleting cannot count twice: a failed sweep leaves it, a later one applies it once', async () => {
    const { client, f } = faultyClient();
    const table = await local.freshTable();
    const store = new DynamoStateStore({ tableName: table, client });
    const [sid, w] = [newId('s'), newId('w')];
    f.session = true;
    f.usage = true;
    await store.advanceWriter('acme', sid, w, 0, advanceOf(0, 40, { lines: 3, when: 1, ended: true }));
    f.session = false;
    f.usage = false;
    const pendingKey = keys.pending('acme', sid, w);
    expect(await item(table, pendingKey)).toMatchObject({
      lines: 3,
      bytes: 40,
      writers: 1,
      usage: 40,
      deferrals: 1,
    });

    // This process's next advance sweeps: its transaction fails, and is not tried again within the
    // chunk's request (a sweep sends each request once: pending-counts).
    f.transacts = [];
    f.transactBefore = 1;
    await store.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 2 }));
    const sweeps = f.transacts.filter((t) => t.some((x) => x.startsWith('Delete')));
    expect(sweeps).toHaveLength(1);
    expect(sweeps[0]).toEqual([`Update S#${sid}`, `Update USAGE#${usageShard(sid)}`, `Delete ${sid}#${w}`]);
    expect(await item(table, pendingKey)).toMatchObject({ deferrals: 1, lines: 3, usage: 40 });
    expect(await item(table, keys.session('acme', sid))).toBeUndefined();
    expect(await usageOf(table)).toBe(10);

    // Another process's first advance sweeps: the transaction commits and its reply is lost; the item
    // went with it, so nothing can add it twice (a sweep after finds nothing).
    f.transacts = [];
    f.transactAfter = 1;
    const other = new DynamoStateStore({ tableName: table, client });
    await other.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 5, { lines: 1, when: 3 }));
    expect(f.transacts.filter((t) => t.some((x) => x.startsWith('Delete')))).toHaveLength(1);
    expect(await item(table, pendingKey)).toBeUndefined();
    expect(await listed(other, sid)).toMatchObject({ writers: 1, lines: 3, bytes: 40, updated_at: at(1) });
    expect(await usageOf(table)).toBe(55);
    expect(await other.countSessions('acme')).toBe(3);

    // and a sweep later finds nothing to apply again
    const third = new DynamoStateStore({ tableName: table, client: local.client });
    await third.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 1, { lines: 1, when: 4 }));
    expect(await listed(third, sid)).toMatchObject({ writers: 1, lines: 3, bytes: 40 });
    expect(await usageOf(table)).toBe(56);
    client.destroy();
  });

  it('a deferral landing while a sweep reads is not lost: that sweep is refused, the next applies both', async () => {
    const { client, f } = faultyClient();
    const table = await local.freshTable();
    const store = new DynamoStateStore({ tableName: table, client, sweepIntervalMs: 0 });
    const [sid, w] = [newId('s'), newId('w')];
    f.session = true;
    await store.advanceWriter('acme', sid, w, 0, advanceOf(0, 40, { lines: 3, when: 1 }));
    f.session = false;
    // between the sweep's query and its transaction, another deferral of the writer (as `defer` writes it)
    f.beforeTransact = async () => {
      await doc.send(
        new UpdateCommand({
          TableName: table,
          Key: keys.pending('acme', sid, w),
          UpdateExpression: 'SET #t = :t ADD #l :l, #b :b, #d :one',
          ExpressionAttributeNames: { '#t': 'tag', '#l': 'lines', '#b': 'bytes', '#d': 'deferrals' },
          ExpressionAttributeValues: { ':t': 'another deferral', ':l': 2, ':b': 7, ':one': 1 },
        }),
      );
    };
    await store.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 2 }));
    expect(await item(table, keys.pending('acme', sid, w))).toMatchObject({
      lines: 5,
      bytes: 47,
      deferrals: 2,
    });
    expect(await item(table, keys.session('acme', sid))).toBeUndefined();
    await store.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 3 }));
    expect(await item(table, keys.pending('acme', sid, w))).toBeUndefined();
    expect(await listed(store, sid)).toMatchObject({ writers: 1, lines: 5, bytes: 47 });
    client.destroy();
  });

  it("a copy read before the item was applied and pending again applies nothing: its tag is not the item's", async () => {
    const { client, f } = faultyClient();
    const table = await local.freshTable();
    const store = new DynamoStateStore({ tableName: table, client, sweepIntervalMs: 0 });
    const other = new DynamoStateStore({ tableName: table, client: local.client });
    const [sid, w] = [newId('s'), newId('w')];
    const pendingKey = keys.pending('acme', sid, w);
    f.session = true;
    await store.advanceWriter('acme', sid, w, 0, advanceOf(0, 40, { lines: 3, when: 1 }));
    f.session = false;
    // between this sweep's query and its transaction: another process applies the item (and deletes
    // it), then the writer defers again, so the item holds as many deferrals as the copy read (1)
    f.beforeTransact = async () => {
      await other.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 1, { lines: 1, when: 2 }));
      expect(await item(table, pendingKey)).toBeUndefined();
      await doc.send(
        new UpdateCommand({
          TableName: table,
          Key: pendingKey,
          // as `defer` writes it
          UpdateExpression: 'SET #s = :s, #w = :w, #t = :t, #at = :at, #f = :at ADD #l :l, #b :b, #d :one',
          ExpressionAttributeNames: {
            '#s': 'sid',
            '#w': 'w',
            '#t': 'tag',
            '#at': 'at',
            '#f': 'first_at',
            '#l': 'lines',
            '#b': 'bytes',
            '#d': 'deferrals',
          },
          ExpressionAttributeValues: {
            ':s': sid,
            ':w': w,
            ':t': 'a later deferral',
            ':at': at(3),
            ':l': 2,
            ':b': 7,
            ':one': 1,
          },
        }),
      );
    };
    await store.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 4 }));
    expect(f.beforeTransact).toBeNull();
    expect(await item(table, pendingKey)).toMatchObject({ lines: 2, bytes: 7, deferrals: 1 });
    expect(await listed(store, sid)).toMatchObject({ writers: 1, lines: 3, bytes: 40 });
    await store.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 5 }));
    expect(await item(table, pendingKey)).toBeUndefined();
    expect(await listed(store, sid)).toMatchObject({ writers: 1, lines: 5, bytes: 47 });
    client.destroy();
  });

  it('two deferrals of one writer add up; another process applies them and moves the session on the board', async () => {
    const { client, f } = faultyClient();
    const table = await local.freshTable();
    const store = new DynamoStateStore({ tableName: table, client });
    const [sid, w] = [newId('s'), newId('w')];
    await store.advanceWriter('acme', sid, w, 0, advanceOf(0, 40, { lines: 3, when: 1 }));
    f.session = true;
    f.usage = true;
    await store.advanceWriter('acme', sid, w, 40, advanceOf(40, 10, { lines: 5, when: 10 }));
    await store.advanceWriter('acme', sid, w, 50, advanceOf(50, 5, { lines: 6, when: 20, ended: true }));
    expect(store.retries).toMatchObject({ deferred: 2 });
    expect(await item(table, keys.pending('acme', sid, w))).toMatchObject({
      lines: 3,
      bytes: 15,
      writers: 0,
      usage: 15,
      deferrals: 2,
      first_at: at(10),
      at: at(20),
    });
    expect(await listed(store, sid)).toMatchObject({ lines: 3, bytes: 40, updated_at: at(1) });

    // the deferring process never advances again; another's first advance of the tenant applies them
    const other = new DynamoStateStore({ tableName: table, client: local.client });
    await other.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 1, { lines: 1, when: 21 }));
    expect(await listed(other, sid)).toMatchObject({ writers: 1, lines: 6, bytes: 55, updated_at: at(20) });
    expect(await other.getSession('acme', sid)).toMatchObject({ writers: 1, lines: 6, bytes: 55 });
    expect(await usageOf(table)).toBe(56);
    client.destroy();
  });

  it('counts a writer item holds from before the pending items (uncounted_*) are carried by its next advance, once', async () => {
    const table = await local.freshTable();
    const store = new DynamoStateStore({ tableName: table, client: local.client });
    const [sid, w] = [newId('s'), newId('w')];
    await store.advanceWriter('acme', sid, w, 0, advanceOf(0, 40, { lines: 3, when: 1 }));
    // what a deferral of the first chunk's counts left before the fix: nothing counted, all on the writer
    // SET of each attribute (by `#name`: `lines` and others are reserved words in expressions)
    const set = async (key: { pk: string; sk: string }, values: Record<string, number>) => {
      const names = Object.keys(values);
      return doc.send(
        new UpdateCommand({
          TableName: table,
          Key: key,
          UpdateExpression: `SET ${names.map((_, i) => `#a${i} = :v${i}`).join(', ')}`,
          ExpressionAttributeNames: Object.fromEntries(names.map((n, i) => [`#a${i}`, n])),
          ExpressionAttributeValues: Object.fromEntries(names.map((n, i) => [`:v${i}`, values[n]])),
        }),
      );
    };
    await set(keys.session('acme', sid), { writers: 0, lines: 0, bytes: 0 });
    await set(keys.usage('acme', usageShard(sid)), { bytes: 0 });
    await set(keys.writer('acme', sid, w), {
      uncounted_lines: 3,
      uncounted_bytes: 40,
      uncounted_writers: 1,
      uncounted_usage: 40,
    });
    const later = new DynamoStateStore({ tableName: table, client: local.client });
    await later.advanceWriter('acme', sid, w, 40, advanceOf(40, 10, { lines: 5, when: 2 }));
    expect(await listed(later, sid)).toMatchObject({ writers: 1, lines: 5, bytes: 50 });
    expect(await item(table, keys.writer('acme', sid, w))).toMatchObject({
      uncounted_lines: 0,
      uncounted_bytes: 0,
      uncounted_writers: 0,
      uncounted_usage: 0,
    });
    expect(await item(table, keys.pending('acme', sid, w))).toBeUndefined();
    await later.advanceWriter('acme', sid, w, 50, advanceOf(50, 10, { lines: 6, when: 3 }));
    expect(await listed(later, sid)).toMatchObject({ writers: 1, lines: 6, bytes: 60 });
    expect(await usageOf(table)).toBe(60);
  });

  it('a sweep with nothing pending is one query (0.5 RRU): at the first advance of a tenant, then once an interval', async () => {
    const sent: string[] = [];
    /** each sweep query: whether it was strongly consistent, and the units DynamoDB Local says it took */
    const queries: { consistent: boolean; units: number }[] = [];
    const client = new DynamoDBClient(local.config);
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as {
          ExpressionAttributeValues?: Record<string, unknown>;
          ConsistentRead?: boolean;
        };
        // the document client's input, not marshalled yet at `initialize`
        const pending = Object.values(input.ExpressionAttributeValues ?? {}).some(
          (v) => attrText(v) === 'PENDING#acme',
        );
        const name = `${(context.commandName ?? '').replace(/Command$/, '')}${pending ? ' PENDING' : ''}`;
        sent.push(name);
        if (!pending) return next(args);
        (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
        const out = await next(args);
        queries.push({
          consistent: input.ConsistentRead === true,
          units:
            (out.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity
              ?.CapacityUnits ?? -1,
        });
        return out;
      },
      { step: 'initialize', name: 'count' },
    );
    const table = await local.freshTable();
    // the default interval (30 s), its passing stepped on the store's clock (Date) rather than waited
    const store = new DynamoStateStore({ tableName: table, client });
    const [sid, w] = [newId('s'), newId('w')];
    const advance = async (from: number, when: number) => {
      sent.length = 0;
      await store.advanceWriter('acme', sid, w, from, advanceOf(from, 10, { lines: when, when }));
      return [...sent].sort();
    };
    const chunk = ['GetItem', 'TransactWriteItems', 'UpdateItem', 'UpdateItem'];
    // An eventually consistent query that finds nothing: DynamoDB charges it as its smallest read, 0.5
    // RRU (1 if it were strongly consistent); DynamoDB Local reports a query that finds nothing as 0.
    const empty = { consistent: false, units: 0 };
    expect(await advance(0, 1)).toEqual([...chunk, 'Query PENDING'].sort());
    expect(queries).toEqual([empty]);
    expect(await advance(10, 2)).toEqual(chunk);
    vi.useFakeTimers({ toFake: ['Date'] }); // Date only: the SDK's timers and sockets run as ever
    try {
      vi.setSystemTime(Date.now() + SWEEP_INTERVAL_MS + 1);
      expect(await advance(20, 3)).toEqual([...chunk, 'Query PENDING'].sort());
    } finally {
      vi.useRealTimers();
    }
    expect(queries).toEqual([empty, empty]);
    client.destroy();
  });
});

/**
 * What `DynamoStateStore` does about hot keys (issue 17.1) and board reads (17.6), on DynamoDB Local
 * with the real SDK; the faults DynamoDB Local cannot produce (throttling, a follow-up write failing for
 * good) are injected in the client's middleware, before the SDK's own retries:
 * - a follow-up that fails for good is kept pending and applied by the next advance (more of that in
 *   pending-counts.test.ts);
 * - throttled requests are retried and counted; a request that keeps failing is given up and counted;
 * - a session moves on the board at most every 5 s, whichever process moves it;
 * - the board is read from 8 shards (and the partition of before them), merged in order, a bounded read;
 * - one query lists a session's writers; items of the layout before 17.1/17.6 are still read right;
 * - a due mark put by an advance while a digest head is written is not taken away by it.
 */
import {
  ConditionalCheckFailedException,
  DynamoDBClient,
  ProvisionedThroughputExceededException,
} from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../../harness/dynamodb-local.js';
import { newId } from '../../../lib/log/format/ids.js';
import { BOARD_SHARDS, boardShard, keys } from '../../../lib/store/dynamo/schema.js';
import { DynamoStateStore } from '../../../lib/store/dynamo/state-store.js';
import { clientWith, keyOf, throttled } from '../../support/dynamo-faults.js';
import { advanceOf, at, headOf } from '../contract/records.js';

let local: DynamoLocal;
beforeAll(async () => {
  local = await startDynamoLocal();
}, 120_000);
afterAll(async () => {
  await local?.stop();
});

/** What the board's query counting reads of a request's input. */
type Wire = { IndexName?: string };

// The two longest cases (14 s and 16 s in a full run: 9 item tries of real backoff, 60 sessions
// advanced one by one) get 120 s: on a loaded machine they ran past the suite's 30 s.
describe('DynamoStateStore without hot keys (issue 17.1)', () => {
  it('keeps a follow-up that failed for good pending, and the next advance counts it', async () => {
    let failSession = 0;
    const client = clientWith(local.config, (command, input) => {
      if (command === 'UpdateItemCommand' && keyOf(input, 'sk').startsWith('S#') && failSession > 0) {
        failSession -= 1;
        throw throttled();
      }
    });
    const table = await local.freshTable();
    const store = new DynamoStateStore({ tableName: table, client });
    const sid = newId('s');
    const w = newId('w');
    failSession = 100; // more than the 8 tries of a single-item write
    await store.advanceWriter('acme', sid, w, 0, advanceOf(0, 40, { lines: 3, when: 1 }));
    expect(store.retries).toMatchObject({ throttles: 7, exhausted: 1, deferred: 1 });
    // The truth has the chunk; the listing's counters do not yet; the usage does (its own update).
    expect(await store.getSession('acme', sid)).toMatchObject({ writers: 1, lines: 3, bytes: 40 });
    expect((await store.listSessions('acme', 10, null)).items).toEqual([]);
    const doc = DynamoDBDocumentClient.from(local.client);
    const pendingKey = { TableName: table, Key: keys.pending('acme', sid, w) };
    const pending = (await doc.send(new GetCommand(pendingKey))).Item;
    expect(pending).toMatchObject({ lines: 3, bytes: 40, writers: 1, deferrals: 1 });
    expect(pending).not.toHaveProperty('usage');
    const writer = (await doc.send(new GetCommand({ TableName: table, Key: keys.writer('acme', sid, w) })))
      .Item;
    expect(writer).not.toHaveProperty('uncounted_lines');
    expect(await store.tenantUsage('acme')).toEqual({ bytes: 40 });

    failSession = 0;
    await store.advanceWriter('acme', sid, w, 40, advanceOf(40, 10, { lines: 5, when: 2 }));
    const [listed] = (await store.listSessions('acme', 10, null)).items;
    expect(listed).toMatchObject({ sid, writers: 1, lines: 5, bytes: 50 });
    expect((await doc.send(new GetCommand(pendingKey))).Item).toBeUndefined();
    const fresh = new DynamoStateStore({ tableName: table, client: local.client });
    expect(await fresh.tenantUsage('acme')).toEqual({ bytes: 50 });
    client.destroy();
  }, 120_000);

  it('retries throttled reads and writes, counted, and gives up after 8 tries of an item', async () => {
    let fail = 0;
    const client = clientWith(local.config, (command) => {
      if ((command === 'QueryCommand' || command === 'GetItemCommand') && fail > 0) {
        fail -= 1;
        throw throttled();
      }
    });
    const store = new DynamoStateStore({ tableName: await local.freshTable(), client });
    const sid = newId('s');
    await store.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 1 }));
    fail = 3;
    expect((await store.listSessions('acme', 5, null)).items.map((s) => s.sid)).toEqual([sid]);
    expect(fail).toBe(0);
    expect(store.retries).toMatchObject({ throttles: 3, exhausted: 0 });
    fail = 8;
    await expect(store.getWriter('acme', sid, newId('w'))).rejects.toBeInstanceOf(
      ProvisionedThroughputExceededException,
    );
    expect(store.retries).toMatchObject({ throttles: 10, exhausted: 1 });
    // a failed condition is not retried
    let conditions = 0;
    const refusing = clientWith(local.config, (command) => {
      if (command === 'PutItemCommand') {
        conditions += 1;
        throw new ConditionalCheckFailedException({ message: 'no (injected)', $metadata: {} });
      }
    });
    const other = new DynamoStateStore({ tableName: await local.freshTable(), client: refusing });
    await expect(other.createTenant('acme', at(0))).rejects.toMatchObject({ name: 'StateConflictError' });
    expect(conditions).toBe(1);
    expect(other.retries).toMatchObject({ throttles: 0, conflicts: 0, exhausted: 0 });
    client.destroy();
    refusing.destroy();
  });

  it('moves a session on the board at most every 5 s, whichever process moves it', async () => {
    const table = await local.freshTable();
    const sessionUpdates: string[] = [];
    const counting = (name: string) =>
      clientWith(local.config, (command, input) => {
        if (command === 'UpdateItemCommand' && keyOf(input, 'sk').startsWith('S#'))
          sessionUpdates.push(`${name}${input.ConditionExpression ? ' moves' : ''}`);
      });
    const [ca, cb] = [counting('a'), counting('b')];
    const [a, b] = [
      new DynamoStateStore({ tableName: table, client: ca }),
      new DynamoStateStore({ tableName: table, client: cb }),
    ];
    const sid = newId('s');
    const [wa, wb] = [newId('w'), newId('w')];
    const listed = async () => (await a.listSessions('acme', 1, null)).items[0]?.updated_at;
    await a.advanceWriter('acme', sid, wa, 0, advanceOf(0, 10, { lines: 1, when: 1 }));
    expect(await listed()).toBe(at(1));
    // b knows of no move: it tries one, finds a's (1 s ago), and counts without moving
    await b.advanceWriter('acme', sid, wb, 0, advanceOf(0, 10, { lines: 1, when: 2 }));
    // a knows its own move: it does not try
    await a.advanceWriter('acme', sid, wa, 10, advanceOf(10, 10, { lines: 2, when: 4 }));
    expect(await listed()).toBe(at(1));
    // b learnt a's move from the refusal: nothing tried before 5 s after it
    await b.advanceWriter('acme', sid, wb, 10, advanceOf(10, 10, { lines: 2, when: 5 }));
    expect(await listed()).toBe(at(1));
    await b.advanceWriter('acme', sid, wb, 20, advanceOf(20, 10, { lines: 3, when: 6 }));
    expect(await listed()).toBe(at(6));
    expect(sessionUpdates).toEqual(['a moves', 'b moves', 'b', 'a', 'b', 'b moves']);
    expect(await a.getSession('acme', sid)).toMatchObject({ updated_at: at(6), writers: 2, lines: 5 });
    expect((await a.listSessions('acme', 1, null)).items[0]).toMatchObject({
      writers: 2,
      lines: 5,
      bytes: 50,
    });
    ca.destroy();
    cb.destroy();
  });
});

describe('the board on DynamoDB (issues 17.1, 17.6)', () => {
  it('spreads sessions over 8 board shards and pages them newest first, reading a bounded number of items', async () => {
    let scanned = 0;
    const client = new DynamoDBClient(local.config);
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const out = await next(args);
        if (context.commandName === 'QueryCommand' && (args.input as Wire).IndexName === 'gsi1')
          scanned += (out.output as { ScannedCount?: number }).ScannedCount ?? 0;
        return out;
      },
      { step: 'initialize', name: 'countScanned' },
    );
    const store = new DynamoStateStore({ tableName: await local.freshTable(), client });
    const sids = Array.from({ length: 60 }, () => newId('s'));
    // ten at each of six instants: ties ordered by sid, descending
    for (const [i, sid] of sids.entries()) {
      await store.advanceWriter(
        'acme',
        sid,
        newId('w'),
        0,
        advanceOf(0, 10, { lines: 1, when: Math.floor(i / 10) }),
      );
    }
    expect(new Set(sids.map(boardShard)).size).toBe(BOARD_SHARDS);
    const expected = sids
      .map((sid, i) => ({ sid, at: at(Math.floor(i / 10)) }))
      .sort((x, y) => (x.at === y.at ? (x.sid < y.sid ? 1 : -1) : x.at < y.at ? 1 : -1))
      .map((x) => x.sid);
    for (const limit of [1, 7, 25, 100]) {
      const got: string[] = [];
      let cursor: string | null = null;
      let pages = 0;
      scanned = 0;
      do {
        const page: Awaited<ReturnType<DynamoStateStore['listSessions']>> = await store.listSessions(
          'acme',
          limit,
          cursor,
        );
        got.push(...page.items.map((s) => s.sid));
        cursor = page.next;
        pages += 1;
      } while (cursor !== null);
      expect(got).toEqual(expected);
      // each page reads its sessions and at most a first small page of each of the 9 partitions more
      const perPage = limit + 9 * (Math.ceil((limit + 1) / BOARD_SHARDS) + 2);
      expect(scanned).toBeLessThanOrEqual(Math.min(pages * perPage, pages * 60));
    }
    client.destroy();
  }, 120_000);

  it('reads the board and writers of the layout before issues 17.1 and 17.6, and moves a session to its shard', async () => {
    const table = await local.freshTable();
    const store = new DynamoStateStore({ tableName: table, client: local.client });
    const doc = DynamoDBDocumentClient.from(local.client);
    const put = (Item: Record<string, unknown>) => doc.send(new PutCommand({ TableName: table, Item }));
    // What an earlier hansard stored: a session on T#acme#BOARD, a writer with its chunk record after it.
    const old = newId('s');
    const w = newId('w');
    await put({
      ...keys.session('acme', old),
      gsi1pk: 'T#acme#BOARD',
      gsi1sk: `${at(5)}#${old}`,
      tenant: 'acme',
      sid: old,
      created_at: at(1),
      updated_at: at(5),
      writers: 1,
      lines: 2,
      bytes: 30,
    });
    const writer = {
      tenant: 'acme',
      sid: old,
      w,
      length: 30,
      lines: 2,
      ended: false,
      created_at: at(1),
      updated_at: at(5),
      chain: 'c'.repeat(64),
    };
    await put({ ...keys.writer('acme', old, w), ...writer });
    const chunk = {
      offset: 0,
      length: 30,
      sha256: 'a'.repeat(64),
      lines: 2,
      last_seq: 2,
      chain: 'c'.repeat(64),
    };
    await put({ ...keys.legacyChunk('acme', old, w, 0), tenant: 'acme', sid: old, w, ...chunk });
    const fresh = newId('s');
    await store.advanceWriter('acme', fresh, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 3 }));
    const listed = async () => (await store.listSessions('acme', 10, null)).items.map((s) => s.sid);
    expect(await listed()).toEqual([old, fresh]);
    expect((await store.listWriters('acme', old)).map((x) => x.w)).toEqual([w]);
    expect(await store.getChunk('acme', old, w, 0)).toEqual(chunk);
    expect(await store.listChunks('acme', old, w, 0, 10)).toEqual([chunk]);
    // the old writer's next chunk record goes where its others are; the session moves to its shard
    // with its next move (5 s after the last)
    const next = advanceOf(30, 5, { lines: 3, when: 11 });
    await store.advanceWriter('acme', old, w, 30, next);
    expect(await store.listChunks('acme', old, w, 0, 10)).toEqual([chunk, next.chunk]);
    expect(
      (await doc.send(new GetCommand({ TableName: table, Key: keys.legacyChunk('acme', old, w, 30) }))).Item,
    ).toBeDefined();
    const item = (await doc.send(new GetCommand({ TableName: table, Key: keys.session('acme', old) }))).Item;
    expect(item).toMatchObject({
      gsi1pk: `T#acme#BOARD#${boardShard(old)}`,
      gsi1sk: `${at(11)}#${old}`,
      lines: 3,
    });
    expect(await listed()).toEqual([old, fresh]);
    expect(await store.getSession('acme', old)).toMatchObject({
      writers: 1,
      lines: 3,
      bytes: 35,
      updated_at: at(11),
    });
  });

  it("lists a session's writers with one query, its chunk records apart", async () => {
    let queries = 0;
    const client = clientWith(local.config, (command) => {
      if (command === 'QueryCommand') queries += 1;
    });
    const store = new DynamoStateStore({ tableName: await local.freshTable(), client });
    const sid = newId('s');
    const ws = Array.from({ length: 30 }, () => newId('w'));
    await Promise.all(
      ws.map(async (w) => {
        for (let i = 0; i < 3; i++)
          await store.advanceWriter('acme', sid, w, i * 10, advanceOf(i * 10, 10, { lines: i + 1, when: i }));
      }),
    );
    queries = 0;
    const listed = await store.listWriters('acme', sid);
    expect(listed.map((x) => x.w)).toEqual([...ws].sort());
    expect(queries).toBe(1);
    client.destroy();
  });
});

describe('the digest head and a concurrent advance (issue 17.1)', () => {
  it("leaves the due mark of an advance that lands after the head's bytes were checked", async () => {
    const table = await local.freshTable();
    let before: (() => Promise<void>) | null = null;
    // an advance runs just before the head's close of the due mark is sent
    const client = clientWith(local.config, async (command, input) => {
      const closing = command === 'DeleteItemCommand' || command === 'UpdateItemCommand';
      if (before && closing && keyOf(input, 'pk').startsWith('DIGEST_DUE#')) {
        const run = before;
        before = null;
        await run();
      }
    });
    const store = new DynamoStateStore({ tableName: table, client });
    const other = new DynamoStateStore({ tableName: table, client: local.client });
    const sid = newId('s');
    await store.advanceWriter(
      'acme',
      sid,
      newId('w'),
      0,
      advanceOf(0, 10, { lines: 1, when: 1, digest_due: true }),
    );
    // The digester read 10 bytes and closes the session; a new writer's first chunk (due) lands after
    // the head's transaction and the bytes' check, just before the mark is deleted.
    before = () =>
      other.advanceWriter(
        'acme',
        sid,
        newId('w'),
        0,
        advanceOf(0, 7, { lines: 1, when: 3, digest_due: true }),
      );
    await store.putDigestHead('acme', sid, null, headOf(1, 2, { closed: true }), null, 10);
    expect(before).toBeNull();
    expect(await store.getDigestHead('acme', sid)).toMatchObject({ seq: 1 });
    expect(await store.listDigestsDue(at(1000), 10)).toEqual([{ tenant: 'acme', sid, due_at: at(3) }]);
    // and with nothing in between, the next head closes it
    await store.putDigestHead('acme', sid, 1, headOf(2, 4, { closed: true }), null, 17);
    expect(await store.listDigestsDue(at(1000), 10)).toEqual([]);
    client.destroy();
  });
});

/**
 * Issue 17.1 attacks on DynamoDB without hot keys (lib/store/dynamo/sessions.ts, dynamo/writers.ts,
 * dynamo/retry.ts; docs/adr/0008-no-hot-keys-on-ingest.md), on DynamoDB Local with the real SDK; faults
 * DynamoDB Local cannot produce (a follow-up failing for good) injected in the client's middleware before
 * the SDK's retries, as test/store/dynamo/hot-keys.test.ts does.
 *
 * Held: sessions that all share one `updated_at`, spread over the 8 board shards and the partition from
 * before them, page in exact order (sid descending) at limits 1, 3, 7, 8, 9 and 50 with no session twice
 * or missing; a session advanced while the pages are read is never listed twice; a store cursor that is
 * not one of its own is refused (InvalidCursorError). The quota figure of another process is up to
 * `USAGE_MAX_AGE_MS` old (as ADR 8 says): measured here, a second process takes 10x the quota in that
 * window.
 *
 * Held since the fix (they were FAULTS): a follow-up that failed for good is kept pending in the tenant's
 * `PENDING#{tenant}` partition (lib/store/dynamo/pending.ts), not on the writer item, so a later chunk
 * of any writer of the tenant applies it, once:
 * - a session whose last advance's session follow-up failed for good (an ended writer's) is listed and
 *   counted once any later chunk of the tenant comes; it used to be missing from every listing (and the
 *   board, and its count) for ever, its counts waiting on the writer item (`uncounted_*`) for an advance
 *   an ended writer never makes;
 * - the same for the tenant's usage: a usage follow-up that failed on a writer's last chunk is added by
 *   the tenant's next chunk, so a fresh process's `tenantUsage` (the quota check) is no longer short.
 */
import { DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../harness/dynamodb-local.js';
import { newId } from '../../lib/log/format/ids.js';
import { keys } from '../../lib/store/dynamo/schema.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import { InvalidCursorError } from '../../lib/store/index.js';
import { encodeCursor } from '../../lib/store/keys.js';
import { advanceOf } from '../store/contract/records.js';
import { clientWith, keyOf, throttled } from '../support/dynamo-faults.js';

let local: DynamoLocal;
beforeAll(async () => {
  local = await startDynamoLocal();
}, 120_000);
afterAll(async () => {
  await local?.stop();
});

async function allPages(store: DynamoStateStore, limit: number): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  for (let k = 0; k < 1000; k++) {
    const page = await store.listSessions('acme', limit, cursor);
    out.push(...page.items.map((s) => s.sid));
    if (page.next === null) return out;
    cursor = page.next;
  }
  throw new Error('no end');
}

describe('the sharded board listing', () => {
  it('sessions sharing one updated_at over every shard and the old partition page exactly', async () => {
    const table = await local.freshTable();
    const store = new DynamoStateStore({ tableName: table, client: local.client });
    const sids = Array.from({ length: 41 }, () => newId('s'));
    for (const sid of sids)
      await store.advanceWriter('acme', sid, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 7 }));
    // a third of them as items of the layout before the shards (gsi1pk T#acme#BOARD)
    const doc = DynamoDBDocumentClient.from(local.client);
    for (const sid of sids.filter((_, k) => k % 3 === 0)) {
      await doc.send(
        new UpdateCommand({
          TableName: table,
          Key: keys.session('acme', sid),
          UpdateExpression: 'SET gsi1pk = :pk',
          ExpressionAttributeValues: { ':pk': 'T#acme#BOARD' },
        }),
      );
    }
    const want = [...sids].sort().reverse();
    for (const limit of [1, 3, 7, 8, 9, 50])
      expect(await allPages(store, limit), `limit ${limit}`).toEqual(want);
    // a session advanced between two pages moves up: it is not listed twice
    const first = await store.listSessions('acme', 10, null);
    const moved = first.items[3]!.sid;
    await store.advanceWriter('acme', moved, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 20 }));
    const rest: string[] = [];
    let cursor = first.next;
    while (cursor) {
      const p = await store.listSessions('acme', 10, cursor);
      rest.push(...p.items.map((s) => s.sid));
      cursor = p.next;
    }
    const seen = [...first.items.map((s) => s.sid), ...rest];
    expect(new Set(seen).size).toBe(seen.length);
    // a cursor the store did not make
    for (const bad of ['x', Buffer.from('[1,2]').toString('base64url'), encodeCursor('a'.repeat(65), 's')])
      await expect(store.listSessions('acme', 5, bad)).rejects.toBeInstanceOf(InvalidCursorError);
  }, 120_000);
});

describe('counts and quota', () => {
  it('another process sees a tenant usage up to 30 s old: how far past its quota it goes', async () => {
    const table = await local.freshTable();
    const a = new DynamoStateStore({ tableName: table, client: local.client });
    const b = new DynamoStateStore({ tableName: table, client: local.client });
    const quota = 1000;
    expect(await a.tenantUsage('acme')).toEqual({ bytes: 0 });
    // process b takes chunks within its own view of the quota; process a still reads its cached figure
    let taken = 0;
    for (let k = 0; k < 10; k++) {
      const sid = newId('s');
      const w = newId('w');
      if ((await b.tenantUsage('acme')).bytes + quota <= quota * 10) {
        await b.advanceWriter('acme', sid, w, 0, advanceOf(0, quota, { lines: 1, when: k }));
        taken += quota;
      }
    }
    expect(taken).toBe(10 * quota);
    // a's figure is the one it read: 0, while 10x the quota is stored
    expect((await a.tenantUsage('acme')).bytes).toBe(0);
    const fresh = new DynamoStateStore({ tableName: table, client: local.client });
    expect((await fresh.tenantUsage('acme')).bytes).toBe(10 * quota);
  });

  // Was a FAULT: a deferred session follow-up was carried only by the same writer's NEXT advance, which
  // an ended writer never makes, so its session item was never made or counted: missing from
  // listSessions (GET /v1/sessions, the board, its count) for ever, though getSession found it. Now the
  // tenant's next chunk, of another session here, applies the pending counts.
  it('a session whose last follow-up failed for good is listed once any later chunk of the tenant comes (was a FAULT)', async () => {
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
    failSession = 100;
    await store.advanceWriter('acme', sid, w, 0, advanceOf(0, 40, { lines: 3, when: 1, ended: true }));
    expect(store.retries).toMatchObject({ deferred: 1 });
    failSession = 0;
    // the tenant goes on working in other sessions; this writer has ended
    const other = newId('s');
    await store.advanceWriter('acme', other, newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 30 }));
    expect(await store.getSession('acme', sid)).toMatchObject({ writers: 1, lines: 3, bytes: 40 });
    const fresh = new DynamoStateStore({ tableName: table, client: local.client });
    const page = (await fresh.listSessions('acme', 50, null)).items;
    const listed = page.map((s) => s.sid);
    expect(listed).toContain(other);
    expect(listed).toContain(sid);
    // counted once, with the writer's figures
    expect(page.find((s) => s.sid === sid)).toMatchObject({ writers: 1, lines: 3, bytes: 40 });
    expect(await fresh.countSessions('acme')).toBe(2);
    client.destroy();
  });

  // Was a FAULT: the same for usage. A usage follow-up (ADD to T#{tenant}/USAGE#n) that failed for good
  // on a writer's last chunk was kept as uncounted_usage on the writer item and never added: every
  // process reading the shards afterwards (a fresh Lambda instance) checked the quota against a figure
  // short by those bytes, for good (10, not 50).
  it('usage whose follow-up failed on a last chunk is counted once any later chunk of the tenant comes (was a FAULT)', async () => {
    let failUsage = 0;
    const client = clientWith(local.config, (command, input) => {
      if (command === 'UpdateItemCommand' && keyOf(input, 'sk').startsWith('USAGE#') && failUsage > 0) {
        failUsage -= 1;
        throw throttled();
      }
    });
    const table = await local.freshTable();
    const store = new DynamoStateStore({ tableName: table, client });
    failUsage = 100;
    await store.advanceWriter(
      'acme',
      newId('s'),
      newId('w'),
      0,
      advanceOf(0, 40, { lines: 3, when: 1, ended: true }),
    );
    failUsage = 0;
    await store.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 10, { lines: 1, when: 2 }));
    const fresh = new DynamoStateStore({ tableName: table, client: local.client });
    expect(await fresh.tenantUsage('acme')).toEqual({ bytes: 50 });
    client.destroy();
  });
});

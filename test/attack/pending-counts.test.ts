/**
 * Attack 4 on deferred DynamoDB counts (issue 17.1, lib/store/dynamo/pending.ts, docs/adr/0008), on
 * DynamoDB Local with the real SDK; faults injected in the client's middleware at `initialize` (before
 * the SDK's own retries and the store's retryingClient), as test/store/dynamo/pending-counts.test.ts
 * does: three processes sweeping one tenant at once over more pending items than a sweep's page, a stale
 * (eventually consistent) copy of the pending partition answered after its items were applied, 25
 * pending items for one process, a tenant id with '#', and a follow-up that committed but answered an
 * error.
 */
import { DynamoDBClient, ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../harness/dynamodb-local.js';
import { newId } from '../../lib/log/format/ids.js';
import { SWEEP_PAGE } from '../../lib/store/dynamo/pending.js';
import { keys, pendingPk } from '../../lib/store/dynamo/schema.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import { advanceOf } from '../store/contract/records.js';
import { attrText } from '../support/dynamo-faults.js';

let local: DynamoLocal;
let doc: DynamoDBDocumentClient;
beforeAll(async () => {
  local = await startDynamoLocal();
  doc = DynamoDBDocumentClient.from(local.client);
}, 120_000);
afterAll(async () => {
  await local?.stop();
});

/** What a follow-up fails with for good: throttled past its retries (the store's retries are not re-run here). */
const failed = () => Object.assign(new Error('socket timeout (injected)'), { name: 'TimeoutError' });

interface Faults {
  /** the session and usage follow-ups fail (before they are sent) */
  followUps: boolean;
  /** the session and usage follow-ups are sent, commit, and then answer an error */
  followUpsAfterCommit: boolean;
  /** answers to a pending query of this tenant: the stale copy to give instead (once) */
  staleQuery: Record<string, unknown> | null;
  /** the pending queries' answers, as sent back */
  queries: Record<string, unknown>[];
  /** a sweep's transactions (those holding a Delete) answer throttled */
  sweepThrottled: boolean;
  /** transactions of sweeps sent */
  sweepTransacts: number;
}

function faultyClient(): { client: DynamoDBClient; f: Faults } {
  const f: Faults = {
    followUps: false,
    followUpsAfterCommit: false,
    staleQuery: null,
    queries: [],
    sweepThrottled: false,
    sweepTransacts: 0,
  };
  const client = new DynamoDBClient(local.config);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = context.commandName ?? '';
      const input = args.input as Record<string, unknown>;
      const sk = attrText((input.Key as Record<string, unknown> | undefined)?.sk);
      const followUp = command === 'UpdateItemCommand' && (sk.startsWith('S#') || sk.startsWith('USAGE#'));
      if (followUp && f.followUps) throw failed();
      if (command === 'QueryCommand') {
        const values = input.ExpressionAttributeValues as Record<string, unknown> | undefined;
        if (attrText(values?.[':pk']).startsWith('PENDING#')) {
          if (f.staleQuery) {
            const stale = f.staleQuery;
            f.staleQuery = null;
            return stale as never;
          }
          const out = await next(args);
          f.queries.push(out as unknown as Record<string, unknown>);
          return out;
        }
      }
      if (command === 'TransactWriteItemsCommand') {
        const items = input.TransactItems as Array<Record<string, unknown>>;
        if (items.some((x) => 'Delete' in x)) {
          f.sweepTransacts += 1;
          if (f.sweepThrottled) {
            throw new ProvisionedThroughputExceededException({
              message: 'throttled (injected)',
              $metadata: {},
            });
          }
        }
      }
      const out = await next(args);
      if (followUp && f.followUpsAfterCommit) throw failed();
      return out;
    },
    { step: 'initialize', name: 'fault' },
  );
  return { client, f };
}

const item = async (table: string, key: { pk: string; sk: string }) =>
  (await doc.send(new GetCommand({ TableName: table, Key: key }))).Item;

async function pendingCount(table: string, tenant = 'acme'): Promise<number> {
  const out = await doc.send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': pendingPk(tenant) },
      ConsistentRead: true,
    }),
  );
  return out.Items?.length ?? 0;
}

/** `n` writers of `n` sessions whose follow-ups fail for good: `n` pending items. */
async function deferMany(store: DynamoStateStore, f: Faults, n: number) {
  const sessions: { sid: string; w: string; lines: number; bytes: number }[] = [];
  f.followUps = true;
  for (let i = 0; i < n; i++) {
    const [sid, w] = [newId('s'), newId('w')];
    const lines = 1 + (i % 4);
    const bytes = 10 + i;
    await store.advanceWriter('acme', sid, w, 0, advanceOf(0, bytes, { lines, when: 1 + i }));
    sessions.push({ sid, w, lines, bytes });
  }
  f.followUps = false;
  return sessions;
}

async function sessionCounts(table: string, sid: string) {
  const s = await item(table, keys.session('acme', sid));
  return s ? { writers: s.writers, lines: s.lines, bytes: s.bytes } : undefined;
}

async function usage(table: string): Promise<number> {
  return (await new DynamoStateStore({ tableName: table, client: local.client }).tenantUsage('acme')).bytes;
}

describe('pending counts under attack', () => {
  it('held: three processes sweeping at once over more items than a page apply each exactly once', async () => {
    const table = await local.freshTable();
    const { client, f } = faultyClient();
    const deferrer = new DynamoStateStore({ tableName: table, client, sweepIntervalMs: 60_000 });
    const n = SWEEP_PAGE * 2 + 3;
    const sessions = await deferMany(deferrer, f, n);
    expect(await pendingCount(table)).toBe(n);
    const expectedUsage = sessions.reduce((s, x) => s + x.bytes, 0);
    expect(await usage(table)).toBe(0);

    // three other processes (sweep interval 0: every advance sweeps), advancing at once, four rounds
    const sweepers = [1, 2, 3].map(
      () => new DynamoStateStore({ tableName: table, client, sweepIntervalMs: 0 }),
    );
    let extra = 0;
    for (let round = 0; round < 4; round++) {
      await Promise.all(
        sweepers.map((s, i) =>
          s.advanceWriter(
            'acme',
            newId('s'),
            newId('w'),
            0,
            advanceOf(0, 1, { lines: 1, when: 100 + round * 3 + i }),
          ),
        ),
      );
      extra += 3;
    }
    expect(await pendingCount(table)).toBe(0);
    for (const s of sessions) {
      expect(await sessionCounts(table, s.sid)).toEqual({ writers: 1, lines: s.lines, bytes: s.bytes });
    }
    expect(await usage(table)).toBe(expectedUsage + extra);
    client.destroy();
  }, 120_000);

  it('held: a stale copy of the pending partition, answered after its items were applied, applies nothing', async () => {
    const table = await local.freshTable();
    const { client, f } = faultyClient();
    const a = new DynamoStateStore({ tableName: table, client, sweepIntervalMs: 0 });
    const sessions = await deferMany(a, f, 3);
    // a sweeps (its query recorded) and applies all three
    f.queries = [];
    await a.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 1, { lines: 1, when: 50 }));
    expect(await pendingCount(table)).toBe(0);
    const copy = f.queries[0]!;
    expect((copy.output as { Items: unknown[] }).Items.length).toBe(3);
    // b's query is answered with that copy (a replica behind): every transaction must be refused
    const b = new DynamoStateStore({ tableName: table, client, sweepIntervalMs: 0 });
    f.staleQuery = copy;
    await b.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 1, { lines: 1, when: 51 }));
    // and again, after one of the writers deferred anew with the same deferrals count it had (1)
    f.followUps = true;
    const again = sessions[0]!;
    await a.advanceWriter(
      'acme',
      again.sid,
      again.w,
      again.bytes,
      advanceOf(again.bytes, 5, { lines: again.lines + 1, when: 52 }),
    );
    f.followUps = false;
    f.staleQuery = copy;
    await b.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 1, { lines: 1, when: 53 }));
    expect(await item(table, keys.pending('acme', again.sid, again.w))).toMatchObject({
      deferrals: 1,
      lines: 1,
      bytes: 5,
    });
    for (const s of sessions) {
      expect(await sessionCounts(table, s.sid)).toEqual({ writers: 1, lines: s.lines, bytes: s.bytes });
    }
    // a fresh sweep applies the new deferral once
    await b.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 1, { lines: 1, when: 54 }));
    expect(await sessionCounts(table, again.sid)).toEqual({
      writers: 1,
      lines: again.lines + 1,
      bytes: again.bytes + 5,
    });
    client.destroy();
  }, 120_000);

  it('held: deferrals landing on 5 writers while 3 other processes sweep at once: totals exact at the end', async () => {
    const table = await local.freshTable();
    const { client: failing, f } = faultyClient();
    f.followUps = true; // every follow-up of the deferring process fails for good
    const deferrer = new DynamoStateStore({ tableName: table, client: failing, sweepIntervalMs: 0 });
    const sweepers = [1, 2, 3].map(
      () => new DynamoStateStore({ tableName: table, client: local.client, sweepIntervalMs: 0 }),
    );
    const writers = Array.from({ length: 5 }, () => ({ sid: newId('s'), w: newId('w') }));
    const CHUNKS = 6;
    let when = 1000;
    const writing = writers.map(async ({ sid, w }) => {
      for (let i = 0; i < CHUNKS; i++) {
        await deferrer.advanceWriter(
          'acme',
          sid,
          w,
          i * 10,
          advanceOf(i * 10, 10, { lines: i + 1, when: when++ }),
        );
      }
    });
    let sweptBytes = 0;
    const sweeping = sweepers.map(async (s) => {
      for (let i = 0; i < 10; i++) {
        await s.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 1, { lines: 1, when: when++ }));
        sweptBytes += 1;
      }
    });
    await Promise.all([...writing, ...sweeping]);
    // whatever is left is applied by the next sweeps
    for (let i = 0; i < 3; i++) {
      await sweepers[0]!.advanceWriter(
        'acme',
        newId('s'),
        newId('w'),
        0,
        advanceOf(0, 1, { lines: 1, when: when++ }),
      );
      sweptBytes += 1;
    }
    expect(await pendingCount(table)).toBe(0);
    for (const { sid } of writers) {
      expect(await sessionCounts(table, sid)).toEqual({ writers: 1, lines: CHUNKS, bytes: CHUNKS * 10 });
    }
    expect(await usage(table)).toBe(writers.length * CHUNKS * 10 + sweptBytes);
    failing.destroy();
  }, 180_000);

  it('held: 25 pending items and one process: applied within three advances, each once', async () => {
    const table = await local.freshTable();
    const { client, f } = faultyClient();
    const store = new DynamoStateStore({ tableName: table, client, sweepIntervalMs: 3_600_000 });
    const sessions = await deferMany(store, f, 25);
    // its next advances sweep (it owes the tenant a sweep while a page comes back full)
    for (let i = 0; i < 3; i++) {
      await store.advanceWriter(
        'acme',
        newId('s'),
        newId('w'),
        0,
        advanceOf(0, 1, { lines: 1, when: 200 + i }),
      );
    }
    expect(await pendingCount(table)).toBe(0);
    for (const s of sessions) {
      expect(await sessionCounts(table, s.sid)).toEqual({ writers: 1, lines: s.lines, bytes: s.bytes });
    }
    client.destroy();
  }, 120_000);

  it("held: tenants whose ids share a prefix, or hold '#' (which the state store does not refuse), never mix", async () => {
    const table = await local.freshTable();
    const { client, f } = faultyClient();
    const store = new DynamoStateStore({ tableName: table, client, sweepIntervalMs: 0 });
    // noticed: DynamoStateStore takes a tenant 'acme#x' (the API's TENANT_PATTERN refuses it earlier)
    const odd = ['acme#x', 'acme-2', 'acme#BOARD#3'];
    const items: Record<string, { sid: string; w: string }> = {};
    f.followUps = true;
    for (const t of odd) {
      const [sid, w] = [newId('s'), newId('w')];
      await store.advanceWriter(t, sid, w, 0, advanceOf(0, 7, { lines: 1, when: 2 }));
      items[t] = { sid, w };
    }
    f.followUps = false;
    // sweeps of 'acme' (and its usage) see none of them
    await store.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 1, { lines: 1, when: 3 }));
    await store.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 1, { lines: 1, when: 4 }));
    for (const t of odd) {
      expect(await pendingCount(table, t)).toBe(1);
      expect(await item(table, keys.pending(t, items[t]!.sid, items[t]!.w))).toMatchObject({
        lines: 1,
        bytes: 7,
      });
    }
    expect(await usage(table)).toBe(2);
    expect((await store.listSessions('acme', 50, null)).items).toHaveLength(2);
    client.destroy();
  }, 120_000);

  // FAULT (known, accepted in docs/adr/0008-no-hot-keys-on-ingest.md: ADD is not idempotent, and the
  // SDK's own retry of a timed-out ADD double counts the same way; the counters are soft, the writer
  // items exact): a follow-up that committed but answered an error (a lost reply: a socket timeout or a 500
  // after DynamoDB applied the ADD, then the retries throttled) is deferred as well, and the sweep adds it
  // again: the session's listed lines/bytes and the tenant's usage (what the quota is checked against)
  // are counted twice. The pending item holds no token of the follow-up it replaces, so a deferral cannot
  // tell "not applied" from "applied, reply lost" (the sweep's own transaction is guarded; the deferral
  // is not). lib/store/dynamo/pending.ts defer, lib/store/dynamo/sessions.ts countAdvance.
  // Repro: a middleware that calls next() for UpdateItem of S#/USAGE# keys and then throws (a
  // TimeoutError here); advanceWriter once, then any advance of the tenant: the
  // session lists 2x its lines and the usage 2x its bytes (unskip this test).
  // biome-ignore lint/suspicious/noSkippedTests: a FAULT kept skipped until fixed (see above)
  it.skip('a follow-up that committed but answered an error is counted once', async () => {
    const table = await local.freshTable();
    const { client, f } = faultyClient();
    const store = new DynamoStateStore({ tableName: table, client, sweepIntervalMs: 0 });
    const [sid, w] = [newId('s'), newId('w')];
    f.followUpsAfterCommit = true;
    await store.advanceWriter('acme', sid, w, 0, advanceOf(0, 40, { lines: 3, when: 1 }));
    f.followUpsAfterCommit = false;
    await store.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 1, { lines: 1, when: 2 }));
    expect(await sessionCounts(table, sid)).toEqual({ writers: 1, lines: 3, bytes: 40 });
    expect(await usage(table)).toBe(41);
    client.destroy();
  }, 120_000);

  // Was a FAULT: a sweep ran inside the advance that triggers it with the adapter's retries (TRANSACT_RETRY's
  // 10 tries over ~5 s per item), so 10 pending items whose transactions were throttled held one chunk's
  // acknowledgement 21.7 s (100 transactions at the throttled partition). A sweep now sends each request
  // once (the SDK's own retries only) and ends at the first that fails for another reason than its
  // condition (lib/store/dynamo/pending.ts sweep/apply).
  it('an advance is not held for seconds by a sweep whose transactions are throttled', async () => {
    const table = await local.freshTable();
    const { client, f } = faultyClient();
    const store = new DynamoStateStore({ tableName: table, client, sweepIntervalMs: 0 });
    await deferMany(store, f, SWEEP_PAGE);
    f.sweepThrottled = true;
    f.sweepTransacts = 0;
    const t0 = Date.now();
    await store.advanceWriter('acme', newId('s'), newId('w'), 0, advanceOf(0, 1, { lines: 1, when: 500 }));
    const ms = Date.now() - t0;
    console.log(`advance with a throttled sweep: ${ms} ms, ${f.sweepTransacts} sweep transactions sent`);
    f.sweepThrottled = false;
    expect(await pendingCount(table)).toBe(SWEEP_PAGE);
    expect(ms).toBeLessThan(2_000);
    client.destroy();
  }, 300_000);
});

/**
 * The DynamoDB access declarations (lib/store/dynamo/access.ts, issue 8.9) against what the code sends,
 * on DynamoDB Local through a client that records every request (test/support/dynamo-recorder.ts):
 * - `DynamoStateStore` through the whole state store contract, each request put down to the method that
 *   sent it, and an advance whose follow-up fails for good (its counts kept pending, applied and deleted
 *   by a later advance's sweep, which the contract never comes to): every method sends exactly what
 *   `STATE_STORE_ACCESS` declares for it, no more, no less;
 * - `DynamoRateLimiter`: exactly `RATE_LIMITER_ACCESS`;
 * - the replay function's app (functions/app.ts over s3rver and DynamoDB Local) serving its routes, the
 *   rate limit included: nothing outside `dynamoAccessOf('replay')`, the grants of its role, and its
 *   store refusing any method its role was not derived from.
 * DynamoDB Local ignores IAM; this is what stands in for it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProvisionedThroughputExceededException } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { dynamoAccessOf, onlyMethods, REPLAY_STATE_METHODS } from '../../functions/access.js';
import { createLambdaApp } from '../../functions/app.js';
import { parseConfig } from '../../functions/config.js';
import { type DynamoLocal, startDynamoLocal } from '../../harness/dynamodb-local.js';
import { type LocalS3, startS3rver } from '../../harness/s3rver.js';
import { DynamoRateLimiter, RATE_LIMITER_ACCESS } from '../../lib/ratelimit/dynamo.js';
import { ensureTenant } from '../../lib/service/tenants/bootstrap.js';
import {
  accessKey,
  type DynamoAccess,
  STATE_STORE_ACCESS,
  type StateMethod,
} from '../../lib/store/dynamo/access.js';
import { keys } from '../../lib/store/dynamo/schema.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import type { StateStore } from '../../lib/store/index.js';
import { runStateStoreContracts } from '../store/contract/index.js';
import { advanceOf } from '../store/contract/records.js';
import { recordingClient } from '../support/dynamo-recorder.js';
import { writeSession } from '../support/segments.js';

let local: DynamoLocal;
beforeAll(async () => {
  local = await startDynamoLocal();
}, 120_000);
afterAll(async () => {
  await local?.stop();
});

const keysOf = (accesses: readonly DynamoAccess[]) => [...new Set(accesses.map(accessKey))].sort();

describe('DynamoStateStore sends what STATE_STORE_ACCESS declares, method by method', () => {
  /** the state store method whose call a request belongs to (calls inside a method stay its own) */
  const method = new AsyncLocalStorage<string>();
  const sent = new Map<string, Set<string>>();
  const record = (accesses: DynamoAccess[]) => {
    const m = method.getStore() ?? '(outside any method)';
    const set = sent.get(m) ?? new Set<string>();
    for (const a of accesses) set.add(accessKey(a));
    sent.set(m, set);
  };
  let client: ReturnType<typeof recordingClient>;
  beforeAll(() => {
    client = recordingClient(local.config, record);
  });
  afterAll(() => client?.destroy());

  /** The store, each method call run in its own async context named after the method. */
  const attributed = (store: StateStore): StateStore =>
    new Proxy(store, {
      get(target, prop) {
        const value = Reflect.get(target, prop, target) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) =>
          method.run(String(prop), () => (value as (...a: unknown[]) => unknown).apply(target, args));
      },
    });

  // every entity port's contract, the digest index and the due mark of advanceWriter (issue 15) included
  runStateStoreContracts({
    name: 'DynamoStateStore, recorded',
    newStore: async () => attributed(new DynamoStateStore({ tableName: await local.freshTable(), client })),
    listingLagMs: 5_000,
  });

  // The contract's follow-ups never fail: the pending item's deferral, the sweep that applies it and its
  // Delete are sent here, by the advance whose session follow-up is throttled for good (injected before
  // the wire, so only what reaches DynamoDB is recorded) and by a later one.
  it('advanceWriter keeps a failed follow-up pending, and a later advance applies and deletes it', async () => {
    let failSession = false;
    const faulty = recordingClient(local.config, record);
    faulty.middlewareStack.add(
      (next, context) => async (args) => {
        const sk = (args.input as { Key?: { sk?: unknown } }).Key?.sk;
        if (failSession && context.commandName === 'UpdateItemCommand' && String(sk).startsWith('S#')) {
          throw new ProvisionedThroughputExceededException({
            message: 'throttled (injected)',
            $metadata: {},
          });
        }
        return next(args);
      },
      { step: 'initialize', name: 'failSessionFollowUp' },
    );
    const table = await local.freshTable();
    const store = attributed(new DynamoStateStore({ tableName: table, client: faulty }));
    const [sid, w] = ['s_pending', 'w_pending'];
    failSession = true;
    await store.advanceWriter('acme', sid, w, 0, advanceOf(0, 40, { lines: 3, when: 1 }));
    failSession = false;
    const doc = DynamoDBDocumentClient.from(local.client);
    const pending = new GetCommand({ TableName: table, Key: keys.pending('acme', sid, w) });
    expect((await doc.send(pending)).Item).toMatchObject({ lines: 3, bytes: 40, deferrals: 1 });
    await store.advanceWriter('acme', 's_later', 'w_later', 0, advanceOf(0, 10, { lines: 1, when: 2 }));
    expect((await doc.send(pending)).Item).toBeUndefined();
    expect(await store.getSession('acme', sid)).toMatchObject({ writers: 1, lines: 3, bytes: 40 });
    faulty.destroy();
  }, 60_000);

  it('every method sent exactly its declared requests over the contract', () => {
    const declared = Object.fromEntries(Object.entries(STATE_STORE_ACCESS).map(([m, a]) => [m, keysOf(a)]));
    const seen = Object.fromEntries(
      [...sent].filter(([m]) => m !== 'close').map(([m, s]) => [m, [...s].sort()]),
    );
    expect(seen).toEqual(declared);
  });
});

describe('DynamoRateLimiter sends what RATE_LIMITER_ACCESS declares', () => {
  it('one conditional update of its counter item, allowed or refused', async () => {
    const sent: DynamoAccess[] = [];
    const client = recordingClient(local.config, (a) => sent.push(...a));
    const limiter = new DynamoRateLimiter({
      client,
      tableName: await local.freshTable(),
      config: { limit: 2, window_seconds: 60 },
    });
    const decisions = await Promise.all([1, 2, 3].map(() => limiter.limit('tok_A')));
    expect(decisions.map((d) => d.allowed).sort()).toEqual([false, true, true]);
    expect(sent).toHaveLength(3);
    expect(keysOf(sent)).toEqual(keysOf(RATE_LIMITER_ACCESS));
    client.destroy();
  });
});

describe("the replay function's requests stay within its role", () => {
  let s3: LocalS3;
  beforeAll(async () => {
    s3 = await startS3rver();
  });
  afterAll(async () => {
    await s3?.close();
  });

  it('serves replays, segments and 429s sending only what dynamoAccessOf("replay") grants', async () => {
    const table = await local.freshTable();
    const bucket = await s3.createBucket();
    const sent: { serves: string; access: DynamoAccess }[] = [];
    const minute = Math.floor(Date.now() / 60_000) * 60_000;
    const logger = { addContext: vi.fn(), info: vi.fn(), error: vi.fn(), warn: vi.fn() };
    const app = (serves: 'all' | 'replay') =>
      createLambdaApp({
        config: parseConfig({
          BUCKET_NAME: bucket,
          TABLE_NAME: table,
          AWS_REGION: 'us-east-1',
          RATE_LIMIT_PER_MINUTE: '5',
        }),
        clients: {
          s3: new S3Client({
            endpoint: s3.endpoint,
            forcePathStyle: true,
            region: 'us-east-1',
            credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
          }),
          dynamodb: recordingClient(local.config, (a) =>
            sent.push(...a.map((access) => ({ serves, access }))),
          ),
        },
        // biome-ignore lint/suspicious/noExplicitAny: a stand-in for the Powertools logger
        logger: logger as any,
        serves,
        // The replay requests a minute after the upload: the token's last use is old enough to be
        // recorded again (touchToken), and they have a rate-limit window of their own.
        now: () => new Date(minute + (serves === 'all' ? 1_000 : 90_000)),
      });
    const api = app('all');
    const replay = app('replay');
    const admin = (await ensureTenant(
      new DynamoStateStore({ tableName: table, client: local.client }),
      'acme',
      new Date(),
    ))!.token;
    const headers = { authorization: `Bearer ${admin}` };
    const seg = writeSession(mkdtempSync(join(tmpdir(), 'hansard-access-')));
    const posted = await api.request(`/v1/sessions/${seg.sid}/writers/${seg.w}/chunks?offset=0`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/x-ndjson' },
      body: seg.bytes,
    });
    expect(posted.status).toBe(201);

    const statuses: number[] = [];
    for (const path of [
      `/v1/sessions/${seg.sid}/replay`,
      `/v1/sessions/${seg.sid}/replay?format=text`,
      `/v1/sessions/${seg.sid}/writers/${seg.w}/segment`,
      `/v1/sessions/${seg.sid}/replay`,
      `/v1/sessions/${seg.sid}/writers/${seg.w}/segment`,
      `/v1/sessions/${seg.sid}/replay`, // the sixth request of the token in the minute: 429
    ]) {
      const res = await replay.request(path, { headers });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const wrong = await replay.request(`/v1/sessions/${seg.sid}/replay`, {
      headers: { authorization: `Bearer hns_${'x'.repeat(43)}` },
    });
    expect(wrong.status).toBe(401);
    // The limiter failing (as it did when IAM denied its counters) would have been logged as an error.
    expect(logger.error).not.toHaveBeenCalled();

    const byReplay = keysOf(sent.filter((s) => s.serves === 'replay').map((s) => s.access));
    // the limiter's count, the token's use, and the rate of the token's tenant (issue 17.3)
    expect(byReplay).toEqual(
      expect.arrayContaining(['UpdateItem RL#', 'UpdateItem TOKEN#', 'GetItem TENANT#']),
    );
    expect(byReplay.filter((k) => !keysOf(dynamoAccessOf('replay')).includes(k))).toEqual([]);
    const byApi = keysOf(sent.filter((s) => s.serves === 'all').map((s) => s.access));
    expect(byApi.filter((k) => !keysOf(dynamoAccessOf('all')).includes(k))).toEqual([]);
  });

  it('refuses a store method outside REPLAY_STATE_METHODS, naming it and where to declare it', async () => {
    const store = new DynamoStateStore({ tableName: await local.freshTable(), client: local.client });
    const guarded = onlyMethods(store, REPLAY_STATE_METHODS);
    await expect(guarded.getWriter('acme', 's_x', 'w_x')).resolves.toBeNull();
    const outside: StateMethod = 'putStatus';
    expect(() => guarded[outside]({} as never)).toThrow(/StateStore\.putStatus.*REPLAY_STATE_METHODS/);
  });
});

/**
 * Issue 17.1's "done when", on the real AWS app (`createAwsApp`, `app.request`) over s3rver and DynamoDB
 * Local: 100 writers of one session and 20 other sessions of the same tenant (2 writers each) ingest
 * together, each writer posting its next chunk (5 events) as soon as the last one is answered, for
 * `HANSARD_HOT_SECONDS` seconds (default 15, and at least 4 chunks per writer however slow the machine:
 * every writer's first chunk, which also writes the session's digest due mark, and later ones all race;
 * set `HANSARD_HOT_SECONDS=60` for the full minute). Then every session is
 * replayed and each writer's lines counted against what it was acknowledged: nothing lost, nothing twice.
 *
 * DynamoDB Local runs transactions one at a time and never throttles, so the faults AWS would give this
 * load (transactions cancelled for `TransactionConflict`, throttled writes and queries) are injected
 * into the SDK client's middleware, before the SDK's own retries, at fixed rates: the store must retry
 * them (counted in `DynamoStateStore.retries`) with no 5xx and no lost count. The session counters and
 * the tenant's usage, kept outside the transactions, must end equal to the writers' truth.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateTableCommand,
  DynamoDBClient,
  ProvisionedThroughputExceededException,
  TransactionCanceledException,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type DynamoLocal,
  LOCAL_CREDENTIALS,
  LOCAL_REGION,
  startDynamoLocal,
} from '../../harness/dynamodb-local.js';
import { type LocalS3, startS3rver } from '../../harness/s3rver.js';
import { createAwsApp } from '../../lib/deploy/aws.js';
import { formatTs, type LogEvent, newId, serializeEvent } from '../../lib/log/index.js';
import { ensureTenant } from '../../lib/service/tenants/bootstrap.js';
import { createTableInput } from '../../lib/store/dynamo/schema.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import type { StateStore } from '../../lib/store/index.js';

const SECONDS = Number(process.env.HANSARD_HOT_SECONDS ?? 15);
const HOT_WRITERS = 100;
const OTHER_SESSIONS = 20;
const OTHER_WRITERS = 2;
const EVENTS_PER_CHUNK = 5;
/** chunks each writer sends at least, past the deadline if need be (a loaded machine is slow) */
const MIN_CHUNKS = 4;
/** injected fault rates: a transaction cancelled for a conflict, a throttled UpdateItem, a throttled Query */
const RATES = { conflict: 0.05, throttleUpdate: 0.03, throttleQuery: 0.02 };

let s3: LocalS3;
let dynamo: DynamoLocal;
const tmp = mkdtempSync(join(tmpdir(), 'hansard-hot-'));

beforeAll(async () => {
  [s3, dynamo] = await Promise.all([startS3rver(), startDynamoLocal()]);
}, 120_000);
afterAll(async () => {
  await Promise.all([s3?.close(), dynamo?.stop()]);
  rmSync(tmp, { recursive: true, force: true });
});

/** One writer's segment as the load makes it: its next chunk, and what the server acknowledged. */
interface Writer {
  sid: string;
  w: string;
  /**
   * its writer.start's agent: the hot session's writers each their own, so that their first chunks race
   * to change the session's summary (20 agents are kept) as well as to mark it due
   */
  agent: string;
  seq: number;
  offset: number;
  /** lines acknowledged (201) */
  acked: number;
}

/** The next `events` lines of `wr` (a writer.start first), as bytes. */
function nextChunk(wr: Writer, events: number): { body: Buffer; lines: number } {
  const lines: string[] = [];
  const now = Date.now() * 1000;
  const base = (type: string, id: string) => ({
    v: 3,
    sid: wr.sid,
    w: wr.w,
    seq: wr.seq + lines.length + 1,
    id,
    ts: formatTs(now + lines.length),
    mono: (wr.seq + lines.length + 1) / 1000,
    type,
    extra: {},
  });
  if (wr.seq === 0) {
    lines.push(
      serializeEvent({
        ...base('writer.start', wr.w),
        writer_id: wr.w,
        meta: { agent: wr.agent, app: null, hansard_version: '0.1.0', host: 'test', pid: 1 },
        redacted: [],
      } as unknown as LogEvent),
    );
  }
  while (lines.length < events) {
    lines.push(
      serializeEvent({
        ...base('note', newId('e')),
        author: 'hot-load',
        text: `note ${wr.seq + lines.length + 1} of ${wr.w}`,
        redacted: [],
      } as unknown as LogEvent),
    );
  }
  return { body: Buffer.from(`${lines.join('\n')}\n`), lines: lines.length };
}

/** A DynamoDB client that fails some requests as AWS would under this load, before the SDK retries. */
/** requests of pending-counts sweeps seen (at least each process's first advance of the tenant sweeps) */
let sweepRequests = 0;

/** A request of a pending-counts sweep: its query of `PENDING#…`, or a transaction deleting a pending item. */
function isSweep(input: unknown): boolean {
  const i = input as {
    ExpressionAttributeValues?: Record<string, unknown>;
    TransactItems?: { Delete?: { Key?: Record<string, unknown> } }[];
  };
  const pending = (v: unknown) => typeof v === 'string' && v.startsWith('PENDING#');
  if (Object.values(i.ExpressionAttributeValues ?? {}).some(pending)) return true;
  return (i.TransactItems ?? []).some((t) => pending(t.Delete?.Key?.pk));
}

function faultyClient(injected: { conflict: number; throttle: number }): DynamoDBClient {
  const client = new DynamoDBClient({
    endpoint: dynamo.endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
  client.middlewareStack.add(
    (next, context) => async (args) => {
      // A sweep of pending counts sends each request once, by design (lib/store/dynamo/pending.ts: it
      // runs inside a chunk's request), so its failures are not retries to count here; its throttling is
      // test/attack/pending-counts's.
      if (isSweep(args.input)) {
        sweepRequests += 1;
        return next(args);
      }
      const r = Math.random();
      if (context.commandName === 'TransactWriteItemsCommand' && r < RATES.conflict) {
        injected.conflict += 1;
        throw new TransactionCanceledException({
          message:
            'Transaction cancelled, please refer cancellation reasons for specific reasons [None, TransactionConflict]',
          $metadata: {},
          CancellationReasons: [{ Code: 'None' }, { Code: 'TransactionConflict' }],
        });
      }
      const throttle =
        (context.commandName === 'UpdateItemCommand' && r < RATES.throttleUpdate) ||
        (context.commandName === 'QueryCommand' && r < RATES.throttleQuery);
      if (throttle) {
        injected.throttle += 1;
        throw new ProvisionedThroughputExceededException({
          message: 'The level of configured provisioned throughput for the table was exceeded',
          $metadata: {},
        });
      }
      return next(args);
    },
    { step: 'initialize', name: 'injectAwsFaults' },
  );
  return client;
}

describe(`100 writers of one session and 20 sessions of one tenant ingesting for ${SECONDS} s (AWS app, s3rver + DynamoDB Local)`, () => {
  it(
    'answers no 5xx, loses and repeats no event, and retries (and counts) every conflict and throttle',
    async () => {
      const table = `hansard-hot-${Date.now().toString(36)}`;
      const setup = new DynamoDBClient(dynamo.config);
      await setup.send(new CreateTableCommand(createTableInput(table)));
      const admin = (await ensureTenant(
        new DynamoStateStore({ tableName: table, client: setup }),
        'acme',
        new Date(),
      ))!.token;
      setup.destroy();

      const injected = { conflict: 0, throttle: 0 };
      const dynamodb = faultyClient(injected);
      let store: DynamoStateStore | null = null;
      const errors: string[] = [];
      const app = createAwsApp({
        clients: { s3: s3.client(), dynamodb },
        bucket: await s3.createBucket(),
        table,
        rateLimitPerMinute: 0,
        wrapState: (state: StateStore) => {
          store = state as DynamoStateStore;
          return state;
        },
        log: (m, err) => errors.push(`${m} ${String(err)}`),
      });
      const headers = { authorization: `Bearer ${admin}` };

      const hot = newId('s');
      const writers: Writer[] = [
        ...Array.from({ length: HOT_WRITERS }, (_, i) => ({
          sid: hot,
          w: newId('w'),
          agent: `agent-${i}`,
          seq: 0,
          offset: 0,
          acked: 0,
        })),
        ...Array.from({ length: OTHER_SESSIONS }, () => newId('s')).flatMap((sid) =>
          Array.from({ length: OTHER_WRITERS }, () => ({
            sid,
            w: newId('w'),
            agent: 'hot-load',
            seq: 0,
            offset: 0,
            acked: 0,
          })),
        ),
      ];
      const codes = new Map<number, number>();
      const deadline = Date.now() + SECONDS * 1000;
      await Promise.all(
        writers.map(async (wr) => {
          // until the deadline, and at least MIN_CHUNKS each however loaded the machine is
          for (let sent = 0; sent < MIN_CHUNKS || Date.now() < deadline; sent++) {
            const chunk = nextChunk(wr, EVENTS_PER_CHUNK);
            const res = await app.request(
              `/v1/sessions/${wr.sid}/writers/${wr.w}/chunks?offset=${wr.offset}`,
              {
                method: 'POST',
                headers: { ...headers, 'content-type': 'application/x-ndjson' },
                body: chunk.body,
              },
            );
            codes.set(res.status, (codes.get(res.status) ?? 0) + 1);
            const body = (await res.json()) as { length?: number; error?: { code: string; message: string } };
            if (res.status !== 201) {
              errors.push(`${res.status} ${wr.w}@${wr.offset}: ${body.error?.code} ${body.error?.message}`);
              return;
            }
            wr.offset = body.length!;
            wr.seq += chunk.lines;
            wr.acked += chunk.lines;
          }
        }),
      );
      const posted = [...codes.values()].reduce((a, b) => a + b, 0);
      const fiveXX = [...codes].filter(([c]) => c >= 500).reduce((n, [, k]) => n + k, 0);
      const retries = { ...store!.retries };
      console.log(
        `hot-session load, ${SECONDS} s: ${posted} chunks posted (${(posted / SECONDS).toFixed(1)}/s), codes ${JSON.stringify(Object.fromEntries(codes))}; injected ${injected.conflict} conflicts and ${injected.throttle} throttles; store retried ${retries.conflicts} conflicts, ${retries.throttles} throttles, exhausted ${retries.exhausted}, deferred ${retries.deferred}`,
      );
      expect(errors).toEqual([]);
      expect(fiveXX).toBe(0);
      expect([...codes.keys()]).toEqual([201]);
      // every writer kept going, the hot session's 100 among them
      expect(Math.min(...writers.map((wr) => wr.acked))).toBeGreaterThanOrEqual(
        EVENTS_PER_CHUNK * MIN_CHUNKS,
      );

      // Each retry the store counted answers a fault injected (the SDK retries none of these: they are
      // thrown before its retry step), and none ran out of attempts.
      expect(injected.conflict).toBeGreaterThan(0);
      expect(injected.throttle).toBeGreaterThan(0);
      // (at least: DynamoDB Local may cancel a transaction for a conflict of its own)
      expect(retries.conflicts).toBeGreaterThanOrEqual(injected.conflict);
      expect(retries.throttles).toBeGreaterThanOrEqual(injected.throttle);
      expect(sweepRequests).toBeGreaterThan(0); // isSweep knows them, so none was faulted
      expect(retries.exhausted).toBe(0);
      expect(retries.deferred).toBe(0);

      // Replay every session: each writer's lines exactly once, seq 1..acked.
      dynamodb.middlewareStack.remove('injectAwsFaults');
      const sessions = [...new Set(writers.map((wr) => wr.sid))];
      for (const sid of sessions) {
        const res = await app.request(`/v1/sessions/${sid}/replay`, { headers });
        expect(res.status).toBe(200);
        const seqs = new Map<string, number[]>();
        for (const line of (await res.text()).split('\n')) {
          if (line === '') continue;
          const ev = JSON.parse(line) as { w: string; seq: number };
          seqs.set(ev.w, [...(seqs.get(ev.w) ?? []), ev.seq]);
        }
        const mine = writers.filter((wr) => wr.sid === sid);
        expect([...seqs.keys()].sort()).toEqual(mine.map((wr) => wr.w).sort());
        for (const wr of mine) {
          const got = seqs.get(wr.w)!.sort((a, b) => a - b);
          expect(got).toEqual(Array.from({ length: wr.acked }, (_, i) => i + 1));
        }
        // the counters kept outside the transactions agree with the writers' truth
        const lines = mine.reduce((n, wr) => n + wr.acked, 0);
        const bytes = mine.reduce((n, wr) => n + wr.offset, 0);
        const exact = await store!.getSession('acme', sid);
        expect(exact).toMatchObject({ writers: mine.length, lines, bytes });
      }
      const listed = [];
      let cursor: string | null = null;
      do {
        const page: Awaited<ReturnType<DynamoStateStore['listSessions']>> = await store!.listSessions(
          'acme',
          7,
          cursor,
        );
        listed.push(...page.items);
        cursor = page.next;
      } while (cursor !== null);
      expect(listed.map((s) => s.sid).sort()).toEqual([...sessions].sort());
      for (const s of listed) {
        const mine = writers.filter((wr) => wr.sid === s.sid);
        expect(s).toMatchObject({
          writers: mine.length,
          lines: mine.reduce((n, wr) => n + wr.acked, 0),
          bytes: mine.reduce((n, wr) => n + wr.offset, 0),
        });
      }
      // the hot session's summary kept the first 20 of its 100 agents, none lost to the merges' races
      expect((await store!.boardCopies('acme', [hot])).get(hot)?.agents).toHaveLength(20);
      const stored = writers.reduce((n, wr) => n + wr.offset, 0);
      const fresh = new DynamoStateStore({ tableName: table, client: new DynamoDBClient(dynamo.config) });
      expect(await fresh.tenantUsage('acme')).toEqual({ bytes: stored });
      dynamodb.destroy();
    },
    SECONDS * 1000 + 240_000,
  );
});

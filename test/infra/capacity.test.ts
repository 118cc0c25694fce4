/**
 * The per-request operation counts of docs/scale.md, measured (issue 17: "derive the per-chunk operation
 * counts from the code"): the AWS app (createAwsApp, as both functions run it) over DynamoDB Local and
 * s3rver, with clients that count every S3 command and every DynamoDB request (a transaction with its
 * items by kind), and ask DynamoDB Local for the read units each read consumes
 * (`ReturnConsumedCapacity`). Write units are not taken from it: DynamoDB Local does not charge a
 * transaction's items as the service does (2 units each), so docs/scale.md computes them from the item
 * counts here and the sizes checked below. Each row of the table between the `ops:begin`/`ops:end`
 * marks must be what the code does today, so a change to what ingest, a status report or a replay sends
 * fails here until the capacity model is redone.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AttributeValue, DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DynamoLocal, startDynamoLocal } from '../../harness/dynamodb-local.js';
import { type LocalS3, startS3rver } from '../../harness/s3rver.js';
import { LocalKeyring } from '../../lib/audit/local-keyring.js';
import { createAwsApp } from '../../lib/deploy/aws.js';
import { awsDigestDeps } from '../../lib/deploy/aws-stores.js';
import { openSession } from '../../lib/log/index.js';
import { writeDueDigests } from '../../lib/service/digests/write.js';
import { ensureTenant } from '../../lib/service/tenants/bootstrap.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';
import { readLocal, splitLines } from '../support/segments.js';
import { ROOT } from './lambda-bundle.js';

/** What one request cost. */
interface Cost {
  rru: number;
  /** DynamoDB requests by action, e.g. `GetItem` 2 */
  dynamo: Record<string, number>;
  /** the items of the transactions, by kind, e.g. `Update` 3 */
  transacted: Record<string, number>;
  put: number;
  get: number;
  list: number;
}

const READS = new Set(['GetItem', 'Query', 'BatchGetItem', 'TransactGetItems', 'Scan']);
let cost: Cost;
const fresh = (): Cost => ({ rru: 0, dynamo: {}, transacted: {}, put: 0, get: 0, list: 0 });

/** A DynamoDB client asking for, and adding up, the capacity of every request. */
function meteredDynamo(d: DynamoLocal): DynamoDBClient {
  const client = new DynamoDBClient(d.config);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const action = (context.commandName ?? '?').replace(/Command$/, '');
      const input = args.input as { ReturnConsumedCapacity?: string; TransactItems?: object[] };
      input.ReturnConsumedCapacity = 'TOTAL';
      for (const item of input.TransactItems ?? []) {
        for (const kind of Object.keys(item)) cost.transacted[kind] = (cost.transacted[kind] ?? 0) + 1;
      }
      const out = await next(args);
      const consumed = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } }).ConsumedCapacity;
      if (READS.has(action)) cost.rru += consumed?.CapacityUnits ?? 0;
      cost.dynamo[action] = (cost.dynamo[action] ?? 0) + 1;
      return out;
    },
    { step: 'initialize', name: 'meterCapacity', priority: 'high' },
  );
  return client;
}

/** Counts the S3 commands a client sends. */
function meteredS3(client: S3Client): S3Client {
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const name = context.commandName;
      if (name === 'PutObjectCommand') cost.put += 1;
      else if (name === 'GetObjectCommand' || name === 'HeadObjectCommand') cost.get += 1;
      else if (name === 'ListObjectsV2Command') cost.list += 1;
      return next(args);
    },
    { step: 'initialize', name: 'countS3' },
  );
  return client;
}

/** The rows of docs/scale.md's measured table: request → its figures as written. */
function documented(): Map<string, string[]> {
  const text = readFileSync(join(ROOT, 'docs/scale.md'), 'utf8');
  const block = /<!-- ops:begin -->([\s\S]*?)<!-- ops:end -->/.exec(text)?.[1];
  if (!block) throw new Error('docs/scale.md has no <!-- ops:begin --> … <!-- ops:end --> table');
  const rows = new Map<string, string[]>();
  for (const line of block.split('\n')) {
    const cells = line
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    if (cells.length < 2 || cells[0] === 'request' || /^-+$/.test(cells[0]!)) continue;
    rows.set(cells[0]!, cells.slice(1));
  }
  return rows;
}

/** `2 GetItem, 1 Query` for `{ GetItem: 2, Query: 1 }` (by name), `-` for none. */
const counts = (m: Record<string, number>) =>
  Object.entries(m)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([a, n]) => `${n} ${a}`)
    .join(', ') || '-';

/** A cost as the table's cells: DynamoDB requests, transaction items, RRU, S3 PUT, GET, LIST. */
function cells(c: Cost): string[] {
  return [
    counts(c.dynamo),
    counts(c.transacted),
    String(c.rru),
    String(c.put),
    String(c.get),
    String(c.list),
  ];
}

/**
 * An item's size as DynamoDB bills it, near enough: each attribute's name and value in UTF-8 bytes, a
 * number as its digits, 3 bytes of overhead per list or map (DynamoDB developer guide, "Item sizes").
 */
function itemBytes(item: Record<string, AttributeValue>): number {
  const value = (v: AttributeValue): number => {
    if (v.S !== undefined) return Buffer.byteLength(v.S);
    if (v.N !== undefined) return v.N.length;
    if (v.B !== undefined) return v.B.length;
    if (v.BOOL !== undefined || v.NULL !== undefined) return 1;
    if (v.L) return 3 + v.L.reduce((s, x) => s + 1 + value(x), 0);
    if (v.M) return 3 + Object.entries(v.M).reduce((s, [k, x]) => s + Buffer.byteLength(k) + 1 + value(x), 0);
    if (v.SS) return v.SS.reduce((s, x) => s + Buffer.byteLength(x), 0);
    return 0;
  };
  return Object.entries(item).reduce((s, [k, v]) => s + Buffer.byteLength(k) + value(v), 0);
}

let dynamo: DynamoLocal;
let s3: LocalS3;
const dir = mkdtempSync(join(tmpdir(), 'hansard-capacity-'));
const measured = new Map<string, Cost>();

beforeAll(async () => {
  [dynamo, s3] = await Promise.all([startDynamoLocal(), startS3rver()]);
}, 120_000);
afterAll(async () => {
  await dynamo?.stop();
  await s3?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('what each request costs on AWS (docs/scale.md)', () => {
  it('measures ingest, status reports and a replay, and the capacity model names those figures', async () => {
    const bucket = await s3.createBucket();
    const table = await dynamo.freshTable();
    const state = new DynamoStateStore({ tableName: table, client: dynamo.client });
    const token = (await ensureTenant(state, 'acme', new Date()))!.token;
    await state.close();
    // A fixed clock: the token's last use is written on the first request only (once a minute).
    const t0 = new Date('2026-12-01T12:00:00.000Z');
    const app = createAwsApp({
      clients: { s3: meteredS3(s3.client()), dynamodb: meteredDynamo(dynamo) },
      bucket,
      table,
      log: () => {},
      now: () => t0,
    });
    const auth = { authorization: `Bearer ${token}` };
    const step = async (name: string, run: () => Response | Promise<Response>, status: number) => {
      cost = fresh();
      const res = await run();
      expect(res.status, `${name}: ${await res.clone().text()}`).toBe(status);
      await res.arrayBuffer();
      measured.set(name, cost);
    };

    // Two writers of one session, written by the library writer: person, agent, turn, action, result.
    const a = openSession(dir, { agent: 'agent-a', host: 'h', pid: 1 });
    const b = openSession(dir, { sid: a.sid, agent: 'agent-b', host: 'h', pid: 2 });
    const m = a.message({ user_id: 'priya', text: 'restart the payments worker' });
    b.participantJoin({ user_id: 'priya' });
    const firstA = readLocal({ sid: a.sid, w: a.w, dir: a.dir, path: a.path }).bytes;
    const firstB = readLocal({ sid: b.sid, w: b.w, dir: b.dir, path: b.path }).bytes;
    const turn = a.turnStart({ context_message_ids: [m.id] });
    const act = a.action({ turn_id: turn.id, tool: 'bash', input: { cmd: 'systemctl restart payments' } });
    a.actionResult({ action_id: act.id, status: 'ok', output: 'restarted', exit_code: 0 });
    const plain = readLocal({ sid: a.sid, w: a.w, dir: a.dir, path: a.path }).bytes.subarray(firstA.length);
    a.message({ user_id: 'priya', text: 'thanks' });
    const upToMessage = readLocal({ sid: a.sid, w: a.w, dir: a.dir, path: a.path }).bytes;
    const withMessage = upToMessage.subarray(firstA.length + plain.length);
    expect(splitLines(Buffer.from(withMessage))).toHaveLength(1);

    const chunk = (w: string, offset: number, body: Uint8Array) => () =>
      app.request(`/v1/sessions/${a.sid}/writers/${w}/chunks?offset=${offset}`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/x-ndjson' },
        body,
      });
    // warm-up: the token's last use (1 UpdateItem a minute), not part of any row below
    await step('warm-up', () => app.request('/v1/sessions?limit=1', { headers: auth }), 200);
    await step(
      'upload: what the server has of a writer',
      () => app.request(`/v1/sessions/${a.sid}/writers/${a.w}`, { headers: auth }),
      404,
    );
    await step('chunk: first of a session (writer.start, a message)', chunk(a.w, 0, firstA), 201);
    await step('chunk: first of a second writer', chunk(b.w, 0, firstB), 201);
    await step('chunk: later, no message or join', chunk(a.w, firstA.length, plain), 201);
    await step(
      'chunk: later, a message of a known person',
      chunk(a.w, firstA.length + plain.length, withMessage),
      201,
    );
    await step(
      'status report',
      () =>
        app.request(`/v1/sessions/${a.sid}/status`, {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify({ state: 'working', note: 'restarting payments', events: [] }),
        }),
      201,
    );
    await step(
      'replay (2 writers, 3 + 1 chunk objects)',
      () => app.request(`/v1/sessions/${a.sid}/replay`, { headers: auth }),
      200,
    );

    // The digester's run for this session (functions/digest.ts over awsDigester), as its role has it.
    cost = fresh();
    const deps = awsDigestDeps({
      clients: { s3: meteredS3(s3.client()), dynamodb: meteredDynamo(dynamo) },
      bucket,
      table,
      signer: LocalKeyring.open(dir, () => t0).keyring,
      log: (line) => {
        throw new Error(line);
      },
      now: () => new Date(t0.getTime() + 60_000),
    });
    expect(await writeDueDigests(deps, deps.now(), 10)).toMatchObject({ written: 1, failed: 0 });
    measured.set('digest of the session (the digester, 2 writers)', cost);

    // Every item the requests above wrote is under 1 KB (1 write unit, 2 in a transaction).
    const items = (await dynamo.client.send(new ScanCommand({ TableName: table }))).Items ?? [];
    const sizes = items.map((i) => ({ sk: String(i.sk?.S).replace(/#.*/, '#'), bytes: itemBytes(i) }));
    console.log(sizes.map((x) => `${x.sk} ${x.bytes}`).join(', '));
    expect(sizes.filter((x) => x.bytes >= 1024)).toEqual([]);

    const table_ = documented();
    const got = [...measured].filter(([name]) => name !== 'warm-up');
    console.log(got.map(([name, c]) => `| ${name} | ${cells(c).join(' | ')} |`).join('\n'));
    for (const [name, c] of got) expect(table_.get(name), name).toEqual(cells(c));
    expect([...table_.keys()].sort()).toEqual(got.map(([n]) => n).sort());
  }, 120_000);
});

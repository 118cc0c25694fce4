/**
 * `DynamoStateStore`: the AWS `StateStore` (DESIGN §1, §5), one DynamoDB table through the AWS SDK v3
 * document client. Item layout: `dynamo-schema.ts`. It answers exactly as `SqliteStateStore` does (the
 * contract suite in `test/contract/state-store.contract.ts` runs against both); every write that SQLite
 * guards with a transaction is a condition expression or one `TransactWriteItems` here.
 *
 * Conventions: a record field that is null is not stored (absent reads back as null), so
 * `if_not_exists` can act on it; reads of single items are strongly consistent. Listings that go
 * through the GSI (`listTokens`, `listSessions`) are eventually consistent on AWS (a GSI offers nothing
 * else): a record written a moment ago may be missing from them for a moment, never from `get…`.
 */
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import {
  DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  type QueryCommandInput,
  TransactWriteCommand,
} from '@aws-sdk/lib-dynamodb';
import type { DigestDue, DigestHead } from './digest-ports.js';
import { DynamoDigestIndex, dueMarkPut } from './dynamo-digest-index.js';
import {
  cancellationCodes,
  compact,
  errorName,
  type Item,
  startKey,
  type TransactItem,
  toSession,
  toWriter,
  update,
} from './dynamo-items.js';
import {
  GSI1,
  GSI1_PK,
  gsiKeys,
  type ItemKey,
  keys,
  PK,
  SK,
  sessionPk,
  USAGE_PREFIX,
  usageShard,
} from './dynamo-schema.js';
import { DynamoStatusWorkItems } from './dynamo-status-work.js';
import { DynamoTokenItems } from './dynamo-tokens.js';
import { decodeCursor, encodeCursor } from './keys.js';
import {
  type ChunkRecord,
  type Page,
  type SessionRecord,
  type SessionSummary,
  StateConflictError,
  type StateStore,
  type StatusRecord,
  type SummaryDelta,
  type TenantUsage,
  type TokenRecord,
  type WorkItem,
  type WriterAdvance,
  type WriterRecord,
} from './ports.js';

/** How often a transaction cancelled by a concurrent one (`TransactionConflict`) is tried in all. */
const TRANSACT_ATTEMPTS = 5;

export interface DynamoStateStoreOptions {
  tableName: string;
  /** a client to use; the store leaves it open on `close()` */
  client?: DynamoDBClient;
  /** config of a client the store makes (and destroys on `close()`) when `client` is not given */
  clientConfig?: DynamoDBClientConfig;
}

/**
 * @example
 * const state = new DynamoStateStore({ tableName: 'hansard-state', clientConfig: { region: 'eu-west-1' } });
 * await state.createTenant('acme', new Date().toISOString());
 */
export class DynamoStateStore implements StateStore {
  private readonly table: string;
  private readonly doc: DynamoDBDocumentClient;
  private readonly owned: DynamoDBClient | null;
  private readonly tokens: DynamoTokenItems;
  private readonly items: DynamoStatusWorkItems;
  private readonly digests: DynamoDigestIndex;

  constructor(opts: DynamoStateStoreOptions) {
    this.table = opts.tableName;
    this.owned = opts.client ? null : new DynamoDBClient(opts.clientConfig ?? {});
    const client = opts.client ?? this.owned!;
    this.doc = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    const primitives = {
      doc: this.doc,
      table: this.table,
      get: (key: ItemKey) => this.get(key),
      queryAll: (input: Omit<QueryCommandInput, 'TableName'>) => this.queryAll(input),
      transact: (items: TransactItem[]) => this.transact(items),
    };
    this.tokens = new DynamoTokenItems(primitives);
    this.items = new DynamoStatusWorkItems(primitives);
    this.digests = new DynamoDigestIndex(primitives);
  }

  // ---- tenants: `TENANT#{name}` / `TENANT`

  async createTenant(tenant: string, at: string): Promise<void> {
    try {
      await this.doc.send(
        new PutCommand({
          TableName: this.table,
          Item: { ...keys.tenant(tenant), tenant, created_at: at },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (err) {
      if (errorName(err) === 'ConditionalCheckFailedException')
        throw new StateConflictError(`tenant ${tenant} exists`);
      throw err;
    }
  }

  async tenantExists(tenant: string): Promise<boolean> {
    return (await this.get(keys.tenant(tenant))) !== null;
  }

  // ---- tokens, their child links and server secrets: dynamo-tokens.ts

  putToken(t: TokenRecord): Promise<void> {
    return this.tokens.putToken(t);
  }
  getTokenByHash(hash: string): Promise<TokenRecord | null> {
    return this.tokens.getTokenByHash(hash);
  }
  listTokens(tenant: string): Promise<TokenRecord[]> {
    return this.tokens.listTokens(tenant);
  }
  revokeToken(tenant: string, id: string, at: string): Promise<boolean> {
    return this.tokens.revokeToken(tenant, id, at);
  }
  touchToken(hash: string, at: string): Promise<void> {
    return this.tokens.touchToken(hash, at);
  }
  getTokenById(tenant: string, id: string): Promise<TokenRecord | null> {
    return this.tokens.getTokenById(tenant, id);
  }
  countLiveChildren(tenant: string, parent: string, at: string): Promise<number> {
    return this.tokens.countLiveChildren(tenant, parent, at);
  }
  serverSecret(name: string, candidate: string): Promise<string> {
    return this.tokens.serverSecret(name, candidate);
  }

  // ---- writers: `T#{tenant}#S#{sid}` / `W#{w}`, chunks `W#{w}#C#{offset:015}`

  async getWriter(tenant: string, sid: string, w: string): Promise<WriterRecord | null> {
    const item = await this.get(keys.writer(tenant, sid, w));
    return item ? toWriter(item) : null;
  }

  /**
   * Sorted by w. A writer's chunk records sort right after it (`W#{w}#C#…`), so this skips over them:
   * one single-item query per writer, from just past the previous writer's chunks (`W#{w}#D`).
   */
  async listWriters(tenant: string, sid: string): Promise<WriterRecord[]> {
    const out: WriterRecord[] = [];
    let from = 'W#';
    for (;;) {
      const res = await this.doc.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
          ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
          ExpressionAttributeValues: { ':pk': sessionPk(tenant, sid), ':from': from, ':to': 'W$' },
          Limit: 1,
          ConsistentRead: true,
        }),
      );
      const item = res.Items?.[0];
      if (!item) return out;
      const w = String(item.sk).slice(2).split('#')[0];
      if (item.sk === `W#${w}`) out.push(toWriter(item));
      from = `W#${w}#D`;
    }
  }

  async getChunk(tenant: string, sid: string, w: string, offset: number): Promise<ChunkRecord | null> {
    const item = await this.get(keys.chunk(tenant, sid, w, offset));
    return item ? toChunk(item) : null;
  }

  /**
   * One Query over the writer's chunk records (`W#{w}#C#{offset:015}` sort in offset order), from the
   * key of `from`. A page cut short by DynamoDB's 1 MB limit returns fewer: the caller asks again from
   * the last offset it got.
   */
  async listChunks(
    tenant: string,
    sid: string,
    w: string,
    from: number,
    limit: number,
  ): Promise<ChunkRecord[]> {
    const res = await this.doc.send(
      new QueryCommand({
        TableName: this.table,
        KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
        ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
        ExpressionAttributeValues: {
          ':pk': sessionPk(tenant, sid),
          ':from': keys.chunk(tenant, sid, w, from).sk,
          ':to': `W#${w}#C#~`,
        },
        Limit: limit,
        ConsistentRead: true,
      }),
    );
    return (res.Items ?? []).map(toChunk);
  }

  /**
   * One `TransactWriteItems` of four writes, after reading the writer (for the line delta and to know
   * whether it is new):
   *
   *   absent ──advance(from 0)──▶ length L1 ──advance(from L1)──▶ length L2 …
   *
   * 1. the writer index, on condition `attribute_not_exists(pk)` (new writer) or `length = :from`;
   * 2. the chunk record, on condition `attribute_not_exists(pk)`;
   * 3. the session index: ADD lines, bytes (and writers 1 for a new writer), SET updated_at and its
   *    board keys;
   * 4. the tenant's usage (the session's shard of it): ADD bytes;
   * 5. only when `next.digest_due`: the session's digest due mark (dynamo-digest-index.ts), at `next.at`.
   * The writer and the chunk record keep `chain` (issue 15).
   * Lengths only grow, so a writer found at `from` when the transaction commits is the one read.
   * @throws StateConflictError (with the stored length) when the writer is not at `fromLength`
   */
  async advanceWriter(
    tenant: string,
    sid: string,
    w: string,
    fromLength: number,
    next: WriterAdvance,
  ): Promise<void> {
    const cur = await this.getWriter(tenant, sid, w);
    const curLength = cur?.length ?? 0;
    const conflict = (length: number, what = `writer ${w} is at ${length} bytes, not ${fromLength}`) =>
      new StateConflictError(what, length);
    if (curLength !== fromLength) throw conflict(curLength);

    const c = next.chunk;
    const writer = update(
      {
        set: {
          tenant,
          sid,
          w,
          length: next.length,
          lines: next.lines,
          ended: next.ended,
          updated_at: next.at,
          chain: next.chain,
          ...(next.last_seq === null ? {} : { last_seq: next.last_seq }),
        },
        setIfAbsent: { created_at: next.at, ...(next.agent === null ? {} : { agent: next.agent }) },
        remove: next.last_seq === null ? ['last_seq'] : [],
      },
      (x) => (cur === null ? `attribute_not_exists(${x.n(PK)})` : `${x.n('length')} = ${x.v(fromLength)}`),
    );
    const chunk = compact({
      ...keys.chunk(tenant, sid, w, c.offset),
      tenant,
      sid,
      w,
      offset: c.offset,
      length: c.length,
      sha256: c.sha256,
      lines: c.lines,
      last_seq: c.last_seq,
      chain: c.chain,
    });
    const session = update({
      set: { tenant, sid, updated_at: next.at, ...gsiKeys.board(tenant, next.at, sid) },
      setIfAbsent: { created_at: next.at },
      add: { lines: next.lines - (cur?.lines ?? 0), bytes: next.length - curLength, writers: cur ? 0 : 1 },
    });
    const usage = update({ set: { tenant }, add: { bytes: next.length - curLength } });
    try {
      await this.transact([
        { Update: { TableName: this.table, Key: keys.writer(tenant, sid, w), ...writer } },
        { Put: { TableName: this.table, Item: chunk, ConditionExpression: 'attribute_not_exists(pk)' } },
        { Update: { TableName: this.table, Key: keys.session(tenant, sid), ...session } },
        { Update: { TableName: this.table, Key: keys.usage(tenant, usageShard(sid)), ...usage } },
        ...(next.digest_due ? [dueMarkPut(this.table, tenant, sid, next.at)] : []),
      ]);
    } catch (err) {
      const codes = cancellationCodes(err);
      if (codes[0] === 'ConditionalCheckFailed') {
        // Another advance won: answer with what it stored.
        throw conflict((await this.getWriter(tenant, sid, w))?.length ?? 0);
      }
      if (codes[1] === 'ConditionalCheckFailed') {
        const now = (await this.getWriter(tenant, sid, w))?.length ?? 0;
        throw conflict(now, `a chunk of writer ${w} is already recorded at offset ${c.offset}`);
      }
      throw err;
    }
  }

  // ---- usage: `T#{tenant}` / `USAGE#{shard}`

  /** The sum of the tenant's usage shards (strongly consistent: the items `advanceWriter` committed). */
  async tenantUsage(tenant: string): Promise<TenantUsage> {
    const items = await this.queryAll({
      KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :usage)',
      ExpressionAttributeNames: { '#pk': PK, '#sk': SK, '#b': 'bytes' },
      ExpressionAttributeValues: { ':pk': `T#${tenant}`, ':usage': USAGE_PREFIX },
      ProjectionExpression: '#b',
      ConsistentRead: true,
    });
    return { bytes: items.reduce((sum, item) => sum + ((item.bytes as number | undefined) ?? 0), 0) };
  }

  // ---- sessions: `T#{tenant}` / `S#{sid}`, GSI `T#{tenant}#BOARD` / `{updated_at}#{sid}`

  async getSession(tenant: string, sid: string): Promise<SessionRecord | null> {
    const item = await this.get(keys.session(tenant, sid));
    return item ? toSession(item) : null;
  }

  /**
   * The session items of the tenant's partition counted by a `Select: COUNT` query over the `S#` sort
   * keys: nothing is returned but the count, and no counter has to be kept right on every ingest (a
   * session is made by an advance or a status report, racing ones of the same session included). It reads
   * the items, at ~250 bytes each: an eventually consistent query costs 0.5 RRU per 4 KiB, about 1 RRU per
   * 32 sessions, i.e. ~30 RRU for a board view of a tenant with 1,000 sessions.
   */
  async countSessions(tenant: string): Promise<number> {
    let count = 0;
    let start: Item | undefined;
    do {
      const res = await this.doc.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: '#pk = :pk AND begins_with(#sk, :s)',
          ExpressionAttributeNames: { '#pk': PK, '#sk': SK },
          ExpressionAttributeValues: { ':pk': `T#${tenant}`, ':s': 'S#' },
          Select: 'COUNT',
          ExclusiveStartKey: start,
        }),
      );
      count += res.Count ?? 0;
      start = res.LastEvaluatedKey;
    } while (start);
    return count;
  }

  /**
   * Newest `updated_at` first (ties: sid descending), `limit` per page. The cursor names the last
   * session of the page, as SQLite's does; it is the GSI position to start after (the query's
   * `ExclusiveStartKey`). Only session items are taken from the board partition (work leases may share it).
   * @throws InvalidCursorError for a cursor this store did not make
   */
  async listSessions(tenant: string, limit: number, cursor: string | null): Promise<Page<SessionRecord>> {
    const want = limit + 1;
    const items: Item[] = [];
    let start: Item | undefined = cursor === null ? undefined : startKey(tenant, decodeCursor(cursor));
    do {
      const res = await this.doc.send(
        new QueryCommand({
          TableName: this.table,
          IndexName: GSI1,
          KeyConditionExpression: '#g = :g',
          FilterExpression: 'begins_with(#sk, :s)',
          ExpressionAttributeNames: { '#g': GSI1_PK, '#sk': SK },
          ExpressionAttributeValues: { ':g': gsiKeys.boardPk(tenant), ':s': 'S#' },
          ScanIndexForward: false,
          Limit: Math.max(1, want - items.length),
          ExclusiveStartKey: start,
        }),
      );
      items.push(...(res.Items ?? []));
      start = res.LastEvaluatedKey;
    } while (items.length < want && start);
    const page = items.slice(0, limit).map(toSession);
    const last = page.at(-1);
    return {
      items: page,
      next: items.length > limit && last ? encodeCursor(last.updated_at, last.sid) : null,
    };
  }

  // ---- session summaries: dynamo-status-work.ts

  listSessionSummaries(tenant: string): Promise<SessionSummary[]> {
    return this.items.listSessionSummaries(tenant);
  }

  mergeSessionSummary(tenant: string, sid: string, delta: SummaryDelta, at?: string): Promise<void> {
    return this.items.mergeSessionSummary(tenant, sid, delta, at);
  }

  // ---- audit digest heads and due marks: dynamo-digest-index.ts

  getDigestHead(tenant: string, sid: string): Promise<DigestHead | null> {
    return this.digests.getDigestHead(tenant, sid);
  }

  putDigestHead(
    tenant: string,
    sid: string,
    prevSeq: number | null,
    head: DigestHead,
    nextDue: string | null,
    expectBytes: number,
  ): Promise<void> {
    return this.digests.putDigestHead(tenant, sid, prevSeq, head, nextDue, expectBytes);
  }

  listDigestsDue(now: string, limit: number): Promise<DigestDue[]> {
    return this.digests.listDigestsDue(now, limit);
  }

  // ---- status and work items: dynamo-status-work.ts

  putStatus(st: StatusRecord): Promise<void> {
    return this.items.putStatus(st);
  }

  getStatus(tenant: string, sid: string): Promise<StatusRecord | null> {
    return this.items.getStatus(tenant, sid);
  }

  putWork(item: WorkItem): Promise<void> {
    return this.items.putWork(item);
  }

  getWork(tenant: string, id: string): Promise<WorkItem | null> {
    return this.items.getWork(tenant, id);
  }

  listWork(tenant: string, options: { session?: string; limit: number }): Promise<WorkItem[]> {
    return this.items.listWork(tenant, options);
  }

  claimKey(tenant: string, scope: string, key: string, value: string): Promise<string> {
    return this.items.claimKey(tenant, scope, key, value);
  }

  async close(): Promise<void> {
    this.owned?.destroy();
  }

  // ---- primitives

  private async get(key: ItemKey): Promise<Item | null> {
    const res = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: key, ConsistentRead: true }),
    );
    return res.Item ?? null;
  }

  private async queryAll(input: Omit<QueryCommandInput, 'TableName'>): Promise<Item[]> {
    const out: Item[] = [];
    let start: Item | undefined;
    do {
      const res = await this.doc.send(
        new QueryCommand({ ...input, TableName: this.table, ExclusiveStartKey: start }),
      );
      out.push(...(res.Items ?? []));
      start = res.LastEvaluatedKey;
    } while (start);
    return out;
  }

  /**
   * `TransactWriteItems`, tried again (with jitter) while it is cancelled only because a concurrent
   * transaction touched the same items (`TransactionConflict`: two writers of one session update its
   * index at once). Nothing of a cancelled transaction was written, so trying again is safe. Any other
   * error, and a condition that failed, is thrown as the SDK gave it.
   */
  private async transact(items: TransactItem[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await this.doc.send(new TransactWriteCommand({ TransactItems: items }));
        return;
      } catch (err) {
        const codes = cancellationCodes(err);
        const onlyConflict =
          codes.includes('TransactionConflict') && !codes.includes('ConditionalCheckFailed');
        if (!onlyConflict || attempt >= TRANSACT_ATTEMPTS) throw err;
        await new Promise((r) => setTimeout(r, 10 * 2 ** attempt * Math.random()));
      }
    }
  }
}

/** A chunk record item as the port's `ChunkRecord`. */
function toChunk(item: Item): ChunkRecord {
  return {
    offset: item.offset as number,
    length: item.length as number,
    sha256: item.sha256 as string,
    lines: item.lines as number,
    last_seq: (item.last_seq as number | undefined) ?? null,
    ...(typeof item.chain === 'string' ? { chain: item.chain } : {}),
  };
}

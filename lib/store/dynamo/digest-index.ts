/**
 * The audit digest index of `DynamoStateStore` (issue 15, DESIGN §6b; the ports are ../digests.ts):
 * each session's newest digest in its partition (`T#{tenant}#S#{sid}` / `DIGEST`), and the sessions due a
 * digest as mark items spread over 16 partitions (`DIGEST_DUE#{shard}` / `{tenant}#{sid}`, attribute
 * `due_at`), so the digester finds the due sessions of every tenant with one query per shard. Layout:
 * dynamo/schema.ts. The store delegates here, as to dynamo/status-work.ts.
 */
import { randomUUID } from 'node:crypto';
import {
  DeleteCommand,
  type DynamoDBDocumentClient,
  type QueryCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { decodeDigestHead, digestHeadConflict, encodeDigestHead } from '../digest-head.js';
import type { DigestDue, DigestHead } from '../digests.js';
import type { StateConflictError } from '../errors.js';
import type { WriterRecord } from '../writers.js';
import { cancellationCodes, errorName, type Item, type TransactItem } from './items.js';
import { DIGEST_DUE_SHARDS, digestDuePk, type ItemKey, keys, PK } from './schema.js';

/** What the index borrows of the store: its table, client, reads and transactions, and the writers. */
export interface DynamoDigestPrimitives {
  table: string;
  doc: DynamoDBDocumentClient;
  get(key: ItemKey): Promise<Item | null>;
  queryAll(input: Omit<QueryCommandInput, 'TableName'>): Promise<Item[]>;
  transact(items: TransactItem[]): Promise<void>;
  /** the session's writers, strongly consistent: the truth of its bytes (dynamo/writers.ts) */
  listWriters(tenant: string, sid: string): Promise<WriterRecord[]>;
}

/**
 * The Put of a session's due mark at `at`, for a transaction (`advanceWriter` adds it only when the
 * chunk marks the session due, so an ordinary chunk writes no extra item). It replaces any mark the
 * session had, as SQLite's `markDue` does.
 */
export function dueMarkPut(table: string, tenant: string, sid: string, at: string): TransactItem {
  return { Put: { TableName: table, Item: { ...keys.digestDue(tenant, sid), tenant, sid, due_at: at } } };
}

/** The `DigestIndex` methods on DynamoDB. */
export class DynamoDigestIndex {
  constructor(private readonly x: DynamoDigestPrimitives) {}

  async getDigestHead(tenant: string, sid: string): Promise<DigestHead | null> {
    const item = await this.x.get(keys.digestHead(tenant, sid));
    return item ? toHead(item) : null;
  }

  /**
   * In three steps, so that a chunk indexed while the digest was written is never left without a mark,
   * now that an advance's transaction no longer touches the session item (issue 17.1):
   * 1. one `TransactWriteItems`: the head Put on condition of the stored seq (`attribute_not_exists` for
   *    `prevSeq` null) and the due mark Put at `head.at` (due at once) with a fresh `mark_id`;
   * 2. the session's bytes, summed over its writers (one strongly consistent query: the truth);
   * 3. when they are `expectBytes`: the mark moved to `nextDue` (or deleted when null), on condition that
   *    it still holds this `mark_id`. An advance marking the session due meanwhile replaced it, and keeps
   *    its mark; a process stopped between the steps leaves the mark at `head.at` (a spare digest).
   * When the bytes moved (a chunk came while the digest was being written), the mark stays at `head.at`.
   * @throws StateConflictError when the stored head's seq is not `prevSeq`
   */
  async putDigestHead(
    tenant: string,
    sid: string,
    prevSeq: number | null,
    head: DigestHead,
    nextDue: string | null,
    expectBytes: number,
  ): Promise<void> {
    const item: TransactItem = {
      Put: {
        TableName: this.x.table,
        Item: { ...keys.digestHead(tenant, sid), tenant, sid, ...headAttributes(head) },
        ...(prevSeq === null
          ? { ConditionExpression: 'attribute_not_exists(#pk)', ExpressionAttributeNames: { '#pk': PK } }
          : {
              ConditionExpression: '#seq = :prev',
              ExpressionAttributeNames: { '#seq': 'seq' },
              ExpressionAttributeValues: { ':prev': prevSeq },
            }),
      },
    };
    const markId = randomUUID();
    const mark: TransactItem = {
      Put: {
        TableName: this.x.table,
        Item: { ...keys.digestDue(tenant, sid), tenant, sid, due_at: head.at, mark_id: markId },
      },
    };
    try {
      await this.x.transact([item, mark]);
    } catch (err) {
      if (cancellationCodes(err)[0] === 'ConditionalCheckFailed') {
        throw await this.conflict(tenant, sid, prevSeq);
      }
      throw err;
    }
    const writers = await this.x.listWriters(tenant, sid);
    if (writers.reduce((n, w) => n + w.length, 0) !== expectBytes) return;
    const ours = {
      TableName: this.x.table,
      Key: keys.digestDue(tenant, sid),
      ConditionExpression: '#mark = :mark',
      ExpressionAttributeNames: { '#mark': 'mark_id' } as Record<string, string>,
      ExpressionAttributeValues: { ':mark': markId } as Record<string, unknown>,
    };
    try {
      if (nextDue === null) await this.x.doc.send(new DeleteCommand(ours));
      else {
        await this.x.doc.send(
          new UpdateCommand({
            ...ours,
            UpdateExpression: 'SET #due = :due',
            ExpressionAttributeNames: { ...ours.ExpressionAttributeNames, '#due': 'due_at' },
            ExpressionAttributeValues: { ...ours.ExpressionAttributeValues, ':due': nextDue },
          }),
        );
      }
    } catch (err) {
      // An advance marked the session due since step 1: its mark stands.
      if (errorName(err) !== 'ConditionalCheckFailedException') throw err;
    }
  }

  /**
   * A strongly consistent Query of each of the 16 mark partitions (filter `due_at <= now`, every page),
   * merged earliest first (ties by tenant, then sid, as SQLite orders them), the first `limit` kept. Reads
   * every mark of the table once per call: ~16 small queries while few sessions are open.
   */
  async listDigestsDue(now: string, limit: number): Promise<DigestDue[]> {
    const shards = await Promise.all(
      Array.from({ length: DIGEST_DUE_SHARDS }, (_, shard) =>
        this.x.queryAll({
          KeyConditionExpression: '#pk = :pk',
          FilterExpression: '#due <= :now',
          ExpressionAttributeNames: { '#pk': PK, '#due': 'due_at' },
          ExpressionAttributeValues: { ':pk': digestDuePk(shard), ':now': now },
          ConsistentRead: true,
        }),
      ),
    );
    const due = shards.flat().map((i) => ({
      tenant: i.tenant as string,
      sid: i.sid as string,
      due_at: i.due_at as string,
    }));
    due.sort((a, b) => cmp(a.due_at, b.due_at) || cmp(a.tenant, b.tenant) || cmp(a.sid, b.sid));
    return due.slice(0, Math.max(0, limit));
  }

  private async conflict(tenant: string, sid: string, prevSeq: number | null): Promise<StateConflictError> {
    const seq = ((await this.x.get(keys.digestHead(tenant, sid)))?.seq as number | undefined) ?? null;
    return digestHeadConflict(sid, seq, prevSeq);
  }
}

/** Code-unit order, as SQLite's default BINARY collation compares ASCII text. */
function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** The head item's attributes: its writers one string (`writers_json`) rather than a list of maps. */
function headAttributes(head: DigestHead): Item {
  const { writers, ...rest } = encodeDigestHead(head);
  return { ...rest, writers_json: writers };
}

function toHead(item: Item): DigestHead {
  return decodeDigestHead(item, item.writers_json as string, item.closed === true);
}

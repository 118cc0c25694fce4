/**
 * The token items of `DynamoStateStore` (dynamo/schema.ts, ADR 4): `TOKEN#{sha256}` / `TOKEN` (GSI: the
 * tenant's tokens), the id guard `TOKENID#{id}` / `TOKENID`, child links `TOKENID#{parent}` /
 * `CHILD#{expires_at}#{id}`, and server secrets `SECRET#{name}` / `SECRET`. Split from the store so that
 * each file stays readable; the store delegates its token methods here and lends its primitives.
 */
import type { DynamoDBDocumentClient, QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { PutCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { StateConflictError } from '../errors.js';
import type { TokenRecord } from '../tokens.js';
import { cancellationCodes, compact, errorName, type Item, type TransactItem, toToken } from './items.js';
import { CHILD_PREFIX, GSI1, GSI1_PK, gsiKeys, type ItemKey, keys, PK, SK } from './schema.js';

/** What the token methods borrow of the store: its client, table and strongly consistent primitives. */
export interface DynamoPrimitives {
  doc: DynamoDBDocumentClient;
  table: string;
  /** one item, strongly consistent unless `consistent: false` (half the read units), or null */
  get(key: ItemKey, options?: { consistent?: boolean }): Promise<Item | null>;
  /** every item of a query, page after page */
  queryAll(input: Omit<QueryCommandInput, 'TableName'>): Promise<Item[]>;
  /** `TransactWriteItems`, tried again on conflicts and throttling (dynamo/retry.ts) */
  transact(items: TransactItem[]): Promise<void>;
}

/** The `StateStore` token methods on DynamoDB; each answers as `SqliteStateStore`'s does. */
export class DynamoTokenItems {
  constructor(private readonly x: DynamoPrimitives) {}

  /**
   * The token and its id guard in one transaction, each only if absent; a token with a parent also gets
   * its child link (what `countLiveChildren` counts) in the same transaction.
   */
  async putToken(t: TokenRecord): Promise<void> {
    const token = compact({
      ...keys.token(t.hash),
      ...gsiKeys.tokens(t.tenant, t.created_at, t.id),
      id: t.id,
      tenant: t.tenant,
      hash: t.hash,
      scopes: t.scopes,
      session: t.session,
      label: t.label,
      created_at: t.created_at,
      token_expires_at: t.expires_at,
      revoked_at: t.revoked_at,
      last_used_at: t.last_used_at,
      parent: t.parent,
      root: t.root,
    });
    const guard = { ...keys.tokenId(t.id), tenant: t.tenant, hash: t.hash };
    const items: TransactItem[] = [
      { Put: { TableName: this.x.table, Item: token, ConditionExpression: 'attribute_not_exists(pk)' } },
      { Put: { TableName: this.x.table, Item: guard, ConditionExpression: 'attribute_not_exists(pk)' } },
    ];
    if (t.parent !== null) {
      const link = compact({
        ...keys.tokenChild(t.parent, t.expires_at, t.id),
        tenant: t.tenant,
        id: t.id,
        revoked_at: t.revoked_at,
      });
      items.push({ Put: { TableName: this.x.table, Item: link } });
    }
    try {
      await this.x.transact(items);
    } catch (err) {
      if (cancellationCodes(err).includes('ConditionalCheckFailed'))
        throw new StateConflictError('a token with this id or hash exists');
      throw err;
    }
  }

  async getTokenByHash(hash: string): Promise<TokenRecord | null> {
    const item = await this.x.get(keys.token(hash));
    return item ? toToken(item) : null;
  }

  /** Oldest first (`created_at`, then id), as SQLite orders them. */
  async listTokens(tenant: string): Promise<TokenRecord[]> {
    const items = await this.x.queryAll({
      IndexName: GSI1,
      KeyConditionExpression: '#g = :g',
      ExpressionAttributeNames: { '#g': GSI1_PK },
      ExpressionAttributeValues: { ':g': gsiKeys.tokensPk(tenant) },
    });
    return items.map(toToken);
  }

  /**
   * Finds the token through its id guard, then revokes it only if it is the tenant's; a token with a
   * parent has its child link marked in the same transaction (so it no longer counts as live).
   */
  async revokeToken(tenant: string, id: string, at: string): Promise<boolean> {
    const found = await this.tokenById(tenant, id);
    if (!found) return false;
    // Revoking twice keeps the first time, as SQLite's COALESCE does.
    const revoke = {
      UpdateExpression: 'SET #r = if_not_exists(#r, :at)',
      ExpressionAttributeNames: { '#r': 'revoked_at' },
      ExpressionAttributeValues: { ':at': at },
    };
    const items: TransactItem[] = [
      {
        Update: {
          TableName: this.x.table,
          Key: keys.token(found.hash),
          ...revoke,
          ConditionExpression: 'attribute_exists(pk) AND #t = :t AND #id = :id',
          ExpressionAttributeNames: { ...revoke.ExpressionAttributeNames, '#t': 'tenant', '#id': 'id' },
          ExpressionAttributeValues: { ...revoke.ExpressionAttributeValues, ':t': tenant, ':id': id },
        },
      },
    ];
    if (found.parent !== null) {
      const key = keys.tokenChild(found.parent, found.expires_at, id);
      items.push({ Update: { TableName: this.x.table, Key: key, ...revoke } });
    }
    try {
      await this.x.transact(items);
      return true;
    } catch (err) {
      if (cancellationCodes(err)[0] === 'ConditionalCheckFailed') return false;
      throw err;
    }
  }

  /** Through the id guard, then the token item (two strongly consistent reads). */
  async getTokenById(tenant: string, id: string): Promise<TokenRecord | null> {
    return this.tokenById(tenant, id);
  }

  /** One strongly consistent count over the parent's child links whose expiry is after `at`. */
  async countLiveChildren(tenant: string, parent: string, at: string): Promise<number> {
    let count = 0;
    let start: Item | undefined;
    do {
      const res = await this.x.doc.send(
        new QueryCommand({
          TableName: this.x.table,
          // `~` sorts after every id: a child expiring exactly at `at` is not live.
          KeyConditionExpression: '#pk = :pk AND #sk BETWEEN :from AND :to',
          FilterExpression: '#t = :t AND attribute_not_exists(#r)',
          ExpressionAttributeNames: { '#pk': PK, '#sk': SK, '#t': 'tenant', '#r': 'revoked_at' },
          ExpressionAttributeValues: {
            ':pk': keys.tokenId(parent).pk,
            ':from': `${CHILD_PREFIX}${at}#~`,
            ':to': `${CHILD_PREFIX}~~`,
            ':t': tenant,
          },
          Select: 'COUNT',
          ConsistentRead: true,
          ExclusiveStartKey: start,
        }),
      );
      count += res.Count ?? 0;
      start = res.LastEvaluatedKey;
    } while (start);
    return count;
  }

  /** A conditional put (only if absent), then a strongly consistent read of whichever value won. */
  async serverSecret(name: string, candidate: string): Promise<string> {
    try {
      await this.x.doc.send(
        new PutCommand({
          TableName: this.x.table,
          Item: { ...keys.serverSecret(name), value: candidate },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (err) {
      if (errorName(err) !== 'ConditionalCheckFailedException') throw err;
    }
    const item = await this.x.get(keys.serverSecret(name));
    if (typeof item?.value !== 'string') throw new Error(`server secret ${name} is missing after its put`);
    return item.value;
  }

  /** Sets `last_used_at` of an existing token; a token that is gone is not re-created. */
  async touchToken(hash: string, at: string): Promise<void> {
    try {
      await this.x.doc.send(
        new UpdateCommand({
          TableName: this.x.table,
          Key: keys.token(hash),
          UpdateExpression: 'SET #u = :at',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#u': 'last_used_at' },
          ExpressionAttributeValues: { ':at': at },
        }),
      );
    } catch (err) {
      if (errorName(err) !== 'ConditionalCheckFailedException') throw err;
    }
  }

  /** The tenant's token `id` through its id guard, or null (another tenant's answers null too). */
  private async tokenById(tenant: string, id: string): Promise<TokenRecord | null> {
    const guard = await this.x.get(keys.tokenId(id));
    if (!guard || guard.tenant !== tenant || typeof guard.hash !== 'string') return null;
    const item = await this.x.get(keys.token(guard.hash));
    if (!item || item.tenant !== tenant || item.id !== id) return null;
    return toToken(item);
  }
}

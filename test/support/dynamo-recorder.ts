/**
 * A DynamoDB client that records every request it sends as IAM sees it (issue 8.9): the action of the
 * wire request (`x-amz-target`), each transaction item as its own action, and the prefix of the partition
 * key of every item touched (`lib/store/dynamo/access.ts`), read from the serialized request, so that
 * nothing the code does on the way (document client, marshalling, transactions) is missed.
 */
import { DynamoDBClient, type DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import { type DynamoAccess, type DynamoAction, pkPrefix } from '../../lib/store/dynamo/access.js';
import { GSI1_PK, PK } from '../../lib/store/dynamo/schema.js';

type AttributeMap = Record<string, { S?: string } | undefined>;

interface WireRequest {
  Key?: AttributeMap;
  Item?: AttributeMap;
  IndexName?: string;
  KeyConditionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: AttributeMap;
  TransactItems?: Array<Record<string, WireRequest>>;
}

/** Item actions of `TransactWriteItems` entries, by the entry's member name. */
const TRANSACT_ACTIONS: Record<string, DynamoAction> = {
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  ConditionCheck: 'ConditionCheckItem',
};

/**
 * A new client for `config` that calls `record` with what each request it sends touches. A request of
 * a kind hansard does not send (Scan, batch, table administration) is recorded with its own name as the
 * action and `?` as the prefix, so that no declaration matches it.
 */
export function recordingClient(
  config: DynamoDBClientConfig,
  record: (accesses: DynamoAccess[]) => void,
): DynamoDBClient {
  const client = new DynamoDBClient(config);
  client.middlewareStack.add(
    (next) => async (args) => {
      const req = args.request as { headers?: Record<string, string>; body?: unknown };
      const target = req.headers?.['x-amz-target'] ?? '';
      // the serialized JSON (a string, or an adapter of it whose toString gives it)
      const body = JSON.parse(req.body === undefined ? '{}' : String(req.body)) as WireRequest;
      record(accessesOf(target.split('.').pop() ?? target, body));
      return next(args);
    },
    { step: 'build', name: 'recordDynamoAccess' },
  );
  return client;
}

/** What one wire request touches. */
export function accessesOf(operation: string, r: WireRequest): DynamoAccess[] {
  const of = (action: DynamoAction, item: AttributeMap | undefined): DynamoAccess => ({
    action,
    pk: pkPrefix(item?.[PK]?.S ?? '?'),
  });
  switch (operation) {
    case 'GetItem':
      return [of('GetItem', r.Key)];
    case 'PutItem':
      return [of('PutItem', r.Item)];
    case 'UpdateItem':
    case 'DeleteItem':
      return [of(operation, r.Key)];
    case 'Query':
      return [
        {
          action: 'Query',
          pk: pkPrefix(queriedPartition(r) ?? '?'),
          ...(r.IndexName ? { index: r.IndexName } : {}),
        },
      ];
    case 'TransactWriteItems':
      return (r.TransactItems ?? []).flatMap((entry) =>
        Object.entries(entry).map(([kind, item]) =>
          of(TRANSACT_ACTIONS[kind] ?? (kind as DynamoAction), item.Item ?? item.Key),
        ),
      );
    default:
      return [{ action: operation as DynamoAction, pk: '?' }];
  }
}

/**
 * The partition key value a query names: the `name = :value` of its key condition whose name is the
 * partition key of the table (`pk`) or of the index (`gsi1pk`).
 */
function queriedPartition(r: WireRequest): string | null {
  const key = r.IndexName ? GSI1_PK : PK;
  for (const [, name, value] of (r.KeyConditionExpression ?? '').matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) {
    const attribute = name!.startsWith('#') ? r.ExpressionAttributeNames?.[name!] : name;
    if (attribute === key) return r.ExpressionAttributeValues?.[value!]?.S ?? null;
  }
  return null;
}

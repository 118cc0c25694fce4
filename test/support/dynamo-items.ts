/**
 * A `DynamoStateStore` on a new table of DynamoDB Local, and a reader of that table's items as stored:
 * what the tests of the DynamoDB adapter's item layout (test/store/dynamo/state-store.test.ts,
 * digest-index.test.ts) check the DESIGN §5 keys with.
 */
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoLocal } from '../../harness/dynamodb-local.js';
import { DynamoStateStore } from '../../lib/store/dynamo/state-store.js';

/** A store on a new table of `local`, the table's name, and `get`: one item by its keys, as stored. */
export async function storeWithItems(local: DynamoLocal): Promise<{
  table: string;
  store: DynamoStateStore;
  get(key: { pk: string; sk: string }): Promise<Record<string, unknown> | undefined>;
}> {
  const table = await local.freshTable();
  const store = new DynamoStateStore({ tableName: table, client: local.client });
  const doc = DynamoDBDocumentClient.from(local.client);
  const get = async (key: { pk: string; sk: string }) =>
    (await doc.send(new GetCommand({ TableName: table, Key: key }))).Item;
  return { table, store, get };
}

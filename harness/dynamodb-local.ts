/**
 * DynamoDB Local for tests (STACK.md): AWS's own DynamoDB Local jar, in memory. Inside a vitest run the
 * run's one shared instance (test/support/services.ts starts it on the first file that asks, about 2 s
 * on a quiet machine and up to 30 s on a loaded one, once); outside (bench/) one of its own
 * (harness/emulator-processes.ts). `freshTable` makes a new state table (`createTableInput`) with a
 * fresh name so every test starts empty and no two test files meet; `stop` drops the tables it made.
 *
 * DynamoDB Local keeps one database per access key and region (no `-sharedDb`): every client of a test
 * must use `LOCAL_CREDENTIALS` and `LOCAL_REGION`.
 */
import { randomBytes } from 'node:crypto';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DynamoDBClient,
  type DynamoDBClientConfig,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { createTableInput, timeToLiveInput } from '../lib/store/dynamo/schema.js';
import { launchDynamoLocal } from './emulator-processes.js';
import { sharedEndpoint } from './shared.js';

export const LOCAL_REGION = 'us-east-1';
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };

/** A running DynamoDB Local. */
export interface DynamoLocal {
  endpoint: string;
  port: number;
  /** client config for it: endpoint, region, dummy credentials */
  config: DynamoDBClientConfig;
  /** a client for it (destroyed by `stop`) */
  client: DynamoDBClient;
  /** creates an empty state table with a unique name and returns the name */
  freshTable(): Promise<string>;
  /** deletes a table made by `freshTable` */
  dropTable(name: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The run's shared DynamoDB Local, or outside a vitest run one of its own; rejects with its output if it
 * exits or does not answer within `timeoutMs` (90 s: the JVM's start took over 30 s on the 2-core machine
 * at a load average of 17, in a full suite run).
 */
export async function startDynamoLocal(timeoutMs = 90_000): Promise<DynamoLocal> {
  const shared = await sharedEndpoint('dynamo');
  const own = shared === null ? await launchDynamoLocal(timeoutMs) : null;
  const endpoint = shared ?? own!.endpoint;
  const config: DynamoDBClientConfig = { endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const client = new DynamoDBClient(config);
  const made = new Set<string>();
  return {
    endpoint,
    port: Number(new URL(endpoint).port),
    config,
    client,
    async freshTable() {
      const name = `hansard-test-${randomBytes(6).toString('hex')}`;
      await client.send(new CreateTableCommand(createTableInput(name)));
      made.add(name);
      await client.send(new UpdateTimeToLiveCommand(timeToLiveInput(name)));
      return name;
    },
    async dropTable(name) {
      await client.send(new DeleteTableCommand({ TableName: name }));
      made.delete(name);
    },
    async stop() {
      // The shared instance lives on: free what this file stored in it.
      for (const name of made) await client.send(new DeleteTableCommand({ TableName: name })).catch(() => {});
      client.destroy();
      await own?.stop();
    },
  };
}

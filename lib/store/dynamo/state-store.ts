/**
 * `DynamoStateStore`: the AWS `StateStore` (DESIGN §1, §5), one DynamoDB table through the AWS SDK v3
 * document client. Item layout: `dynamo/schema.ts`. It answers exactly as `SqliteStateStore` does (the
 * contract suites in `test/store/contract/`, one per entity port, run against both); every write that
 * SQLite guards with a transaction is a condition expression or one `TransactWriteItems` here, except the
 * counts of an advance in the session index and the tenant's usage, which follow its transaction
 * (issue 17.1, docs/adr/0008-no-hot-keys-on-ingest.md: dynamo/writers.ts, dynamo/sessions.ts). Every
 * request is tried again on throttling and transaction conflicts, and counted (`retries`).
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
import { StateConflictError } from '../errors.js';
import type { BoardCopy, Page, SessionRecord, SessionSummary, SummaryDelta } from '../sessions.js';
import { StateStoreBase } from '../state-store-base.js';
import type { StateStore } from '../stores.js';
import type { TenantUsage } from '../tenants.js';
import { DynamoAlerts } from './alerts.js';
import { DynamoDigestIndex } from './digest-index.js';
import { errorName, type Item, type TransactItem } from './items.js';
import { DynamoPendingCounts, SWEEP_INTERVAL_MS } from './pending.js';
import { ITEM_RETRY, newRetryCounts, type RetryCounts, TRANSACT_RETRY, withRetry } from './retry.js';
import { type ItemKey, keys } from './schema.js';
import { DynamoSessionIndex, USAGE_MAX_AGE_MS } from './sessions.js';
import { DynamoSignIn } from './sign-in.js';
import { DynamoStatusWorkItems } from './status-work.js';
import { DynamoTenantSettings } from './tenants.js';
import { DynamoTokenItems } from './tokens.js';
import { DynamoUsage } from './usage.js';
import { DynamoWriterIndex } from './writers.js';

export interface DynamoStateStoreOptions {
  tableName: string;
  /** a client to use; the store leaves it open on `close()` */
  client?: DynamoDBClient;
  /** config of a client the store makes (and destroys on `close()`) when `client` is not given */
  clientConfig?: DynamoDBClientConfig;
  /** how old a tenant's usage figure may be before `tenantUsage` reads it again, ms (default 30 s) */
  usageMaxAgeMs?: number;
  /** how often an advance sweeps its tenant's pending counts (dynamo/pending.ts), ms (default 30 s) */
  sweepIntervalMs?: number;
}

/**
 * @example
 * const state = new DynamoStateStore({ tableName: 'hansard-state', clientConfig: { region: 'eu-west-1' } });
 * await state.createTenant('acme', new Date().toISOString());
 */
export class DynamoStateStore extends StateStoreBase implements StateStore {
  /** What this store retried since it was made (dynamo/retry.ts): for tests and the bench to report. */
  readonly retries: RetryCounts = newRetryCounts();
  private readonly table: string;
  private readonly doc: DynamoDBDocumentClient;
  private readonly owned: DynamoDBClient | null;
  protected readonly tokens: DynamoTokenItems;
  protected readonly tenantSettings: DynamoTenantSettings;
  protected readonly items: DynamoStatusWorkItems;
  protected readonly digests: DynamoDigestIndex;
  private readonly sessions: DynamoSessionIndex;
  protected readonly writers: DynamoWriterIndex;
  protected readonly usage: DynamoUsage;
  protected readonly alerts: DynamoAlerts;
  protected readonly signIn: DynamoSignIn;

  constructor(opts: DynamoStateStoreOptions) {
    super();
    this.table = opts.tableName;
    this.owned = opts.client ? null : new DynamoDBClient(opts.clientConfig ?? {});
    const client = opts.client ?? this.owned!;
    const once = DynamoDBDocumentClient.from(client, { marshallOptions: { removeUndefinedValues: true } });
    this.doc = retryingClient(once, this.retries);
    const primitives = {
      doc: this.doc,
      table: this.table,
      get: (key: ItemKey, options?: { consistent?: boolean }) => this.get(key, options),
      queryAll: (input: Omit<QueryCommandInput, 'TableName'>) => this.queryAll(input),
      transact: (items: TransactItem[]) => this.transact(items),
    };
    this.tokens = new DynamoTokenItems(primitives);
    this.tenantSettings = new DynamoTenantSettings(primitives);
    this.items = new DynamoStatusWorkItems(primitives);
    this.usage = new DynamoUsage(primitives, this.retries);
    this.alerts = new DynamoAlerts(primitives);
    this.signIn = new DynamoSignIn(primitives);
    this.digests = new DynamoDigestIndex({ ...primitives, listWriters: (t, s) => this.listWriters(t, s) });
    this.sessions = new DynamoSessionIndex(
      primitives,
      (tenant, sid) => this.writers.listWriters(tenant, sid),
      opts.usageMaxAgeMs ?? USAGE_MAX_AGE_MS,
    );
    this.writers = new DynamoWriterIndex(
      primitives,
      this.sessions,
      new DynamoPendingCounts(primitives, this.retries, opts.sweepIntervalMs ?? SWEEP_INTERVAL_MS, once),
    );
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

  // ---- usage, sessions and the board: dynamo/sessions.ts

  tenantUsage(tenant: string): Promise<TenantUsage> {
    return this.sessions.tenantUsage(tenant);
  }
  getSession(tenant: string, sid: string): Promise<SessionRecord | null> {
    return this.sessions.getSession(tenant, sid);
  }
  countSessions(tenant: string, atMost?: number): Promise<number> {
    return this.sessions.countSessions(tenant, atMost);
  }
  listSessions(tenant: string, limit: number, cursor: string | null): Promise<Page<SessionRecord>> {
    return this.sessions.listSessions(tenant, limit, cursor);
  }
  boardCopies(tenant: string, sids: readonly string[]): Promise<Map<string, BoardCopy>> {
    return this.sessions.boardCopies(tenant, sids);
  }

  // ---- session summaries: dynamo/status-work.ts (a tenant's limits, status, work items, claimed keys and
  // the digest index: StateStoreBase, over dynamo/tenants.ts, dynamo/status-work.ts, dynamo/digest-index.ts)

  listSessionSummaries(tenant: string): Promise<SessionSummary[]> {
    return this.items.listSessionSummaries(tenant);
  }

  mergeSessionSummary(tenant: string, sid: string, delta: SummaryDelta, at?: string): Promise<void> {
    return this.items.mergeSessionSummary(tenant, sid, delta, at);
  }

  async close(): Promise<void> {
    this.owned?.destroy();
  }

  // ---- primitives

  private async get(key: ItemKey, options: { consistent?: boolean } = {}): Promise<Item | null> {
    const res = await this.doc.send(
      new GetCommand({ TableName: this.table, Key: key, ConsistentRead: options.consistent ?? true }),
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
   * `TransactWriteItems` (tried again on conflicts and throttling with the transactions' policy, as every
   * request of `doc` is: `retryingClient`). A failed condition is thrown as the SDK gave it.
   */
  private async transact(items: TransactItem[]): Promise<void> {
    await this.doc.send(new TransactWriteCommand({ TransactItems: items }));
  }
}

/**
 * The document client with every `send` tried again on throttling and conflicts (dynamo/retry.ts): the
 * transactions' policy for `TransactWriteItems`, the single items' for anything else, counted in `counts`.
 * A wrapper of `send` rather than middleware: the client may be shared with other stores and modules.
 */
function retryingClient(doc: DynamoDBDocumentClient, counts: RetryCounts): DynamoDBDocumentClient {
  return new Proxy(doc, {
    get(target, prop, receiver) {
      if (prop !== 'send') return Reflect.get(target, prop, receiver);
      return (command: { constructor: { name: string } }, ...rest: unknown[]) =>
        withRetry(
          () => (target.send as (...a: unknown[]) => Promise<unknown>).call(target, command, ...rest),
          counts,
          command instanceof TransactWriteCommand ? TRANSACT_RETRY : ITEM_RETRY,
        );
    },
  });
}

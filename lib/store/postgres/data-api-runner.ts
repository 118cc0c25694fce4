/**
 * `SqlRunner` over the RDS Data API (issue 30 item 4): the search adapter on Aurora PostgreSQL Serverless
 * v2 from Lambda without a VPC or a connection pool. A transaction is BeginTransaction, one
 * ExecuteStatement setting the tenant (and the time limit) for it, the caller's statements, each with the
 * `transactionId`, then CommitTransaction, or RollbackTransaction when anything threw. Parameters go typed
 * (`stringValue`, `longValue`, `doubleValue`, `booleanValue`, `isNull`); rows come back as JSON
 * (`formatRecordsAs: 'JSON'`, bigints as numbers), which the Data API documents for SELECT only: the rows
 * of any other statement (an UPDATE … RETURNING, as `applyWriter`'s condition is) are read from
 * `records` and `columnMetadata` (`includeResultMetadata`).
 *
 * Limits of the Data API that shape the adapter: an answer carries at most 1 MiB of result data and 64 KB
 * per row (the adapter's pages are at most 50 rows and it fetches long texts in bounded groups:
 * lib/store/postgres/search.ts); a call runs at most 45 s; a transaction ends 3 minutes after its last
 * call. An Aurora cluster paused at 0 ACU answers `DatabaseResumingException` while it wakes: retried here
 * with backoff for up to `resumeWaitMs` (30 s), then a clear error.
 */
import {
  BeginTransactionCommand,
  CommitTransactionCommand,
  ExecuteStatementCommand,
  type Field,
  RDSDataClient,
  RollbackTransactionCommand,
  type SqlParameter,
} from '@aws-sdk/client-rds-data';
import { z } from 'zod';
import {
  type SqlParams,
  type SqlRow,
  type SqlRunner,
  SqlTimeoutError,
  type SqlTx,
  type SqlValue,
} from './runner.js';
import { transactionSettings } from './settings.js';

export interface DataApiRunnerOptions {
  /** the Aurora cluster's ARN */
  resourceArn: string;
  /** the Secrets Manager secret of the database user the app runs as (not the tables' owner) */
  secretArn: string;
  database: string;
  client?: RDSDataClient;
  /** how long a paused cluster may take to resume before a call fails, in ms (default 30,000) */
  resumeWaitMs?: number;
  /** waits `ms` (tests pass a controllable one) */
  sleep?: (ms: number) => Promise<void>;
  /** the current time in ms (tests pass a controllable one) */
  now?: () => number;
}

/** The cluster did not resume within `resumeWaitMs`. */
export class DatabaseStillResumingError extends Error {
  constructor(waitedMs: number, options?: { cause?: unknown }) {
    super(
      `the search database (Aurora Serverless v2, paused at 0 ACU) did not resume within ${Math.round(waitedMs / 1000)} s; try again shortly`,
      options,
    );
    this.name = 'DatabaseStillResumingError';
  }
}

/** The Data API's message for a statement cancelled at `statement_timeout` (`…; SQLState: 57014`). */
const CANCELLED = /SQLState:\s*57014\b/;

/** `formattedRecords`: a JSON array of objects, column label to value. */
const Records = z.array(z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])));

/** The rows of an answer: `formattedRecords` when the Data API formatted them, else `records`. */
export function rowsOf(out: {
  formattedRecords?: string | undefined;
  records?: Field[][] | undefined;
  columnMetadata?: Array<{ name?: string | undefined; label?: string | undefined }> | undefined;
}): SqlRow[] {
  if (out.formattedRecords) return Records.parse(JSON.parse(out.formattedRecords));
  if (!out.records) return [];
  const names = (out.columnMetadata ?? []).map((c, i) => c.label ?? c.name ?? `column${i + 1}`);
  return out.records.map((fields) => {
    const row: SqlRow = {};
    fields.forEach((f, i) => {
      row[names[i] ?? `column${i + 1}`] = fieldValue(f);
    });
    return row;
  });
}

/** A `Field` of `records` as a value (a blob as base64, an array as JSON: the adapter selects neither). */
function fieldValue(f: Field): SqlValue {
  if (f.isNull) return null;
  if (f.stringValue !== undefined) return f.stringValue;
  if (f.longValue !== undefined) return f.longValue;
  if (f.doubleValue !== undefined) return f.doubleValue;
  if (f.booleanValue !== undefined) return f.booleanValue;
  if (f.blobValue !== undefined) return Buffer.from(f.blobValue).toString('base64');
  if (f.arrayValue !== undefined) return JSON.stringify(f.arrayValue);
  return null;
}

/** A `SqlRunner` on the RDS Data API (see the module comment). */
export class DataApiRunner implements SqlRunner {
  private readonly client: RDSDataClient;
  private readonly target: { resourceArn: string; secretArn: string };
  private readonly database: string;
  private readonly resumeWaitMs: number;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly now: () => number;
  private readonly ownsClient: boolean;

  constructor(options: DataApiRunnerOptions) {
    this.client = options.client ?? new RDSDataClient({});
    this.ownsClient = options.client === undefined;
    this.target = { resourceArn: options.resourceArn, secretArn: options.secretArn };
    this.database = options.database;
    this.resumeWaitMs = options.resumeWaitMs ?? 30_000;
    this.sleep = options.sleep ?? ((ms) => new Promise((r) => setTimeout(r, ms)));
    this.now = options.now ?? Date.now;
  }

  async transaction<T>(
    tenant: string,
    fn: (tx: SqlTx) => Promise<T>,
    options: { timeoutMs?: number } = {},
  ): Promise<T> {
    const begun = await this.resuming(() =>
      this.client.send(new BeginTransactionCommand({ ...this.target, database: this.database })),
    );
    const transactionId = begun.transactionId;
    if (!transactionId) throw new Error('the Data API began a transaction without an id');
    try {
      const settings = transactionSettings(tenant, options.timeoutMs);
      await this.execute(settings.sql, settings.params, transactionId);
      const result = await fn({ query: (sql, params) => this.execute(sql, params, transactionId) });
      await this.client.send(new CommitTransactionCommand({ ...this.target, transactionId }));
      return result;
    } catch (err) {
      // A statement's error may already have ended the transaction on the Data API's side
      // (TransactionNotFoundException then): the error worth reporting is the first.
      await this.client
        .send(new RollbackTransactionCommand({ ...this.target, transactionId }))
        .catch(() => {});
      throw err;
    }
  }

  admin(sql: string, params?: SqlParams): Promise<SqlRow[]> {
    // DDL goes on past the 45 s call limit rather than be cut half-way (the Data API's advice).
    return this.resuming(() => this.execute(sql, params, undefined, true));
  }

  async close(): Promise<void> {
    if (this.ownsClient) this.client.destroy();
  }

  /** One ExecuteStatement; its rows as `SqlRow`s. @throws SqlTimeoutError for SQLSTATE 57014 */
  private async execute(
    sql: string,
    params: SqlParams = {},
    transactionId?: string,
    continueAfterTimeout?: boolean,
  ): Promise<SqlRow[]> {
    try {
      const out = await this.client.send(
        new ExecuteStatementCommand({
          ...this.target,
          database: this.database,
          sql,
          parameters: Object.entries(params).map(([name, value]) => toParameter(name, value)),
          formatRecordsAs: 'JSON',
          includeResultMetadata: true,
          resultSetOptions: { longReturnType: 'LONG', decimalReturnType: 'DOUBLE_OR_LONG' },
          ...(transactionId === undefined ? {} : { transactionId }),
          ...(continueAfterTimeout ? { continueAfterTimeout } : {}),
        }),
      );
      // A statement returning no rows (a write without RETURNING) has neither.
      return rowsOf(out);
    } catch (err) {
      if (err instanceof Error && (err.name === 'StatementTimeoutException' || CANCELLED.test(err.message))) {
        throw new SqlTimeoutError({ cause: err });
      }
      throw err;
    }
  }

  /**
   * Runs `call`, again while the cluster answers `DatabaseResumingException`, waiting 0.5 s, 1 s, 2 s, 4 s
   * then 5 s between tries, until `resumeWaitMs` has passed.
   * @throws DatabaseStillResumingError when it is still resuming then
   */
  private async resuming<T>(call: () => Promise<T>): Promise<T> {
    const start = this.now();
    for (let attempt = 0; ; attempt++) {
      try {
        return await call();
      } catch (err) {
        if (!(err instanceof Error) || err.name !== 'DatabaseResumingException') throw err;
        const waited = this.now() - start;
        const pause = Math.min(500 * 2 ** attempt, 5000, this.resumeWaitMs - waited);
        if (pause <= 0) throw new DatabaseStillResumingError(waited, { cause: err });
        await this.sleep(pause);
      }
    }
  }
}

/** A parameter as the Data API types it: integers as `longValue`, other numbers `doubleValue`. */
export function toParameter(name: string, value: SqlValue): SqlParameter {
  let field: Field;
  if (value === null) field = { isNull: true };
  else if (typeof value === 'string') field = { stringValue: value };
  else if (typeof value === 'boolean') field = { booleanValue: value };
  else if (Number.isSafeInteger(value)) field = { longValue: value };
  else field = { doubleValue: value };
  return { name, value: field };
}

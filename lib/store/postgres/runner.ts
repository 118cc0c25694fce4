/**
 * How the PostgreSQL search adapter (lib/store/postgres/search.ts, issue 30 item 4) reaches its server:
 * through `pg` on any PostgreSQL (lib/store/postgres/pg-runner.ts), or through the RDS Data API on Aurora
 * Serverless v2 (lib/store/postgres/data-api-runner.ts), so the functions need no VPC. SQL is written once,
 * with named parameters `:name` (the Data API's form; the `pg` runner turns them into `$1…`).
 *
 * Every statement runs inside `transaction`, which first sets the tenant for row-level security
 * (`set_config('hansard.tenant', tenant, true)`): the tables' policies admit only that tenant's rows, on top
 * of each query's own `tenant = :tenant`.
 */
import { SearchTimeoutError } from '../search.js';

/** A parameter value: what both the Data API and `pg` carry without loss. */
export type SqlValue = string | number | boolean | null;

/** Named parameters of one statement (`:name` in its text). */
export type SqlParams = Record<string, SqlValue>;

/** A row as the runner answers it: column name to value (bigint columns as numbers, text as strings). */
export type SqlRow = Record<string, SqlValue>;

/** One transaction's statements. */
export interface SqlTx {
  /** Runs `sql` with `params`; answers the rows it returned (none for a write). */
  query(sql: string, params?: SqlParams): Promise<SqlRow[]>;
}

/** A connection to the search database. */
export interface SqlRunner {
  /**
   * Runs `fn` in one transaction with `hansard.tenant` set to `tenant` (row-level security) and, when
   * given, `statement_timeout` set to `timeoutMs`; commits when it resolves, rolls back when it throws.
   * @throws the error of `fn`, or the server's (a timeout is `SqlTimeoutError`)
   */
  transaction<T>(tenant: string, fn: (tx: SqlTx) => Promise<T>, options?: { timeoutMs?: number }): Promise<T>;
  /** Runs DDL or a statement outside any tenant (the schema's migration, as the schema's owner). */
  admin(sql: string, params?: SqlParams): Promise<SqlRow[]>;
  close(): Promise<void>;
}

/** A statement the server cancelled at `statement_timeout` (SQLSTATE 57014): the port's timeout error. */
export class SqlTimeoutError extends SearchTimeoutError {
  override name = 'SqlTimeoutError';
}

/**
 * `SqlRunner` over `pg` (issue 30 item 4): the search adapter on any PostgreSQL, and the contract suite's
 * way to a real server (test/store/contract/search-postgres.test.ts). Statements are written with `:name`
 * parameters (lib/store/postgres/named-params.ts turns them into `$n`); each transaction runs on one pooled
 * connection as BEGIN, the tenant (and the time limit) set for the transaction only, the caller's
 * statements, then COMMIT, or ROLLBACK when anything threw.
 */
import pg from 'pg';
import { positionalValues, toPositional } from './named-params.js';
import { type SqlParams, type SqlRow, type SqlRunner, SqlTimeoutError, type SqlTx } from './runner.js';
import { transactionSettings } from './settings.js';

/** The server's "statement cancelled" (here: at `statement_timeout`). */
const QUERY_CANCELED = '57014';
/** `int8`'s type OID: answered as a number (the adapter's bigints are µs and lengths, below 2^53). */
const INT8_OID = 20;

/** Type parsers as `pg` has them, with bigint read as a number rather than a string. */
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8_OID
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format ?? 'text')) as typeof pg.types.getTypeParser,
};

export interface PgRunnerOptions {
  /** how to reach the server: a connection string or `pg`'s pool settings */
  connection: string | pg.PoolConfig;
  /** most connections at once (default 4: a function or the local server runs few queries at a time) */
  max?: number;
}

/** A `SqlRunner` on a `pg` pool (see the module comment). */
export class PgRunner implements SqlRunner {
  private readonly pool: pg.Pool;

  constructor(options: PgRunnerOptions) {
    const base =
      typeof options.connection === 'string' ? { connectionString: options.connection } : options.connection;
    this.pool = new pg.Pool({ max: options.max ?? 4, ...base, types: TYPES });
    // An idle connection the server drops would otherwise be an unhandled 'error' event.
    this.pool.on('error', () => {});
  }

  async transaction<T>(
    tenant: string,
    fn: (tx: SqlTx) => Promise<T>,
    options: { timeoutMs?: number } = {},
  ): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN').catch((err: Error) => {
        // A connection that cannot begin is not given back to the pool.
        broken = err;
        throw err;
      });
      try {
        // For this transaction only (is_local): a pooled connection carries nothing to the next.
        const settings = transactionSettings(tenant, options.timeoutMs);
        await run(client, settings.sql, settings.params);
        const tx: SqlTx = { query: (sql, params) => run(client, sql, params) };
        const result = await fn(tx);
        await client.query('COMMIT');
        return result;
      } catch (err) {
        await client.query('ROLLBACK').catch((rollbackErr: Error) => {
          broken = rollbackErr;
        });
        throw mapError(err);
      }
    } finally {
      client.release(broken);
    }
  }

  async admin(sql: string, params?: SqlParams): Promise<SqlRow[]> {
    const client = await this.pool.connect();
    try {
      return await run(client, sql, params);
    } catch (err) {
      throw mapError(err);
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** Runs one `:name` statement on `client`. */
async function run(client: pg.PoolClient, sql: string, params?: SqlParams): Promise<SqlRow[]> {
  const { text, names } = toPositional(sql);
  const res = await client.query(text, positionalValues(names, params));
  return res.rows as SqlRow[];
}

/** The server's cancellation at `statement_timeout` as `SqlTimeoutError`; anything else as it is. */
function mapError(err: unknown): unknown {
  if (err instanceof SqlTimeoutError) return err;
  if (err && typeof err === 'object' && (err as { code?: unknown }).code === QUERY_CANCELED) {
    return new SqlTimeoutError({ cause: err });
  }
  return err;
}

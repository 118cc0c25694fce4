/**
 * The RDS Data API as msw handlers in front of a real PostgreSQL (issue 30 item 4: the Data API's own
 * request and answer shapes tested against its documentation). Each request the AWS SDK sends is checked
 * against the documented request of its operation (the zod schemas below, from the API reference:
 * BeginTransaction, ExecuteStatement, CommitTransaction, RollbackTransaction; REST-JSON, `POST /<path>`),
 * refused as `BadRequestException` when it does not fit, and recorded in `refused` for the test to assert
 * empty. A fitting request is executed on the real server, as the role the secret stands for, and
 * answered in the documented response shape: `transactionId`; `formattedRecords` (JSON, bigints as numbers
 * unless `longReturnType: STRING`) for a SELECT, `records` of typed fields (and `columnMetadata`) for any
 * other statement returning rows, since `formatRecordsAs` is documented for SELECT only, and
 * `numberOfRecordsUpdated`; `transactionStatus`. Errors are answered
 * as the Data API answers them: `x-amzn-errortype` and `{"message"}`, a statement's error as
 * `DatabaseErrorException` with `ERROR: …; SQLState: …`, a result over 1 MiB or a row over 64 KB as
 * `BadRequestException`, a statement's error ending its transaction (`TransactionNotFoundException` after).
 *
 * What this cannot show: the real service's SQL parameter parsing (here lib/store/postgres/
 * named-params.ts does it, the same code as `PgRunner`'s), its exact size accounting, its timeouts (45 s
 * per call, 3 minutes per idle transaction), IAM and Secrets Manager, and a real resume from 0 ACU
 * (`pauseNext` only answers `DatabaseResumingException` the given number of times).
 */
import { randomBytes } from 'node:crypto';
import { HttpResponse, http } from 'msw';
import pg from 'pg';
import { z } from 'zod';
import { positionalValues, toPositional } from '../../lib/store/postgres/named-params.js';

/** The regional endpoint the SDK calls (region us-east-1). */
export const DATA_API_ENDPOINT = 'https://rds-data.us-east-1.amazonaws.com';

const Arn = z.string().min(11).max(100);
const Name = z.string().min(0).max(64);

/** `Field` (a union: exactly one member set). */
const Field = z
  .strictObject({
    isNull: z.boolean().optional(),
    booleanValue: z.boolean().optional(),
    longValue: z.number().int().optional(),
    doubleValue: z.number().optional(),
    stringValue: z.string().optional(),
    blobValue: z.string().optional(),
    arrayValue: z.unknown().optional(),
  })
  .refine((f) => Object.keys(f).length === 1, 'a Field sets exactly one member');

const SqlParameter = z.strictObject({
  name: z.string().optional(),
  value: Field.optional(),
  typeHint: z.enum(['JSON', 'UUID', 'TIMESTAMP', 'DATE', 'TIME', 'DECIMAL']).optional(),
});

export const BeginTransactionRequest = z.strictObject({
  resourceArn: Arn,
  secretArn: Arn,
  database: Name.optional(),
  schema: Name.optional(),
});

export const ExecuteStatementRequest = z.strictObject({
  resourceArn: Arn,
  secretArn: Arn,
  sql: z.string().max(65_536),
  database: Name.optional(),
  schema: Name.optional(),
  parameters: z.array(SqlParameter).optional(),
  transactionId: z.string().max(192).optional(),
  includeResultMetadata: z.boolean().optional(),
  continueAfterTimeout: z.boolean().optional(),
  resultSetOptions: z
    .strictObject({
      decimalReturnType: z.enum(['STRING', 'DOUBLE_OR_LONG']).optional(),
      longReturnType: z.enum(['STRING', 'LONG']).optional(),
    })
    .optional(),
  formatRecordsAs: z.enum(['NONE', 'JSON']).optional(),
});

export const EndTransactionRequest = z.strictObject({
  resourceArn: Arn,
  secretArn: Arn,
  transactionId: z.string().max(192),
});

/** The largest answer (result data) and row the Data API returns. */
const MAX_RESULT_BYTES = 1024 * 1024;
const MAX_ROW_BYTES = 64 * 1024;
/** A request over 4 MiB is refused. */
const MAX_REQUEST_BYTES = 4 * 1024 * 1024;

/** What the emulator answers for (see the module comment). */
export interface DataApiEmulatorOptions {
  resourceArn: string;
  /** each secret's login: a connection URL and its default database (a request may name another) */
  secrets: Record<string, { url: string; database: string }>;
}

export interface DataApiEmulator {
  handlers: ReturnType<typeof http.post>[];
  /** every request that did not fit its documented shape, as `operation: reason` */
  refused: string[];
  /** the operations called, in order */
  calls: string[];
  /** the largest `formattedRecords` answered, in bytes */
  largestAnswer: number;
  /** how many answers carried rows as `records` (a statement other than SELECT returning rows) */
  nonSelectRows: number;
  /** the next `n` calls answer `DatabaseResumingException` (a cluster paused at 0 ACU) */
  pauseNext(n: number): void;
  /** ends what is still open (transactions left by a failed test) */
  close(): Promise<void>;
}

class ApiError extends Error {
  constructor(
    readonly type: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/** Raw text of every column (the emulator converts as the Data API does). */
const RAW_TYPES = { getTypeParser: () => (v: string) => v } as unknown as typeof pg.types;
const INTEGER_OIDS = new Set([20, 21, 23]);
const FLOAT_OIDS = new Set([700, 701]);

/** Starts an emulator (see the module comment); install `handlers` on an msw server. */
export function dataApiEmulator(options: DataApiEmulatorOptions): DataApiEmulator {
  const txs = new Map<string, pg.PoolClient>();
  // Connections kept per login and database, as the Data API keeps its own to the cluster.
  const pools = new Map<string, pg.Pool>();
  let paused = 0;
  const state: DataApiEmulator = {
    handlers: [],
    refused: [],
    calls: [],
    largestAnswer: 0,
    nonSelectRows: 0,
    pauseNext(n) {
      paused = n;
    },
    async close() {
      for (const client of txs.values()) client.release(true);
      txs.clear();
      for (const pool of pools.values()) await pool.end().catch(() => {});
      pools.clear();
    },
  };

  const parse = <S extends z.ZodType>(op: string, schema: S, body: unknown): z.infer<S> => {
    const r = schema.safeParse(body);
    if (!r.success) {
      const why = r.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ');
      state.refused.push(`${op}: ${why}`);
      throw new ApiError('BadRequestException', 400, why);
    }
    return r.data;
  };
  const connect = async (secretArn: string, resourceArn: string, database?: string) => {
    const secret = options.secrets[secretArn];
    if (resourceArn !== options.resourceArn)
      throw new ApiError('BadRequestException', 400, 'Invalid cluster arn');
    if (!secret) throw new ApiError('BadRequestException', 400, 'Invalid secret arn');
    const url = new URL(secret.url);
    url.pathname = `/${database ?? secret.database}`;
    let pool = pools.get(url.toString());
    if (!pool) {
      pool = new pg.Pool({ connectionString: url.toString(), types: RAW_TYPES, max: 4 });
      // A connection to a database a test dropped: the pool forgets it.
      pool.on('error', () => {});
      pools.set(url.toString(), pool);
    }
    return pool.connect();
  };
  const dbError = (err: unknown): ApiError => {
    const e = err as { message?: string; code?: string; position?: string };
    const at = e.position ? `; Position: ${e.position}` : '';
    return new ApiError('DatabaseErrorException', 400, `ERROR: ${e.message}${at}; SQLState: ${e.code}`);
  };

  const operations: Record<string, (body: unknown) => Promise<object>> = {
    async BeginTransaction(body) {
      const req = parse('BeginTransaction', BeginTransactionRequest, body);
      const client = await connect(req.secretArn, req.resourceArn, req.database);
      await client.query('BEGIN');
      const transactionId = randomBytes(48).toString('base64');
      txs.set(transactionId, client);
      return { transactionId };
    },
    async Execute(body) {
      const req = parse('ExecuteStatement', ExecuteStatementRequest, body);
      const values: Record<string, string | number | boolean | null> = {};
      for (const p of req.parameters ?? []) {
        const f = p.value ?? { isNull: true };
        if (p.name === undefined) throw new ApiError('BadRequestException', 400, 'a parameter has no name');
        if (f.blobValue !== undefined || f.arrayValue !== undefined) {
          state.refused.push('ExecuteStatement: blob and array parameters are not what the runner sends');
          throw new ApiError('BadRequestException', 400, 'unsupported parameter type');
        }
        values[p.name] = f.isNull
          ? null
          : (f.stringValue ?? f.longValue ?? f.doubleValue ?? f.booleanValue ?? null);
      }
      let client: pg.PoolClient;
      let own = false;
      if (req.transactionId !== undefined) {
        const found = txs.get(req.transactionId);
        if (!found)
          throw new ApiError(
            'TransactionNotFoundException',
            404,
            `Transaction ${req.transactionId} is not found`,
          );
        client = found;
      } else {
        client = await connect(req.secretArn, req.resourceArn, req.database);
        own = true;
      }
      try {
        const { text, names } = toPositional(req.sql);
        let res: pg.QueryResult;
        try {
          res = await client.query(text, positionalValues(names, values));
        } catch (err) {
          if (req.transactionId !== undefined) {
            // A statement's error ends the Data API's transaction.
            txs.delete(req.transactionId);
            await client.query('ROLLBACK').catch(() => {});
            client.release();
          }
          throw err instanceof ApiError ? err : dbError(err);
        }
        return answer(req, res);
      } finally {
        if (own) client.release();
      }
    },
    async CommitTransaction(body) {
      const req = parse('CommitTransaction', EndTransactionRequest, body);
      const client = txs.get(req.transactionId);
      if (!client)
        throw new ApiError(
          'TransactionNotFoundException',
          404,
          `Transaction ${req.transactionId} is not found`,
        );
      txs.delete(req.transactionId);
      try {
        await client.query('COMMIT');
      } catch (err) {
        throw dbError(err);
      } finally {
        client.release();
      }
      return { transactionStatus: 'Transaction Committed' };
    },
    async RollbackTransaction(body) {
      const req = parse('RollbackTransaction', EndTransactionRequest, body);
      const client = txs.get(req.transactionId);
      if (!client)
        throw new ApiError(
          'TransactionNotFoundException',
          404,
          `Transaction ${req.transactionId} is not found`,
        );
      txs.delete(req.transactionId);
      await client.query('ROLLBACK').catch(() => {});
      client.release();
      return { transactionStatus: 'Rollback Complete' };
    },
  };

  /**
   * The documented answer of an ExecuteStatement: `formattedRecords` for a SELECT asked as JSON; for any
   * other statement returning rows (RETURNING), `records` of typed `Field`s, with `columnMetadata` when
   * asked (`formatRecordsAs` "only applies to SELECT statements", the API reference says).
   */
  const answer = (req: z.infer<typeof ExecuteStatementRequest>, res: pg.QueryResult): object => {
    if (res.fields.length === 0) return { numberOfRecordsUpdated: res.rowCount ?? 0 };
    const longAsString = req.resultSetOptions?.longReturnType === 'STRING';
    type Value = string | number | boolean | null;
    let total = 0;
    const rows = res.rows.map((row: Record<string, string | null>) => {
      let rowBytes = 0;
      const out: Array<[name: string, value: Value]> = [];
      for (const f of res.fields) {
        const raw = row[f.name] ?? null;
        rowBytes += raw === null ? 0 : Buffer.byteLength(raw);
        let value: Value = raw;
        if (raw !== null && INTEGER_OIDS.has(f.dataTypeID)) value = longAsString ? raw : Number(raw);
        else if (raw !== null && FLOAT_OIDS.has(f.dataTypeID)) value = Number(raw);
        else if (raw !== null && f.dataTypeID === 16) value = raw === 't';
        out.push([f.name, value]);
      }
      if (rowBytes > MAX_ROW_BYTES) {
        throw new ApiError('BadRequestException', 400, 'Packet for query is too large');
      }
      total += rowBytes;
      return out;
    });
    if (total > MAX_RESULT_BYTES) {
      throw new ApiError(
        'BadRequestException',
        400,
        'Database returned more than the allowed response size limit',
      );
    }
    if (res.command === 'SELECT' && req.formatRecordsAs === 'JSON') {
      const formattedRecords = JSON.stringify(rows.map((r) => Object.fromEntries(r)));
      state.largestAnswer = Math.max(state.largestAnswer, Buffer.byteLength(formattedRecords));
      return { formattedRecords, numberOfRecordsUpdated: 0 };
    }
    state.nonSelectRows++;
    const records = rows.map((r) =>
      r.map(([, v]) => {
        if (v === null) return { isNull: true };
        if (typeof v === 'boolean') return { booleanValue: v };
        if (typeof v === 'number') return Number.isInteger(v) ? { longValue: v } : { doubleValue: v };
        return { stringValue: v };
      }),
    );
    const columnMetadata = req.includeResultMetadata
      ? res.fields.map((f) => ({ name: f.name, label: f.name, type: f.dataTypeID }))
      : undefined;
    return {
      records,
      ...(columnMetadata ? { columnMetadata } : {}),
      numberOfRecordsUpdated: res.rowCount ?? 0,
    };
  };

  const paths: Record<string, string> = {
    BeginTransaction: 'BeginTransaction',
    Execute: 'Execute',
    CommitTransaction: 'CommitTransaction',
    RollbackTransaction: 'RollbackTransaction',
  };
  state.handlers = Object.keys(paths).map((path) =>
    http.post(`${DATA_API_ENDPOINT}/${path}`, async ({ request }) => {
      state.calls.push(path);
      try {
        const text = await request.text();
        if (Buffer.byteLength(text) > MAX_REQUEST_BYTES) {
          state.refused.push(`${path}: a request over 4 MiB`);
          throw new ApiError('BadRequestException', 400, 'Request size exceeded');
        }
        if (paused > 0) {
          paused--;
          throw new ApiError(
            'DatabaseResumingException',
            400,
            'The Aurora DB instance db-1 is resuming after being auto-paused. Please wait a few seconds and try again.',
          );
        }
        const body = await operations[path]!(JSON.parse(text));
        return HttpResponse.json(body);
      } catch (err) {
        const e =
          err instanceof ApiError ? err : new ApiError('InternalServerErrorException', 500, String(err));
        return HttpResponse.json(
          { message: e.message },
          { status: e.status, headers: { 'x-amzn-errortype': e.type } },
        );
      }
    }),
  );
  return state;
}

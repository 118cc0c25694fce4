/**
 * PostgreSQL search for the search benchmark (bench/search.ts, issue 30): a throwaway server
 * (harness/postgres.ts), a database whose tables belong to an owner role, and `PgSearchIndex` over `PgRunner`
 * connected as an app role that owns nothing (row-level security applies, as on Aurora: neither role is a
 * superuser nor BYPASSRLS). Here rather than in bench/ because bench/ reaches the store adapters only
 * through harness/ (test/architecture/rules.ts); the superuser's connection is kept for what the benchmark
 * measures beside the index (table sizes, a baseline scan, ANALYZE).
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { PgRunner } from '../lib/store/postgres/pg-runner.js';
import { migrateSearchSchema } from '../lib/store/postgres/schema.js';
import { PgSearchIndex } from '../lib/store/postgres/search.js';
import type { SearchIndex } from '../lib/store/search.js';
import { launchPostgres, postgresBinDir } from './postgres.js';

export interface BenchPostgres {
  /** the index as the app role sees it (a query's time limit: `timeoutMs`) */
  index: SearchIndex;
  /** a statement as the superuser, in the bench's database (sizes, baselines: row-level security skipped) */
  sql(text: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  /** the server's version string */
  version: string;
  stop(): Promise<void>;
}

/** Why PostgreSQL cannot be started here, or null when it can be tried. */
export function postgresMissing(): string | null {
  return postgresBinDir() === null
    ? 'no PostgreSQL in /usr/lib/postgresql/<version>/bin (run `node scripts/ensure-postgresql.mjs` as root)'
    : null;
}

function withLogin(url: string, user: string, password: string, database: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = password;
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * Starts a server and makes the bench's database with the search schema (see the module comment).
 * @param timeoutMs the index's `statement_timeout` for a query (the deployment's `SearchDeps.timeoutMs`)
 * @throws what harness/postgres.ts `launchPostgres` throws (not installed, did not start)
 */
export async function startBenchPostgres(timeoutMs: number): Promise<BenchPostgres> {
  const server = await launchPostgres();
  const owner = { role: 'bench_owner', password: randomBytes(12).toString('hex') };
  const app = { role: 'bench_app', password: randomBytes(12).toString('hex') };
  const su = new pg.Client({ connectionString: server.endpoint });
  let runner: PgRunner | undefined;
  try {
    await su.connect();
    await su.query(`CREATE ROLE ${owner.role} LOGIN PASSWORD '${owner.password}'`);
    await su.query(`CREATE ROLE ${app.role} LOGIN PASSWORD '${app.password}'`);
    await su.query(`CREATE DATABASE bench OWNER ${owner.role}`);
    await su.end();
    const ownerRunner = new PgRunner({
      connection: withLogin(server.endpoint, owner.role, owner.password, 'bench'),
    });
    try {
      await migrateSearchSchema(ownerRunner, { appRole: app.role });
    } finally {
      await ownerRunner.close();
    }
    const admin = new pg.Client({
      connectionString: withLogin(server.endpoint, 'postgres', new URL(server.endpoint).password, 'bench'),
    });
    await admin.connect();
    const version = String((await admin.query('SHOW server_version')).rows[0]?.server_version ?? '?');
    runner = new PgRunner({ connection: withLogin(server.endpoint, app.role, app.password, 'bench') });
    const index = new PgSearchIndex({ runner, timeoutMs });
    return {
      index,
      version,
      sql: async (text, params) => (await admin.query(text, params)).rows as Record<string, unknown>[],
      stop: async () => {
        await index.close().catch(() => {});
        await admin.end().catch(() => {});
        await server.stop();
      },
    };
  } catch (err) {
    await su.end().catch(() => {});
    await runner?.close().catch(() => {});
    await server.stop();
    throw err;
  }
}

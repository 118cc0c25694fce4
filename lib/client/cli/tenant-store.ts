/**
 * The state store the operator's `hansard tenant …` commands work on (DESIGN §4, §6): the DynamoDB table
 * of an AWS deployment (`--table`, with the caller's AWS credentials, the SDK's default provider chain)
 * or the SQLite file of a local data directory (`--data`), never a server. Shared by `tenant create`
 * (./cmd-tenant.ts) and `tenant set` / `tenant show` (./cmd-tenant-limits.ts). The store itself is
 * reached through lib/deploy/tenant-admin.ts; this module reads the options.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { isTenantName, openTenantAdmin, type TenantAdmin } from '../../deploy/tenant-admin.js';
import { ExitError, UsageError } from '../api/errors.js';
import type { Io } from '../api/io.js';

/** Where the tenant is: one of `table` (with `region`, `endpoint`) or `data`. */
export interface TenantStoreOptions {
  /** the DynamoDB state table */
  table?: string;
  region?: string;
  endpoint?: string;
  /** a local data directory (`hansard serve --data`) */
  data?: string;
}

/** Adds `--table`, `--region`, `--endpoint` and `--data` to `cmd`. */
export function storeOptions(cmd: Command): Command {
  return cmd
    .option('--table <table>', 'the DynamoDB state table of an AWS deployment (uses your AWS credentials)')
    .option('--region <region>', 'AWS region of the table (default: AWS_REGION or your profile)')
    .option('--endpoint <url>', 'DynamoDB endpoint, e.g. DynamoDB Local')
    .option(
      '--data <dir>',
      'a local data directory instead (as `hansard serve --data`; default HANSARD_DATA_DIR when neither flag is given)',
    );
}

/**
 * Checks a tenant name and the store options before anything is opened. Neither --table nor --data is
 * left to `openTenantStore`, which has the environment (HANSARD_DATA_DIR).
 * @throws UsageError (exit 2) for an invalid name, both of --table and --data, --region or --endpoint
 *   with --data, or an --endpoint that is not an http(s) URL
 */
export function requireTenantStore(name: string, o: TenantStoreOptions): void {
  if (!isTenantName(name)) {
    throw new UsageError(
      `"${name}" is not a valid tenant name: use 1 to 63 lower-case letters, digits and -, starting with a letter or digit`,
    );
  }
  if (o.table !== undefined && o.data !== undefined) throw new UsageError(WHICH_STORE);
  checkDataWithoutAws(o);
  if (o.endpoint !== undefined && !/^https?:\/\/[^/\s]+/.test(o.endpoint)) {
    throw new UsageError(`--endpoint ${o.endpoint} is not an http(s) URL`);
  }
}

const WHICH_STORE =
  'say which state store: --table TABLE (DynamoDB) or --data DIR (local), one of them (or set HANSARD_DATA_DIR, as for hansard serve)';

function checkDataWithoutAws(o: TenantStoreOptions): void {
  if (o.data !== undefined && (o.region !== undefined || o.endpoint !== undefined)) {
    throw new UsageError('--region and --endpoint go with --table, not --data');
  }
}

/**
 * Fills `o.data` from `HANSARD_DATA_DIR` when neither --table nor --data was given (a flag wins over the
 * environment, as for `hansard serve` and `hansard keys`), so that later messages (`storeName`) name it.
 * @throws UsageError (exit 2) when neither is given and the variable is not set either, or it is set and
 *   --region or --endpoint was given (they go with --table)
 */
export function resolveTenantStore(o: TenantStoreOptions, env: NodeJS.ProcessEnv): TenantStoreOptions {
  if (o.table === undefined && o.data === undefined) {
    if (!env.HANSARD_DATA_DIR) throw new UsageError(WHICH_STORE);
    o.data = env.HANSARD_DATA_DIR;
    checkDataWithoutAws(o);
  }
  return o;
}

/**
 * The store the options name (HANSARD_DATA_DIR when neither --table nor --data: `resolveTenantStore`),
 * opened for the tenant commands (`openTenantAdmin`: SQLite or the AWS SDK loaded then, not at every CLI start).
 * @throws UsageError as `resolveTenantStore`
 */
export async function openTenantStore(o: TenantStoreOptions, io: Io): Promise<TenantAdmin> {
  resolveTenantStore(o, io.env);
  if (o.table !== undefined) {
    return openTenantAdmin({ table: o.table, region: o.region, endpoint: o.endpoint });
  }
  return openTenantAdmin({ data: resolve(io.cwd, o.data!) });
}

/** `table T in R` or `data directory D`: where the options point, for messages. */
export function storeName(o: TenantStoreOptions): string {
  if (o.table !== undefined) return `table ${o.table}${o.region ? ` in ${o.region}` : ''}`;
  return `data directory ${o.data}`;
}

/**
 * AWS errors an operator can act on, said in words: a missing region is a UsageError (exit 2), the rest
 * are printed and returned as an ExitError (exit 1); any other error is returned as it is.
 */
export function awsFailure(err: unknown, o: TenantStoreOptions, io: Io): unknown {
  const e = err as { name?: string; message?: string };
  const where = `${o.table}${o.region ? ` in ${o.region}` : ''}`;
  if (/Region is missing/i.test(e.message ?? ''))
    return new UsageError('no AWS region is configured: pass --region or set AWS_REGION');
  let say: string | null = null;
  if (e.name === 'ResourceNotFoundException')
    say = `table ${where} was not found: check --table and --region`;
  else if (e.name === 'CredentialsProviderError')
    say = `no AWS credentials were found (${e.message}): set AWS_PROFILE or the AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY variables`;
  else if (['AccessDeniedException', 'UnrecognizedClientException'].includes(e.name ?? ''))
    say = `AWS refused access to table ${where}: ${e.message}`;
  if (say === null) return err;
  io.stderr.write(`hansard: ${say}\n`);
  return new ExitError(1);
}

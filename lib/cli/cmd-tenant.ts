/**
 * `hansard tenant create NAME (--table TABLE [--region R] [--endpoint URL] | --data DIR) [--json]`
 * (DESIGN §4 tokens, §5): the operator's command. It works on the state store itself, not through a
 * server: the DynamoDB table of an AWS deployment (with the caller's AWS credentials, the SDK's default
 * provider chain) or the SQLite file of a local data directory. It creates the tenant and its first admin
 * token and prints the token once.
 */
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { ExitError, UsageError } from '../client/errors.js';
import { type Io, printJson } from '../client/io.js';
import { ensureTenant } from '../service/bootstrap.js';
import type { CreatedToken } from '../service/tokens.js';
import { isTenantName } from '../store/keys.js';
import { StateConflictError, type StateStore } from '../store/ports.js';
import { jsonOption } from './options.js';

export interface TenantCreateOptions {
  /** the DynamoDB state table */
  table?: string;
  region?: string;
  endpoint?: string;
  /** a local data directory (`hansard serve --data`) */
  data?: string;
  json?: boolean;
}

export function registerTenant(program: Command, io: Io): void {
  const tenant = program
    .command('tenant')
    .description('create tenants (operators: works on the state store directly, not through a server)');
  tenant
    .command('create <name>')
    .description('create a tenant and its first admin token, printed once')
    .option('--table <table>', 'the DynamoDB state table of an AWS deployment (uses your AWS credentials)')
    .option('--region <region>', 'AWS region of the table (default: AWS_REGION or your profile)')
    .option('--endpoint <url>', 'DynamoDB endpoint, e.g. DynamoDB Local')
    .option('--data <dir>', 'a local data directory instead (as `hansard serve --data`)')
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Examples:
  hansard tenant create acme --table hansard-state --region eu-west-1
  hansard tenant create acme --data ./.hansard
Tenant names: 1 to 63 lower-case letters, digits and -, starting with a letter or digit.`,
    )
    .action((name: string, o: TenantCreateOptions) => createTenant(name, o, io));
}

/**
 * Creates tenant `name` with an admin token and prints the token (stdout; `--json`: one JSON document).
 * @throws UsageError (exit 2) for an invalid name or options, or a tenant that exists
 * @throws UsageError when no AWS region is configured
 * @throws ExitError (exit 1) when AWS refuses (no table, no credentials, access denied), after saying why
 */
export async function createTenant(name: string, o: TenantCreateOptions, io: Io): Promise<void> {
  if (!isTenantName(name)) {
    throw new UsageError(
      `"${name}" is not a valid tenant name: use 1 to 63 lower-case letters, digits and -, starting with a letter or digit`,
    );
  }
  if ((o.table === undefined) === (o.data === undefined)) {
    throw new UsageError(
      'say where the tenant goes: --table TABLE (DynamoDB) or --data DIR (local), one of them',
    );
  }
  if (o.data !== undefined && (o.region !== undefined || o.endpoint !== undefined)) {
    throw new UsageError('--region and --endpoint go with --table, not --data');
  }
  if (o.endpoint !== undefined && !/^https?:\/\/[^/\s]+/.test(o.endpoint)) {
    throw new UsageError(`--endpoint ${o.endpoint} is not an http(s) URL`);
  }

  const state = await openState(o, io);
  let created: CreatedToken | null;
  try {
    created = await ensureTenant(state, name, new Date());
  } catch (err) {
    // Created by someone else between the check and the write.
    if (err instanceof StateConflictError) created = null;
    else throw awsFailure(err, o, io);
  } finally {
    await state.close();
  }
  if (!created) {
    throw new UsageError(
      `tenant ${name} exists already; nothing was changed (its admins make more tokens with: hansard token create)`,
    );
  }

  const { record, token } = created;
  if (o.json) {
    printJson(io, {
      tenant: name,
      token,
      id: record.id,
      scopes: record.scopes,
      created_at: record.created_at,
    });
    return;
  }
  io.stdout.write(`${token}\n`);
  io.stderr.write(
    `tenant ${name} created; above is its admin token ${record.id} (scopes ${record.scopes.join(', ')}), shown once: keep it safe\n` +
      "next: HANSARD_TOKEN=<that token> hansard token create --scopes board   then paste the new token at the board's /login\n",
  );
}

/** The state store the options name, loaded when asked for (SQLite or the AWS SDK), not at every CLI start. */
async function openState(o: TenantCreateOptions, io: Io): Promise<StateStore> {
  if (o.table !== undefined) {
    const { openDynamoStateStore } = await import('../deploy/aws.js');
    return openDynamoStateStore({ table: o.table, region: o.region, endpoint: o.endpoint });
  }
  // The stores alone: lib/deploy/local.ts would load the whole app (Hono, the routes, node-server).
  const { openLocalStores } = await import('../deploy/local-stores.js');
  // Not serve's data-directory lock (data-lock.ts): this only writes state.sqlite, whose own locking (WAL,
  // busy_timeout) lets a tenant be created while the server runs.
  return openLocalStores(resolve(io.cwd, o.data!)).state;
}

/** AWS errors an operator can act on, said in words (exit 1); any other error is returned as it is. */
function awsFailure(err: unknown, o: TenantCreateOptions, io: Io): unknown {
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

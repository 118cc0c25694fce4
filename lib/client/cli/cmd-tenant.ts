/**
 * `hansard tenant create NAME (--table TABLE [--region R] [--endpoint URL] | --data DIR) [--json]`
 * (DESIGN §4 tokens, §5): the operator's command. It works on the state store itself, not through a
 * server: the DynamoDB table of an AWS deployment (with the caller's AWS credentials, the SDK's default
 * provider chain) or the SQLite file of a local data directory (./tenant-store.ts). It creates the tenant
 * and its first admin token and prints the token once; `tenant admin-token NAME` mints another admin token
 * for a tenant whose admins lost theirs. `tenant set` and `tenant show`, a tenant's own limits, are
 * ./cmd-tenant-limits.ts.
 */
import type { Command } from 'commander';
import type { CreatedToken } from '../../deploy/tenant-admin.js';
import { UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { registerTenantLimits } from './cmd-tenant-limits.js';
import { registerTenantOidc } from './cmd-tenant-oidc.js';
import { jsonOption } from './options.js';
import {
  awsFailure,
  openTenantStore,
  requireTenantStore,
  storeOptions,
  type TenantStoreOptions,
} from './tenant-store.js';

export interface TenantCreateOptions extends TenantStoreOptions {
  json?: boolean;
}

export function registerTenant(program: Command, io: Io): void {
  const tenant = program
    .command('tenant')
    .description(
      'create tenants and set their limits (operators: on the state store directly), and their OIDC sign-in (tenant oidc: through a server)',
    );
  storeOptions(
    tenant.command('create <name>').description('create a tenant and its first admin token, printed once'),
  )
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
  storeOptions(
    tenant
      .command('admin-token <name>')
      .description('mint a new admin token for an existing tenant (lost the admin token?), printed once'),
  )
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Examples:
  hansard tenant admin-token local --data ./.hansard        # the local server's tenant, while it runs
  hansard tenant admin-token acme --table hansard-state --region eu-west-1
Every other token stays valid: list them with the new one (hansard token list) and revoke the lost one.`,
    )
    .action((name: string, o: TenantCreateOptions) => recoverAdmin(name, o, io));
  registerTenantLimits(tenant, io);
  registerTenantOidc(tenant, io);
}

/**
 * Creates tenant `name` with an admin token and prints the token (stdout; `--json`: one JSON document).
 * @throws UsageError (exit 2) for an invalid name or options, or a tenant that exists
 * @throws UsageError when no AWS region is configured
 * @throws ExitError (exit 1) when AWS refuses (no table, no credentials, access denied), after saying why
 */
export async function createTenant(name: string, o: TenantCreateOptions, io: Io): Promise<void> {
  requireTenantStore(name, o);
  const store = await openTenantStore(o, io);
  let created: CreatedToken | null;
  try {
    // null also when created by someone else between the check and the write
    created = await store.createTenant(name, new Date());
  } catch (err) {
    throw awsFailure(err, o, io);
  } finally {
    await store.close();
  }
  if (!created) {
    throw new UsageError(
      `tenant ${name} exists already; nothing was changed (its admins make more tokens with: hansard token create; lost the admin token? hansard tenant admin-token ${name})`,
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

/**
 * Mints a new admin token for the existing tenant `name` on the store directly and prints it (stdout;
 * `--json`: one JSON document), for an operator whose admins lost theirs.
 * @throws UsageError (exit 2) for an invalid name or options, or no such tenant (nothing stored)
 * @throws ExitError (exit 1) when AWS refuses (no table, no credentials, access denied), after saying why
 */
export async function recoverAdmin(name: string, o: TenantCreateOptions, io: Io): Promise<void> {
  requireTenantStore(name, o);
  const store = await openTenantStore(o, io);
  let created: CreatedToken | null;
  try {
    created = await store.recoverAdmin(name, new Date());
  } catch (err) {
    throw awsFailure(err, o, io);
  } finally {
    await store.close();
  }
  if (!created) {
    throw new UsageError(
      `there is no tenant ${name} in this store; nothing was changed (create it with: hansard tenant create ${name})`,
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
    `above is a new admin token ${record.id} of tenant ${name} (scopes ${record.scopes.join(', ')}), shown once: keep it safe\n` +
      'next: HANSARD_TOKEN=<that token> hansard token list   then hansard token revoke ID for the one that was lost\n',
  );
}

/**
 * `hansard tenant set NAME [--quota-bytes SIZE|default] [--rate-limit N|default]
 * [--monthly-budget-usd N|default] (--table T [--region R]
 * [--endpoint URL] | --data DIR) [--json]` and `hansard tenant show NAME (…) [--json]` (issue 17.1,
 * 17.3; DESIGN §6c "Limits … are set per tenant"): the operator's commands for a tenant's own storage
 * quota and per-token request rate, kept on its tenant record (lib/store/tenants.ts). Like
 * `tenant create` they work on the state store directly (./tenant-store.ts). The monthly budget (issue 27
 * item 4) is in US dollars at list price; crossing 80 % and 100 % of it is recorded as an event, and
 * `default` removes it (there is no deployment budget). `default` gives the field
 * back to the deployment's value (`hansard serve --quota-bytes` / `--rate-limit`, `TENANT_QUOTA_BYTES` /
 * `RATE_LIMIT_PER_MINUTE` on AWS), which this command cannot see: it prints "the deployment's".
 * A running server applies a change within 30 s (lib/service/tenants/limits.ts).
 */
import type { Command } from 'commander';
import { z } from 'zod';
import { DEFAULT_LIMITS, formatByteSize, parseByteSize } from '../../contract/limits.js';
import {
  MAX_MONTHLY_BUDGET_USD,
  MAX_RATE_LIMIT_PER_MINUTE,
  type TenantAdmin,
  type TenantSettings,
  type TenantSettingsChange,
} from '../../deploy/tenant-admin.js';
import { UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { jsonOption } from './options.js';
import {
  awsFailure,
  openTenantStore,
  requireTenantStore,
  storeName,
  storeOptions,
  type TenantStoreOptions,
} from './tenant-store.js';

export interface TenantSetOptions extends TenantStoreOptions {
  /** SIZE (`parseByteSize`) or `default` */
  quotaBytes?: string;
  /** requests a minute per token, 0 for none limited, or `default` */
  rateLimit?: string;
  /** US dollars a month at list price, or `default` (none) */
  monthlyBudgetUsd?: string;
  json?: boolean;
}

export interface TenantShowOptions extends TenantStoreOptions {
  json?: boolean;
}

/** `default` → null (the deployment's); anything else through `value`. */
const orDefault = <T extends z.ZodType>(value: T) =>
  z.union([z.literal('default').transform(() => null), value]);

/** `--quota-bytes`: a size of at least 1 byte, or `default`. */
const QuotaOption = orDefault(
  z
    .string()
    .transform((text) => parseByteSize(text))
    .pipe(z.number().int().min(1)),
);
/** `--rate-limit`: whole requests a minute per token, 0 to MAX_RATE_LIMIT_PER_MINUTE, or `default`. */
const RateOption = orDefault(
  z
    .string()
    .regex(/^\d{1,7}$/)
    .transform(Number)
    .pipe(z.number().max(MAX_RATE_LIMIT_PER_MINUTE)),
);

/** `--monthly-budget-usd`: a positive amount of US dollars (cents at most), or `default` (none). */
const BudgetOption = orDefault(
  z
    .string()
    .regex(/^\d{1,10}(?:\.\d{1,2})?$/)
    .transform(Number)
    .pipe(z.number().positive().max(MAX_MONTHLY_BUDGET_USD)),
);

const AFTER_SET = `
Examples:
  hansard tenant set acme --quota-bytes 50GiB --table hansard-state --region eu-west-1
  hansard tenant set acme --rate-limit 1200 --data ./.hansard
  hansard tenant set acme --quota-bytes default --rate-limit default --data ./.hansard
  hansard tenant set acme --monthly-budget-usd 500 --data ./.hansard
SIZE: bytes, or a size such as 500MiB, 10GiB, 1TiB. N: requests a minute per token (the session tokens
minted from it included), 0 for none limited. default: the deployment's value again (hansard serve
--quota-bytes / --rate-limit; TENANT_QUOTA_BYTES / RATE_LIMIT_PER_MINUTE on AWS). A deployment that turns
the rate limit off (--rate-limit 0) limits no tenant. --monthly-budget-usd: US dollars a month at list price
(hansard usage); crossing 80 % and 100 % is recorded once a month as an event; default: no budget. A running server applies a change within
${DEFAULT_LIMITS.tenantSettingsMaxAgeMs / 1000} s. docs/operations.md, "Per-tenant limits".`;

const AFTER_SHOW = `
Examples:
  hansard tenant show acme --table hansard-state --region eu-west-1
  hansard tenant show acme --data ./.hansard --json
"the deployment's": no value of its own; the server's --quota-bytes / --rate-limit apply.`;

/** Adds `tenant set` and `tenant show` to the `tenant` command. */
export function registerTenantLimits(tenant: Command, io: Io): void {
  storeOptions(
    tenant
      .command('set <name>')
      .description("set a tenant's own storage quota and per-token rate limit (default: the deployment's)")
      .option('--quota-bytes <size>', 'bytes of segments the tenant may store, e.g. 50GiB, or default')
      .option('--rate-limit <n>', 'requests a minute per token of the tenant (0: none limited), or default')
      .option('--monthly-budget-usd <n>', 'a monthly budget in US dollars at list price, or default (none)'),
  )
    .addOption(jsonOption())
    .addHelpText('after', AFTER_SET)
    .action((name: string, o: TenantSetOptions) => setTenant(name, o, io));
  storeOptions(
    tenant.command('show <name>').description("print a tenant's own limits (null / the deployment's: none)"),
  )
    .addOption(jsonOption())
    .addHelpText('after', AFTER_SHOW)
    .action((name: string, o: TenantShowOptions) => showTenant(name, o, io));
}

/**
 * Applies `--quota-bytes` and `--rate-limit` to tenant `name` and prints its settings after the change
 * (stdout; `--json`: `{tenant, quota_bytes, rate_limit_per_minute, updated_at}`, null for the
 * deployment's).
 * @throws UsageError (exit 2) for an invalid name, options or value, neither option given, or no such
 *   tenant (nothing is written then)
 * @throws ExitError (exit 1) when AWS refuses (no table, no credentials, access denied), after saying why
 */
export async function setTenant(name: string, o: TenantSetOptions, io: Io): Promise<void> {
  const change = changeOf(o);
  requireTenantStore(name, o);
  const settings = await withStore(o, io, (store) =>
    store.setSettings(name, change, new Date().toISOString()),
  );
  if (!settings) throw noTenant(name, o);
  print(io, name, settings, o.json);
  if (!o.json) {
    io.stderr.write(
      `a running server applies this within ${DEFAULT_LIMITS.tenantSettingsMaxAgeMs / 1000} s\n`,
    );
  }
}

/**
 * Prints tenant `name`'s own limits (stdout; `--json` as `setTenant`'s).
 * @throws UsageError (exit 2) for an invalid name or options, or no such tenant
 * @throws ExitError (exit 1) when AWS refuses, after saying why
 */
export async function showTenant(name: string, o: TenantShowOptions, io: Io): Promise<void> {
  requireTenantStore(name, o);
  const settings = await withStore(o, io, (store) => store.getSettings(name));
  if (!settings) throw noTenant(name, o);
  print(io, name, settings, o.json);
}

/** The change the options ask for. @throws UsageError for a bad value or none given */
function changeOf(o: TenantSetOptions): TenantSettingsChange {
  if (o.quotaBytes === undefined && o.rateLimit === undefined && o.monthlyBudgetUsd === undefined) {
    throw new UsageError(
      'say what to set: --quota-bytes SIZE|default, --rate-limit N|default, --monthly-budget-usd N|default, or several',
    );
  }
  const change: TenantSettingsChange = {};
  if (o.quotaBytes !== undefined) {
    const q = QuotaOption.safeParse(o.quotaBytes.trim());
    if (!q.success) {
      throw new UsageError(
        `--quota-bytes ${o.quotaBytes} is not a size: give bytes (1048576), a size such as 500MiB or 10GiB, or default (the deployment's quota)`,
      );
    }
    change.quota_bytes = q.data;
  }
  if (o.rateLimit !== undefined) {
    const r = RateOption.safeParse(o.rateLimit.trim());
    if (!r.success) {
      throw new UsageError(
        `--rate-limit ${o.rateLimit} is not a number of requests per minute: give 0 to ${MAX_RATE_LIMIT_PER_MINUTE} (0: none limited) or default (the deployment's limit)`,
      );
    }
    change.rate_limit_per_minute = r.data;
  }
  if (o.monthlyBudgetUsd !== undefined) {
    const b = BudgetOption.safeParse(o.monthlyBudgetUsd.trim());
    if (!b.success) {
      throw new UsageError(
        `--monthly-budget-usd ${o.monthlyBudgetUsd} is not an amount of US dollars: give one above 0 (500, 1250.50) up to ${MAX_MONTHLY_BUDGET_USD}, or default (no budget)`,
      );
    }
    change.monthly_budget_usd = b.data;
  }
  return change;
}

/** Runs `fn` on the store the options name and closes it; AWS refusals said in words (`awsFailure`). */
async function withStore<T>(
  o: TenantStoreOptions,
  io: Io,
  fn: (store: TenantAdmin) => Promise<T>,
): Promise<T> {
  const store = await openTenantStore(o, io);
  try {
    return await fn(store);
  } catch (err) {
    throw awsFailure(err, o, io);
  } finally {
    await store.close();
  }
}

function noTenant(name: string, o: TenantStoreOptions): UsageError {
  return new UsageError(
    `there is no tenant ${name} in ${storeName(o)}: nothing was changed (create it with hansard tenant create ${name})`,
    'no_such_tenant',
  );
}

function print(io: Io, name: string, s: TenantSettings, json: boolean | undefined): void {
  if (json) {
    printJson(io, { tenant: name, ...s });
    return;
  }
  const quota =
    s.quota_bytes === null
      ? "the deployment's"
      : `${formatByteSize(s.quota_bytes)} (${s.quota_bytes} bytes), its own`;
  const rate =
    s.rate_limit_per_minute === null
      ? "the deployment's"
      : s.rate_limit_per_minute === 0
        ? 'none (its tokens are not limited), its own'
        : `${s.rate_limit_per_minute} requests a minute per token, its own`;
  // the budget line only when one is set (there is no deployment budget to name)
  const budget =
    s.monthly_budget_usd === undefined
      ? ''
      : `  budget:        $${s.monthly_budget_usd} a month (list price)\n`;
  io.stdout.write(
    `tenant ${name}\n  storage quota: ${quota}\n  rate limit:    ${rate}\n${budget}  set at:        ${s.updated_at ?? 'never'}\n`,
  );
}

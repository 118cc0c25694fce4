/**
 * The settings a search transaction starts with (issue 30 items 4 and 6), written once for both runners
 * (lib/store/postgres/pg-runner.ts and data-api-runner.ts; this module imports neither `pg` nor the AWS
 * SDK, so each runner's bundle holds only its own client): the tenant row-level security admits, and the
 * statement time limit, each `set_config(…, true)`, for the transaction only.
 */
import type { SqlParams } from './runner.js';

/** `statement_timeout`'s value for `ms` (whole ms, at least 1: 0 would mean no limit). */
export function timeoutSetting(ms: number): string {
  return String(Math.max(1, Math.ceil(ms)));
}

/**
 * The statement setting them, with `:tenant` (and `:timeout`) parameters. Without a limit the server's
 * (or the role's) own `statement_timeout` stays in force.
 * @example transactionSettings('acme', 3000) → { sql: "SELECT set_config('hansard.tenant', :tenant, true), …", params: { tenant: 'acme', timeout: '3000' } }
 */
export function transactionSettings(tenant: string, timeoutMs?: number): { sql: string; params: SqlParams } {
  if (timeoutMs === undefined) {
    return { sql: "SELECT set_config('hansard.tenant', :tenant, true)", params: { tenant } };
  }
  return {
    sql: "SELECT set_config('hansard.tenant', :tenant, true), set_config('statement_timeout', :timeout, true)",
    params: { tenant, timeout: timeoutSetting(timeoutMs) },
  };
}

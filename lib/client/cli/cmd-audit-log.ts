/**
 * `hansard audit-log [--limit N]` (issue 29 item 4; docs/sign-in.md): the tenant's audit list, newest
 * first (who created or revoked a token, set up alerts or sign-in, changed a person), through the
 * server's `/v1/audit-log` with an admin token (lib/client/api/sign-in.ts).
 */
import type { Command } from 'commander';
import type { AuditEntryView } from '../../contract/sign-in.js';
import { escapeControl } from '../../log/format/escape.js';
import { clientFrom, retryNotice } from '../api/config.js';
import { UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { SignInApi } from '../api/sign-in.js';
import { jsonOption } from './options.js';

export interface AuditLogOptions {
  server?: string;
  token?: string;
  json?: boolean;
  limit: string;
}

export function registerAuditLog(program: Command, io: Io): void {
  program
    .command('audit-log')
    .description('what people and tokens did in the tenant, newest first (admin token)')
    .option('--limit <n>', 'how many entries, 1 to 200', '50')
    .option('--server <url>', 'hansard server URL (env HANSARD_URL)')
    .option('--token <token>', 'admin token (env HANSARD_TOKEN)')
    .addOption(jsonOption())
    .addHelpText(
      'after',
      `
Examples:
  hansard audit-log
  hansard audit-log --limit 200 --json

Each line: when, who (a signed-in person's email, or token:tok_…), the action (token.create,
token.revoke, alert.add|remove|rotate|test, oidc.set|remove, person.set), what it acted on, a short
detail, and where it was asked (board or api). Entries are kept 400 days.`,
    )
    .action((o: AuditLogOptions) => auditLog(o, io));
}

/** Who did it, in a word. */
function actor(e: AuditEntryView): string {
  return e.actor.kind === 'person' ? e.actor.email : `token:${e.actor.token_id}`;
}

/** `hansard audit-log`: one line an entry (escaped), or the page as JSON. @throws UsageError for a bad --limit */
export async function auditLog(o: AuditLogOptions, io: Io): Promise<void> {
  if (!/^\d{1,3}$/.test(o.limit) || Number(o.limit) < 1 || Number(o.limit) > 200) {
    throw new UsageError(`--limit ${o.limit} is not a number from 1 to 200`);
  }
  const sign = new SignInApi(
    clientFrom({ url: o.server, urlFlag: '--server', token: o.token }, io.env, retryNotice(io)),
  );
  const { entries } = await sign.listAudit(Number(o.limit));
  if (o.json) return printJson(io, entries);
  if (entries.length === 0) {
    io.stdout.write('the audit list is empty\n');
    return;
  }
  for (const e of entries) {
    const row = `${e.at}  ${actor(e)}  ${e.action.padEnd(13)}  ${e.target || '(tenant)'}  ${e.detail ?? ''}  [${e.via}]`;
    io.stdout.write(`${escapeControl(row)}\n`);
  }
}

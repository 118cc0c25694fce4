/**
 * `hansard usage [SID|DIR] [--by turn|writer|agent|person|model|day] [--from ISO --to ISO] [--json]
 * [--recompute]` (issue 27 item 3, docs/usage.md): token usage and list-price cost of a local session
 * directory (folded here: lib/log/analyse/usage), of a stored session (`GET /v1/sessions/{sid}/usage`),
 * or of the tenant (`GET /v1/usage`); `--recompute` has the server count again from its segments.
 */
import type { Command } from 'commander';
import {
  foldSessionDir,
  GROUP_BY,
  type GroupBy,
  reportOf,
  type UsageReport,
  type UsageTotal,
} from '../../log/analyse/usage/index.js';
import { escapeControl } from '../../log/format/escape.js';
import { clientFrom, retryNotice } from '../api/config.js';
import { UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { jsonOption } from './options.js';
import { sessionTarget } from './session-target.js';

/** The options of `hansard usage`, as commander parses them. */
export interface UsageOptions {
  by?: string;
  from?: string;
  to?: string;
  json?: boolean;
  recompute?: boolean;
  url?: string;
  token?: string;
}

/** What a tenant's usage may be grouped by (`GET /v1/usage?group_by=`). */
const TENANT_BY = ['day', 'agent', 'person', 'model'] as const;

/** `GET /v1/usage`'s answer, as far as the CLI prints it. */
interface TenantAnswer {
  from: string;
  to: string;
  group_by: string;
  total: UsageTotal;
  groups: (UsageTotal & { key: string })[];
  price_data: string;
  cost_basis: string;
  budget: {
    monthly_usd: number;
    month: string;
    month_cost_usd: number;
    percent: number;
    crossed: number[];
  } | null;
}

const AFTER = `
Examples:
  hansard usage ./sessions/s_01J…                 a local session directory, counted here (no server)
  hansard usage s_01J… --by turn                  a stored session, per turn (token with read)
  hansard usage s_01J… --json                     {total, by_model, price_data, cost_basis}
  hansard usage                                   the tenant this month, by day
  hansard usage --by model --from 2026-11-01 --to 2026-11-30
  hansard usage --recompute                       count every stored session again (admin token)
  hansard usage s_01J… --recompute                the same for one session

Costs are list-price equivalents: what the tokens would cost at the provider's published API price on
the day (@pydantic/genai-prices, named in every answer), not what anyone paid; subscriptions are billed
otherwise. A turn no usage was reported for is unknown, never zero: the totals are then a lower bound,
and the output says how many. A tenant's usage groups by day, agent, person or model; a session's also
by turn and writer. --from/--to are UTC days (ISO 8601); a tenant's range is at most 366 days.
Every counting rule and what stays unknown: docs/usage.md.`;

export function registerUsage(program: Command, io: Io): void {
  program
    .command('usage')
    .description('token usage and list-price cost of a session (directory or id) or of the tenant')
    .argument('[session]', 'a session directory, or a session id (s_…) on the server; none: the tenant')
    .option('--by <group>', `group by ${GROUP_BY.join(', ')}`)
    .option('--from <iso>', 'first UTC day counted (ISO 8601 date or date-time)')
    .option('--to <iso>', 'last UTC day counted, inclusive')
    .option('--recompute', 'have the server count its stored segments again (admin token), then print')
    .option('--url <url>', 'server URL (env HANSARD_URL)')
    .option('--token <token>', 'token with the read scope, admin for --recompute (env HANSARD_TOKEN)')
    .addOption(jsonOption())
    .addHelpText('after', AFTER)
    .action((target: string | undefined, o: UsageOptions) => usage(target, o, io));
}

function groupOf(by: string | undefined, allowed: readonly string[], what: string): GroupBy | undefined {
  if (by === undefined) return undefined;
  if (!allowed.includes(by)) throw new UsageError(`--by ${by}: ${what} groups by ${allowed.join(', ')}`);
  return by as GroupBy;
}

/**
 * The UTC day of `--from`/`--to` (an ISO 8601 date or date-time), as the server reads it
 * (lib/service/usage/tenant.ts `dayOfIso`): a day its month lacks or outside 0000-9999 is no date.
 */
function dayOf(flag: string, v: string | undefined): string | undefined {
  if (v === undefined) return undefined;
  const bad = () => new UsageError(`${flag} ${v} is not an ISO 8601 date (2026-12-01) or date-time`);
  if (!/^\d{4}-\d{2}-\d{2}(?:T[\d:.]+(?:Z|[+-]\d{2}:\d{2}))?$/.test(v)) throw bad();
  const date = Date.parse(`${v.slice(0, 10)}T00:00:00Z`);
  if (Number.isNaN(date) || new Date(date).toISOString().slice(0, 10) !== v.slice(0, 10)) throw bad();
  const t = Date.parse(v.length === 10 ? `${v}T00:00:00Z` : v);
  if (Number.isNaN(t)) throw bad();
  const day = new Date(t).toISOString().slice(0, 10);
  if (!/^\d{4}-\d{2}-\d{2}$/.test(day)) throw bad();
  return day;
}

/**
 * `hansard usage [target]`: prints a session's or the tenant's usage as a table, or as JSON (`--json`:
 * the API's answer; for a directory the same `UsageReport` shape the server answers for a session).
 * @throws UsageError (exit 2) for a bad `--by`, date, or `--recompute` of a directory; ServerError /
 *   NetworkError from the server
 */
export async function usage(target: string | undefined, o: UsageOptions, io: Io): Promise<void> {
  const from = dayOf('--from', o.from);
  const to = dayOf('--to', o.to);
  if (from && to && from > to) throw new UsageError(`--from ${from} is after --to ${to}: nothing to count`);
  if (target === undefined) {
    const by = groupOf(o.by, TENANT_BY, "a tenant's usage");
    const client = clientFrom(o, io.env, retryNotice(io));
    if (o.recompute) printRecompute(io, o, (await client.request('POST', '/v1/usage/recompute')).body);
    const q = new URLSearchParams();
    if (by) q.set('group_by', by);
    if (from) q.set('from', from);
    if (to) q.set('to', to);
    const path = `/v1/usage${q.size ? `?${q}` : ''}`;
    const answer = (await client.request('GET', path)).body as TenantAnswer;
    if (o.json) printJson(io, answer);
    else printTenant(io, answer);
    return;
  }
  const by = groupOf(o.by, GROUP_BY, "a session's usage");
  const t = sessionTarget(target, io.cwd);
  let report: UsageReport & { uncounted_writers?: string[] };
  if (t.kind === 'dir') {
    if (o.recompute)
      throw new UsageError('--recompute is for the server: a directory is always counted afresh');
    const { deltas } = await foldSessionDir(t.dir);
    const kept = from || to ? deltas.filter((d) => (!from || d.day >= from) && (!to || d.day <= to)) : deltas;
    report = reportOf(kept, by);
  } else {
    const client = clientFrom(o, io.env, retryNotice(io));
    if (o.recompute) {
      const done = await client.request('POST', `/v1/usage/recompute?sid=${encodeURIComponent(t.sid)}`);
      printRecompute(io, o, done.body);
    }
    const q = new URLSearchParams();
    if (by) q.set('by', by);
    if (from) q.set('from', from);
    if (to) q.set('to', to);
    const path = `/v1/sessions/${t.sid}/usage${q.size ? `?${q}` : ''}`;
    report = (await client.request('GET', path)).body as UsageReport;
  }
  if (o.json) printJson(io, report);
  else printSession(io, report);
}

/** `$1.2345`, or `unknown` (no record priced). */
export function money(usd: number | null): string {
  return usd === null ? 'unknown' : `$${usd.toFixed(4)}`;
}

function n(v: number): string {
  return v.toLocaleString('en-US');
}

/**
 * A table of totals, one row each: label, input, output, cache read, cache write, cost, and (unless
 * grouped by model, which turns have none of) turns. A row of turns only, none of which reported usage,
 * shows its tokens as `?`: unknown, not zero.
 */
function table(rows: [string, UsageTotal][], head: string): string {
  const turns = head !== 'model';
  const cells = [
    [head, 'input', 'output', 'cache read', 'cache write', 'cost', ...(turns ? ['turns'] : [])],
    ...rows.map(([label, t]) => {
      const unknown = t.records === 0 && t.unknown_turns > 0;
      const tok = (v: number) => (unknown ? '?' : n(v));
      return [
        escapeControl(label),
        tok(t.input_tokens),
        tok(t.output_tokens),
        tok(t.cache_read_tokens),
        tok(t.cache_write_tokens),
        money(t.cost_usd),
        ...(turns ? [`${n(t.turns)}${t.unknown_turns ? ` (${n(t.unknown_turns)} unknown)` : ''}`] : []),
      ];
    }),
  ];
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((r) => r[i]!.length)));
  return cells
    .map((r) =>
      r
        .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

/** What the totals rest on and what they lack, in words. */
function notes(t: UsageTotal, priceData: string, basis: string): string[] {
  const out = [`cost: ${basis}; prices: ${priceData}`];
  if (t.unknown_turns > 0)
    out.push(`${t.unknown_turns} of ${t.turns} turns reported no usage: totals are a lower bound`);
  if (t.unpriced_records > 0)
    out.push(
      `${t.unpriced_records} of ${t.records} usage records have no list price (model unknown to the price table, or figures missing): not in the cost`,
    );
  if (t.reported_cost_usd !== null)
    out.push(`cost the vendors reported themselves: ${money(t.reported_cost_usd)} (kept apart, never added)`);
  return out;
}

function printSession(io: Io, r: UsageReport & { uncounted_writers?: string[] }): void {
  const rows: [string, UsageTotal][] = [
    ['total', r.total],
    ...r.by_model.map((m): [string, UsageTotal] => [m.model, m]),
  ];
  io.stdout.write(`${table(rows, 'model')}\n`);
  if (r.by && r.groups) {
    io.stdout.write(
      `\n${table(
        r.groups.map((g): [string, UsageTotal] => [g.key, g]),
        r.by,
      )}\n`,
    );
  }
  io.stdout.write(`\n${notes(r.total, r.price_data, r.cost_basis).join('\n')}\n`);
  if (r.uncounted_writers?.length)
    io.stdout.write(
      `${r.uncounted_writers.length} writer(s) were stored before usage was counted and are not in these totals: hansard usage SID --recompute (admin token)\n`,
    );
}

function printTenant(io: Io, a: TenantAnswer): void {
  io.stdout.write(`tenant usage ${a.from} to ${a.to}\n`);
  const rows: [string, UsageTotal][] = [
    ...a.groups.map((g): [string, UsageTotal] => [g.key, g]),
    ['total', a.total],
  ];
  io.stdout.write(`${table(rows, a.group_by)}\n\n${notes(a.total, a.price_data, a.cost_basis).join('\n')}\n`);
  if (a.budget) {
    const b = a.budget;
    io.stdout.write(
      `budget ${b.month}: ${money(b.month_cost_usd)} of $${b.monthly_usd} (${b.percent} %)${b.crossed.length ? `; crossed ${b.crossed.map((l) => `${l} %`).join(' and ')}` : ''}\n`,
    );
  }
}

function printRecompute(io: Io, o: UsageOptions, body: unknown): void {
  const r = body as { sessions: number; writers: number; changed_writers: number; changed_buckets: number };
  // with --json the one JSON document on stdout is the usage; the recompute is said on stderr
  const out = o.json ? io.stderr : io.stdout;
  out.write(
    `recomputed ${r.sessions} session(s), ${r.writers} writer(s): ${r.changed_writers} writer(s) changed (${r.changed_buckets} bucket(s) moved)\n`,
  );
}

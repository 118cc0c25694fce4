/**
 * `hansard alerts add|list|remove|rotate|test|deliveries` (issue 28 item 2, docs/alerts.md): a tenant's
 * alert targets on the server (an admin token), through `/v1/alerts` (lib/client/api/alerts.ts). The
 * server is `--server` (or HANSARD_URL): `--url` is the target's own address here.
 */
import { type Command, Option } from 'commander';
import {
  ALERT_FORMATS,
  ALERT_KINDS,
  type AlertDeliveryView,
  type AlertFormat,
  type AlertKind,
  type AlertTargetCreated,
  type AlertTargetView,
  MAX_AFTER_SECONDS,
  MAX_GRACE_SECONDS,
} from '../../contract/alerts.js';
import { escapeControl } from '../../log/format/escape.js';
import { AlertsApi } from '../api/alerts.js';
import { clientFrom, retryNotice } from '../api/config.js';
import { FailureError, UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import { durationSeconds, shortDuration } from './duration.js';
import { jsonOption } from './options.js';

/** How long `alerts test --wait` waits for the test's delivery, and how often it looks, ms. */
export const TEST_WAIT_MS = 15_000;
const TEST_POLL_MS = 250;

const HELP = `
Examples:
  hansard alerts add --url https://hooks.example.com/hansard --events session.blocked,record.damaged
  hansard alerts add --url https://hooks.slack.com/services/T…/B…/… --format slack --after 10m
  hansard alerts add --url https://ops.example.com/hook --agent claude-code --agent codex --label ops
  hansard alerts list
  hansard alerts test at_01J… --wait        send a test event and wait up to 15 s for its delivery
  hansard alerts deliveries at_01J…         the last deliveries: status, attempts, next try, last error
  hansard alerts rotate at_01J… --grace 1h  a new secret; the old one still signs for an hour
  hansard alerts remove at_01J…

Event kinds: ${ALERT_KINDS.slice(0, 4).join(', ')},
  ${ALERT_KINDS.slice(4).join(', ')}.
Each delivery is a POST signed as Standard Webhooks specifies (webhook-id, webhook-timestamp,
webhook-signature) with the target's whsec_ secret, printed once by add and rotate. A receiver checks
it with the standardwebhooks package: new Webhook(secret).verify(rawBody, headers). Failed deliveries
are retried with backoff for a day, then kept as dead. A target on a loopback, link-local or private
address is refused unless the server runs with --allow-private-alert-targets.
Needs an admin token (--token or HANSARD_TOKEN); the server is --server or HANSARD_URL.
What each event means, the payloads and a verifying receiver: docs/alerts.md.`;

/** The options every `alerts` subcommand takes. */
export interface AlertServerOptions {
  /** the hansard server (env HANSARD_URL) */
  server?: string;
  token?: string;
  json?: boolean;
}

export function registerAlerts(program: Command, io: Io): void {
  const alerts = program
    .command('alerts')
    .description('signed webhooks when an agent is blocked, a claim fails, a record is damaged (admin token)')
    .addHelpText('after', HELP);
  const common = (c: Command) =>
    c
      .option('--server <url>', 'hansard server URL (env HANSARD_URL)')
      .option('--token <token>', 'admin token (env HANSARD_TOKEN)')
      .addOption(jsonOption());

  common(
    alerts
      .command('add')
      .description('add a target: a URL that gets a signed POST for each event its rule matches')
      .requiredOption('--url <url>', 'the target: https://… (http:// too) that takes a POST')
      .option('--events <kinds>', `comma-separated event kinds (default all): ${ALERT_KINDS.join(', ')}`)
      .addOption(
        new Option('--agent <name>', "only sessions of this agent (repeatable; the writers' agent name)")
          .argParser(collect)
          .default([], 'any'),
      )
      .option('--after <duration>', 'send a session state only once it has held this long (e.g. 10m; max 1d)')
      .addOption(
        new Option('--format <format>', 'standard (Standard Webhooks JSON) or slack (incoming webhook)')
          .choices(ALERT_FORMATS)
          .default('standard'),
      )
      .option('--label <text>', 'a name to recognise it by'),
  )
    .addHelpText(
      'after',
      `
Examples:
  hansard alerts add --url https://hooks.example.com/hansard
  SECRET=$(hansard alerts add --url https://hooks.example.com/hansard --events session.blocked --after 10m)
  hansard alerts add --url https://hooks.slack.com/services/T…/B…/… --format slack --label team-channel

The secret (whsec_…) is printed on stdout, once: the server keeps it sealed and never shows it again.
--after holds session.blocked, needs_review, done and work.unknown back: sent only if the state still
holds then, and skipped otherwise (the other kinds go at once). docs/alerts.md.`,
    )
    .action((o: AlertAddOptions) => addAlert(o, io));

  common(alerts.command('list').description("list the tenant's targets and their rules (never a secret)"))
    .addHelpText('after', '\nExample:\n  hansard alerts list --json')
    .action((o: AlertServerOptions) => listAlerts(o, io));

  common(alerts.command('remove <id>').description('remove a target (at_…) and its deliveries'))
    .addHelpText('after', '\nExample:\n  hansard alerts remove at_01J…   (ids: hansard alerts list)')
    .action((id: string, o: AlertServerOptions) => removeAlert(id, o, io));

  common(
    alerts
      .command('rotate <id>')
      .description('give a target a new signing secret, printed once; the old one signs on for --grace')
      .option(
        '--grace <duration>',
        'how long the previous secret still signs too (default 1d, max 7d; 0: not)',
      ),
  )
    .addHelpText(
      'after',
      `
Example:
  hansard alerts rotate at_01J… --grace 1h

Until the grace ends every delivery carries two signatures, one per secret: switch the receiver to the
new secret meanwhile (the standardwebhooks package accepts a delivery whose signatures include one of its secret).`,
    )
    .action((id: string, o: AlertRotateOptions) => rotateAlert(id, o, io));

  common(
    alerts
      .command('test <id>')
      .description('send a target a test event (alert.test), signed and retried like any other')
      .option('--wait', `wait up to ${TEST_WAIT_MS / 1000} s for its delivery and say how it went`),
  )
    .addHelpText(
      'after',
      `
Example:
  hansard alerts test at_01J… --wait
With --wait: exit 0 once it is delivered, 1 when the attempt failed (the last error is printed; the
server retries it on its own) or nothing was attempted in ${TEST_WAIT_MS / 1000} s.`,
    )
    .action((id: string, o: AlertTestOptions) => testAlert(id, o, io));

  common(
    alerts
      .command('deliveries <id>')
      .description("a target's last deliveries, newest first: status, attempts, next try, last error")
      .option('--limit <n>', 'how many, 1 to 200', '50'),
  )
    .addHelpText(
      'after',
      `
Example:
  hansard alerts deliveries at_01J… --limit 10
Status: pending (waiting, or retrying at the next try), delivered, dead (given up after a day of
retries), skipped (the state ended before the rule's --after).`,
    )
    .action((id: string, o: AlertDeliveriesOptions) => alertDeliveries(id, o, io));
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

function api(o: AlertServerOptions, io: Io): AlertsApi {
  return new AlertsApi(
    clientFrom({ url: o.server, urlFlag: '--server', token: o.token }, io.env, retryNotice(io)),
  );
}

/** An `at_…` id as the server takes it; anything else (a URL, a secret) is refused before a request. */
function targetId(id: string): string {
  if (!/^at_[0-9A-HJKMNP-TV-Z]{26}$/.test(id)) {
    throw new UsageError(
      `${JSON.stringify(id.slice(0, 80))} is not an alert target id: give at_… as hansard alerts list shows it`,
    );
  }
  return id;
}

/** The options of `hansard alerts add`, as commander parses them. */
export interface AlertAddOptions extends AlertServerOptions {
  url: string;
  events?: string;
  agent: string[];
  after?: string;
  format: AlertFormat;
  label?: string;
}

/**
 * `hansard alerts add`: the new target; its secret on stdout, once (all of it with `--json`), what it is
 * and how a receiver checks it on stderr.
 * @throws UsageError (exit 2) for an unknown event kind or a bad `--after`
 */
export async function addAlert(o: AlertAddOptions, io: Io): Promise<void> {
  const events = (o.events ?? '')
    .split(',')
    .map((k) => k.trim())
    .filter(Boolean);
  const unknown = events.filter((k) => !(ALERT_KINDS as readonly string[]).includes(k));
  if (unknown.length) {
    throw new UsageError(`unknown event kind ${unknown.join(', ')}: use ${ALERT_KINDS.join(', ')}`);
  }
  const after = o.after === undefined ? undefined : durationSeconds('--after', o.after, MAX_AFTER_SECONDS);
  const created = await api(o, io).add({
    url: o.url,
    events: events as AlertKind[],
    agents: o.agent,
    format: o.format,
    ...(after !== undefined ? { after_seconds: after } : {}),
    ...(o.label !== undefined ? { label: o.label } : {}),
  });
  if (o.json) return printJson(io, created);
  io.stdout.write(`${created.secret}\n`);
  io.stderr.write(
    `${escapeControl(`alert target ${created.id} added: ${describe(created)}`)}\n` +
      `Its signing secret, above, is shown once: keep it with the receiver, which verifies each delivery with\n` +
      `new Webhook(secret).verify(rawBody, headers) (the standardwebhooks package; docs/alerts.md).\n` +
      `Try it: hansard alerts test ${created.id} --wait\n`,
  );
}

/** A target's rule in words: `https://… (standard; events: all; agents: any; after 10m)`. */
function describe(t: AlertTargetView): string {
  const rule = [
    t.format,
    `events: ${t.events.length ? t.events.join(',') : 'all'}`,
    `agents: ${t.agents.length ? t.agents.join(',') : 'any'}`,
    ...(t.after_seconds ? [`after ${shortDuration(t.after_seconds)}`] : []),
  ];
  return `${t.url} (${rule.join('; ')})${t.label ? ` "${t.label}"` : ''}`;
}

/** `hansard alerts list`: one line per target (never a secret), or the API's list as JSON. */
export async function listAlerts(o: AlertServerOptions, io: Io): Promise<void> {
  const targets = await api(o, io).list();
  if (o.json) return printJson(io, targets);
  if (targets.length === 0) {
    io.stderr.write('no alert targets: add one with hansard alerts add --url URL\n');
    return;
  }
  for (const t of targets) {
    const grace = t.previous_secret_until ? `; previous secret signs until ${t.previous_secret_until}` : '';
    // A label and a URL are whatever an admin typed: escaped, so neither can move the cursor or forge a row.
    io.stdout.write(`${escapeControl(`${t.id}  ${describe(t)}${grace}`)}\n`);
  }
}

/** `hansard alerts remove ID`. */
export async function removeAlert(id: string, o: AlertServerOptions, io: Io): Promise<void> {
  await api(o, io).remove(targetId(id));
  if (o.json) return printJson(io, { id, removed: true });
  io.stderr.write(`removed alert target ${id}\n`);
}

/** The options of `hansard alerts rotate`, as commander parses them. */
export interface AlertRotateOptions extends AlertServerOptions {
  grace?: string;
}

/** `hansard alerts rotate ID [--grace 1h]`: the new secret on stdout, once. */
export async function rotateAlert(id: string, o: AlertRotateOptions, io: Io): Promise<void> {
  const grace = o.grace === undefined ? undefined : durationSeconds('--grace', o.grace, MAX_GRACE_SECONDS);
  const rotated: AlertTargetCreated = await api(o, io).rotate(targetId(id), grace);
  if (o.json) return printJson(io, rotated);
  io.stdout.write(`${rotated.secret}\n`);
  io.stderr.write(
    `new signing secret of ${id}, above, shown once; ${
      rotated.previous_secret_until
        ? `the previous one still signs until ${rotated.previous_secret_until}: switch the receiver before then`
        : 'the previous one signs no more'
    }\n`,
  );
}

/** The options of `hansard alerts test`, as commander parses them. */
export interface AlertTestOptions extends AlertServerOptions {
  wait?: boolean;
}

/**
 * `hansard alerts test ID [--wait]`: queues a test event; with `--wait`, polls the target's deliveries
 * for it up to `TEST_WAIT_MS` and says how its first attempt went.
 * @throws FailureError (exit 1) with `--wait` when the attempt failed, the delivery was given up or
 *   skipped, or nothing was attempted in time
 */
export async function testAlert(id: string, o: AlertTestOptions, io: Io): Promise<void> {
  const alerts = api(o, io);
  const eventId = await alerts.test(targetId(id));
  if (!o.wait) {
    if (o.json) return printJson(io, { event_id: eventId });
    io.stdout.write(`${eventId}\n`);
    io.stderr.write(`test event queued for ${id}: hansard alerts deliveries ${id} shows how it went\n`);
    return;
  }
  const deadline = Date.now() + TEST_WAIT_MS;
  let seen: AlertDeliveryView | undefined;
  let listed: AlertDeliveryView[] = [];
  for (;;) {
    listed = await alerts.deliveries(id, 50);
    seen = listed.find((d) => d.event_id === eventId);
    if (seen && (seen.status !== 'pending' || seen.attempts > 0)) break;
    if (Date.now() >= deadline) break;
    await new Promise((r) => setTimeout(r, TEST_POLL_MS));
  }
  if (o.json) printJson(io, { event_id: eventId, delivery: seen ?? null });
  if (seen?.status === 'delivered') {
    if (!o.json)
      io.stdout.write(`delivered ${eventId} to ${id} (HTTP ${seen.last_status}, ${attempts(seen)})\n`);
    return;
  }
  throw new FailureError(escapeControl(notDelivered(id, eventId, seen, listed)));
}

/** Why a test event is not (yet) delivered, in a sentence (exported for its test). */
export function notDelivered(
  id: string,
  eventId: string,
  d: AlertDeliveryView | undefined,
  others: AlertDeliveryView[],
): string {
  // Tenant-wide events to one target go in order: a test waits behind one that is being retried.
  const ahead = others.find(
    (x) => x.event_id !== eventId && x.sid === null && x.status === 'pending' && x.attempts > 0,
  );
  if (d && d.attempts === 0 && ahead) {
    return (
      `${eventId} waits behind ${ahead.event_id} (${ahead.kind}), which failed (${lastAnswer(ahead)}) and is retried at ${ahead.next_at}: ` +
      `tenant-wide events go to a target in order. hansard alerts deliveries ${id} shows both`
    );
  }
  if (!d || d.attempts === 0) {
    return (
      `no attempt to deliver ${eventId} within ${TEST_WAIT_MS / 1000} s: is the server's alert worker running? ` +
      `(hansard serve runs it; on AWS the delivery function). hansard alerts deliveries ${id} shows it later`
    );
  }
  const why = lastAnswer(d);
  if (d.status === 'pending')
    return `failed to deliver ${eventId} to ${id} (${why}); retried at ${d.next_at} (hansard alerts deliveries ${id})`;
  if (d.status === 'skipped') return `${eventId} was skipped: ${d.skipped_reason ?? 'no reason given'}`;
  return `failed to deliver ${eventId} to ${id}, given up after ${attempts(d)} (${why})`;
}

/** The last attempt's answer in a phrase: the error (which names the HTTP status), or the status alone. */
function lastAnswer(d: AlertDeliveryView): string {
  if (d.last_error) return d.last_error;
  return d.last_status !== null ? `HTTP ${d.last_status}` : 'no answer';
}

const attempts = (d: AlertDeliveryView) => `${d.attempts} attempt${d.attempts === 1 ? '' : 's'}`;

/** The options of `hansard alerts deliveries`, as commander parses them. */
export interface AlertDeliveriesOptions extends AlertServerOptions {
  limit: string;
}

/** `hansard alerts deliveries ID [--limit N]`: newest first, one line each, or the API's list as JSON. */
export async function alertDeliveries(id: string, o: AlertDeliveriesOptions, io: Io): Promise<void> {
  if (!/^\d{1,3}$/.test(o.limit) || Number(o.limit) < 1 || Number(o.limit) > 200) {
    throw new UsageError(`--limit ${o.limit} is not a number from 1 to 200`);
  }
  const list = await api(o, io).deliveries(targetId(id), Number(o.limit));
  if (o.json) return printJson(io, list);
  if (list.length === 0) {
    io.stderr.write(`no deliveries to ${id} yet: hansard alerts test ${id} --wait sends one\n`);
    return;
  }
  for (const d of list) {
    const when =
      d.status === 'delivered'
        ? `delivered ${d.delivered_at}`
        : d.status === 'pending'
          ? d.attempts === 0
            ? `first try ${d.next_at}`
            : `next try ${d.next_at}`
          : d.status === 'skipped'
            ? `skipped: ${d.skipped_reason ?? ''}`
            : 'dead: given up';
    const last = d.attempts > 0 ? `; last: ${lastAnswer(d)}` : '';
    const row = `${d.created_at}  ${d.event_id}  ${d.kind.padEnd(20)}  ${(d.sid ?? '-').padEnd(28)}  ${d.status.padEnd(9)}  ${attempts(d)}, ${when}${last}`;
    io.stdout.write(`${escapeControl(row)}\n`);
  }
}

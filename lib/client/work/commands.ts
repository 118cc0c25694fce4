/**
 * What `hansard work …` does (seed 004, docs/work.md); `lib/client/cli/cmd-work.ts` only parses the flags. Exit
 * codes (DESIGN §6): 0 done; 1 not sent (the server did not answer: the operation is pending, a partial
 * result, not success); 2 usage or refused by the server. Heartbeat and status answer from this machine
 * when the server does not (exit 0, said on stderr).
 */

import type { WorkList, WorkView } from '../../contract/work.js';
import { escapeControl } from '../../log/format/escape.js';
import { type ApiClient, NetworkError, ServerError } from '../api/client.js';
import { ExitError, UsageError } from '../api/errors.js';
import { type Io, printJson } from '../api/io.js';
import {
  forgetItem,
  listItems,
  listPending,
  type PendingOp,
  pendingOf,
  readItem,
  renewLease,
} from './local.js';
import { newOp, type SendOutcome, sendOp } from './send.js';
import { renderRows, type ServerAnswer, type StatusRow, statusRows } from './status.js';

/** Who the operation is for and how to reach the server; `client` is null without a token. */
export interface WorkCtx {
  io: Io;
  state: string;
  client: ApiClient | null;
  json: boolean;
}

export type Owner = { session: string; system: string; actor: string };

/** Sends a new semantic operation (start, checkpoint, wait, stop) and reports it. */
export async function runSemantic(
  ctx: WorkCtx,
  op: PendingOp['op'],
  workId: string | null,
  body: Record<string, unknown>,
): Promise<void> {
  const client = needClient(ctx);
  if (workId) {
    const p = pendingOf(ctx.state, workId);
    if (p) {
      throw new UsageError(
        `${workId} has a ${p.op?.op ?? 'pending operation'} not yet acknowledged (${p.path}): run \`hansard work resume\` first; operations of one item are sent in order`,
      );
    }
  }
  const outcome = await sendOp(client, ctx.state, newOp(op, workId, body), 'direct');
  const code = report(ctx, op, workId, outcome);
  if (code !== 0) throw new ExitError(code);
}

/** Sends every pending operation again exactly (or only `id`'s); exit 0 all done, 1 some unsent, 2 some refused. */
export async function runResume(ctx: WorkCtx, id: string | undefined): Promise<void> {
  const all = listPending(ctx.state).filter((p) => !id || p.path.endsWith(`/${id}.pending.json`));
  if (all.length === 0) {
    if (ctx.json) printJson(ctx.io, { resumed: [] });
    else ctx.io.stdout.write(`nothing pending on this machine${id ? ` for ${id}` : ''}\n`);
    return;
  }
  const client = needClient(ctx);
  let worst = 0;
  const results: unknown[] = [];
  for (const p of all) {
    if (!p.op) {
      ctx.io.stderr.write(`hansard: ${p.path}: ${p.problem}; not sent (delete it to drop it)\n`);
      results.push({ file: p.path, sent: false, problem: p.problem });
      worst = Math.max(worst, 2);
      continue;
    }
    const outcome = await sendOp(client, ctx.state, p.op, 'resume', p.path);
    results.push({ file: p.path, op: p.op.op, work_id: p.op.work_id, ...summary(outcome) });
    worst = Math.max(
      worst,
      report({ ...ctx, json: false, quiet: ctx.json }, p.op.op, p.op.work_id, outcome, true),
    );
    // Unreachable: the others would wait for the same retries; they stay pending.
    if (outcome.kind === 'unsent') break;
  }
  if (ctx.json) printJson(ctx.io, { resumed: results });
  if (worst !== 0) throw new ExitError(worst);
}

/**
 * Renews the lease: on the server when it answers, and always on this machine (the local lease says
 * "observed on this machine" while the server is away; seed 004: heartbeat is local-only and works
 * offline). Unanswered, the lease keeps the owner it named (`work status` lists it by that owner, as not
 * acknowledged), and the answer says the server could not check the item is the caller's. A refusal
 * that says the item is over or not the caller's (`work_stopped`, `not_found`, `not_owner`) forgets
 * what this machine holds of it.
 * @throws UsageError for an item that is closing; ServerError for a refusal
 */
export async function runHeartbeat(
  ctx: WorkCtx,
  id: string,
  owner: Owner,
  ttl: number | undefined,
): Promise<void> {
  const p = pendingOf(ctx.state, id);
  if (p?.op?.op === 'stop') {
    throw new UsageError(
      `${id} is closing: its stop is not yet acknowledged. Run \`hansard work resume\`; a closing item is not renewed (docs/work.md, the harness loop, step 6)`,
    );
  }
  const lease = ttl ?? readItem(ctx.state, id)?.ttl_seconds ?? 900;
  let why: string;
  if (ctx.client) {
    try {
      const res = await ctx.client.request('POST', `/v1/work/${id}/heartbeat`, {
        body: JSON.stringify({ ...owner, ...(ttl ? { ttl_seconds: ttl } : {}) }),
        contentType: 'application/json',
      });
      const v = res.body as WorkView;
      // The lease this heartbeat asked for (--ttl), else the item's: as long as the server's, no longer.
      renewLease(ctx.state, id, ttl ?? v.ttl_seconds ?? lease, Date.now(), true);
      if (ctx.json) return printJson(ctx.io, { sent: true, work: v });
      ctx.io.stdout.write(`${id}: observed, lease renewed until ${v.freshness.lease_expires_at}\n`);
      return;
    } catch (err) {
      if (err instanceof ServerError && err.status < 500) {
        // The server says the item is over or not this caller's: no local lease may claim otherwise.
        if (['work_stopped', 'not_found', 'not_owner'].includes(err.code)) forgetItem(ctx.state, id);
        throw err;
      }
      if (!(err instanceof NetworkError || err instanceof ServerError)) throw err;
      why = err.message;
    }
  } else {
    why = 'no token (set HANSARD_SESSION_TOKEN or HANSARD_TOKEN)';
  }
  // Known here: started or changed from this machine (its item file is the server's acknowledgement).
  const known = readItem(ctx.state, id) !== null;
  const l = renewLease(ctx.state, id, lease, Date.now(), false, known ? undefined : owner);
  ctx.io.stderr.write(
    `hansard: the server was not told (${escapeControl(why)}); the lease is renewed on this machine only\n`,
  );
  const unchecked = known
    ? ''
    : `; not checked: this machine has no record of ${id}, and without the server nobody checked that it exists or that this token may renew it (the server refuses the next heartbeat if not)`;
  if (ctx.json) return printJson(ctx.io, { sent: false, owner_checked: false, local_lease: l });
  ctx.io.stdout.write(`${id}: observed on this machine, lease until ${l.expires_at}${unchecked}\n`);
}

/**
 * Lists the items of `session` (everyone's in it), or of the sessions this machine knows, with their
 * freshness; with `id`, that one item (`GET /v1/work/{id}`), whatever its session: how a user finds the
 * session, system and actor an item was started with (the `work_mismatch` refusal names this command).
 * @throws ServerError for a refusal (an item the server does not know: 404)
 */
export async function runStatus(ctx: WorkCtx, session: string | undefined, id?: string): Promise<void> {
  if (id !== undefined) return statusOfItem(ctx, id);
  const known = new Set<string>();
  if (session) known.add(session);
  else {
    for (const i of listItems(ctx.state)) known.add(i.session);
    for (const p of listPending(ctx.state)) if (p.op) known.add(String(p.op.body.session));
  }
  const answer: ServerAnswer = { items: [], as_of: null, answered: new Set() };
  const unanswered: string[] = [];
  for (const s of known) {
    if (!ctx.client) {
      unanswered.push('no token (set HANSARD_SESSION_TOKEN or HANSARD_TOKEN)');
      break;
    }
    try {
      const res = await ctx.client.request('GET', `/v1/work?session=${encodeURIComponent(s)}&limit=500`);
      const list = res.body as WorkList;
      answer.items.push(...list.items);
      answer.as_of = list.as_of;
      answer.answered.add(s);
    } catch (err) {
      if (err instanceof NetworkError || (err instanceof ServerError && err.status >= 500)) {
        unanswered.push(err.message);
        break;
      }
      // A session this token may not read (a session-bound token is answered 404 for another session's
      // items on this machine): the others are still shown; this one from what this machine holds.
      if (err instanceof ServerError && (err.status === 403 || err.status === 404) && !session) {
        ctx.io.stderr.write(
          `hansard: ${s}: ${escapeControl(err.message)} (${err.status} ${err.code}); shown from this machine\n`,
        );
        continue;
      }
      throw err;
    }
  }
  const rows = statusRows(ctx.state, answer, session ? known : null, Date.now());
  const unreachable = unanswered[0] ?? null;
  printStatus(ctx, rows, answer, unreachable, () =>
    known.size === 0
      ? 'no work items known on this machine (pass --session s_… to ask the server)'
      : `no work items for ${[...known].join(', ')}`,
  );
}

/** `work status wk_…`: the server's item, else what this machine holds of it. */
async function statusOfItem(ctx: WorkCtx, id: string): Promise<void> {
  const answer: ServerAnswer = { items: [], as_of: null, answered: new Set() };
  let unreachable: string | null = null;
  if (!ctx.client) unreachable = 'no token (set HANSARD_SESSION_TOKEN or HANSARD_TOKEN)';
  else {
    try {
      const v = (await ctx.client.request('GET', `/v1/work/${id}`)).body as WorkView;
      answer.items.push(v);
      answer.as_of = v.freshness.as_of;
      answer.answered.add(v.session);
    } catch (err) {
      if (!(err instanceof NetworkError || (err instanceof ServerError && err.status >= 500))) throw err;
      unreachable = err.message;
    }
  }
  const rows = statusRows(ctx.state, answer, null, Date.now()).filter((r) => r.id === id);
  printStatus(ctx, rows, answer, unreachable, () => `${id} is not known on this machine`);
}

/** Prints status rows (or `none()` when there are none), saying when the server did not answer. */
function printStatus(
  ctx: WorkCtx,
  rows: StatusRow[],
  answer: ServerAnswer,
  unreachable: string | null,
  none: () => string,
): void {
  if (ctx.json) {
    printJson(ctx.io, {
      as_of: new Date().toISOString(),
      server: { answered: [...answer.answered], not_answered: unreachable },
      items: rows,
    });
    return;
  }
  if (unreachable) {
    ctx.io.stderr.write(
      `hansard: the server did not answer (${escapeControl(unreachable)}): showing what this machine holds\n`,
    );
  }
  if (rows.length === 0) {
    ctx.io.stdout.write(`${none()}\n`);
    return;
  }
  ctx.io.stdout.write(renderRows(rows));
}

function needClient(ctx: WorkCtx): ApiClient {
  if (!ctx.client) {
    throw new UsageError(
      'no token: set HANSARD_SESSION_TOKEN (a session-bound token) or HANSARD_TOKEN, or pass --token; nothing was written',
    );
  }
  return ctx.client;
}

function summary(o: SendOutcome): Record<string, unknown> {
  if (o.kind === 'done') return { sent: true, work: o.view };
  if (o.kind === 'unsent') return { sent: false, pending: true, reason: o.reason };
  return {
    sent: true,
    refused: {
      status: o.error.status,
      code: o.error.code,
      message: o.error.message,
      details: o.error.details,
    },
    pending: o.kept,
  };
}

const DONE: Record<PendingOp['op'], (v: WorkView) => string> = {
  start: (v) => `started ${v.id}: ${v.mode}, observed, lease ${Math.round(v.ttl_seconds / 60)} min`,
  checkpoint: (v) => `checkpoint recorded for ${v.id}: ${v.mode}`,
  wait: (v) => `${v.id} waiting on ${v.waiting_on?.dependency.kind ?? 'a dependency'}`,
  stop: (v) => `stopped ${v.id} (${v.outcome ?? 'stopped'})`,
};

/** Prints an outcome; returns its exit code. */
function report(
  ctx: WorkCtx & { quiet?: boolean },
  op: PendingOp['op'],
  workId: string | null,
  o: SendOutcome,
  resumed = false,
): number {
  const { io } = ctx;
  const what = `the ${op}${workId ? ` of ${workId}` : ''}`;
  if (o.kind === 'done') {
    if (ctx.json) printJson(io, o.view);
    else if (!ctx.quiet) io.stdout.write(`${resumed ? 'resumed: ' : ''}${DONE[op](o.view)}\n`);
    return 0;
  }
  if (o.kind === 'unsent') {
    io.stderr.write(
      `hansard: not sent: ${escapeControl(o.reason)}\n  ${what} is kept in ${o.path}; run \`hansard work resume\` when the server is back\n`,
    );
    if (ctx.json) printJson(io, { sent: false, pending: { op, work_id: workId, file: o.path } });
    return 1;
  }
  const e = o.error;
  const d = e.details as { field?: unknown; rule?: unknown };
  const rule = e.code === 'content_rule' ? ` (field ${String(d.field)}, rule ${String(d.rule)})` : '';
  io.stderr.write(
    `hansard: the server refused ${what}: ${escapeControl(e.message)} (${e.status} ${e.code})${rule}\n`,
  );
  if (e.code === 'idempotency_mismatch') {
    io.stderr.write(
      `  ${o.path} is not what was first sent with its key: it changed after it was sent, and the server keeps the first.\n` +
        '  Restore it, or delete the file to drop it.\n',
    );
  } else if (o.kept) {
    io.stderr.write(`  it is kept in ${o.path}: fix the cause, then run \`hansard work resume\`\n`);
  } else {
    io.stderr.write('  nothing was stored; the operation was dropped\n');
  }
  if (ctx.json) printJson(io, { sent: true, ...summary(o) });
  return 2;
}

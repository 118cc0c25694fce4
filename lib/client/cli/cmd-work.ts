/**
 * `hansard work start|heartbeat|checkpoint|wait|stop|resume|status` (seed 004, issue 13, docs/work.md):
 * flags and defaults only; what each does is `lib/client/work/commands.ts`. Defaults: the session from
 * HANSARD_SESSION_ID, the token HANSARD_SESSION_TOKEN, else HANSARD_TOKEN, else `<state>/config.json`'s;
 * the URL HANSARD_URL, else the config's; system `hansard-cli`; actor `$USER`.
 */
import type { Command } from 'commander';
import {
  DEPENDENCY_KINDS,
  WORK_TTL,
  WorkCheckpoint,
  WorkStart,
  WorkStop,
  WorkWait,
} from '../../contract/work.js';
import { ApiClient } from '../api/client.js';
import { DEFAULT_URL } from '../api/config.js';
import { UsageError } from '../api/errors.js';
import type { Io } from '../api/io.js';
import { readCaptureConfig, stateDir } from '../capture/state-dir.js';
import {
  type Owner,
  runHeartbeat,
  runResume,
  runSemantic,
  runStatus,
  type WorkCtx,
} from '../work/commands.js';
import { isWorkId, listItems, readItem } from '../work/local.js';
import { jsonOption } from './options.js';

/** The flags every `hansard work` command takes. */
export interface WorkFlags {
  session?: string;
  system?: string;
  actor?: string;
  sessionToken?: string;
  url?: string;
  token?: string;
  json?: boolean;
}

export function registerWork(program: Command, io: Io): void {
  const work = program
    .command('work')
    .description('report current work (docs/work.md): who works on what now, with freshness that never lies')
    .addHelpText(
      'after',
      `
Freshness: observed, observed on this machine, unknown (an expired or missing lease: nobody knows), stopped,
closing (a stop not yet acknowledged). A semantic operation (start, checkpoint, wait, stop) is kept in
HANSARD_STATE_DIR/work until the server answers; \`hansard work resume\` sends it again exactly.
Exit codes: 0 done; 1 not sent (pending: run resume when the server is back); 2 usage or refused.
docs/work.md has the harness loop in seven steps.`,
    );
  const common = (c: Command) =>
    c
      .option('--session <sid>', 'the session the work belongs to (env HANSARD_SESSION_ID)')
      .option('--system <name>', 'the harness or system reporting (default hansard-cli)')
      .option('--actor <name>', 'who reports (default $USER)')
      .option(
        '--session-token <token>',
        'a session-bound token (env HANSARD_SESSION_TOKEN; before HANSARD_TOKEN)',
      )
      .option('--url <url>', 'server URL (env HANSARD_URL)')
      .option('--token <token>', 'token with the report scope (env HANSARD_TOKEN)')
      .addOption(jsonOption());

  common(work.command('start').description('start a work item; prints its id (wk_…)'))
    .option('--subject <subject>', 'session:s_…, thread:REF or free:TEXT (default: this session)')
    .requiredOption('--mode <mode>', 'one lowercase word: implementing, testing, reviewing…')
    .requiredOption('--summary <text>', 'one line, at most 240 characters: what is being done')
    .option('--ttl <duration>', 'the lease: 60s to 24h', '15m')
    .action((o: WorkStartOptions) => workStart(o, io));

  common(
    work
      .command('heartbeat [id]')
      .description('renew the lease (no history); works offline, on this machine'),
  )
    .option('--interval <duration>', 'how often you heartbeat: warned when longer than a third of the TTL')
    .option('--ttl <duration>', "the lease from now (default the item's TTL)")
    .action((id: string | undefined, o: WorkHeartbeatOptions) => workHeartbeat(id, o, io));

  common(work.command('checkpoint [id]').description('record a change of mode, subject or summary'))
    .option('--mode <mode>', 'the new mode')
    .option('--subject <subject>', 'the new subject: session:s_…, thread:REF or free:TEXT')
    .option('--summary <text>', 'the new one-line summary')
    .action((id: string | undefined, o: WorkCheckpointOptions) => workCheckpoint(id, o, io));

  common(work.command('wait [id]').description('record a typed dependency and a plain reason'))
    .requiredOption('--on <dependency>', `${DEPENDENCY_KINDS.join('|')}, optionally :REF (e.g. work:wk_…)`)
    .requiredOption('--reason <text>', 'one line: what exactly is missing')
    .action((id: string | undefined, o: WorkWaitOptions) => workWait(id, o, io));

  common(work.command('stop [id]').description('end the item: --completed or --paused'))
    .option('--completed', 'the work is done')
    .option('--paused', 'the work is paused deliberately')
    .option('--summary <text>', 'a last one-line summary')
    .action((id: string | undefined, o: WorkStopOptions) => workStop(id, o, io));

  common(
    work
      .command('resume [id]')
      .description('send the pending operations again, exactly (same key, same body)'),
  ).action((id: string | undefined, o: WorkFlags) => workResume(id, o, io));

  common(
    work
      .command('status [id]')
      .description(
        'work items with their freshness and whose they are (session, system, actor): with --session (or HANSARD_SESSION_ID) every item of that session, whoever started it; else the items of the sessions this machine holds; with an id (wk_…), that item',
      ),
  )
    .addHelpText(
      'after',
      `
Offline (no server, or no token), status shows what this machine holds: the items it started or changed,
their leases, pending operations, and the leases a heartbeat renewed while the server was away for an item
this machine has no record of (marked "not acknowledged by the server": nobody checked that item exists or
is yours). docs/work.md, "Freshness, in words".`,
    )
    .action((id: string | undefined, o: WorkFlags) => workStatus(id, o, io));
}

/** The flags with the environment's defaults (io.env, not process.env: tests run commands in-process). */
function withEnv(o: WorkFlags, io: Io): void {
  o.session ??= io.env.HANSARD_SESSION_ID;
  o.sessionToken ??= io.env.HANSARD_SESSION_TOKEN;
}

/** The state directory and the client; fills `o` with the environment's defaults first. */
function ctxOf(o: WorkFlags, io: Io): WorkCtx {
  withEnv(o, io);
  const state = stateDir(io.env);
  const config = readCaptureConfig(io.env, state);
  const url = o.url ?? config.url ?? DEFAULT_URL;
  // An explicit --token first, then the session-bound token, then HANSARD_TOKEN / config.json.
  const token = o.token ?? o.sessionToken ?? config.token;
  // Few retries: a semantic operation not answered stays pending (resume is safe), and heartbeat and
  // status answer from this machine; neither should wait long for a server that is away.
  const client = token ? new ApiClient({ url, token, retries: 2, minTimeoutMs: 200 }) : null;
  return { io, state, client, json: !!o.json };
}

/** The owner: flags, else the item as this machine knows it, else HANSARD_SESSION_ID, hansard-cli, $USER. */
function ownerOf(o: WorkFlags, io: Io, id: string | null): Owner {
  const known = id ? readItem(stateDir(io.env), id) : null;
  const session = o.session ?? known?.session;
  if (!session) throw new UsageError('which session? pass --session s_… or set HANSARD_SESSION_ID');
  const actor = o.actor ?? known?.actor ?? io.env.USER;
  if (!actor) throw new UsageError('who reports? pass --actor NAME (no $USER is set)');
  return { session, system: o.system ?? known?.system ?? 'hansard-cli', actor };
}

/** The item meant: the id given, else the one open item of this session that this machine knows. */
function resolveId(state: string, id: string | undefined, session: string | undefined): string {
  if (id !== undefined) {
    if (!isWorkId(id)) throw new UsageError(`${id} is not a work id (wk_ followed by a ULID)`);
    return id;
  }
  const mine = listItems(state).filter((i) => !session || i.session === session);
  if (mine.length === 1) return mine[0]!.id;
  if (mine.length === 0) {
    throw new UsageError(
      `no open work item on this machine${session ? ` for ${session}` : ''}: pass its id (wk_…)`,
    );
  }
  throw new UsageError(`several open work items: pass one of ${mine.map((i) => i.id).join(', ')}`);
}

/** `session:s_…`, `thread:REF`, `free:TEXT`. */
function subjectOf(text: string): { kind: string; ref: string } {
  const at = text.indexOf(':');
  const kind = text.slice(0, Math.max(0, at));
  if (at < 1 || !['session', 'thread', 'free'].includes(kind) || at === text.length - 1) {
    throw new UsageError(`--subject ${text}: give session:s_…, thread:REF or free:TEXT`);
  }
  return { kind, ref: text.slice(at + 1) };
}

/** `90`, `90s`, `15m`, `2h` → seconds. @throws UsageError */
export function seconds(text: string, flag: string, min = 1): number {
  const m = /^(\d+)\s*(s|m|min|h)?$/.exec(text.trim());
  const n = m ? Number(m[1]) * (m[2] === 'h' ? 3600 : m[2] === 'm' || m[2] === 'min' ? 60 : 1) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min)
    throw new UsageError(`${flag} ${text}: give a duration such as 90s, 15m or 2h`);
  return n;
}

function fmt(s: number): string {
  return s % 3600 === 0 ? `${s / 3600}h` : s % 60 === 0 ? `${s / 60}m` : `${s}s`;
}

/** The body checked against the API's own schema before anything is written or sent. @throws UsageError */
function checked(
  schema: {
    safeParse(v: unknown): {
      success: boolean;
      error?: { issues: { path: PropertyKey[]; message: string }[] };
    };
  },
  body: Record<string, unknown>,
): Record<string, unknown> {
  const r = schema.safeParse(body);
  if (r.success) return body;
  const lines = (r.error?.issues ?? [])
    .slice(0, 10)
    .map((i) => `  - ${i.path.length ? `${i.path.join('.')}: ` : ''}${i.message}`);
  throw new UsageError(
    `the work report breaks the API's rules; nothing was written or sent:\n${lines.join('\n')}`,
  );
}

/** The options of `hansard work start`, as commander parses them. */
export interface WorkStartOptions extends WorkFlags {
  subject?: string;
  mode: string;
  summary: string;
  ttl: string;
}

/**
 * `hansard work start`: starts a work item on the subject (default: this session) and prints its id
 * (wk_…), or keeps it pending when the server is away (lib/client/work/commands.ts `runSemantic`).
 */
export async function workStart(o: WorkStartOptions, io: Io): Promise<void> {
  const c = ctxOf(o, io);
  const owner = ownerOf(o, io, null);
  const body = checked(WorkStart, {
    ...owner,
    subject: subjectOf(o.subject ?? `session:${owner.session}`),
    mode: o.mode,
    summary: o.summary,
    ttl_seconds: seconds(o.ttl, '--ttl'),
  });
  await runSemantic(c, 'start', null, body);
}

/** The options of `hansard work heartbeat`, as commander parses them. */
export interface WorkHeartbeatOptions extends WorkFlags {
  interval?: string;
  ttl?: string;
}

/**
 * `hansard work heartbeat [id]`: renews the lease (no history, works offline); warns when `--interval` is
 * longer than a third of the lease.
 */
export async function workHeartbeat(id: string | undefined, o: WorkHeartbeatOptions, io: Io): Promise<void> {
  const c = ctxOf(o, io);
  const wid = resolveId(c.state, id, o.session);
  const ttl = o.ttl ? seconds(o.ttl, '--ttl') : undefined;
  if (o.interval) {
    const every = seconds(o.interval, '--interval', 1);
    const lease = ttl ?? readItem(c.state, wid)?.ttl_seconds ?? WORK_TTL.default;
    if (every > lease / 3) {
      io.stderr.write(
        `warning: a heartbeat every ${o.interval} is longer than a third of the ${fmt(lease)} lease (${fmt(Math.floor(lease / 3))}): ` +
          'the lease may expire to unknown between heartbeats (docs/work.md, the harness loop, step 3)\n',
      );
    }
  }
  await runHeartbeat(c, wid, ownerOf(o, io, wid), ttl);
}

/** The options of `hansard work checkpoint`, as commander parses them. */
export interface WorkCheckpointOptions extends WorkFlags {
  mode?: string;
  subject?: string;
  summary?: string;
}

/** `hansard work checkpoint [id]`: records a change of mode, subject or summary. */
export async function workCheckpoint(
  id: string | undefined,
  o: WorkCheckpointOptions,
  io: Io,
): Promise<void> {
  const c = ctxOf(o, io);
  const wid = resolveId(c.state, id, o.session);
  const body = checked(WorkCheckpoint, {
    ...ownerOf(o, io, wid),
    ...(o.mode ? { mode: o.mode } : {}),
    ...(o.subject ? { subject: subjectOf(o.subject) } : {}),
    ...(o.summary ? { summary: o.summary } : {}),
  });
  await runSemantic(c, 'checkpoint', wid, body);
}

/** The options of `hansard work wait`, as commander parses them. */
export interface WorkWaitOptions extends WorkFlags {
  on: string;
  reason: string;
}

/** `hansard work wait [id]`: records a typed dependency (`--on kind[:ref]`) and a plain reason. */
export async function workWait(id: string | undefined, o: WorkWaitOptions, io: Io): Promise<void> {
  const c = ctxOf(o, io);
  const wid = resolveId(c.state, id, o.session);
  const at = o.on.indexOf(':');
  const kind = at < 0 ? o.on : o.on.slice(0, at);
  const ref = at < 0 ? undefined : o.on.slice(at + 1);
  const body = checked(WorkWait, {
    ...ownerOf(o, io, wid),
    dependency: { kind, ...(ref ? { ref } : {}) },
    reason: o.reason,
  });
  await runSemantic(c, 'wait', wid, body);
}

/** The options of `hansard work stop`, as commander parses them. */
export interface WorkStopOptions extends WorkFlags {
  completed?: boolean;
  paused?: boolean;
  summary?: string;
}

/**
 * `hansard work stop [id]`: ends the item, completed or paused.
 * @throws UsageError unless exactly one of `--completed` and `--paused` is given
 */
export async function workStop(id: string | undefined, o: WorkStopOptions, io: Io): Promise<void> {
  if (!!o.completed === !!o.paused)
    throw new UsageError('say how it ends: --completed or --paused (one of them)');
  const c = ctxOf(o, io);
  const wid = resolveId(c.state, id, o.session);
  const body = checked(WorkStop, {
    ...ownerOf(o, io, wid),
    outcome: o.completed ? 'completed' : 'paused',
    ...(o.summary ? { summary: o.summary } : {}),
  });
  await runSemantic(c, 'stop', wid, body);
}

/**
 * `hansard work resume [id]`: sends the pending operations again, exactly (same key, same body).
 * @throws UsageError for an id that is not `wk_<ULID>`
 */
export async function workResume(id: string | undefined, o: WorkFlags, io: Io): Promise<void> {
  if (id !== undefined && !isWorkId(id))
    throw new UsageError(`${id} is not a work id (wk_ followed by a ULID)`);
  await runResume(ctxOf(o, io), id);
}

/**
 * `hansard work status [id]`: the work items with their freshness and whose they are
 * (lib/client/work/commands.ts `runStatus`).
 * @throws UsageError for an id that is not `wk_<ULID>`
 */
export async function workStatus(id: string | undefined, o: WorkFlags, io: Io): Promise<void> {
  if (id !== undefined && !isWorkId(id))
    throw new UsageError(`${id} is not a work id (wk_ followed by a ULID)`);
  await runStatus(ctxOf(o, io), o.session, id);
}

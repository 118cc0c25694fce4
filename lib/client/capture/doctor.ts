/**
 * `hansard doctor` (issue 11 item 3, seed 000 "Check hook failures"): is capture working on this machine?
 * Each check gives a finding `{check, ok, message, fix}`, `fix` being the command that puts it right.
 * Checks, in order: the hooks' server settings, the server (`GET /healthz`), the token and its scopes,
 * the state directory, Claude Code's hooks (user and project settings), Codex's `notify`, the spool
 * backlog, the hook failures of the last 7 days grouped by hook, and whether `hansard` is on PATH (a
 * warning only: the hooks and the session context name the absolute command). docs/capture.md lists them.
 */
import { accessSync, constants, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import type { Scope } from '../../contract/scopes.js';
import { mkdirs } from '../api/safe-fs.js';
import { failuresFinding } from './doctor-failures.js';
import type { Finding } from './doctor-finding.js';
import { claudeFinding, codexFinding } from './doctor-hooks.js';
import { checkHealth, probeToken } from './doctor-server.js';
import { hansardArgv, shellLine } from './integrations.js';
import { readCaptureConfig, type SessionBacklog, spoolBacklog, stateDir } from './state-dir.js';

export type { Finding } from './doctor-finding.js';

/** What `runDoctor` answers: `ok` when every finding is. */
export interface DoctorReport {
  ok: boolean;
  state_dir: string;
  findings: Finding[];
}

export interface DoctorOptions {
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** the project whose `.claude/settings.json` is checked too (default `cwd`) */
  project?: string;
  /** the clock (tests) */
  now?: Date;
  /** per request to the server, ms (default 3000) */
  timeoutMs?: number;
}

export { FAILURE_WINDOW_MS } from './doctor-failures.js';
/** A spool session written to this recently is being shipped, not stuck. */
export const IN_FLIGHT_MS = 2 * 60 * 1000;
/** The scopes capture needs: ship segments, and hand the agent a session token for its reports. */
export const CAPTURE_SCOPES: readonly Scope[] = ['ingest', 'report'];

const q = (s: string) => shellLine([s]);

/** Runs every check. Never throws: a check that fails to run is a finding that says why. */
export async function runDoctor(opts: DoctorOptions): Promise<DoctorReport> {
  const now = opts.now ?? new Date();
  const state = stateDir(opts.env);
  const findings: Finding[] = [];
  const config = readCaptureConfig(opts.env, state);
  const url = config.url ?? 'http://127.0.0.1:8787';
  const syncFix = 'hansard integrations sync --url URL --token hns_…';

  findings.push(
    config.token
      ? {
          check: 'server_config',
          ok: true,
          message: `hooks ship to ${url} (url from ${config.source.url ?? 'the default'}, token from ${config.source.token === 'env' ? 'HANSARD_TOKEN' : `${state}/config.json`})`,
          fix: null,
        }
      : {
          check: 'server_config',
          ok: false,
          message: `no token for the hooks: HANSARD_TOKEN is not set and ${join(state, 'config.json')} has none, so captured sessions stay in the spool`,
          fix: syncFix,
        },
  );

  const health = await checkHealth(url, opts.timeoutMs);
  findings.push(
    health.up
      ? { check: 'server', ok: true, message: `${url} is up (hansard ${health.version ?? '?'})`, fix: null }
      : {
          check: 'server',
          ok: false,
          message: `cannot reach ${url}: ${health.reason}`,
          fix: `hansard serve (npm start in the hansard checkout), or point the hooks at your server: ${syncFix}`,
        },
  );
  findings.push(await tokenFinding(url, config.token, health.up, opts.timeoutMs));
  findings.push(stateDirFinding(state));
  const claude = claudeFinding(opts);
  const codex = codexFinding(opts.env);
  // One harness not set up on this machine at all is fine when the other captures.
  const captures = (h: typeof claude) => !h.absent && h.finding.ok;
  if (!captures(claude) && !captures(codex)) {
    for (const h of [claude, codex]) {
      if (!h.absent) continue;
      h.finding.ok = false;
      h.finding.message += ": no agent on this machine has hansard's hooks";
    }
  }
  findings.push(claude.finding, codex.finding);
  findings.push(spoolFinding(state, now));
  findings.push(failuresFinding(state, now, findings, url));
  findings.push(commandFinding(opts.env));
  return { ok: findings.every((f) => f.ok), state_dir: state, findings };
}

/**
 * Whether `hansard` is a command on PATH. Capture does not need it (the hooks, and the report line the
 * session context gives the agent, name the absolute node and bin/hansard), but the docs and the hints
 * say `hansard …`: without `npm link` a person types `bin/hansard` instead. A warning, never a failure.
 */
function commandFinding(env: NodeJS.ProcessEnv): Finding {
  const found = (env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, 'hansard'))
    .find((path) => {
      try {
        accessSync(path, constants.X_OK);
        return statSync(path).isFile();
      } catch {
        return false;
      }
    });
  if (found) return { check: 'hansard_command', ok: true, message: `hansard on PATH is ${found}`, fix: null };
  const argv = hansardArgv();
  const checkout = dirname(dirname(argv[1]!));
  return {
    check: 'hansard_command',
    ok: true,
    warn: true,
    message: `hansard is not on PATH: the hooks and the session context's report line run ${shellLine(argv)} and need none, but to type hansard … as the docs do, link it (or run ${q(argv[1]!)})`,
    fix: `npm link (in ${q(checkout)})`,
  };
}

async function tokenFinding(
  url: string,
  token: string | undefined,
  up: boolean,
  timeoutMs?: number,
): Promise<Finding> {
  if (!token || !up) {
    return {
      check: 'token',
      ok: false,
      message: `not checked: ${token ? 'the server did not answer' : 'there is no token'}`,
      fix: null,
    };
  }
  const probe = await probeToken(url, token, timeoutMs);
  const newToken =
    'hansard token create --scopes ingest,report,read (with an admin token), then hansard integrations sync --token hns_…';
  if (!probe.valid) {
    return { check: 'token', ok: false, message: `the token does not work: ${probe.reason}`, fix: newToken };
  }
  const missing = CAPTURE_SCOPES.filter((s) => !probe.scopes.includes(s));
  const scopes = `scopes ${probe.scopes.join(', ') || 'none'}${probe.sessionBound ? ', bound to one session' : ''}`;
  const details = { scopes: probe.scopes, session_bound: probe.sessionBound };
  if (missing.length > 0 || probe.sessionBound) {
    return {
      check: 'token',
      ok: false,
      message: `the token is valid (${scopes}) but capture needs ${probe.sessionBound ? 'a token bound to no session with ' : ''}${CAPTURE_SCOPES.join(' and ')}`,
      fix: newToken,
      details,
    };
  }
  // Works, but it can administer the whole tenant, and <state>/config.json and every hook process hold it.
  const admin = probe.scopes.includes('admin')
    ? `; it is an admin token, kept in the state dir's config.json for the hooks: a narrower one is safer (${newToken})`
    : '';
  return { check: 'token', ok: true, message: `the token is valid: ${scopes}${admin}`, fix: null, details };
}

function stateDirFinding(state: string): Finding {
  const probe = join(state, `.doctor-${process.pid}.tmp`);
  try {
    // In bounded steps: Node's recursive mkdir loops for ever where mkdir answers ENOENT (under /proc).
    mkdirs(state, 0o700);
    writeFileSync(probe, 'ok');
    rmSync(probe, { force: true });
    return { check: 'state_dir', ok: true, message: `${state} is writable`, fix: null };
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    return {
      check: 'state_dir',
      ok: false,
      message: `the hooks cannot write their state directory ${state} (${code}): captured events are lost`,
      fix: `mkdir -p ${q(state)} && chmod u+rwx ${q(state)} (or export HANSARD_STATE_DIR=<a writable folder> where the agent runs)`,
    };
  }
}

function spoolFinding(state: string, now: Date): Finding {
  let backlog: SessionBacklog[];
  try {
    backlog = spoolBacklog(state);
  } catch (err) {
    return {
      check: 'spool',
      ok: false,
      message: `cannot read the spool: ${(err as Error).message}`,
      fix: null,
    };
  }
  if (backlog.length === 0)
    return { check: 'spool', ok: true, message: 'every captured event is on the server', fix: null };
  const rows = backlog.map((b) => ({ ...b, written_at: newestWrite(b.dir) }));
  const stuck = rows.filter((r) => now.getTime() - r.written_at.getTime() > IN_FLIGHT_MS);
  const events = rows.reduce((n, r) => n + r.events, 0);
  const details = {
    sessions: rows.map((r) => ({
      sid: r.sid,
      dir: r.dir,
      bytes: r.bytes,
      events: r.events,
      written_at: r.written_at.toISOString(),
      in_flight: !stuck.includes(r),
    })),
  };
  if (stuck.length === 0) {
    return {
      check: 'spool',
      ok: true,
      message: `${events} events of ${rows.length} live session(s) on their way to the server`,
      fix: null,
      details,
    };
  }
  const stuckEvents = stuck.reduce((n, r) => n + r.events, 0);
  const bytes = stuck.reduce((n, r) => n + r.bytes, 0);
  return {
    check: 'spool',
    ok: false,
    message: `${stuckEvents} events (${bytes} bytes) of ${stuck.length} session(s) are not on the server yet: ${stuck.map((r) => r.sid).join(', ')}`,
    fix: 'hansard hook ship',
    details,
  };
}

/** When a spool session was last written (its newest segment's mtime). */
function newestWrite(dir: string): Date {
  let newest = 0;
  try {
    for (const f of readdirSync(dir)) newest = Math.max(newest, statSync(join(dir, f)).mtimeMs);
  } catch {
    // gone meanwhile: counts as old
  }
  return new Date(newest);
}

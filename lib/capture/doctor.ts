/**
 * `hansard doctor` (issue 11 item 3, seed 000 "Check hook failures"): is capture working on this machine?
 * Each check gives a finding `{check, ok, message, fix}`, `fix` being the command that puts it right.
 * Checks, in order: the hooks' server settings, the server (`GET /healthz`), the token and its scopes,
 * the state directory, Claude Code's hooks (user and project settings), Codex's `notify`, the spool
 * backlog, and the hook failures of the last 7 days grouped by hook. docs/capture.md lists them.
 */
import { mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Scope } from '../service/scopes.js';
import { claudeFinding, codexFinding } from './doctor-hooks.js';
import { checkHealth, probeToken } from './doctor-server.js';
import { shellLine } from './integrations.js';
import {
  readCaptureConfig,
  readHookFailures,
  type SessionBacklog,
  spoolBacklog,
  stateDir,
} from './state-dir.js';

/** One check's answer. */
export interface Finding {
  check:
    | 'server_config'
    | 'server'
    | 'token'
    | 'state_dir'
    | 'claude_code_hooks'
    | 'codex_notify'
    | 'spool'
    | 'hook_failures';
  /** false: something needs action (or could not be checked because an earlier check failed) */
  ok: boolean;
  /** what was found, in a sentence (a few lines for the failures and the backlog) */
  message: string;
  /** the command that fixes it; null when ok or when another finding's fix comes first */
  fix: string | null;
  /** machine-readable particulars (scopes, backlog per session, failures per hook) */
  details?: Record<string, unknown>;
}

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

/** Hook failures older than this are not reported (seed 000: the past seven days). */
export const FAILURE_WINDOW_MS = 7 * 24 * 3600 * 1000;
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
  findings.push(failuresFinding(state, now, findings));
  return { ok: findings.every((f) => f.ok), state_dir: state, findings };
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
  return { check: 'token', ok: true, message: `the token is valid: ${scopes}`, fix: null, details };
}

function stateDirFinding(state: string): Finding {
  const probe = join(state, `.doctor-${process.pid}.tmp`);
  try {
    mkdirSync(state, { recursive: true, mode: 0o700 });
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

/** What to do about failures whose latest reason is this. */
function failureFix(reason: string, findings: Finding[]): string {
  const fixOf = (check: Finding['check']) => findings.find((f) => f.check === check && !f.ok)?.fix;
  const refresh = 'hansard integrations sync, then restart Claude Code / Codex';
  if (reason === 'server_unreachable') return fixOf('server') ?? fixOf('server_config') ?? refresh;
  if (reason === 'state_unwritable') return fixOf('state_dir') ?? refresh;
  return refresh;
}

function failuresFinding(state: string, now: Date, findings: Finding[]): Finding {
  const since = now.getTime() - FAILURE_WINDOW_MS;
  const recent = readHookFailures(state).filter((f) => {
    const at = Date.parse(f?.at);
    return Number.isFinite(at) && at >= since;
  });
  if (recent.length === 0) {
    return { check: 'hook_failures', ok: true, message: 'no hook failures in the last 7 days', fix: null };
  }
  const groups = new Map<
    string,
    { hook: string; count: number; last_at: string; last_reason: string; last_message: string }
  >();
  for (const f of recent) {
    const hook = String(f.hook);
    const g = groups.get(hook);
    if (!g) {
      groups.set(hook, {
        hook,
        count: 1,
        last_at: f.at,
        last_reason: String(f.reason),
        last_message: String(f.message ?? ''),
      });
      continue;
    }
    g.count++;
    if (Date.parse(f.at) >= Date.parse(g.last_at)) {
      Object.assign(g, {
        last_at: f.at,
        last_reason: String(f.reason),
        last_message: String(f.message ?? ''),
      });
    }
  }
  const hooks = [...groups.values()].sort((a, b) => b.count - a.count || a.hook.localeCompare(b.hook));
  const latest = hooks.reduce((a, b) => (Date.parse(b.last_at) > Date.parse(a.last_at) ? b : a));
  const lines = hooks.map(
    (h) => `${h.hook}: ${h.count}, last ${h.last_reason} at ${h.last_at} (${h.last_message})`,
  );
  return {
    check: 'hook_failures',
    ok: false,
    message: `${recent.length} hook failure(s) in the last 7 days:\n${lines.map((l) => `  ${l}`).join('\n')}`,
    fix: failureFix(latest.last_reason, findings),
    details: { hooks },
  };
}

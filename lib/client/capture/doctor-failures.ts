/**
 * `hansard doctor`'s hook-failure check (lib/client/capture/doctor.ts, docs/capture.md "hook_failures"): the
 * failures of the last 7 days, grouped by hook, with a fix that fits their reasons. A
 * `server_unreachable` failure that is over does not need action: the spool is empty and a shipper run
 * left it so after the failure (`<state>/last-ship.json`); those are shown as a ✓ note. A failure is
 * read under `failureReason` (a refused session token is `server_refused`, also in records written before
 * that kind existed), and a fix about a server names the server the failures were at, when they name one
 * other than the hooks' server now (the trial of issues 24/25: a 404 from another URL was shown as
 * "unreachable" with a fix naming the config's server).
 */
import type { Finding } from './doctor-finding.js';
import {
  failureReason,
  type HookFailure,
  readHookFailures,
  readLastShip,
  refusalOf,
  spoolBacklog,
} from './state-dir.js';

/** Hook failures older than this are not reported (seed 000: the past seven days). */
export const FAILURE_WINDOW_MS = 7 * 24 * 3600 * 1000;

/** How a recorded failure is cleared, for the messages. */
const CLEAR = 'hansard doctor --clear-failures';

/** One hook's failures, as `details.hooks` lists them. */
interface HookGroup {
  hook: string;
  count: number;
  last_at: string;
  last_reason: string;
  last_message: string;
}

/**
 * The `hook_failures` finding. `findings` are the checks before it (their fixes come first: a server
 * that is down is fixed by starting it); `url` is the hooks' server.
 */
export function failuresFinding(state: string, now: Date, findings: Finding[], url: string): Finding {
  const since = now.getTime() - FAILURE_WINDOW_MS;
  const recent = readHookFailures(state)
    .filter((f) => {
      const at = Date.parse(f?.at);
      return Number.isFinite(at) && at >= since;
    })
    .map((f) => ({ ...f, reason: failureReason(f) }));
  if (recent.length === 0) {
    return { check: 'hook_failures', ok: true, message: 'no hook failures in the last 7 days', fix: null };
  }
  const lastShip = readLastShip(state);
  const shippedSince = lastShip !== null && spoolBacklog(state).length === 0 ? Date.parse(lastShip) : null;
  const over = (f: HookFailure) =>
    f.reason === 'server_unreachable' && shippedSince !== null && Date.parse(f.at) < shippedSince;
  const past = recent.filter(over);
  const open = recent.filter((f) => !over(f));
  const pastNote =
    past.length > 0
      ? `${past.length} past failure${past.length === 1 ? '' : 's'} while the server was unreachable; everything was shipped since (last at ${lastShip})`
      : null;
  if (open.length === 0) {
    return {
      check: 'hook_failures',
      ok: true,
      message: `${pastNote} (${CLEAR} clears the record)`,
      fix: null,
      details: { hooks: groups(past), past: past.length, last_ship_at: lastShip },
    };
  }
  const hooks = groups(open);
  const lines = hooks.map(
    (h) => `${h.hook}: ${h.count}, last ${h.last_reason} at ${h.last_at} (${h.last_message})`,
  );
  if (pastNote) lines.push(pastNote);
  const reasons = [...new Set(open.map((f) => String(f.reason)))];
  const fixes = [
    ...new Set(
      reasons.map((r) =>
        failureFix(
          r,
          findings,
          url,
          open.filter((f) => f.reason === r),
        ),
      ),
    ),
  ];
  return {
    check: 'hook_failures',
    ok: false,
    message: `${open.length} hook failure(s) in the last 7 days:\n${lines.map((l) => `  ${l}`).join('\n')}`,
    fix: `${fixes.join('; ')}; once fixed, ${CLEAR}`,
    details: { hooks, past: past.length, last_ship_at: lastShip },
  };
}

/** The failures grouped by hook: most first, each with its latest reason and message. */
function groups(failures: HookFailure[]): HookGroup[] {
  const by = new Map<string, HookGroup>();
  for (const f of failures) {
    const hook = String(f.hook);
    const g = by.get(hook);
    if (!g) {
      by.set(hook, {
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
  return [...by.values()].sort((a, b) => b.count - a.count || a.hook.localeCompare(b.hook));
}

/**
 * What to do about `failures` of this reason (an earlier check's fix when that check failed and is about
 * the same server). `url` is the hooks' server now; a failure may name another (HANSARD_URL was another
 * when it happened), and the fix then says which.
 */
function failureFix(reason: string, findings: Finding[], url: string, failures: HookFailure[]): string {
  const fixOf = (check: Finding['check']) => findings.find((f) => f.check === check && !f.ok)?.fix;
  const elsewhere = serversNamed(failures).filter((u) => u !== url);
  switch (reason) {
    case 'server_unreachable':
      if (elsewhere.length > 0) {
        return `the failures were at ${elsewhere.join(', ')}, the hooks ship to ${url} now: if that is your server, hansard hook ship sends what the hooks could not; if not, hansard integrations sync --url URL (and check HANSARD_URL where the agent runs)`;
      }
      return (
        fixOf('server_config') ??
        fixOf('server') ??
        `the server at ${url} answers now: hansard hook ship sends what the hooks could not`
      );
    case 'server_refused':
      return refusedFix(failures, findings, url);
    case 'state_unwritable':
      return fixOf('state_dir') ?? 'make the state directory writable (see state_dir above)';
    case 'state_unreadable':
      return "a session's mapping state in the state directory was not a readable JSON file (something put a FIFO, a link or other bytes there): the hook went on as the failure says; find what writes there";
    case 'work_refused':
      return 'the server refused a work heartbeat the hooks sent (not_owner: the item was started with another token, and this machine forgot its lease; work_mismatch: its session, system or actor differ): hansard work status wk_… --json';
    case 'transcript_refused':
      return "Claude Code's transcript_path was not a regular file under the Claude Code projects folder ($CLAUDE_CONFIG_DIR/projects, else ~/.claude/projects), or it shrank: the hooks read no token usage from it (the rest is recorded). Give the hooks the same CLAUDE_CONFIG_DIR as Claude Code, and replace a linked transcript or projects entry with the file itself";
    case 'timeout':
      return 'a hook ran out of time (a slow disk or a loaded machine): what it deferred is written by the next hook or hansard hook ship';
    default:
      return 'hansard integrations sync, then restart Claude Code / Codex';
  }
}

/** The servers `failures` name in their messages ("the server at URL …", "cannot reach URL"), each once. */
function serversNamed(failures: HookFailure[]): string[] {
  const urls = new Set<string>();
  for (const f of failures) {
    const m = /\b(https?:\/\/[^\s/:,;()]+(?::\d+)?)/.exec(String(f.message ?? ''));
    if (m) urls.add(m[1]!.replace(/\/+$/, ''));
  }
  return [...urls];
}

/**
 * What to do about refused session tokens, from the last refusal's server and status: 404, something
 * there that mints no session tokens (not a hansard server, or not this one); 401, the capture token is
 * not accepted there; 403, it may not mint them. Then a new agent session gets a token.
 */
function refusedFix(failures: HookFailure[], findings: Finding[], url: string): string {
  const last = [...failures].sort((a, b) => Date.parse(b.at) - Date.parse(a.at))[0];
  const r = last ? refusalOf(String(last.message ?? '')) : null;
  const where = r?.url ?? url;
  const moved = where !== url ? ` (the hooks ship to ${url} now)` : '';
  const then = 'then start a new Claude Code session (its SessionStart asks again)';
  const tokenFix = where === url ? findings.find((f) => f.check === 'token' && !f.ok)?.fix : undefined;
  switch (r?.status) {
    case 404:
      return `the server at ${where}${moved} has no session-token route (404): it is not a hansard server, or not the one meant; point the hooks at yours with hansard integrations sync --url URL --token hns_… (and HANSARD_URL where the agent runs), ${then}`;
    case 401:
      return `${tokenFix ?? `the server at ${where}${moved} did not accept the hooks' token (401): hansard integrations sync --token hns_… with a valid one`}, ${then}`;
    case 403:
      return `${tokenFix ?? `the hooks' token may not make session tokens at ${where}${moved} (403: it needs the report scope and must be bound to no session): hansard integrations sync --token hns_… with such a token`}, ${then}`;
    default:
      return `the server at ${where}${moved} refused a session token${r ? ` (${r.status}${r.code ? ` ${r.code}` : ''})` : ''}: check the server and token checks above, ${then}`;
  }
}

/**
 * `hansard doctor`'s hook-failure check (lib/capture/doctor.ts, docs/capture.md "hook_failures"): the
 * failures of the last 7 days, grouped by hook, with a fix that fits their reasons. A
 * `server_unreachable` failure that is over does not need action: the spool is empty and a shipper run
 * left it so after the failure (`<state>/last-ship.json`); those are shown as a ✓ note.
 */
import type { Finding } from './doctor.js';
import { type HookFailure, readHookFailures, readLastShip, spoolBacklog } from './state-dir.js';

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
  const recent = readHookFailures(state).filter((f) => {
    const at = Date.parse(f?.at);
    return Number.isFinite(at) && at >= since;
  });
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
  const fixes = [...new Set(reasons.map((r) => failureFix(r, findings, url)))];
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

/** What to do about failures of this reason (an earlier check's fix when that check failed). */
function failureFix(reason: string, findings: Finding[], url: string): string {
  const fixOf = (check: Finding['check']) => findings.find((f) => f.check === check && !f.ok)?.fix;
  switch (reason) {
    case 'server_unreachable':
      return (
        fixOf('server_config') ??
        fixOf('server') ??
        `the server at ${url} answers now: hansard hook ship sends what the hooks could not`
      );
    case 'state_unwritable':
      return fixOf('state_dir') ?? 'make the state directory writable (see state_dir above)';
    case 'timeout':
      return 'a hook ran out of time (a slow disk or a loaded machine): what it deferred is written by the next hook or hansard hook ship';
    default:
      return 'hansard integrations sync, then restart Claude Code / Codex';
  }
}

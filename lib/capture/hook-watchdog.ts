/**
 * The hook's watchdog (issue 25 item 1, seed 000: "A hook stops after 3.5 seconds … On failure, it
 * returns an empty result so the agent continues"). The budget is enforced from outside the work it
 * guards: a small supervisor process that `dist/hook.cjs` starts before anything else runs, which the
 * hook's own thread cannot stop, whatever it does (spin in JavaScript, loop in a native call, block in a
 * system call).
 *
 * Two deadlines:
 * - at the budget (3.5 s, `HANSARD_HOOK_BUDGET_MS`), the hook's own timer (`hook-main.ts`) answers empty,
 *   defers a parsed payload, records `timeout` and exits 0, as long as its event loop runs (it waits for
 *   a lock or the server);
 * - `WATCHDOG_GRACE_MS` later, the supervisor (`/bin/sh` running `sleep`) looks at the hook every 250 ms
 *   while it is still its parent, and kills it (SIGKILL: its stdout stays empty; the agent sees a failed
 *   hook and goes on) once it is blocked (every thread in an interruptible wait, its CPU time still, two
 *   looks in a row) or
 *   in a loop (it computed for its whole budget); a hook only slow (starved of CPU on a busy machine) is
 *   left to reach its own timer, up to `WATCHDOG_CAP_MS`. Then the supervisor
 *   becomes the rescuer (`hook-watchdog-rescue.ts`, `dist/hook-watchdog.cjs`, Node started only then),
 *   which defers the payload when no event of it was written, and records the `timeout`.
 * What the rescuer needs to know it reads from a pipe the hook writes its progress to, one JSON line at
 * a time (what it parsed, whether it began writing or saved, whether it answered): the pipe outlives the
 * hook's thread, whatever blocks it.
 *
 * Why a process and not a worker thread: a worker can end the process with status 0 (the C library's
 * `exit` through WASI), but starting one costs about 30 ms of CPU in every hook (V8 isolate and Node
 * bootstrap), +27% CPU and +21% wall time at p50 as measured; the supervisor costs the fork of `sh` and
 * loading child_process (docs/benchmarks.md). The price is the exit status in the rare case the hook's
 * thread is blocked: killed, not 0. The hook ends every ordinary run by killing the supervisor (its
 * process group); after a timeout it leaves it, so that an exit that itself waits on a stuck thread (a DNS
 * lookup in libuv's pool) is ended too. On Windows (no /bin/sh) only the hook's own timer remains.
 */
import type { ChildProcess } from 'node:child_process';

/** The budget a hook answers within (seed 000: before the agent's five-second limit). */
export const HOOK_BUDGET_MS = 3_500;
/**
 * How long after the budget the supervisor starts to look at a hook that did not end itself (its own
 * timer fired at the budget: a hook whose event loop runs has ended by then).
 */
export const WATCHDOG_GRACE_MS = 500;
/** How often the supervisor looks at a hook past its deadline (ms). */
const LOOK_MS = 250;
/**
 * The longest the supervisor lets a hook run past its deadline while it keeps making progress without
 * having computed for its whole budget: a hook only slow, starved of CPU on a busy machine (60 s: any
 * agent has given up on it by then; the old hook had no limit at all).
 */
export const WATCHDOG_CAP_MS = 60_000;

/** The budget of this process: `HANSARD_HOOK_BUDGET_MS` (tests shorten it), else 3.5 s. */
export function hookBudgetMs(env: NodeJS.ProcessEnv): number {
  const n = Number(env.HANSARD_HOOK_BUDGET_MS);
  return Number.isFinite(n) && n > 0 ? n : HOOK_BUDGET_MS;
}

/** How far the hook got, as it tells the supervisor (one JSON object per line on the pipe). */
export type WatchdogNote =
  | { hook: string; defer: { inbox: string; payload: unknown } | null }
  | { stage: typeof STAGE_WRITING | typeof STAGE_COMMITTED }
  | { answered: true };
/** Events are being written (too late to defer: the event could be written twice). */
export const STAGE_WRITING = 1;
/** The events are written and the state saved. */
export const STAGE_COMMITTED = 2;

/** The hook's side of the watchdog. */
export interface Watchdog {
  /** Tells the supervisor what it needs after a kill; call it as soon as the payload is parsed. */
  parsed(hook: string, defer: { inbox: string; payload: unknown } | null): void;
  /** `STAGE_WRITING` before the first event is written, `STAGE_COMMITTED` once saved. */
  stage(stage: typeof STAGE_WRITING | typeof STAGE_COMMITTED): void;
  /** The hook wrote its answer. */
  answered(): void;
  /**
   * Leave the supervisor running at exit: when the exit itself may wait on a stuck thread (after a
   * timeout, or a request to the server), it ends the process at its deadline.
   */
  keep(): void;
}

/**
 * The supervisor. Sleeps until the deadline, then looks at the hook every $10 s while it is still its
 * parent (not gone, its process id perhaps reused), and kills it when it is:
 * - blocked: at two looks in a row every thread of it was in an interruptible wait (not runnable, not
 *   waiting on the disk or a kernel lock, which answer in the end: a busy machine made hooks queue for
 *   seconds on a directory's lock) and its CPU time did not move (a FIFO nobody writes, a futex, an
 *   exit that waits on a stuck thread);
 * - in a loop: it has computed for as long as its budget, $11 ms of CPU;
 * - still there after $9 looks (`WATCHDOG_CAP_MS`).
 * A hook that is only slow (starved of CPU on a busy machine: its threads wait for a CPU, so they are
 * runnable) is left to reach its own timer and exit 0. Then it runs the rescuer with the pipe as its
 * stdin. $1 seconds, $2 the hook's pid, $3 node, $4 the rescuer, $5 the state directory, $6 the
 * harness, $7 the budget in ms, $8 the grace. Linux: /proc (CPU time in ticks of 10 ms, every thread's
 * state); elsewhere ps (the process's state, its CPU time as text).
 */
const SUPERVISOR = `h=$2 node=$3 rescue=$4 state=$5 harness=$6 budget=$7 grace=$8 max=$9 again=\${10} cpucap=\${11}
n=0 still=0 last=
sleep "$1" || exit 0
while :; do
  p=$(cut -d' ' -f4 /proc/$$/stat 2>/dev/null)
  [ -n "$p" ] || p=$(ps -o ppid= -p $$ 2>/dev/null | tr -d ' ')
  [ "$p" = "$h" ] || exit 0
  st=$(sed 's/.*) //' "/proc/$h/stat" 2>/dev/null)
  if [ -n "$st" ]; then
    set -- $st; c=$(( (\${12} + \${13}) * 10 ))
    run=$(cat /proc/"$h"/task/*/stat 2>/dev/null | grep -c ') [RD] ')
  else
    c=$(ps -o time= -p "$h" 2>/dev/null)
    case $(ps -o state= -p "$h" 2>/dev/null | tr -d ' ') in [RDU]*) run=1 ;; *) run=0 ;; esac
  fi
  [ "$n" -ge "$max" ] && break
  case "$c" in '' | *[!0-9]*) ;; *) [ "$c" -ge "$cpucap" ] && break ;; esac
  if [ "$run" = 0 ] && [ "$c" = "$last" ]; then still=$((still + 1)); else still=0; fi
  [ "$still" -ge 2 ] && break
  last=$c n=$((n + 1))
  sleep "$again" || exit 0
done
kill -KILL "$h" 2>/dev/null || exit 0
exec "$node" "$rescue" "$state" "$harness" "$budget" "$grace"`;

/**
 * Starts the supervisor of this hook process; it acts `budgetMs + WATCHDOG_GRACE_MS` after the process
 * started. Returns null where it cannot start (no /bin/sh: the hook's own timer is then the only deadline).
 */
export function startWatchdog(o: {
  rescue: string;
  state: string;
  harness: 'claude-code' | 'codex';
  budgetMs: number;
}): Watchdog | null {
  if (process.platform === 'win32') return null;
  let child: ChildProcess;
  try {
    // Loaded here: child_process is the larger part of what the watchdog costs (docs/benchmarks.md).
    const { spawn } = process.getBuiltinModule('node:child_process') as typeof import('node:child_process');
    const seconds = Math.max(0, o.budgetMs + WATCHDOG_GRACE_MS - performance.now()) / 1000;
    child = spawn(
      '/bin/sh',
      [
        '-c',
        SUPERVISOR,
        'hansard-hook-watchdog',
        seconds.toFixed(3),
        String(process.pid),
        process.execPath,
        o.rescue,
        o.state,
        o.harness,
        String(o.budgetMs),
        String(WATCHDOG_GRACE_MS),
        String(Math.ceil(WATCHDOG_CAP_MS / LOOK_MS)),
        String(LOOK_MS / 1000),
        String(o.budgetMs),
      ],
      // Its own process group (killed whole at exit); its output goes nowhere, a hook's stdout is its answer.
      { detached: true, stdio: ['pipe', 'ignore', 'ignore'] },
    );
  } catch {
    return null;
  }
  child.on('error', () => {});
  child.unref();
  const pipe = child.stdin as import('node:net').Socket;
  pipe.on('error', () => {}); // the supervisor is gone (killed at exit, or by someone): nothing to tell
  pipe.unref();
  let kept = false;
  process.once('exit', () => {
    if (kept || child.pid === undefined) return;
    try {
      process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  });
  // libuv writes to a pipe at once when it is not full (64 KiB): a note is in the kernel before the
  // hook's next step, so a thread that blocks right after it cannot keep it from the rescuer.
  const note = (n: WatchdogNote) => {
    try {
      pipe.write(`${JSON.stringify(n)}\n`);
    } catch {
      // not serialisable (it is parsed JSON, so it is), or the pipe is closed
    }
  };
  return {
    parsed: (hook, defer) => note({ hook, defer }),
    stage: (stage) => note({ stage }),
    answered: () => note({ answered: true }),
    keep: () => {
      kept = true;
    },
  };
}

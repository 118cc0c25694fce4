/**
 * The hook's watchdog (issue 25 item 1, seed 000: "A hook stops after 3.5 seconds, before its agent's
 * five-second limit. On failure, it returns an empty result so the agent continues"). The budget is
 * enforced from outside the work it guards: a small supervisor process that `dist/hook.cjs` starts before
 * anything else runs, which the hook's own thread cannot stop, whatever it does (spin in JavaScript, loop
 * in a native call, block in a system call, or only crawl on a machine too busy to run it).
 *
 * Two deadlines:
 * - at the budget (3.5 s, `HANSARD_HOOK_BUDGET_MS`), the hook's own timer (`hook-main.ts`) answers empty,
 *   defers a parsed payload, records `timeout` and exits 0, as long as its event loop runs (it waits for
 *   a lock or the server);
 * - at the hard deadline (`hardDeadlineMs`: the budget + 1 s, never later than 4.6 s after the process
 *   started), the supervisor kills a hook that has not ended (SIGKILL: its stdout stays empty; the agent
 *   sees a failed hook and goes on), whatever it is doing: blocked, in a loop, or only slow. The agent
 *   would kill it at 5 s anyway, and then nothing would defer its payload: waiting gains nothing.
 * The supervisor (`/bin/sh`) reads the notes the hook writes it on a pipe (what it parsed, whether it began
 * writing, deferred or answered; a large payload is spilled to a file first, `spill`) with `cat`, so it
 * learns at once when the hook is gone: the pipe's end. Then it runs the rescuer
 * (`hook-watchdog-rescue.ts`, `dist/hook-watchdog.cjs`, Node started only then) with the notes, which
 * defers the payload when no event of it was written and records the failure: after its own kill at the
 * hard deadline, and also when something else killed the hook before it answered (its agent's timeout, a
 * signal, a crash). A hook that answered and ended by itself leaves nothing to do.
 *
 * Why a process and not a worker thread: a worker can end the process with status 0 (the C library's
 * `exit` through WASI), but starting one costs about 30 ms of CPU in every hook (V8 isolate and Node
 * bootstrap), +27% CPU and +21% wall time at p50 as measured; the supervisor costs the fork of `sh` and
 * loading child_process (docs/benchmarks.md). The price is the exit status of a killed hook: not 0. The
 * hook ends every ordinary run by killing the supervisor (its process group); after a timeout it leaves
 * it, so that an exit that itself waits on a stuck thread (a DNS lookup in libuv's pool) is ended too. On
 * Windows (no /bin/sh) only the hook's own timer remains.
 */
import { closeSync, constants, openSync, unlinkSync, writeSync } from 'node:fs';
import { mkdirs } from '../api/safe-fs.js';
import { killGroup, spawnSupervisor } from './hook-supervisor-spawn.js';

/** The budget a hook answers within (seed 000: before the agent's five-second limit). */
export const HOOK_BUDGET_MS = 3_500;
/** How long past the budget the supervisor kills a hook that has not ended (its own timer could not). */
export const WATCHDOG_GRACE_MS = 1_000;
/**
 * The latest the supervisor kills a hook, in ms after the process started, whatever the budget: before
 * Claude Code's 5 s hook timeout (`CLAUDE_HOOK_TIMEOUT_S`), with time for the kill and the agent's reading.
 */
export const WATCHDOG_LATEST_MS = 4_600;
/**
 * A parsed payload whose note would be longer than this (UTF-8 bytes) goes to a spill file, and the note
 * names the file: a note is written to the pipe at once only while the pipe has room (16 KiB at least on
 * every system; 64 KiB on Linux), and a thread that blocks right after a partial write never writes the
 * rest (issue 25 attack item 15: a 5 MB tool result arrived cut and was lost).
 */
export const INLINE_NOTE_BYTES = 16 * 1024;

/** The budget of this process: `HANSARD_HOOK_BUDGET_MS` (tests shorten it), else 3.5 s. */
export function hookBudgetMs(env: NodeJS.ProcessEnv): number {
  const n = Number(env.HANSARD_HOOK_BUDGET_MS);
  return Number.isFinite(n) && n > 0 ? n : HOOK_BUDGET_MS;
}

/** The hard deadline of a hook with budget `budgetMs`, in ms after its process started. */
export function hardDeadlineMs(budgetMs: number): number {
  return Math.min(budgetMs + WATCHDOG_GRACE_MS, WATCHDOG_LATEST_MS);
}

/** What the hook parsed and would defer: the payload itself, or the spill file that holds it. */
export type DeferNote = { inbox: string; payload: unknown } | { inbox: string; spill: string };

/** How far the hook got, as it tells the supervisor (one JSON object per line on the pipe). */
export type WatchdogNote =
  | { hook: string; defer: DeferNote | null }
  | { stage: typeof STAGE_WRITING | typeof STAGE_COMMITTED }
  | { deferred: true }
  | { answered: true };
/** Events are being written (too late to defer: the event could be written twice). */
export const STAGE_WRITING = 1;
/** The events are written and the state saved. */
export const STAGE_COMMITTED = 2;

/** The hook's side of the watchdog. */
export interface Watchdog {
  /**
   * Tells the supervisor what it needs after a kill; call it as soon as the payload is parsed, before any
   * work that may block. A payload too large for one note is first written to a spill file beside the
   * inbox (`<inbox>.<pid>.spill`, 0600, removed when this process exits).
   */
  parsed(hook: string, defer: { inbox: string; payload: unknown } | null): void;
  /** `STAGE_WRITING` before the first event is written, `STAGE_COMMITTED` once saved. */
  stage(stage: typeof STAGE_WRITING | typeof STAGE_COMMITTED): void;
  /** This process appended the payload to the inbox itself (its own timer): not to be deferred again. */
  deferred(): void;
  /** The hook wrote its answer and has nothing left that a rescue could do. */
  answered(): void;
  /**
   * Leave the supervisor running at exit: when the exit itself may wait on a stuck thread (after a
   * timeout, or a request to the server), it ends the process at its hard deadline.
   */
  keep(): void;
}

/**
 * The supervisor. A killer in the background sleeps until the hard deadline, then kills the hook
 * (SIGKILL) if it is still the supervisor's parent (Linux: /proc; elsewhere the kill alone), and exits 0
 * when it did. Meanwhile `cat` reads the hook's notes until the pipe's end: the hook is gone (killed by the
 * killer or by anyone else; an ordinary exit kills this whole process group first). Then: the killer
 * still waiting (stopped now) and the hook having answered (a note of its own line: a payload's JSON
 * holds no newline), nothing to do; else the rescuer, given the
 * notes on its stdin (never on its command line, which anyone can read). $1 seconds to the hard deadline,
 * $2 the hook's pid, $3 node, $4 the rescuer, $5 the state directory, $6 the harness, $7 the budget and
 * $8 the hard deadline in ms, $9 when the hook started (ms since the epoch).
 *
 * `cat` and `sleep` are found in the system's own folders first, whatever PATH the agent runs its hooks
 * with: `hansard integrations sync` installs commands that need no PATH (absolute node and bin/hansard),
 * and with an empty one `sleep` was not found (no hard deadline at all) and `cat` ended at once, so the
 * supervisor took every hook for killed and recorded a failure for each one slower than the rescuer's
 * start (a loaded machine: every hook).
 */
const SUPERVISOR = `PATH=/bin:/usr/bin\${PATH:+:$PATH}
h=$2 node=$3 rescue=$4 state=$5 harness=$6 budget=$7 hard=$8 born=$9
( trap 'kill "$s" 2>/dev/null; exit 1' TERM
  sleep "$1" & s=$!
  wait "$s" || exit 1
  if [ -r /proc/$$/stat ]; then read -r _ _ _ p _ < /proc/$$/stat; [ "$p" = "$h" ] || exit 1; fi
  kill -KILL "$h" 2>/dev/null || exit 1
  exit 0 ) &
k=$!
notes=$(cat)
kill "$k" 2>/dev/null
nl='
'
if wait "$k"; then how=killed; else
  how=gone
  case "$nl$notes$nl" in *"$nl"'{"answered":true}'"$nl"*) exit 0 ;; esac
fi
exec "$node" "$rescue" "$state" "$harness" "$budget" "$hard" "$born" "$how" <<EOF
$notes
EOF`;

/**
 * Starts the supervisor of this hook process; it kills the hook at `hardDeadlineMs(budgetMs)` after the
 * process started, and rescues it when it is gone without having answered. Returns null where it cannot
 * start (no /bin/sh: the hook's own timer is then the only deadline).
 */
export function startWatchdog(o: {
  rescue: string;
  state: string;
  harness: 'claude-code' | 'codex';
  budgetMs: number;
}): Watchdog | null {
  if (process.platform === 'win32') return null;
  const hard = hardDeadlineMs(o.budgetMs);
  const seconds = Math.max(0, hard - performance.now()) / 1000;
  const supervisor = spawnSupervisor([
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
    String(hard),
    String(Math.round(performance.timeOrigin)),
  ]);
  if (supervisor === null) return null;
  let kept = false;
  let spill: string | null = null;
  process.once('exit', () => {
    // This process ends by itself: it wrote or deferred its payload, the spilled copy is of no use.
    if (spill !== null) {
      try {
        unlinkSync(spill);
      } catch {
        // gone already
      }
    }
    if (!kept) killGroup(supervisor.pid);
  });
  // A note is written at once while the socket has room: it is in the kernel before the hook's next
  // step, so a thread that blocks right after it cannot keep it from the supervisor.
  const note = (text: string) => supervisor.write(`${text}\n`);
  return {
    parsed: (hook, defer) => {
      if (defer === null) return note(JSON.stringify({ hook, defer }));
      let payload: string | undefined;
      try {
        payload = JSON.stringify(defer.payload);
      } catch {
        // not serialisable (it is parsed JSON, so it is)
      }
      if (payload === undefined) return note(JSON.stringify({ hook, defer: null }));
      const head = `{"hook":${JSON.stringify(hook)},"defer":{"inbox":${JSON.stringify(defer.inbox)},`;
      if (
        payload.length * 3 + head.length < INLINE_NOTE_BYTES ||
        Buffer.byteLength(payload) + head.length < INLINE_NOTE_BYTES
      )
        return note(`${head}"payload":${payload}}}`);
      const path = spillPayload(`${defer.inbox}.${process.pid}.spill`, payload);
      if (path !== null) spill = path;
      // A spill the state directory refused: the payload inline all the same (the rescuer may read it cut).
      note(path !== null ? `${head}"spill":${JSON.stringify(path)}}}` : `${head}"payload":${payload}}}`);
    },
    stage: (stage) => note(JSON.stringify({ stage })),
    deferred: () => note('{"deferred":true}'),
    answered: () => note('{"answered":true}'),
    keep: () => {
      kept = true;
    },
  };
}

/**
 * Writes `payload` (one JSON line) to `path`, a new regular file of mode 0600 (one left by a dead process
 * of the same pid is replaced; a link or anything else put there is never followed or written through).
 * Not synced to the disk: a rescue copy lives for the seconds until the rescuer reads it, and a machine
 * that crashes meanwhile loses the hook's event as it would without it. Returns `path`, or null when the
 * state directory refuses it.
 */
function spillPayload(path: string, payload: string): string | null {
  const flags =
    constants.O_WRONLY |
    constants.O_CREAT |
    constants.O_EXCL |
    (constants.O_NOFOLLOW ?? 0) |
    (constants.O_NONBLOCK ?? 0);
  for (let attempt = 0; attempt < 2; attempt++) {
    let fd: number;
    try {
      if (attempt === 0) mkdirs(path.slice(0, path.lastIndexOf('/')), 0o700);
      fd = openSync(path, flags, 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) return null;
      try {
        unlinkSync(path);
      } catch {
        return null;
      }
      continue;
    }
    try {
      const bytes = Buffer.from(`${payload}\n`);
      for (let done = 0; done < bytes.length; ) done += writeSync(fd, bytes, done);
      return path;
    } catch {
      // a full disk: no half copy left behind
      try {
        unlinkSync(path);
      } catch {
        // gone already
      }
      return null;
    } finally {
      closeSync(fd);
    }
  }
  return null;
}

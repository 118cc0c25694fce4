/**
 * The hook's watchdog (issue 25 item 1, seed 000: "A hook stops after 3.5 seconds … On failure, it
 * returns an empty result so the agent continues"). The budget is enforced from outside the work it
 * guards: a worker thread, started by `dist/hook.cjs` before anything else runs, that the hook's own thread
 * cannot stop, whatever it does (spin in JavaScript, loop in a native call, block in a system call).
 *
 * Two deadlines:
 * - at the budget (3.5 s, `HANSARD_HOOK_BUDGET_MS`), the hook's own timer (`hook-main.ts`) answers empty,
 *   defers a parsed payload, records `timeout` and exits 0, as long as its event loop runs (it waits for
 *   a lock or the server);
 * - `WATCHDOG_GRACE_MS` later, if the process is still there, its thread is blocked: the watchdog
 *   (`hook-watchdog-fire.ts`, `dist/hook-watchdog.cjs`, loaded only then) answers empty, defers the
 *   payload when no event was written yet, records `timeout` and ends the process with status 0 through
 *   the C library's `exit` (`hook-exit.ts`), which waits for no blocked thread.
 *
 * The two threads share a few integers (a SharedArrayBuffer), so the watchdog knows how far the hook got
 * even when its thread is stuck: who answered (`ANSWER`) and whether events are being written or are
 * saved (`STAGE`). The payload to defer is posted to the watchdog when it is parsed.
 *
 * Cost: the worker starts beside the hook's own work (another core when there is one) and is stopped at
 * exit; its code is a few lines, the rest loads only when it fires (docs/benchmarks.md measures it).
 */
import { SHARE_ENV, Worker } from 'node:worker_threads';
import { EXIT_KEY, hardExit } from './hook-exit.js';

/** The budget a hook answers within (seed 000: before the agent's five-second limit). */
export const HOOK_BUDGET_MS = 3_500;
/** How long after the budget the watchdog ends a process whose own thread did not. */
export const WATCHDOG_GRACE_MS = 250;

/** The budget of this process: `HANSARD_HOOK_BUDGET_MS` (tests shorten it), else 3.5 s. */
export function hookBudgetMs(env: NodeJS.ProcessEnv): number {
  const n = Number(env.HANSARD_HOOK_BUDGET_MS);
  return Number.isFinite(n) && n > 0 ? n : HOOK_BUDGET_MS;
}

/** Slots of the shared Int32Array: who answered, how far the writing got, a never-signalled slot for
 * parking a thread, and 1 once the hook's thread runs the exit the watchdog asked for. */
export const ANSWER = 0;
export const STAGE = 1;
const PARK = 2;
export const EXITING = 3;
/** `ANSWER` values: nobody yet, the hook's own thread, the watchdog. */
export const ANSWERED_BY_HOOK = 1;
export const ANSWERED_BY_WATCHDOG = 2;
/** `STAGE` values: parsing or waiting (nothing written), events being written, written and saved. */
export const STAGE_WRITING = 1;
export const STAGE_COMMITTED = 2;

/** What the worker is started with (structured-cloned). */
export interface WatchdogData {
  /** the shared flags (`ANSWER`, `STAGE`) */
  flags: SharedArrayBuffer;
  /** when to fire, on the `performance.timeOrigin + performance.now()` clock (ms) */
  at: number;
  /** `dist/hook-watchdog.cjs`: the code that fires */
  fire: string;
  state: string;
  harness: 'claude-code' | 'codex';
  budgetMs: number;
  graceMs: number;
}

/** What the hook tells the watchdog once its payload is parsed. */
export interface WatchdogProgress {
  /** `harness:event`, what a failure is recorded under */
  hook: string;
  /** the session inbox and the payload to append there when the hook could not write it */
  defer: { inbox: string; payload: unknown } | null;
}

/** The hook's side of the watchdog. */
export interface Watchdog {
  /** Claims the answer for the hook's own thread; false when the watchdog answered (the process is ending). */
  claimAnswer(): boolean;
  /** Hands the watchdog what a deadline needs; call it as soon as the payload is parsed. */
  parsed(progress: WatchdogProgress): void;
  /** `STAGE_WRITING` before the first event is written (too late to defer), `STAGE_COMMITTED` once saved. */
  stage(stage: typeof STAGE_WRITING | typeof STAGE_COMMITTED): void;
  /** Blocks this thread for good: the watchdog answered and is ending the process. */
  park(): never;
}

/** The worker's code: wait, then load the firing code. `require` works in an `eval` worker. */
const WORKER_SOURCE = `
const { workerData: d, parentPort } = require('node:worker_threads');
let progress = null;
parentPort.on('message', (m) => { progress = m; });
setTimeout(() => require(d.fire).fire(d, progress), Math.max(0, d.at - performance.timeOrigin - performance.now()));
`;

/**
 * Starts the watchdog of this hook process: it fires `budgetMs + WATCHDOG_GRACE_MS` after the process
 * started. Returns null when no worker can be started (the hook's own timer is then the only deadline).
 */
export function startWatchdog(o: {
  fire: string;
  state: string;
  harness: 'claude-code' | 'codex';
  budgetMs: number;
}): Watchdog | null {
  const flags = new Int32Array(new SharedArrayBuffer(4 * 4));
  let worker: Worker;
  try {
    const data: WatchdogData = {
      flags: flags.buffer as SharedArrayBuffer,
      at: performance.timeOrigin + o.budgetMs + WATCHDOG_GRACE_MS,
      fire: o.fire,
      state: o.state,
      harness: o.harness,
      budgetMs: o.budgetMs,
      graceMs: WATCHDOG_GRACE_MS,
    };
    // SHARE_ENV: no copy of the environment; no stdin; its stdout and stderr are never written.
    worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: data,
      env: SHARE_ENV,
      stdin: false,
      trackUnmanagedFds: false,
    });
    worker.on('error', () => {});
    worker.unref();
  } catch {
    return null;
  }
  // What the watchdog asks this thread to run when it fires (an inspector interrupt, which V8 runs even
  // inside a busy loop): end the process from here, where exit is safe.
  (globalThis as Record<symbol, unknown>)[Symbol.for(EXIT_KEY)] = () => {
    Atomics.store(flags, EXITING, 1);
    hardExit(0);
  };
  return {
    claimAnswer: () => {
      const was = Atomics.compareExchange(flags, ANSWER, 0, ANSWERED_BY_HOOK);
      return was === 0 || was === ANSWERED_BY_HOOK;
    },
    parsed: (progress) => {
      try {
        worker.postMessage(progress);
      } catch {
        // not cloneable (it is parsed JSON, so it is): the watchdog then records without deferring
      }
    },
    stage: (stage) => {
      if (Atomics.load(flags, STAGE) < stage) Atomics.store(flags, STAGE, stage);
    },
    park: () => {
      for (;;) Atomics.wait(flags, PARK, 0);
    },
  };
}

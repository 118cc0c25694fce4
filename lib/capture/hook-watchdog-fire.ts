/**
 * What the hook's watchdog does when it fires (issue 25 item 1): the program of `dist/hook-watchdog.cjs`,
 * loaded by the watchdog's worker thread (`hook-watchdog.ts`) only at its deadline, the hook's budget plus
 * `WATCHDOG_GRACE_MS`, when the hook's own thread has not ended the process: that thread is blocked.
 *
 * It answers empty (nothing on stdout), defers the parsed payload to the session's inbox when no event
 * of it was written yet (the session's next hook, or the shipper, writes it: nothing is lost), records a
 * `timeout` in hook-failures.json without payload content, and ends the process with status 0. The file
 * operations are the state directory's own, which refuse what is not a regular file and make folders in
 * bounded steps, and its lock is waited for 250 ms at most, so the record does not block on what blocked
 * the hook.
 *
 * Ending the process: the C library's `exit` from this thread while the hook's thread runs JavaScript
 * can crash it (exit destroys what V8 uses there: measured, 3 runs in 30 ended in SIGSEGV when the hook
 * was merely slow). So the hook's thread is asked first, through the inspector (`connectToMainThread`),
 * whose messages V8 runs as interrupts even inside a busy loop: it ends the process itself
 * (`hook-exit.ts`, its `exit` listeners run, its session lock is released). Only when it does not
 * answer within `MAIN_ANSWER_MS` (it is blocked in a system call or a native loop, not in JavaScript)
 * does this thread call `exit`.
 */
import { EXIT_KEY, libcExit } from './hook-exit.js';
import {
  ANSWER,
  ANSWERED_BY_WATCHDOG,
  EXITING,
  STAGE,
  STAGE_COMMITTED,
  STAGE_WRITING,
  type WatchdogData,
  type WatchdogProgress,
} from './hook-watchdog.js';
import { appendInbox } from './inbox.js';
import { recordHookFailure } from './state-dir.js';

/** Fires the watchdog (called in its worker thread). Ends the process unless the hook answered first. */
export function fire(d: WatchdogData, progress: WatchdogProgress | null): void {
  const flags = new Int32Array(d.flags);
  const started = d.at - d.budgetMs - d.graceMs;
  const ms = () => Math.round(performance.timeOrigin + performance.now() - started);
  if (Atomics.compareExchange(flags, ANSWER, 0, ANSWERED_BY_WATCHDOG) !== 0) {
    // The hook's thread answered and is ending the process, yet it is still here: its exit waits for a
    // thread stuck in a system call. The answer is out; after one more grace, end it the hard way.
    setTimeout(() => {
      recordHookFailure(d.state, {
        hook: progress?.hook ?? `${d.harness}:unknown`,
        reason: 'timeout',
        message: `answered, but the process had not ended ${d.graceMs * 2} ms past its ${d.budgetMs} ms budget (a thread stuck in a system call): killed by the watchdog`,
        ms: ms(),
      });
      process.kill(process.pid, 'SIGKILL');
    }, d.graceMs);
    return;
  }
  const stage = Atomics.load(flags, STAGE);
  let deferred = false;
  if (progress?.defer && stage < STAGE_WRITING) {
    try {
      appendInbox(progress.defer.inbox, progress.defer.payload);
      deferred = true;
    } catch {
      // the state directory refuses it: the record below says so
    }
  }
  const outcome = deferred
    ? "the event was deferred to the session's next hook"
    : stage === STAGE_COMMITTED
      ? 'the events were written'
      : stage === STAGE_WRITING
        ? 'its events may be partly written'
        : progress
          ? 'the event was not recorded'
          : 'no payload was read';
  recordHookFailure(d.state, {
    hook: progress?.hook ?? `${d.harness}:unknown`,
    reason: 'timeout',
    message: `the hook's thread was blocked past its ${d.budgetMs} ms budget (a system call or a loop that did not return): the watchdog answered empty and ended it; ${outcome}`,
    ms: ms(),
  });
  endProcess(flags, d.graceMs);
}

/** How long the hook's thread has to start on the inspector's interrupt before this thread exits. */
const MAIN_ANSWER_MS = 200;

/**
 * Ends the process with status 0: by the hook's thread when it runs JavaScript (it sets `EXITING`), else
 * from here. If the hook's thread started to exit but the process is still there `graceMs` later, its
 * exit waits for a thread stuck in a system call: a signal ends it.
 */
function endProcess(flags: Int32Array, graceMs: number): void {
  const fromHere = () => {
    if (Atomics.load(flags, EXITING) === 1) {
      // Two threads in exit() at once is undefined behaviour: the hook's thread is in it; give it time.
      setTimeout(() => process.kill(process.pid, 'SIGKILL'), graceMs);
      return;
    }
    libcExit(0);
    // No WASI in this Node: a signal ends it (the agent sees a failed hook, but goes on).
    process.kill(process.pid, 'SIGKILL');
  };
  try {
    const { Session } = process.getBuiltinModule('node:inspector') as typeof import('node:inspector');
    const session = new Session();
    session.connectToMainThread();
    session.post('Runtime.evaluate', {
      expression: `globalThis[Symbol.for(${JSON.stringify(EXIT_KEY)})]?.()`,
    });
  } catch {
    fromHere(); // a Node without the inspector
    return;
  }
  setTimeout(fromHere, MAIN_ANSWER_MS);
}

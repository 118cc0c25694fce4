/**
 * The rescuer (issue 25 item 1): the program of `dist/hook-watchdog.cjs`, which the hook's supervisor
 * (`hook-watchdog.ts`) becomes after it killed a hook whose own thread was blocked past its budget. Its
 * stdin is the pipe the hook wrote its progress to (closed now: read to its end at once); its arguments
 * are the state directory, the harness, the budget and the grace in ms.
 *
 * It defers the hook's parsed payload to the session's inbox when no event of it was written yet (the
 * session's next hook, or the shipper, writes it: nothing is lost) and records a `timeout` in
 * hook-failures.json without payload content. The state directory's own file operations refuse what is
 * not a regular file and make folders in bounded steps, and its lock is waited for 250 ms at most.
 */
import { STAGE_COMMITTED, STAGE_WRITING, type WatchdogNote } from './hook-watchdog.js';
import { appendInbox } from './inbox.js';
import { recordHookFailure } from './state-dir.js';

/** Defers and records for the killed hook. Never throws. */
export function rescue(argv: string[], notes: string): void {
  const [state, harness, budget, grace] = argv;
  if (!state) return;
  let hook = `${harness ?? 'claude-code'}:unknown`;
  let defer: { inbox: string; payload: unknown } | null = null;
  let stage = 0;
  let answered = false;
  let parsed = false;
  for (const line of notes.split('\n')) {
    let n: WatchdogNote;
    try {
      n = JSON.parse(line) as WatchdogNote;
    } catch {
      continue; // empty, or cut short (a note larger than the pipe held)
    }
    if ('hook' in n) {
      hook = n.hook;
      defer = n.defer;
      parsed = true;
    } else if ('stage' in n) stage = Math.max(stage, n.stage);
    else if ('answered' in n) answered = true;
  }
  const ms = Number(budget) + Number(grace);
  if (answered) {
    recordHookFailure(state, {
      hook,
      reason: 'timeout',
      message: `answered, but the process had not ended ${grace} ms past its ${budget} ms budget (its exit waited for a thread stuck in a system call): killed by the watchdog`,
      ms,
    });
    return;
  }
  let deferred = false;
  if (defer && stage < STAGE_WRITING) {
    try {
      appendInbox(defer.inbox, defer.payload);
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
        : parsed
          ? 'the event was not recorded'
          : 'no payload was read';
  recordHookFailure(state, {
    hook,
    reason: 'timeout',
    message: `the hook's thread was blocked past its ${budget} ms budget (a system call or a loop that did not return): killed by the watchdog, the agent got an empty answer and a failed hook; ${outcome}`,
    ms,
  });
}

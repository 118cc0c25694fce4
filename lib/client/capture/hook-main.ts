/**
 * The entry of `dist/hook-bundle.cjs`: `bin/hansard` runs it (through `dist/hook.cjs`) instead of the
 * whole CLI for `hansard hook claude-code`, `hansard hook codex` and `hansard hook ship`, so that a hook
 * loads only what it needs (no commander, no server stack): the hook runs on every tool call of the agent
 * and must stay cheap.
 *
 * The deadline (issue 11, issue 25 item 1), in two layers:
 * - here, a timer that, when the budget (3.5 s) is spent, prints nothing, defers a parsed payload that no
 *   event was written for, records `timeout` in hook-failures.json and exits 0, whatever the hook is still
 *   waiting for (a lock, the server);
 * - the watchdog (`hook-watchdog.ts`), a supervisor process `dist/hook.cjs` started first, kills the hook
 *   at its hard deadline (1 s later, never past 4.6 s after the start) when this thread has not ended it
 *   (blocked in a system call, in a loop, starved of CPU), and defers and records for it, also when
 *   something else killed it first. This thread tells it how far it got (`progress`).
 * Exit status is 0 in every case but that one (Claude Code blocks the tool call on 2 and shows other
 * codes as errors; a killed hook is shown as failed, and the agent goes on).
 * `lib/client/capture/hook-entry.ts` runs it; tests import it without running it.
 */
import { fstatSync, readSync } from 'node:fs';
import { type HookProgress, runClaudeHook, runCodexHook } from './hook.js';
import { hookBudgetMs, STAGE_COMMITTED, STAGE_WRITING, type Watchdog } from './hook-watchdog.js';
import { appendInbox } from './inbox.js';
import { recordHookFailure, stateDir } from './state-dir.js';

/** The largest payload read from stdin; a longer one is not a hook payload (an endless stream, a device). */
export const MAX_STDIN_BYTES = 64 * 1024 * 1024;

/**
 * Runs `hansard hook <what> …` (argv without node and the script). Resolves to the exit code.
 * `watchdog`: the one `dist/hook.cjs` started (null: this thread's timer is the only deadline).
 */
export async function hookMain(
  argv: string[],
  env: NodeJS.ProcessEnv,
  watchdog: Watchdog | null = null,
): Promise<number> {
  const what = argv[1];
  if (what === 'ship') {
    const { runShipper, shipSummary } = await import('./ship.js');
    // Detached (from a hook) its stderr goes nowhere; run by hand (doctor's fix) it says what it did.
    const report = await runShipper(stateDir(env), env).catch(() => null);
    if (report) process.stderr.write(`${shipSummary(report)}\n`);
    return 0;
  }
  const progress = watchedProgress(what === 'codex' ? 'codex:unknown' : 'claude-code:unknown', watchdog);
  let answered = false;
  const answer = (out: string): void => {
    if (answered) return;
    answered = true;
    watchdog?.answered();
    if (out) process.stdout.write(`${out}\n`);
  };
  const timer = setTimeout(
    () => {
      if (answered) return;
      // The answer is empty (stdout stays so); the watchdog hears of it once the rest is done, so that a
      // kill meanwhile still leaves it a payload to defer.
      answered = true;
      // Parsed but not written: the payload waits in the session's inbox for its next hook (or the
      // shipper), so the agent goes on and the event is not lost.
      let deferred = false;
      if (progress.defer && !progress.writing && !progress.committed) {
        try {
          appendInbox(progress.defer.inbox, progress.defer.payload);
          deferred = true;
          watchdog?.deferred();
        } catch {
          // the state directory refuses it: the failure below says so
        }
      }
      recordHookFailure(stateDir(env), {
        hook: progress.hook,
        reason: 'timeout',
        message: `no answer within ${hookBudgetMs(env)} ms (a held session lock, a slow disk or server): answered empty${deferred ? "; the event was deferred to the session's next hook" : progress.committed ? '; the events were written' : '; the event was not recorded'}`,
        ms: Math.round(performance.now()),
      });
      watchdog?.answered();
      // The exit may wait for libuv's pool, where a request may still wait for the network (a DNS
      // lookup): the supervisor stays and ends the process at its hard deadline if it does.
      watchdog?.keep();
      process.exit(0);
    },
    Math.max(0, hookBudgetMs(env) - performance.now()),
  );
  const ctx = {
    env,
    selfCommand: [process.execPath, process.argv[1]!],
    progress,
  };
  try {
    const out =
      what === 'codex'
        ? await runCodexHook(argv.at(-1) === 'codex' ? undefined : argv.at(-1), ctx)
        : await runClaudeHook(readStdin(hookBudgetMs(env)), ctx);
    answer(out);
  } catch {
    // runClaudeHook/runCodexHook do not throw; this is the last guard of "exit 0, stdout clean".
    answer('');
  }
  clearTimeout(timer);
  // A request to the server failed (SessionStart's token): a DNS lookup still running in libuv's pool
  // would hold the exit past the agent's limit; the supervisor stays to end it.
  if (progress.network) watchdog?.keep();
  return 0;
}

/**
 * The progress the deadlines read: a plain object to `hook.ts`, whose settings also reach the watchdog
 * (the payload once parsed, the writing and committed stages), which cannot ask this thread.
 */
function watchedProgress(initial: string, watchdog: Watchdog | null): HookProgress {
  let hook = initial;
  let defer: HookProgress['defer'] = null;
  let writing = false;
  let committed = false;
  return {
    network: false,
    get hook() {
      return hook;
    },
    set hook(v) {
      hook = v;
    },
    get defer() {
      return defer;
    },
    set defer(v) {
      defer = v;
      watchdog?.parsed(hook, v);
    },
    get writing() {
      return writing;
    },
    set writing(v) {
      writing = v;
      if (v) watchdog?.stage(STAGE_WRITING);
    },
    get committed() {
      return committed;
    },
    set committed(v) {
      committed = v;
      if (v) watchdog?.stage(STAGE_COMMITTED);
    },
  };
}

/**
 * All of stdin as text, at most `MAX_STDIN_BYTES` (more: '' and the payload is refused as bad input).
 * Read synchronously: the payload is then parsed before the first await, so a deadline that fires later
 * (a queue at the lock, a machine too busy to run the hook in time) can always defer it rather than lose
 * it. Claude Code writes the payload and closes stdin; a terminal or another character device (someone
 * ran it by hand, `/dev/zero`) gives '' without a read. A pipe that is never closed blocks this read: the
 * watchdog answers for it.
 */
function readStdin(budgetMs: number): string {
  try {
    if (fstatSync(0).isCharacterDevice()) return '';
  } catch {
    return ''; // no stdin at all
  }
  const chunks: Buffer[] = [];
  let total = 0;
  const buf = Buffer.alloc(64 * 1024);
  for (;;) {
    let n: number;
    try {
      n = readSync(0, buf, 0, buf.length, null);
    } catch (err) {
      // A non-blocking stdin inherited from the caller (EAGAIN): wait for more, up to the budget.
      if ((err as NodeJS.ErrnoException).code !== 'EAGAIN' || performance.now() > budgetMs) return '';
      Atomics.wait(STDIN_WAIT, 0, 0, 5);
      continue;
    }
    if (n <= 0) break;
    total += n;
    if (total > MAX_STDIN_BYTES) return '';
    chunks.push(Buffer.from(buf.subarray(0, n)));
  }
  return Buffer.concat(chunks).toString('utf8');
}

const STDIN_WAIT = new Int32Array(new SharedArrayBuffer(4));

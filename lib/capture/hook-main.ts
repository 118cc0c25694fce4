/**
 * The entry of `dist/hook.js`: `bin/hansard` runs it instead of the whole CLI for `hansard hook
 * claude-code`, `hansard hook codex` and `hansard hook ship`, so that a hook loads only what it needs (no
 * commander, no server stack): the hook runs on every tool call of the agent and must stay cheap.
 *
 * The deadline lives here: a timer that, when the budget (3.5 s) is spent, prints nothing, records
 * `timeout` in hook-failures.json and exits 0, whatever the hook is still waiting for (a lock, the
 * server). Exit status is 0 in every case (Claude Code blocks the tool call on 2 and shows other codes as
 * errors).
 * `lib/capture/hook-entry.ts` runs it; tests import it without running it.
 */
import { fstatSync, readFileSync } from 'node:fs';
import { type HookProgress, hookBudgetMs, runClaudeHook, runCodexHook } from './hook.js';
import { appendInbox } from './inbox.js';
import { recordHookFailure, stateDir } from './state-dir.js';

/** Runs `hansard hook <what> …` (argv without node and the script). Resolves to the exit code. */
export async function hookMain(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const what = argv[1];
  if (what === 'ship') {
    const { runShipper, shipSummary } = await import('./ship.js');
    // Detached (from a hook) its stderr goes nowhere; run by hand (doctor's fix) it says what it did.
    const report = await runShipper(stateDir(env), env).catch(() => null);
    if (report) process.stderr.write(`${shipSummary(report)}\n`);
    return 0;
  }
  const progress: HookProgress = {
    hook: what === 'codex' ? 'codex:unknown' : 'claude-code:unknown',
    defer: null,
    committed: false,
  };
  let answered = false;
  const answer = (out: string): void => {
    if (answered) return;
    answered = true;
    if (out) process.stdout.write(`${out}\n`);
  };
  const timer = setTimeout(
    () => {
      if (answered) return;
      answer('');
      // Parsed but not written: the payload waits in the session's inbox for its next hook (or the
      // shipper), so the agent goes on and the event is not lost.
      let deferred = false;
      if (progress.defer && !progress.committed) {
        try {
          appendInbox(progress.defer.inbox, progress.defer.payload);
          deferred = true;
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
        : await runClaudeHook(await readStdin(), ctx);
    answer(out);
  } catch {
    // runClaudeHook/runCodexHook do not throw; this is the last guard of "exit 0, stdout clean".
    answer('');
  }
  clearTimeout(timer);
  return 0;
}

/**
 * All of stdin as text. Read synchronously: the payload is then parsed before the first await, so a
 * deadline that fires later (a queue at the lock, a machine too busy to run the hook in time) can always
 * defer it rather than lose it. Claude Code writes the payload and closes stdin; a terminal gives ''.
 */
async function readStdin(): Promise<string> {
  // A terminal (someone ran it by hand) would block the read: no payload. (fstat, not tty: one module less.)
  if (fstatSync(0).isCharacterDevice()) return '';
  try {
    return readFileSync(0, 'utf8');
  } catch (err) {
    // A non-blocking stdin inherited from the caller (EAGAIN): read it as a stream instead.
    if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') return '';
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  }
}

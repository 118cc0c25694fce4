/**
 * Shared by the capture suites (issue 11): the CLI built from the current source into .test-results/
 * (scripts/build.mjs with HANSARD_BUILD_OUTDIR, beside a copy of bin/hansard: dist/ may be stale), and the
 * real `bin/hansard hook …` process run with a payload on stdin.
 */
import { execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { verifySession } from '../../../lib/log/analyse/verify.js';
import { sessionDirSources } from '../../../lib/log/read/session-dir.js';
import { useBuiltCli as useBuiltApp } from '../../support/built-cli.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');

/** Builds the CLI once for the calling suite (test/support/built-cli.ts); returns the path of its `bin/hansard`. */
export function useBuiltCli(name: string): { bin: string } {
  return { bin: useBuiltApp(`capture-${name}`).bin };
}

/** How a hook process ended. */
export interface HookRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/** The environment of a hook: no HANSARD_ variable of the test's own, then `env`. */
export function hookEnv(env: Record<string, string | undefined>): NodeJS.ProcessEnv {
  const base: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('HANSARD_')) base[k] = v;
  for (const [k, v] of Object.entries(env)) {
    if (v === undefined) delete base[k];
    else base[k] = v;
  }
  return base;
}

/**
 * Runs `bin hook <args>` with `stdin` and waits for it. `killAfterMs`: SIGKILL it then (the kill tests).
 */
export function runHook(
  bin: string,
  args: string[],
  stdin: string,
  env: Record<string, string | undefined>,
  killAfterMs?: number,
): Promise<HookRun> {
  const started = performance.now();
  const child = spawn(process.execPath, [bin, 'hook', ...args], {
    env: hookEnv(env),
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (s: string) => (stdout += s));
  child.stderr.setEncoding('utf8').on('data', (s: string) => (stderr += s));
  child.stdin.on('error', () => {});
  child.stdin.end(stdin);
  const timer = killAfterMs === undefined ? null : setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  return new Promise((done) => {
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      done({ code, signal, stdout, stderr, ms: performance.now() - started });
    });
  });
}

/** A fixture's text. */
export function fixture(path: string): string {
  return readFileSync(join(ROOT, 'test/fixtures', path), 'utf8');
}

/** The spool's session directories. */
export function spoolSessions(state: string): string[] {
  try {
    return readdirSync(join(state, 'spool'))
      .filter((n) => n.startsWith('s_'))
      .map((n) => join(state, 'spool', n));
  } catch {
    return [];
  }
}

/**
 * Every event of a session directory as written (JSON lines: `extra` keys sit beside the event's own),
 * each segment in file order, segments by writer id.
 */
export function sessionEvents(dir: string): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const f of readdirSync(dir).sort()) {
    if (!f.endsWith('.jsonl')) continue;
    for (const line of readFileSync(join(dir, f), 'utf8').split('\n')) {
      if (line) out.push(JSON.parse(line) as Record<string, unknown>);
    }
  }
  return out;
}

/** verify's problems for a session directory (severity, code, message). */
export async function verifyDir(dir: string): Promise<{ severity: string; code: string; message: string }[]> {
  const r = await verifySession(sessionDirSources(dir));
  return r.problems.map((p) => ({ severity: p.severity, code: p.code, message: p.message }));
}

/** Runs `fn` over `items` with at most `n` at once. */
export async function pool<T, R>(
  items: T[],
  n: number,
  fn: (item: T, i: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i]!, i);
      }
    }),
  );
  return out;
}

/**
 * The watchdog tests' times, in ms: the hooks' budget, what the watchdog adds to it for its hard deadline
 * (lib/client/capture/hook-watchdog.ts), the slack for spawning Node on a busy machine (the deadline
 * counts from the process start, the test from spawn), and when the test itself kills a hook that
 * nothing else ended, so that a failure ends.
 */
export const WATCHDOG_TIMES = { BUDGET: 2_000, GRACE: 1_000, SLACK: 2_500, KILL_AFTER: 20_000 } as const;

/** The processes whose command line names `text` (the supervisor names the hook's state directory). */
export function processesNaming(text: string): string[] {
  try {
    return execFileSync('pgrep', ['-f', text], { encoding: 'utf8' }).split('\n').filter(Boolean);
  } catch {
    return []; // pgrep exits 1 when none matches
  }
}

/**
 * The processes a test run left behind, read from Linux's `/proc` (no `/proc`, no check): the descendants
 * of a process (`descendants`), or every process whose environment carries a marker (`marked`: found even
 * after its parent died and it was adopted by init). Used by the leak checks (test/support/leak-check.ts
 * per test file, test/support/services.ts at the end of the run).
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The environment variable that marks a test file's processes (`<run id>:<file id>`, leak-check.ts). */
export const FILE_MARKER = 'HANSARD_TEST_FILE';

/** One process, as `/proc` shows it. */
export interface ProcInfo {
  pid: number;
  ppid: number;
  /** its command line, arguments joined by spaces (the `comm` in brackets when it has none) */
  cmd: string;
}

/**
 * What a leak check ignores: processes that end with the vitest process or worker they belong to and were
 * not started by a test (vitest's own workers; esbuild's service, which vite, tsx and the build tests start
 * once per process and which exits when its parent does).
 */
export function isRunnerProcess(p: ProcInfo): boolean {
  return /node_modules\/(vitest\/dist\/workers\/|esbuild\/|@esbuild\/)/.test(p.cmd);
}

/** Every live process (zombies, which have exited and wait only to be reaped, left out). */
export function processes(): ProcInfo[] {
  const out: ProcInfo[] = [];
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return out;
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    const info = procInfo(Number(name));
    if (info) out.push(info);
  }
  return out;
}

/** The process `pid`, or null when it is gone or a zombie. */
export function procInfo(pid: number): ProcInfo | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // pid (comm) state ppid …: comm may hold spaces and parentheses, so read from the last ')'.
    const close = stat.lastIndexOf(')');
    const [state, ppid] = stat.slice(close + 2).split(' ');
    if (state === 'Z' || state === 'X') return null;
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    const cmd = argv.length > 0 ? argv.join(' ') : `[${stat.slice(stat.indexOf('(') + 1, close)}]`;
    return { pid, ppid: Number(ppid), cmd };
  } catch {
    return null;
  }
}

/** The live descendants of `root` (children, their children, …), not `root` itself. */
export function descendants(root: number): ProcInfo[] {
  const all = processes();
  const byParent = new Map<number, ProcInfo[]>();
  for (const p of all) byParent.set(p.ppid, [...(byParent.get(p.ppid) ?? []), p]);
  const out: ProcInfo[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of byParent.get(queue.shift()!) ?? []) {
      out.push(child);
      queue.push(child.pid);
    }
  }
  return out;
}

/** The live processes whose environment has `name` with a value `matches` accepts (same user, or root). */
export function marked(name: string, matches: (value: string) => boolean): ProcInfo[] {
  const prefix = `${name}=`;
  return processes().filter((p) => {
    try {
      const env = readFileSync(`/proc/${p.pid}/environ`, 'utf8').split('\0');
      return env.some((kv) => kv.startsWith(prefix) && matches(kv.slice(prefix.length)));
    } catch {
      return false;
    }
  });
}

/**
 * Polls `find` until it returns nothing or `graceMs` has passed (a child killed in a teardown may take a
 * moment to exit); returns what is still there.
 */
export async function lingering(find: () => ProcInfo[], graceMs: number): Promise<ProcInfo[]> {
  const deadline = Date.now() + graceMs;
  let left = find();
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = find();
  }
  return left;
}

/** SIGKILLs each process (one already gone is skipped). */
export function killAll(procs: ProcInfo[]): void {
  for (const p of procs) {
    try {
      process.kill(p.pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
}

/** `pid 123 (ppid 45): sleep 1000`, one line per process, for an error message. */
export function describeProcs(procs: ProcInfo[]): string {
  return procs.map((p) => `  pid ${p.pid} (ppid ${p.ppid}): ${p.cmd.slice(0, 300)}`).join('\n');
}

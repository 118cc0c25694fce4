/**
 * kill -9, then an immediate restart (issue 8, durability attack F): a server killed with SIGKILL stays a
 * zombie until its parent reaps it, and `kill(pid, 0)` succeeds on a zombie, so the data-directory lock
 * took it for a live holder and refused the restart. With real processes: a real zombie is not running for
 * `processRuns`, and a real `hansard serve` whose parent does not reap it (`sh -c 'serve & exec sleep'`)
 * is killed with SIGKILL and a second server takes its data directory over at once.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { startServeProcess } from '../../../harness/serve-process.js';
import { LOCK_NAME, lockDataDir, OWNER_NAME, processRuns, readOwner } from '../../../lib/deploy/data-lock.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const tmp = mkdtempSync(join(tmpdir(), 'hansard-zombie-'));
const children: ChildProcess[] = [];
/** The shells' background children: a killed shell leaves them to init, so they are killed by pid. */
const background: number[] = [];

afterAll(() => {
  // The background children first, while their shells still hold their pids (a zombie's too): no pid
  // of theirs can have gone to another process yet.
  for (const pid of background) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
  for (const c of children) {
    // Each shell leads a process group of its own (detached): a background child is in it even once
    // init has adopted it, so the group's kill reaches any the pids above missed.
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {
      // the group is gone
    }
    if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  }
  rmSync(tmp, { recursive: true, force: true });
});

/** `/proc/PID/stat`'s parent pid and state, or null when there is no such process. */
function procStat(pid: number): { ppid: number; state: string } | null {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const [state, ppid] = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(ppid), state: state! };
  } catch {
    return null;
  }
}

/** The child processes of `ppid`. */
function childrenOf(ppid: number): number[] {
  return readdirSync('/proc')
    .filter((d) => /^\d+$/.test(d))
    .map(Number)
    .filter((pid) => procStat(pid)?.ppid === ppid);
}

async function until<T>(what: string, fn: () => T | null | undefined, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v !== null && v !== undefined && v !== false) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Runs `command` in the background of a shell that then becomes `sleep 120`: its child's parent never
 * waits, so once the child exits it stays a zombie. Returns the shell (then sleep) process and the pid of
 * the child.
 */
async function unreapedChild(command: string, env: NodeJS.ProcessEnv = process.env) {
  const parent = spawn('sh', ['-c', `${command} & exec sleep 120`], {
    cwd: ROOT,
    env,
    stdio: 'ignore',
    detached: true,
  });
  children.push(parent);
  const pid = await until('the background child', () => childrenOf(parent.pid!)[0]);
  background.push(pid);
  return { parent, pid };
}

describe('processRuns', () => {
  it('is false for a real zombie (which kill(pid, 0) still finds), true for running processes', async () => {
    const { pid } = await unreapedChild('sleep 0');
    await until('the child to be a zombie', () => procStat(pid)?.state === 'Z');
    expect(() => process.kill(pid, 0)).not.toThrow(); // what the lock used to ask
    expect(processRuns(pid)).toBe(false);
    expect(processRuns(process.pid)).toBe(true);
    const { pid: sleeping } = await unreapedChild('sleep 60');
    expect(processRuns(sleeping)).toBe(true);
  });

  it('lockDataDir takes over a fresh lock whose owner file names a zombie of this host', async () => {
    const { pid } = await unreapedChild('sleep 0');
    await until('the child to be a zombie', () => procStat(pid)?.state === 'Z');
    const data = join(tmp, 'zombie-owner');
    mkdirSync(join(data, LOCK_NAME), { recursive: true }); // fresh: its mtime is now
    const owner = { pid, hostname: hostname(), started_at: new Date().toISOString(), url: null };
    writeFileSync(join(data, OWNER_NAME), JSON.stringify(owner));
    const started = Date.now();
    const lock = await lockDataDir(data, () => {});
    try {
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(readOwner(data)?.pid).toBe(process.pid);
    } finally {
      await lock.release();
    }
  });
});

describe('hansard serve killed with SIGKILL while its parent does not reap it', () => {
  it('a server started right after takes the data directory over within a few seconds', async () => {
    const data = join(tmp, 'data');
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('HANSARD_')) env[k] = v;
    const main = `${ROOT}/lib/client/cli/main.ts`;
    const script =
      `const { runCli } = await import(${JSON.stringify(main)}); ` +
      'const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() }; ' +
      'const code = await runCli(process.argv.slice(1), io); if (code !== 0 || !io.keepAlive) process.exit(code);';
    const quoted = `'${script.replaceAll("'", `'\\''`)}'`;
    const { pid } = await unreapedChild(
      `${process.execPath} --import tsx --input-type=module -e ${quoted} serve --port 0 --data ${data} >${tmp}/first.log 2>&1`,
      env,
    );
    // The first server holds the directory once it serves (its owner file then has its address).
    await until('the first server to serve', () => readOwner(data)?.url, 45_000);
    expect(readOwner(data)?.pid).toBe(pid);

    process.kill(pid, 'SIGKILL');
    await until('the first server to be a zombie', () => procStat(pid)?.state === 'Z');
    const started = Date.now();
    const second = await startServeProcess({ dataDir: data });
    try {
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(readOwner(data)?.pid).toBe(second.pid);
      expect((await fetch(`${second.url}/healthz`)).status).toBe(200);
    } finally {
      await second.close();
    }
  });
});

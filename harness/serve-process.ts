/**
 * `hansard serve` as its own process (the code under test, run from source through tsx), for tests that
 * watch what the server process holds (its open file descriptors, `/proc/<pid>/fd`, and its resident
 * memory, `/proc/<pid>/status` VmRSS; Linux only, as `/proc` is), or that need the disk's own refusals
 * (ENOSPC, EROFS, EACCES) to reach the real server: on a data directory the test chooses (a small tmpfs,
 * a directory another user owns), optionally as another user (issue 8); or that signal it and watch it stop
 * (`signal`, `exited`, `stdout`), or expect a start to fail (`runServeToExit`).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The CLI's `runCli` from source; the server keeps the process alive. */
const MAIN = `
const { runCli } = await import(${JSON.stringify(`${ROOT}/lib/client/cli/main.ts`)});
const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
const code = await runCli(process.argv.slice(1), io);
if (code !== 0 || !io.keepAlive) process.exit(code);
`;

/** A running `hansard serve` child process. */
export interface ServeProcess {
  url: string;
  port: number;
  pid: number;
  /** tenant `local`'s admin token (installed through HANSARD_BOOTSTRAP_TOKEN) */
  admin: string;
  dataDir: string;
  /** scratch space beside the data directory */
  workDir: string;
  /** what the process wrote to stderr so far (the request log, errors) */
  stderr(): string;
  /** what the process wrote to stdout so far (the banner, the stop lines) */
  stdout(): string;
  /** sends `sig` to the process and returns at once (`close` is the test's cleanup) */
  signal(sig: NodeJS.Signals): void;
  /** resolves with the exit code (null when a signal ended it) once the process has exited */
  exited: Promise<number | null>;
  /** how many file descriptors the process has open now */
  openFds(): number;
  /** the process's resident set size now, in bytes */
  rssBytes(): number;
  /**
   * stops the process (SIGTERM, then SIGKILL after 5 s) and removes its directories (a data directory the
   * test chose is left to it)
   */
  close(): Promise<void>;
}

/** How `startServeProcess` runs the server. */
export interface ServeProcessOptions {
  /** more arguments of `hansard serve` */
  args?: string[];
  /** its data directory (left in place by `close`); default a fresh one that `close` removes */
  dataDir?: string;
  /** run as this user (and `gid`, default the same number): a user the data directory refuses gets EACCES for real */
  uid?: number;
  gid?: number;
  /**
   * run as root without the capabilities that let root ignore file permissions (`setpriv`), so a folder
   * owned by another user with mode 0755 gives it EACCES for real, while it still reads this checkout
   * (running as another user cannot, where the checkout sits in a folder only root may enter)
   */
  withoutDacOverride?: boolean;
  /**
   * its environment over the test's (HANSARD_ variables are dropped, then HANSARD_BOOTSTRAP_TOKEN set to
   * the `admin` token); a variable given as undefined is removed
   */
  env?: Record<string, string | undefined>;
}

/**
 * Starts `hansard serve --port 0 --data DATA --rate-limit 0 ARGS` and resolves once it prints the address
 * it serves. @throws Error with its output when it exits or prints nothing in 45 s
 */
export function startServeProcess(opts: ServeProcessOptions = {}): Promise<ServeProcess> {
  const { child, root, dataDir, workDir, admin } = spawnServe(opts);
  let out = '';
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (s: string) => {
    // Keep the tail only: the request log of a long test is large.
    err = (err + s).slice(-200_000);
  });
  const proc = `/proc/${child.pid}`;
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`hansard serve printed no address in 45 s:\n${out}\n${err}`));
    }, 45_000);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      fail(new Error(`hansard serve exited with ${code}:\n${out}\n${err}`));
    };
    child.once('exit', onExit);
    child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      out += s;
      const m = /serving (http:\/\/127\.0\.0\.1:(\d+))/.exec(out);
      if (!m || !/\/\?token=hns_\w+/.test(out)) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      done({
        url: m[1]!,
        port: Number(m[2]),
        pid: child.pid!,
        admin,
        dataDir,
        workDir,
        stderr: () => err,
        stdout: () => out,
        signal: (sig) => child.kill(sig),
        exited,
        openFds: () => readdirSync(`${proc}/fd`).length,
        rssBytes: () => {
          const kb = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`${proc}/status`, 'utf8'));
          return Number(kb?.[1] ?? 0) * 1024;
        },
        close: async () => {
          if (child.exitCode === null && child.signalCode === null) {
            const exited = new Promise((r) => child.once('exit', r));
            child.kill('SIGTERM');
            const force = setTimeout(() => child.kill('SIGKILL'), 5000);
            await exited;
            clearTimeout(force);
          }
          rmSync(root, { recursive: true, force: true });
        },
      });
    });
  });
}

/** How a `hansard serve` that was expected to exit ended. */
export interface ServeExit {
  /** its exit code (null when a signal ended it) */
  code: number | null;
  stdout: string;
  stderr: string;
  dataDir: string;
  /** removes its directories (a data directory the test chose is left to it) */
  cleanup(): void;
}

/**
 * Runs `hansard serve` as `startServeProcess` does, for a start that should fail: resolves once it exits.
 * @throws Error with its output when it is still running after `timeoutMs` (it is killed then)
 */
export function runServeToExit(opts: ServeProcessOptions = {}, timeoutMs = 30_000): Promise<ServeExit> {
  const { child, root, dataDir } = spawnServe(opts);
  let out = '';
  let err = '';
  child.stdout!.setEncoding('utf8').on('data', (s: string) => (out += s));
  child.stderr!.setEncoding('utf8').on('data', (s: string) => (err += s));
  return new Promise((done, fail) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      fail(new Error(`hansard serve was still running after ${timeoutMs} ms:\n${out}\n${err}`));
    }, timeoutMs);
    child.once('close', (code) => {
      clearTimeout(timer);
      done({
        code,
        stdout: out,
        stderr: err,
        dataDir,
        cleanup: () => rmSync(root, { recursive: true, force: true }),
      });
    });
  });
}

/** Spawns `hansard serve` as `startServeProcess` and `runServeToExit` describe. */
function spawnServe(opts: ServeProcessOptions) {
  const root = mkdtempSync(join(tmpdir(), 'hansard-proc-'));
  const dataDir = opts.dataDir ?? join(root, 'data');
  const workDir = join(root, 'work');
  const admin = `hns_${'Pr0cess'.repeat(6)}A`;
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('HANSARD_')) env[k] = v;
  env.HANSARD_BOOTSTRAP_TOKEN = admin;
  for (const [k, v] of Object.entries(opts.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const node = [
    '--import',
    'tsx',
    '--input-type=module',
    '-e',
    MAIN,
    'serve',
    '--port',
    '0',
    '--data',
    dataDir,
    '--rate-limit',
    '0',
    ...(opts.args ?? []),
  ];
  const DROP = '-dac_override,-dac_read_search';
  const [command, args] = opts.withoutDacOverride
    ? ['setpriv', [`--bounding-set=${DROP}`, `--inh-caps=${DROP}`, process.execPath, ...node]]
    : [process.execPath, node];
  const child: ChildProcess = spawn(command, args, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.gid ?? opts.uid } : {}),
  });
  return { child, root, dataDir, workDir, admin };
}

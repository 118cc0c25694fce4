/**
 * `hansard serve` as its own process, from source (the code under test, through tsx), on a data directory
 * the test chooses (a small tmpfs, a directory another user owns) and optionally as another user, so the
 * disk's own refusals (ENOSPC, EROFS, EACCES) reach the real server (issue 8).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The CLI's `runCli` from source; the server keeps the process alive. */
const MAIN = `
const { runCli } = await import(${JSON.stringify(`${ROOT}/lib/cli/main.ts`)});
const io = { stdout: process.stdout, stderr: process.stderr, env: process.env, cwd: process.cwd() };
const code = await runCli(process.argv.slice(1), io);
if (code !== 0 || !io.keepAlive) process.exit(code);
`;

/** A running `hansard serve` child. */
export interface ServeChild {
  url: string;
  /** tenant `local`'s admin token (HANSARD_BOOTSTRAP_TOKEN) */
  admin: string;
  /** what the process wrote to stderr so far: the request log and the error log */
  stderr(): string;
  /** SIGTERM, then SIGKILL after 5 s; the data directory is left to the caller */
  close(): Promise<void>;
}

/**
 * Starts `hansard serve --port 0 --data DATA --rate-limit 0` and resolves once it prints its address.
 * @param opts.uid run as this user (and `gid`): a user the data directory refuses gets EACCES for real
 * @throws Error with its output when it exits or prints nothing in 45 s
 */
export function startServeChild(
  data: string,
  opts: { uid?: number; gid?: number } = {},
): Promise<ServeChild> {
  const admin = `hns_${'D1skFul'.repeat(6)}A`;
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('HANSARD_')) env[k] = v;
  env.HANSARD_BOOTSTRAP_TOKEN = admin;
  const child: ChildProcess = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      MAIN,
      'serve',
      '--port',
      '0',
      '--data',
      data,
      '--rate-limit',
      '0',
    ],
    {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      ...(opts.uid !== undefined ? { uid: opts.uid, gid: opts.gid ?? opts.uid } : {}),
    },
  );
  let out = '';
  let err = '';
  child.stderr!.setEncoding('utf8').on('data', (s: string) => {
    err = (err + s).slice(-200_000);
  });
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
      const m = /serving (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (!m || !/\/\?token=hns_\w+/.test(out)) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      done({
        url: m[1]!,
        admin,
        stderr: () => err,
        close: async () => {
          if (child.exitCode !== null || child.signalCode !== null) return;
          const exited = new Promise((r) => child.once('exit', r));
          child.kill('SIGTERM');
          const force = setTimeout(() => child.kill('SIGKILL'), 5000);
          await exited;
          clearTimeout(force);
        },
      });
    });
  });
}

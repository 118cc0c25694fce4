/**
 * A throwaway PostgreSQL server for the search tests (issue 30 item 4): Debian's PostgreSQL
 * (`/usr/lib/postgresql/<version>/bin`, installed by scripts/ensure-postgresql.mjs), a new cluster in a
 * temporary directory, listening on 127.0.0.1 on a free port only (no Unix socket), with a random
 * superuser password. Durability is off (`fsync`, `synchronous_commit`, `full_page_writes`): the data dies
 * with the run anyway. Run as root, initdb and postgres run as the `postgres` user (they refuse root),
 * through `setpriv`. The server is tethered like the emulators (harness/emulator-processes.ts), so it never
 * outlives the process that started it; test/support/services.ts starts one per vitest run.
 */
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  chownSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import {
  type EmulatorProcess,
  exitReason,
  freePort,
  keepOutput,
  stopper,
  tethered,
} from './emulator-processes.js';

/** The newest Debian PostgreSQL's bin directory, or null when none is installed. */
export function postgresBinDir(): string | null {
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return null;
  const versions = readdirSync(root)
    .filter((v) => /^\d+$/.test(v) && existsSync(join(root, v, 'bin', 'postgres')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] ? join(root, versions[0], 'bin') : null;
}

/** The uid and gid of the `postgres` user (from /etc/passwd), which Debian's package creates. */
function postgresUser(): { uid: number; gid: number } {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('postgres:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) {
    throw new Error(
      'PostgreSQL: no postgres user to run the server as (is the postgresql package installed?)',
    );
  }
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * Removes clusters of earlier runs that were killed before they could remove their own (the tether stops
 * the server, not its files): a `hansard-pg-*` directory over an hour old whose server is not running.
 */
function removeStaleClusters(): void {
  const hourAgo = Date.now() - 3_600_000;
  for (const name of readdirSync(tmpdir())) {
    if (!name.startsWith('hansard-pg-')) continue;
    const dir = join(tmpdir(), name);
    try {
      if (statSync(dir).mtimeMs > hourAgo) continue;
      const pidFile = join(dir, 'data', 'postmaster.pid');
      if (existsSync(pidFile)) {
        const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
        if (pid > 0 && alive(pid)) continue;
      }
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // another run's, changing under us: left alone
    }
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Starts a new PostgreSQL cluster; its `endpoint` is a connection URL of the superuser `postgres` to the
 * database `postgres`. Rejects with the server's output when it does not accept queries within
 * `timeoutMs`.
 * @throws Error when no PostgreSQL is installed (saying how to install it)
 */
export async function launchPostgres(timeoutMs = 60_000): Promise<EmulatorProcess> {
  const bin = postgresBinDir();
  if (!bin) {
    throw new Error(
      'PostgreSQL is not installed (no /usr/lib/postgresql/<version>/bin/postgres): run `node scripts/ensure-postgresql.mjs` as root',
    );
  }
  const isRoot = process.getuid?.() === 0;
  removeStaleClusters();
  const dir = mkdtempSync(join(tmpdir(), 'hansard-pg-'));
  const data = join(dir, 'data');
  const password = randomBytes(18).toString('base64url');
  writeFileSync(join(dir, 'pw'), `${password}\n`, { mode: 0o600 });
  // As root: the cluster's files are the postgres user's, and so are its processes.
  const asServer = (command: string, args: string[]): [string, string[]] => {
    if (!isRoot) return [command, args];
    return ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', command, ...args]];
  };
  if (isRoot) {
    const { uid, gid } = postgresUser();
    chownSync(dir, uid, gid);
    chownSync(join(dir, 'pw'), uid, gid);
  }
  const [initCmd, initArgs] = asServer(join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    `--pwfile=${join(dir, 'pw')}`,
    '--auth=scram-sha-256',
    '--encoding=UTF8',
    // The text search parser reads letters by the server's locale: C.UTF-8 knows every script's.
    '--locale=C.UTF-8',
    '--no-sync',
  ]);
  const init = spawnSync(initCmd, initArgs, { encoding: 'utf8' });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(
      `PostgreSQL: initdb failed (${init.error?.message ?? init.status}):\n${init.stderr}${init.stdout}`,
    );
  }

  const port = await freePort();
  const [cmd, args] = asServer(join(bin, 'postgres'), [
    '-D',
    data,
    '-p',
    `${port}`,
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    'unix_socket_directories=',
    '-c',
    'fsync=off',
    '-c',
    'synchronous_commit=off',
    '-c',
    'full_page_writes=off',
    '-c',
    'max_connections=200',
  ]);
  const child = tethered(cmd, args, dir);
  const output = keepOutput(child);
  const exited = exitReason(child);
  const stops = stopper(child);
  const stop = async () => {
    // A fast shutdown (SIGINT) ends the sessions still open; the tether's SIGTERM would wait for them.
    try {
      const pid = Number(readFileSync(join(data, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (pid > 0) process.kill(pid, 'SIGINT');
    } catch {
      // not started, or gone already
    }
    await stops.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  const endpoint = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/postgres`;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await accepts(endpoint)) break;
    if (exited.why !== null || Date.now() > deadline) {
      const why = exited.why ?? `did not accept queries within ${timeoutMs / 1000} s`;
      await stop();
      throw new Error(`PostgreSQL ${why} on port ${port}:\n${output()}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    endpoint,
    port,
    stop: () => stop().catch(() => {}),
    killNow: stops.killNow,
  };
}

/** True when the server answers a query (it accepts connections before it is ready for them). */
async function accepts(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  client.on('error', () => {});
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => {});
  }
}

/**
 * One `hansard serve` per data directory (issue 8): two servers on one `--data` truncated each other's
 * acknowledged segment bytes. The server takes this lock before it opens the stores and releases it when
 * it stops. The lock is `proper-lockfile`'s: the directory `DIR/serve.lock` (mkdir is atomic, on network
 * file systems too), its mtime refreshed every second; a lock not refreshed for 10 s is stale and taken
 * over. Beside it `DIR/serve.lock.json` names the holder (pid, host, start time, address) so that a
 * refused start can say who holds the directory. docs/operations.md says what an operator does about it.
 *
 * `hansard tenant create --data DIR` does not take this lock: it only writes `state.sqlite`, which SQLite's
 * own locking (WAL, busy_timeout) shares safely with a running server.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { lock } from 'proper-lockfile';

/** The lock directory inside the data directory. */
export const LOCK_NAME = 'serve.lock';
/** The holder's description, beside the lock (not inside: proper-lockfile removes the lock with rmdir). */
export const OWNER_NAME = 'serve.lock.json';

/** A lock whose mtime is older than this is taken over (the holder died without releasing it). */
const STALE_MS = 10_000;
/** How often the holder refreshes the lock's mtime. */
const UPDATE_MS = 1_000;
/**
 * The staleness used when the owner file names a process of this host that no longer exists (kill -9,
 * the OOM killer): a restart then waits about 2 s, not 10. It stays above the refresh interval so that a
 * lock some new holder has just taken, before it wrote its owner file, is never mistaken for the dead one.
 */
const DEAD_OWNER_STALE_MS = 2_000;

/** The holder of a data directory, as `DIR/serve.lock.json` records it. */
export interface LockOwner {
  pid: number;
  hostname: string;
  /** ISO 8601 */
  started_at: string;
  /** the address it serves, once it listens; null before */
  url: string | null;
}

/** Another process holds the data directory. The message names it and says what to do. */
export class DataDirLockedError extends Error {
  override name = 'DataDirLockedError';
  constructor(
    readonly dataDir: string,
    readonly owner: LockOwner | null,
  ) {
    super(lockedMessage(dataDir, owner));
  }
}

/** The data directory cannot hold a lock (not writable, not a directory): the message says which path and why. */
export class DataDirUnusableError extends Error {
  override name = 'DataDirUnusableError';
}

/** A held data-directory lock. */
export interface DataDirLock {
  /** Records the address the server listens on in the owner file, for the message of a refused start. */
  setUrl(url: string): void;
  /** Removes the owner file and the lock. Safe to call twice, and after the lock was lost. */
  release(): Promise<void>;
}

/**
 * Takes the exclusive lock on `dataDir` (created if missing) for this process.
 * @param onLost called if the lock is lost while held (its directory removed, or taken over after this
 *   process did not refresh it for 10 s, e.g. a stopped process): another server may now write the
 *   directory, so the caller must stop serving.
 * @throws DataDirLockedError when a live process holds it (a dead holder on this host is taken over)
 * @throws DataDirUnusableError when the lock cannot be created (permissions, read-only file system)
 */
export async function lockDataDir(dataDir: string, onLost: (err: Error) => void): Promise<DataDirLock> {
  const lockfilePath = join(dataDir, LOCK_NAME);
  const base = { lockfilePath, realpath: false, update: UPDATE_MS, onCompromised: onLost };
  let release: () => Promise<void>;
  try {
    mkdirSync(dataDir, { recursive: true });
    try {
      release = await lock(dataDir, { ...base, stale: STALE_MS });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ELOCKED') throw err;
      const owner = await readOwnerSoon(dataDir);
      if (owner === null || !diedOnThisHost(owner)) throw new DataDirLockedError(dataDir, owner);
      // The holder is gone but its lock is still fresh: wait until it has gone unrefreshed for 2 s.
      const retries = { retries: 6, factor: 1, minTimeout: 500, maxTimeout: 500 };
      try {
        release = await lock(dataDir, { ...base, stale: DEAD_OWNER_STALE_MS, retries });
      } catch (again) {
        if ((again as NodeJS.ErrnoException).code !== 'ELOCKED') throw again;
        throw new DataDirLockedError(dataDir, await readOwnerSoon(dataDir));
      }
    }
  } catch (err) {
    if (err instanceof DataDirLockedError) throw err;
    const e = err as NodeJS.ErrnoException;
    if (isFull(err)) {
      throw new DataDirUnusableError(
        `the disk holding ${dataDir} is full: cannot take the data directory's lock (${e.code}). Free some space (df -h ${dataDir}), then start again`,
      );
    }
    throw new DataDirUnusableError(
      `cannot lock the data directory ${dataDir} (${e.code ?? e.message}): it must be a directory this user can write`,
    );
  }

  const owner: LockOwner = {
    pid: process.pid,
    hostname: hostname(),
    started_at: new Date().toISOString(),
    url: null,
  };
  try {
    writeOwner(dataDir, owner);
  } catch (err) {
    // A full disk: the lock is held all the same (the lock folder is what excludes a second server);
    // only its description is missing, so a refused second start says "did not say which" (issue 8).
    if (!isFull(err)) {
      await release();
      const e = err as NodeJS.ErrnoException;
      throw new DataDirUnusableError(`cannot write ${join(dataDir, OWNER_NAME)} (${e.code ?? e.message})`);
    }
  }
  const removeOwner = () => {
    if (readOwner(dataDir)?.pid === process.pid) rmSync(join(dataDir, OWNER_NAME), { force: true });
  };
  // On process.exit and uncaught errors proper-lockfile removes the lock (signal-exit); this, its description.
  process.once('exit', removeOwner);
  let released = false;
  return {
    setUrl(url) {
      if (released) return;
      owner.url = url;
      try {
        writeOwner(dataDir, owner);
      } catch {
        // Best effort (a full disk): the description then lacks the address, the lock is still held.
      }
    },
    async release() {
      if (released) return;
      released = true;
      process.off('exit', removeOwner);
      // The description goes first, so that it never names us on a lock that is someone else's.
      removeOwner();
      await release().catch((err: NodeJS.ErrnoException) => {
        // Already released by proper-lockfile when it was lost (onLost said so).
        if (err.code !== 'ERELEASED') throw err;
      });
    },
  };
}

/** The owner file of `dataDir`, or null when there is none or it cannot be read. */
export function readOwner(dataDir: string): LockOwner | null {
  try {
    const o = JSON.parse(readFileSync(join(dataDir, OWNER_NAME), 'utf8')) as Partial<LockOwner>;
    if (typeof o.pid !== 'number' || typeof o.hostname !== 'string') return null;
    return {
      pid: o.pid,
      hostname: o.hostname,
      started_at: String(o.started_at ?? ''),
      url: typeof o.url === 'string' ? o.url : null,
    };
  } catch {
    return null;
  }
}

/** The owner file, waiting up to 1 s for it: a holder that has just taken the lock writes it right after. */
async function readOwnerSoon(dataDir: string): Promise<LockOwner | null> {
  for (let i = 0; i < 20; i++) {
    const owner = readOwner(dataDir);
    if (owner !== null) return owner;
    await new Promise((r) => setTimeout(r, 50));
  }
  return readOwner(dataDir);
}

/** Written to a temporary name and renamed, so a reader never sees half a file (nor a failed write's). */
function writeOwner(dataDir: string, owner: LockOwner): void {
  const tmp = join(dataDir, `${OWNER_NAME}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, `${JSON.stringify(owner)}\n`);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  renameSync(tmp, join(dataDir, OWNER_NAME));
}

/** A full disk or quota (ENOSPC, EDQUOT). */
function isFull(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOSPC' || code === 'EDQUOT';
}

/** True when `owner` ran on this host and its process no longer runs. */
function diedOnThisHost(owner: LockOwner): boolean {
  if (owner.hostname !== hostname() || owner.pid === process.pid) return false;
  return !processRuns(owner.pid);
}

/**
 * Whether process `pid` of this host still runs. A zombie does not: a server killed with SIGKILL whose
 * parent has not reaped it yet (an orphan waiting for its reaper, a supervisor that waits late) keeps
 * its pid, so `kill(pid, 0)` succeeds, but it holds nothing and never writes again; Linux shows it as
 * state `Z` in `/proc/PID/stat`. A process of another user (EPERM) runs.
 */
export function processRuns(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
  return procState(pid) !== 'Z';
}

/** The state letter of `/proc/PID/stat` (R, S, D, Z, …), or null without /proc (not Linux) or that pid. */
function procState(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "PID (COMM) STATE …": COMM may hold spaces and parentheses, so the state follows the last ')'.
    return /^\s*(\S)/.exec(stat.slice(stat.lastIndexOf(')') + 1))?.[1] ?? null;
  } catch {
    return null;
  }
}

function lockedMessage(dataDir: string, owner: LockOwner | null): string {
  const lockPath = join(dataDir, LOCK_NAME);
  if (owner === null) {
    return (
      `the data directory ${dataDir} is in use: ${lockPath} is held by a process that did not say which ` +
      `(no ${OWNER_NAME}). If no hansard serve uses it, the lock is released within ${STALE_MS / 1000} s; ` +
      'otherwise stop that server or pass another --data'
    );
  }
  const where = owner.hostname === hostname() ? '' : ` on host ${owner.hostname}`;
  const url = owner.url ? `, serving ${owner.url}` : '';
  return (
    `the data directory ${dataDir} is in use by another hansard serve (pid ${owner.pid}${where}, ` +
    `started ${owner.started_at}${url}). One server per data directory: stop that one ` +
    `${where ? '' : `(kill ${owner.pid}) `}or pass another --data`
  );
}

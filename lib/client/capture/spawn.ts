/**
 * Starting the shipper from a hook (issue 11), kept apart from `ship.ts` so that the hook's fast path
 * loads only node builtins for it: the HTTP client and the uploader load in the shipper process.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { recordHookFailure } from './state-dir.js';

/** The shipper's lock: `<state>/ship.lock` (a directory, proper-lockfile's). */
export const SHIP_LOCK = 'ship.lock';
/** A shipper lock not refreshed for this long belongs to a dead shipper and is taken over. */
export const SHIP_STALE_MS = 5_000;

/**
 * Whether a shipper holds the lock now (its lock directory was refreshed within the stale time): a hook
 * then starts none. A shipper checks the backlog again after it releases the lock, so an event written
 * just before this check is not left behind.
 */
export function shipperRunning(state: string): boolean {
  try {
    return Date.now() - statSync(join(state, SHIP_LOCK)).mtimeMs < SHIP_STALE_MS;
  } catch {
    return false;
  }
}

/**
 * Starts `hansard hook ship` detached (own process group, stdio ignored, unref'd) so the hook returns at
 * once. `command`: the program and its first arguments, e.g. `[process.execPath, '/…/bin/hansard']`.
 * Never throws (a failed spawn is recorded; the next hook tries again).
 */
export function spawnShipper(state: string, command: string[], env: NodeJS.ProcessEnv): void {
  try {
    const [bin, ...args] = command;
    // Loaded here, not at the top: child_process (with net and dgram) costs every hook a few ms to load,
    // and most hooks start no shipper (one runs already, or no server is configured).
    const { spawn } = process.getBuiltinModule('node:child_process') as typeof import('node:child_process');
    const child = spawn(bin!, [...args, 'hook', 'ship'], {
      detached: true,
      stdio: 'ignore',
      env: { ...env, HANSARD_STATE_DIR: state },
    });
    child.on('error', () => {});
    child.unref();
  } catch (err) {
    recordHookFailure(state, {
      hook: 'shipper',
      reason: 'internal',
      message: `cannot start the shipper: ${(err as Error).message}`,
      ms: 0,
    });
  }
}

/**
 * Small JSON files of this machine's state (the state dir: capture mappings, work leases, pending
 * operations): written whole or not at all, read leniently, never waiting on a file that is not a regular
 * one (`safe-fs.ts`). Node builtins only: the hook loads this on every event.
 */
import { closeSync, constants, openSync, renameSync, writeFileSync } from 'node:fs';
import { mkdirs, readRegularFile } from './safe-fs.js';

/** Create, truncate, and never wait for a reader (a FIFO in the way fails with ENXIO instead of blocking). */
const WRITE_NEW = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | (constants.O_NONBLOCK ?? 0);

/**
 * Writes `data` as JSON to `path` through a temporary file and a rename, so a reader (or a process killed
 * mid-write) never leaves half a file. Creates the parent folder. @throws the file system's error
 */
export function writeJsonAtomic(path: string, data: unknown, mode = 0o600): void {
  const dir = path.slice(0, path.lastIndexOf('/'));
  mkdirs(dir, 0o700);
  const tmp = `${path}.${process.pid}.${Date.now().toString(36)}.tmp`;
  const fd = openSync(tmp, WRITE_NEW, mode);
  try {
    writeFileSync(fd, `${JSON.stringify(data)}\n`);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

/** Reads a JSON file; null when absent, not a regular file (a FIFO is never read) or not JSON. */
export function readJson(path: string): unknown {
  try {
    return JSON.parse(readRegularFile(path).toString('utf8'));
  } catch {
    return null;
  }
}

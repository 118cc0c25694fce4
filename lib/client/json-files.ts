/**
 * Small JSON files of this machine's state (the state dir: capture mappings, work leases, pending
 * operations): written whole or not at all, read leniently. Node builtins only: the hook loads this on
 * every event.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

/**
 * Writes `data` as JSON to `path` through a temporary file and a rename, so a reader (or a process killed
 * mid-write) never leaves half a file. Creates the parent folder. @throws the file system's error
 */
export function writeJsonAtomic(path: string, data: unknown, mode = 0o600): void {
  const dir = path.slice(0, path.lastIndexOf('/'));
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.${Date.now().toString(36)}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(data)}\n`, { mode });
  renameSync(tmp, path);
}

/** Reads a JSON file; null when absent or not JSON. */
export function readJson(path: string): unknown {
  try {
    return JSON.parse(readFileSync(path, 'utf8'));
  } catch {
    return null;
  }
}

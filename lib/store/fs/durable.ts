/**
 * Durable file-system steps shared by the file adapters (`FsSegmentStore`, `FsDigestStore`): making the
 * folders of a path under the data directory so that the disk's own refusal is reported, fsyncing the
 * folders that hold a new name, and turning a refusal of the disk into a `StorageFaultError` (issue 8).
 */
import { mkdir, open } from 'node:fs/promises';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { errorCode, StorageFaultError, storageFaultKind } from '../errors.js';

/**
 * `mkdir -p dir` under `root`. Node's recursive mkdir reports ENOENT when a folder cannot be made on a
 * read-only filesystem (EROFS) and for some other refusals: on a failure the folders are made again one at
 * a time from the data directory down, so the error is the disk's own (EROFS, EACCES, ENOSPC, ENOTDIR).
 */
export async function makeFolders(root: string, dir: string): Promise<void> {
  try {
    await mkdir(dir, { recursive: true });
    return;
  } catch (err) {
    if (errorCode(err) !== 'ENOENT') throw err;
  }
  const top = resolve(root);
  let at = top;
  for (const part of relative(top, resolve(dir)).split(sep)) {
    at = join(at, part);
    try {
      await mkdir(at);
    } catch (err) {
      if (errorCode(err) !== 'EEXIST') throw err;
    }
  }
}

/** The folders from the one holding `path` up to `root`, deepest first (what `syncFolders` syncs). */
export function foldersUp(root: string, path: string): string[] {
  const top = resolve(root);
  const out: string[] = [];
  for (let dir = resolve(dirname(path)); dir.startsWith(top); dir = dirname(dir)) {
    out.push(dir);
    if (dir === top || dirname(dir) === dir) break;
  }
  return out;
}

/** fsyncs one folder (Linux syncs a folder opened read-only): makes the names in it durable. */
export async function syncFolder(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

/**
 * `err` as a `StorageFaultError` when the disk refused (full, read-only, permission) or the data
 * directory is laid out wrong, else `err` itself. A layout fault names `path` (the operator must find the
 * entry of the wrong kind); the others name `what` (e.g. "a segment file under /data"), never a tenant's ids.
 * @param op the operation refused (`open`, `write`, `sync`, …)
 */
export function storageFault(err: unknown, op: string, what: string, path?: string): unknown {
  // mkdir -p of a folder whose path is a file: EEXIST, the same fault as ENOTDIR below it.
  const code = op === 'open' && errorCode(err) === 'EEXIST' ? 'ENOTDIR' : errorCode(err);
  const kind = code === 'ENOTDIR' ? 'layout' : storageFaultKind(err);
  if (kind === null || code === null) return err;
  const where = kind === 'layout' && path ? `${op} of ${path}` : `${op} of ${what}`;
  return new StorageFaultError(kind, code, where, { cause: err });
}

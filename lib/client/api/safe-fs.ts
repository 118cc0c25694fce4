/**
 * Synchronous file operations that cannot hang (issue 25 item 1): what the capture hook and the state
 * directory use on paths a user or another program can make into anything. A hook runs inside its agent's
 * five-second limit, and a synchronous call that never returns blocks the thread that makes it.
 *
 * - `mkdirs`: `mkdir -p` in a bounded number of steps. Node's `mkdirSync(p, { recursive: true })` loops
 *   for ever, at full CPU, where `mkdir` answers ENOENT under a parent that exists (`/proc`, some FUSE
 *   mounts): it makes the parent again (EEXIST) and retries the child.
 * - `readRegularFile`: reads a regular file only, at most `maxBytes`. A FIFO (open blocks until a writer
 *   comes), a character device (`/dev/zero` never ends, a terminal waits for a line) or a socket is
 *   refused with `EFTYPE` before any read, and is opened non-blocking so that the open itself returns.
 * - `openRegularForAppend`: the same for an append (opening a FIFO to write blocks until a reader comes).
 *
 * Node builtins only: the hook loads this on every event.
 */
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** Deeper than this, `mkdirs` gives up (no real state directory is 64 levels below an existing one). */
const MAX_MISSING_LEVELS = 64;
/** `O_NONBLOCK` where the platform has it (not on Windows, where opening a pipe does not block). */
const NONBLOCK = constants.O_NONBLOCK ?? 0;
const NOCTTY = constants.O_NOCTTY ?? 0;

/** An error with a system-style code, as the fs functions throw. */
function fsError(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}

/**
 * Makes `path` and its missing parents (`mkdir -p`), each with `mode`, in at most 64 levels.
 * @throws the file system's error (ENOENT where the OS refuses to make a folder under an existing one,
 *   ENOTDIR where a file is in the way, EACCES…), ELOOP past 64 missing levels
 */
export function mkdirs(path: string, mode = 0o700): void {
  const missing: string[] = [];
  let p = resolve(path);
  for (;;) {
    try {
      mkdirSync(p, { mode });
      break;
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EEXIST') {
        if (!statSync(p).isDirectory()) throw fsError('ENOTDIR', `${p} is not a directory`);
        break;
      }
      const parent = dirname(p);
      if (code !== 'ENOENT' || parent === p) throw err;
      if (missing.length >= MAX_MISSING_LEVELS)
        throw fsError('ELOOP', `too many missing folders above ${path}`);
      missing.push(p);
      p = parent;
    }
  }
  // The parents exist now: make the missing ones outermost first. An ENOENT here (the parent exists, yet
  // the OS says no) is thrown, not retried.
  for (let i = missing.length - 1; i >= 0; i--) {
    try {
      mkdirSync(missing[i]!, { mode });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(missing[i]!).isDirectory()) throw err;
    }
  }
}

/**
 * The bytes of `path` when it is a regular file (symlinks followed) of at most `maxBytes` (default 64 MiB).
 * @throws ENOENT and the like as `openSync` does; EFTYPE when it is not a regular file (nothing is read);
 *   EFBIG when it is larger than `maxBytes`
 */
export function readRegularFile(path: string, maxBytes = 64 * 1024 * 1024): Buffer {
  const fd = openSync(path, constants.O_RDONLY | NONBLOCK | NOCTTY);
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw fsError('EFTYPE', `${path} is not a regular file`);
    if (st.size > maxBytes) throw fsError('EFBIG', `${path} is larger than ${maxBytes} bytes`);
    const buf = Buffer.alloc(st.size);
    let got = 0;
    // A file that shrinks meanwhile ends early; one that grows is read to its size when opened.
    while (got < buf.length) {
      const n = readSync(fd, buf, got, buf.length - got, got);
      if (n <= 0) break;
      got += n;
    }
    return got === buf.length ? buf : buf.subarray(0, got);
  } finally {
    closeSync(fd);
  }
}

/**
 * Opens `path` for appending (created with `mode` when absent) when it is a regular file; returns the fd.
 * @throws the file system's error (ENXIO for a FIFO nobody reads), EFTYPE when it is not a regular file
 */
export function openRegularForAppend(path: string, mode = 0o600): number {
  const fd = openSync(
    path,
    constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | NONBLOCK | NOCTTY,
    mode,
  );
  try {
    if (!fstatSync(fd).isFile()) throw fsError('EFTYPE', `${path} is not a regular file`);
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

/**
 * Opens `path` for reading when it is a regular file; returns the fd (the caller reads and closes it).
 * @throws the file system's error, EFTYPE when it is not a regular file
 */
export function openRegularForRead(path: string): number {
  const fd = openSync(path, constants.O_RDONLY | NONBLOCK | NOCTTY);
  try {
    if (!fstatSync(fd).isFile()) throw fsError('EFTYPE', `${path} is not a regular file`);
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

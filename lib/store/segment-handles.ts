/**
 * `SegmentHandles`: the segment files `FsSegmentStore` keeps open between chunks (issue 16.3). Opening,
 * fstat-ing and closing a segment for every chunk cost more server CPU than the chunk's own write; a
 * writer's next chunk usually comes within seconds, so its file stays open, bounded in number
 * (`maxOpen`, least recently used closed first) and in time (`idleMs` without a chunk closes it).
 *
 * A kept descriptor is never written blindly: every use first `stat`s the path and compares its device
 * and inode with the descriptor's. A file removed, renamed away or replaced behind the server's back no
 * longer matches; its descriptor is closed and the store opens the path afresh, with the checks of a first
 * open (a shorter file is data loss). The size the caller sees is the path's, read by that same `stat`.
 */
import { type Stats, statSync } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';

/** Segment files kept open at most, by default: well under a default descriptor limit of 1,024. */
export const DEFAULT_MAX_OPEN_SEGMENTS = 256;
/** How long a kept segment file may go without a chunk before it is closed, by default: 30 s. */
export const DEFAULT_SEGMENT_IDLE_MS = 30_000;

interface Kept {
  fh: FileHandle;
  dev: number;
  ino: number;
  /** in use by a chunk (between `acquire`/`add` and `release`): never closed under it */
  busy: boolean;
  /** `performance.now()` of the last release, ms */
  usedAt: number;
}

/** A kept file that still is the path's, and the path's size in bytes. */
export interface HeldSegment {
  fh: FileHandle;
  size: number;
}

export class SegmentHandles {
  /** By path; Map order is use order (least recently used first). */
  private readonly kept = new Map<string, Kept>();
  private sweeper: NodeJS.Timeout | null = null;
  private readonly maxOpen: number;
  private readonly idleMs: number;

  /**
   * @param opts.maxOpen files kept open at most (default 256; 0 keeps none); one in use is never closed,
   *   so more chunks at once than this may hold more for their duration
   * @param opts.idleMs ms without use after which a file is closed (default 30 s)
   */
  constructor(opts: { maxOpen?: number; idleMs?: number } = {}) {
    this.maxOpen = Math.max(0, opts.maxOpen ?? DEFAULT_MAX_OPEN_SEGMENTS);
    this.idleMs = Math.max(1, opts.idleMs ?? DEFAULT_SEGMENT_IDLE_MS);
  }

  /** How many files are kept open now (tests). */
  get open(): number {
    return this.kept.size;
  }

  /**
   * The kept file of `path` when it still is the file at `path` (same device and inode), marked in use, with
   * the path's size; null when none is kept, it is in use, or the path now names another file or nothing
   * (then the stale descriptor is closed). Never throws: a `stat` that fails is a miss, and the caller's own
   * open reports the disk's error.
   */
  acquire(path: string): HeldSegment | null {
    const k = this.kept.get(path);
    if (!k || k.busy) return null;
    const st = this.statOrNull(path);
    if (!st || st.dev !== k.dev || st.ino !== k.ino || !st.isFile()) {
      this.drop(path, k);
      return null;
    }
    k.busy = true;
    // Most recently used last.
    this.kept.delete(path);
    this.kept.set(path, k);
    return { fh: k.fh, size: st.size };
  }

  /**
   * The descriptor and size of `path`'s kept file for a read within the current turn (no await between
   * this and the read), or null as for `acquire`; it is not marked in use.
   */
  peek(path: string): { fd: number; size: number } | null {
    const k = this.kept.get(path);
    if (!k) return null;
    const st = this.statOrNull(path);
    if (!st || st.dev !== k.dev || st.ino !== k.ino || !st.isFile()) {
      if (!k.busy) this.drop(path, k);
      return null;
    }
    return { fd: k.fh.fd, size: st.size };
  }

  /**
   * Keeps `fh` (just opened at `path`, `st` its fstat) as the path's file, in use until `release`. A file
   * kept before for the path (not in use) is closed. Closes the least recently used idle files past `maxOpen`.
   */
  add(path: string, fh: FileHandle, st: Stats): void {
    const old = this.kept.get(path);
    if (old && old.fh !== fh) this.drop(path, old);
    this.kept.set(path, { fh, dev: st.dev, ino: st.ino, busy: true, usedAt: performance.now() });
    this.trim();
    this.sweeper ??= setInterval(() => this.sweep(), Math.max(1, this.idleMs / 2)).unref();
  }

  /**
   * Ends a use of `path`'s file. `keep` false closes it (after a failure its state is not known); true
   * keeps it for the next chunk, unless more than `maxOpen` are kept. Resolves once a closed one is closed.
   */
  async release(path: string, keep: boolean): Promise<void> {
    const k = this.kept.get(path);
    if (!k) return;
    k.busy = false;
    k.usedAt = performance.now();
    if (!keep || this.maxOpen === 0) await this.drop(path, k);
    else this.trim();
  }

  /** Closes every file not in use now; resolves when they are closed (a server stopping, tests). */
  async closeAll(): Promise<void> {
    const closing: Promise<void>[] = [];
    for (const [path, k] of this.kept) if (!k.busy) closing.push(this.drop(path, k));
    await Promise.all(closing);
  }

  /** Closes idle files past `maxOpen`, least recently used first. */
  private trim(): void {
    if (this.kept.size <= this.maxOpen) return;
    for (const [path, k] of this.kept) {
      if (this.kept.size <= this.maxOpen) break;
      if (!k.busy) void this.drop(path, k);
    }
  }

  /** Closes the files unused for `idleMs`. */
  private sweep(): void {
    const before = performance.now() - this.idleMs;
    for (const [path, k] of this.kept) if (!k.busy && k.usedAt <= before) void this.drop(path, k);
  }

  private drop(path: string, k: Kept): Promise<void> {
    if (this.kept.get(path) === k) this.kept.delete(path);
    if (this.kept.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
    // A close that fails (EBADF, EIO) leaves nothing to do: the descriptor is gone either way.
    return k.fh.close().catch(() => {});
  }

  private statOrNull(path: string): Stats | null {
    try {
      return statSync(path, { throwIfNoEntry: false }) ?? null;
    } catch {
      return null;
    }
  }
}

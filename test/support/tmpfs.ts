/**
 * Small real filesystems for the disk-fault tests (issue 8.1): tmpfs mounts of a chosen size, which the
 * tests run as root to make (CI does). Every mount is remembered so `unmountAll` can undo them, newest
 * first, in the suite's afterAll.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';

export interface TmpfsMounts {
  /** Mounts a tmpfs of `size` (e.g. `1m`) on `dir`; null, or the error's text when mounting is not allowed. */
  mount(dir: string, size: string): string | null;
  /** Unmounts every mount made here, newest first. */
  unmountAll(): void;
}

export function tmpfsMounts(): TmpfsMounts {
  const mounted: string[] = [];
  return {
    mount(dir, size) {
      mkdirSync(dir, { recursive: true });
      try {
        execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir], { stdio: 'pipe' });
        mounted.push(dir);
        return null;
      } catch (err) {
        return String((err as { stderr?: Buffer }).stderr ?? err).trim();
      }
    },
    unmountAll() {
      for (const dir of mounted.reverse()) execFileSync('umount', [dir]);
      mounted.length = 0;
    },
  };
}

/**
 * The synchronous file operations the hook uses on paths anyone can make into anything (issue 25 item 1,
 * lib/client/api/safe-fs.ts): they return or throw, at once, whatever is there; never wait on a FIFO, never
 * read a device, never loop.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mkdirs, openRegularForAppend, readRegularFile } from '../../../lib/client/api/safe-fs.js';
import { tmpDirs } from '../../support/tmp.js';

const tmp = tmpDirs('hansard-safe-fs-');
const linux = existsSync('/proc/self/status');
const codeOf = (f: () => unknown): string | undefined => {
  try {
    f();
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  }
  return undefined;
};

describe('mkdirs', () => {
  it('makes the missing folders with the mode, and is quiet when they exist', () => {
    const root = tmp.make();
    const deep = join(root, 'a', 'b', 'c');
    mkdirs(deep, 0o700);
    expect(statSync(deep).isDirectory()).toBe(true);
    expect(statSync(join(root, 'a')).mode & 0o777).toBe(0o700);
    mkdirs(deep, 0o700);
  });

  it('a file in the way: ENOTDIR', () => {
    const root = tmp.make();
    writeFileSync(join(root, 'f'), 'x');
    expect(codeOf(() => mkdirs(join(root, 'f'), 0o700))).toBe('ENOTDIR');
    expect(codeOf(() => mkdirs(join(root, 'f', 'g'), 0o700))).toBe('ENOTDIR');
  });

  it.skipIf(!linux)(
    'under /proc, where mkdir answers ENOENT below a folder that exists: ENOENT, at once',
    () => {
      const t = performance.now();
      expect(codeOf(() => mkdirs(`/proc/hansard-safe-fs-${process.pid}/a/b`, 0o700))).toBe('ENOENT');
      expect(performance.now() - t).toBeLessThan(1_000);
    },
  );
});

describe('readRegularFile and openRegularForAppend', () => {
  it('reads a regular file, and one reached through a symlink', () => {
    const root = tmp.make();
    writeFileSync(join(root, 'f'), 'ref: refs/heads/main\n');
    symlinkSync(join(root, 'f'), join(root, 'l'));
    expect(readRegularFile(join(root, 'f')).toString()).toBe('ref: refs/heads/main\n');
    expect(readRegularFile(join(root, 'l')).toString()).toBe('ref: refs/heads/main\n');
    expect(codeOf(() => readRegularFile(join(root, 'f'), 4))).toBe('EFBIG');
    expect(codeOf(() => readRegularFile(join(root, 'none')))).toBe('ENOENT');
  });

  it.skipIf(!linux)(
    'refuses a FIFO nobody writes, /dev/zero, a link to it and a folder with EFTYPE, at once',
    () => {
      const root = tmp.make();
      execFileSync('mkfifo', [join(root, 'fifo')]);
      symlinkSync('/dev/zero', join(root, 'zero'));
      mkdirSync(join(root, 'dir'));
      for (const p of [join(root, 'fifo'), '/dev/zero', join(root, 'zero'), join(root, 'dir')])
        expect(codeOf(() => readRegularFile(p))).toBe('EFTYPE');
      // Appending to a FIFO nobody reads would wait for a reader: refused by the OS (ENXIO) instead.
      expect(codeOf(() => openRegularForAppend(join(root, 'fifo')))).toBe('ENXIO');
      expect(codeOf(() => openRegularForAppend('/dev/null'))).toBe('EFTYPE');
    },
  );
});

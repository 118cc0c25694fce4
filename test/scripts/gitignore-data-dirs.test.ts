/**
 * `.gitignore` keeps every local data directory out of git: the README's `npm start -- --data ./.hansard-new`
 * makes a folder at the root that holds the deployment's private signing key (keys/) and its tokens'
 * state; `.hansard/` alone left it untracked but not ignored, one `git add .` away from a commit.
 */
import { execFileSync } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Whether git ignores `path` (relative to the root; it need not exist): `git check-ignore`. */
function ignored(path: string): boolean {
  try {
    execFileSync('git', ['check-ignore', '-q', '--no-index', path], { cwd: ROOT, stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('.gitignore and local data directories', () => {
  it.each([
    '.hansard/keys/current.pem',
    '.hansard-new/keys/current.pem',
    '.hansard-new/state.sqlite',
    '.hansard2/state.sqlite',
  ])('ignores %s', (path) => {
    expect(ignored(path)).toBe(true);
  });

  it('still tracks the sources', () => {
    expect(ignored('lib/client/cli/cmd-serve.ts')).toBe(false);
    expect(ignored('README.md')).toBe(false);
  });
});

/**
 * Scratch folders for a suite: `tmpDirs(prefix)` registers an afterAll that removes every folder its
 * `make()` created, so a suite writes no cleanup of its own.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

export function tmpDirs(prefix: string): { make(): string } {
  const made: string[] = [];
  afterAll(() => {
    // Retries: a detached process a test started (the hook's shipper) may still be writing in it.
    for (const d of made) rmSync(d, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 });
  });
  return {
    make() {
      const d = mkdtempSync(join(tmpdir(), prefix));
      made.push(d);
      return d;
    },
  };
}

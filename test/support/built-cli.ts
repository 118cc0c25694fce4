/**
 * The CLI built from the current source for suites that run the real `bin/hansard` as a process: built
 * into .test-results/<name>-<pid>/dist (scripts/build.mjs with HANSARD_BUILD_OUTDIR) beside a copy of
 * bin/hansard and package.json, once per suite, and removed after it (dist/ may be stale or rebuilt by
 * someone else meanwhile). test/client/capture/helpers.ts, test/client/cli/serve-lock and
 * serve-signal-twice.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Builds the CLI once for the calling suite (its `beforeAll`, up to 120 s on a loaded machine) into
 * `.test-results/<name>-<pid>` and removes it after the suite; returns that folder (`app`, the package
 * root a process run there finds) and its `bin/hansard`.
 */
export function useBuiltCli(name: string): { app: string; bin: string } {
  const app = join(ROOT, '.test-results', `${name}-${process.pid}`);
  const out = { app, bin: join(app, 'bin/hansard') };
  beforeAll(() => {
    execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], {
      cwd: ROOT,
      env: { ...process.env, HANSARD_BUILD_OUTDIR: join(app, 'dist') },
      stdio: 'inherit',
    });
    mkdirSync(join(app, 'bin'), { recursive: true });
    copyFileSync(join(ROOT, 'bin/hansard'), out.bin);
    copyFileSync(join(ROOT, 'package.json'), join(app, 'package.json'));
  }, 120_000);
  afterAll(() => rmSync(app, { recursive: true, force: true }));
  return out;
}

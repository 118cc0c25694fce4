/**
 * The leak check (test/support/leak-check.ts, services.ts) on a file that leaks on purpose
 * (test/fixtures/leak-check/: one leaves two, one's worker dies before its own check): the run fails,
 * names each process left behind, and kills it.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { processes } from './processes.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const VITEST = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');

describe('the leak check', () => {
  it('fails a run whose test files leave processes running, names each and kills it', () => {
    const run = spawnSync(
      process.execPath,
      [VITEST, 'run', '--config', 'test/fixtures/leak-check/vitest.config.ts'],
      { cwd: ROOT, encoding: 'utf8', timeout: 90_000, env: { ...process.env, NO_COLOR: '1' } },
    );
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.status, output).toBe(1);
    expect(output).toMatch(/leak check: 2 process\(es\) this test file started outlived it/);
    expect(output).toMatch(/pid \d+ \(ppid \d+\): sleep 7301/);
    expect(output).toMatch(/pid \d+ \(ppid \d+\): sleep 7302/);
    // The worker of crash.fixture.ts died before its own check: the run's check (services.ts) names it.
    expect(output).toMatch(/leak check: 1 process\(es\) outlived their test file/);
    expect(output).toMatch(/pid \d+ \(ppid \d+\): sleep 7303/);
    expect(processes().filter((p) => /^sleep 730[123]$/.test(p.cmd))).toEqual([]);
  }, 120_000);
});

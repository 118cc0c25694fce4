#!/usr/bin/env node
/**
 * Makes sure Debian's Chromium is at /usr/bin/chromium for the browser tests (test/board/browser.test.ts).
 * Run by `npm test`'s `pretest`. Present: prints nothing and exits 0 at once. Missing and root: installs it
 * with apt-get (update, then install without recommends). Missing and not root: says how and exits 1.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const CHROMIUM = '/usr/bin/chromium';

if (existsSync(CHROMIUM)) process.exit(0);

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
if (!isRoot) {
  console.error(
    `ensure-chromium: ${CHROMIUM} is missing; the browser tests need Debian's chromium.\n` +
      'Install it as root, then run the tests again:\n' +
      '  sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends chromium',
  );
  process.exit(1);
}

const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };

/** Runs one command with its output shown, and stops the script when it fails. */
function run(cmd, args) {
  console.log(`ensure-chromium: ${cmd} ${args.join(' ')}`);
  const res = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], env });
  if (res.error) {
    console.error(`ensure-chromium: could not run ${cmd}: ${res.error.message}`);
    process.exit(1);
  }
  if (res.status !== 0) {
    console.error(`ensure-chromium: ${cmd} failed (exit ${res.status ?? res.signal})`);
    process.exit(1);
  }
}

const started = Date.now();
console.log(`ensure-chromium: ${CHROMIUM} is missing; installing Debian's chromium with apt-get`);
run('apt-get', ['update']);
run('apt-get', ['install', '-y', '--no-install-recommends', 'chromium']);
if (!existsSync(CHROMIUM)) {
  console.error(`ensure-chromium: apt-get finished but ${CHROMIUM} is still missing`);
  process.exit(1);
}
console.log(`ensure-chromium: installed ${CHROMIUM} in ${((Date.now() - started) / 1000).toFixed(1)} s`);

#!/usr/bin/env node
/**
 * Makes sure Debian's PostgreSQL server is installed for the search tests (issue 30 item 4:
 * test/store/contract/search-postgres.test.ts and search-data-api.test.ts start a throwaway cluster with
 * it, harness/postgres.ts). Run by `npm test`'s `pretest`. Present (`/usr/lib/postgresql/<version>/bin/
 * postgres`): prints nothing and exits 0 at once. Missing and root: installs `postgresql` with apt-get
 * (update, then install without recommends); the package's own cluster is not needed and is left as
 * Debian sets it up. Missing and not root: says how and exits 1.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = '/usr/lib/postgresql';

/** True when some version's server binary is there. */
function installed() {
  if (!existsSync(ROOT)) return false;
  return readdirSync(ROOT).some((v) => existsSync(join(ROOT, v, 'bin', 'postgres')));
}

if (installed()) process.exit(0);

const isRoot = typeof process.getuid === 'function' && process.getuid() === 0;
if (!isRoot) {
  console.error(
    `ensure-postgresql: no PostgreSQL server under ${ROOT}; the search tests need Debian's postgresql.\n` +
      'Install it as root, then run the tests again:\n' +
      '  sudo apt-get update && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends postgresql',
  );
  process.exit(1);
}

const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };

/** Runs one command with its output shown, and stops the script when it fails. */
function run(cmd, args) {
  console.log(`ensure-postgresql: ${cmd} ${args.join(' ')}`);
  const res = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], env });
  if (res.error) {
    console.error(`ensure-postgresql: could not run ${cmd}: ${res.error.message}`);
    process.exit(1);
  }
  if (res.status !== 0) {
    console.error(`ensure-postgresql: ${cmd} failed (exit ${res.status ?? res.signal})`);
    process.exit(1);
  }
}

const started = Date.now();
console.log(
  `ensure-postgresql: no PostgreSQL server under ${ROOT}; installing Debian's postgresql with apt-get`,
);
run('apt-get', ['update']);
run('apt-get', ['install', '-y', '--no-install-recommends', 'postgresql']);
if (!installed()) {
  console.error(`ensure-postgresql: apt-get finished but no server binary is under ${ROOT}`);
  process.exit(1);
}
console.log(`ensure-postgresql: installed in ${((Date.now() - started) / 1000).toFixed(1)} s`);

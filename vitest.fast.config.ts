/**
 * `npm run test:fast`: the inner loop, under 2 minutes on a 2-core machine (docs/testing.md). The
 * in-process suites of the folders below: no emulator (DynamoDB Local, s3rver), no browser, no built
 * CLI, no server process; each file measured under 2.5 s in a full run (a whole `npm test`'s JSON
 * report, per file). SLOW lists the files of these folders that are not: they run in `npm test` only.
 * A new file in these folders runs here; when it needs an emulator, a browser or a process of the
 * built CLI, or takes seconds, add it to SLOW; a file that leaves global state behind (process.env, a
 * patched global, an open server) breaks the files after it in its worker here: restore it in afterAll.
 * `npm test` runs everything, each file isolated.
 */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// include replaces the base's (mergeConfig would append to it); exclude keeps the base's and adds SLOW.
// isolate: false: the files of a worker run one after another in one process and share its loaded
// modules (setupFiles, and so the leak check, still run for each file); importing the app again for
// every file was most of this run's time (116 files: 186 s isolated, 80 s not, both at a load of 13).
export default defineConfig({
  test: { ...base.test, projects: [base.test!.projects![0]!] },
});

/**
 * `npm run test:fast`: the inner loop, under 2 minutes on a 2-core machine (docs/testing.md). It runs
 * `npm test`'s `in-process` project alone (vitest.config.ts): the files of vitest.fast-set.ts, no
 * emulator, no browser, no built CLI, no server process, a worker's files in one process (isolate:
 * false). Which files those are, and how a new one joins or leaves the set: vitest.fast-set.ts.
 */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

export default defineConfig({
  test: { ...base.test, projects: [base.test!.projects![0]!] },
});

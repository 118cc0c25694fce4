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

/** The folders of in-process tests: the record format, the service, HTTP on loopback, importers, audit. */
const FAST = [
  'test/log/**/*.test.ts',
  'test/service/**/*.test.ts',
  'test/http/**/*.test.ts',
  'test/importers/**/*.test.ts',
  'test/audit/**/*.test.ts',
  'test/architecture/**/*.test.ts',
  'test/store/fs/**/*.test.ts',
  'test/ratelimit/memory.test.ts',
];

/** Files of those folders left to `npm test`: why, and their seconds in a full run (2 workers, 2 cores). */
const SLOW = [
  // emulators: DynamoDB Local or s3rver
  'test/service/board/overview-5000-dynamo.test.ts', // 57 s
  'test/service/digests/digests.test.ts', // 59 s
  // processes: a child process per case, or a real `hansard` process
  'test/http/hostile-replay.test.ts', // 38 s
  'test/log/segment-blocks.test.ts', // 17 s
  'test/log/writer.test.ts', // 4.6 s
  'test/audit/verify-digests-process.test.ts', // 5.4 s
  // seconds of their own (large inputs, property runs, many requests)
  'test/audit/locate-chunks.test.ts', // 22 s
  'test/audit/tamper.test.ts', // 7.2 s
  'test/http/board-live.test.ts', // 3.4 s
  'test/http/digests-serve.test.ts', // 5.4 s
  'test/http/hostile-http.test.ts', // 3.4 s
  'test/http/ingest.test.ts', // 6.6 s
  'test/http/isolation.test.ts', // 6.2 s
  'test/http/openapi.test.ts', // 2.7 s
  'test/http/tenant-limits.test.ts', // 11 s
  'test/log/attribution-compact.test.ts', // 4.0 s
  'test/log/corrections-compact.test.ts', // 8.4 s
  'test/log/corrections.test.ts', // 5.0 s
  'test/log/envelope-scan-fuzz.test.ts', // 3.2 s
  'test/log/escape-fast.test.ts', // 4.5 s
  'test/log/fast-replay.test.ts', // 16 s
  'test/log/fast-text.test.ts', // 4.8 s
  'test/log/id-table.test.ts', // 15 s
  'test/log/redact.test.ts', // 4.8 s
  'test/log/writer-line-bounds.test.ts', // 3.1 s
  'test/service/board/overview-5000.test.ts', // 4.9 s
  'test/service/board/overview.test.ts', // 27 s
  'test/service/digests/ingest.test.ts', // 6.6 s
];

// include replaces the base's (mergeConfig would append to it); exclude keeps the base's and adds SLOW.
// isolate: false: the files of a worker run one after another in one process and share its loaded
// modules (setupFiles, and so the leak check, still run for each file); importing the app again for
// every file was most of this run's time (116 files: 186 s isolated, 80 s not, both at a load of 13).
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: FAST,
    exclude: [...(base.test?.exclude ?? []), ...SLOW],
    isolate: false,
  },
});

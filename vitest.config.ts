import { readdirSync } from 'node:fs';
import { defineConfig } from 'vitest/config';
import { FAST, FAST_FILES, SLOW } from './vitest.fast-set.js';

/** Options both projects share. */
const shared = {
  // test/real-client runs the real Claude Code and Codex CLIs (a ~760 MB install): `npm run test:real-client`.
  exclude: ['**/node_modules/**', 'test/real-client/**'],
  // Each file's own leak check: no process it started outlives it (test/support/leak-check.ts).
  setupFiles: ['test/support/leak-check.ts'],
  // A process per worker: the leak check reads the file's children from the worker's pid.
  pool: 'forks' as const,
  testTimeout: 30_000,
  // A hook may wait for the run's DynamoDB Local, whose JVM takes up to 90 s to answer on a loaded
  // machine (harness/dynamodb-local.ts): hooks that start an emulator say 120 s, and so does this.
  hookTimeout: 120_000,
  // s3rver (the S3 emulator of test/contract) makes ListObjectsV2 continuation tokens with DES, which
  // Node 20's OpenSSL 3 refuses unless the legacy provider is loaded.
  execArgv: ['--openssl-legacy-provider'],
  env: { NO_COLOR: '1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
};

/** The in-process files (vitest.fast-set.ts) as repository paths: FAST's folders and files, less SLOW. */
function inProcessFiles(): string[] {
  const all = (readdirSync('test', { recursive: true }) as string[])
    .map((f) => `test/${f.split('\\').join('/')}`)
    .filter((f) => /\.test\.tsx?$/.test(f));
  const folders = FAST.filter((g) => g.includes('/**/')).map((g) => g.slice(0, g.indexOf('/**/') + 1));
  const files = new Set([...FAST.filter((g) => !g.includes('*')), ...FAST_FILES]);
  const slow = new Set(SLOW);
  return all.filter((f) => !slow.has(f) && (files.has(f) || folders.some((d) => f.startsWith(d)))).sort();
}
const IN_PROCESS = inProcessFiles();

export default defineConfig({
  test: {
    // Three workers on two cores: many files wait on child processes, servers and emulators rather than
    // compute (whole npm test, quiet: 769 s with two, 695 s with three; docs/testing.md).
    maxWorkers: 3,
    projects: [
      {
        // The in-process suites: a worker runs its files one after another in one process and imports
        // the app once (isolate: false); setupFiles, and so the leak check, still run for each file.
        // Importing the app again for every file was most of their time (docs/testing.md).
        test: { ...shared, name: 'in-process', include: IN_PROCESS, isolate: false },
      },
      {
        // Everything else, each file isolated. DynamoDB Local, s3rver and Chromium, once per run and
        // shared; the end-of-run leak check (test/support/services.ts).
        test: {
          ...shared,
          name: 'isolated',
          include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
          exclude: [...shared.exclude, ...IN_PROCESS],
          globalSetup: ['test/support/services.ts'],
        },
      },
    ],
  },
});

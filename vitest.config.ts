import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts', 'test/**/*.test.tsx'],
    // test/real-client runs the real Claude Code and Codex CLIs (a ~760 MB install): `npm run test:real-client`.
    exclude: ['**/node_modules/**', 'test/real-client/**'],
    // DynamoDB Local, s3rver and Chromium, once per run and shared; the end-of-run leak check
    // (test/support/services.ts). Each file's own leak check: test/support/leak-check.ts.
    globalSetup: ['test/support/services.ts'],
    setupFiles: ['test/support/leak-check.ts'],
    // A process per test file: the leak check reads the file's children from the worker's pid.
    pool: 'forks',
    testTimeout: 30_000,
    // A hook may wait for the run's DynamoDB Local, whose JVM takes up to 90 s to answer on a loaded
    // machine (harness/dynamodb-local.ts): hooks that start an emulator say 120 s, and so does this.
    hookTimeout: 120_000,
    // Tests spawn servers and child processes; two cores here, so keep workers few.
    maxWorkers: 2,
    // s3rver (the S3 emulator of test/contract) makes ListObjectsV2 continuation tokens with DES, which
    // Node 20's OpenSSL 3 refuses unless the legacy provider is loaded.
    execArgv: ['--openssl-legacy-provider'],
    env: { NO_COLOR: '1', AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true' },
  },
});

import { defineConfig } from 'vitest/config';

// `npm run test:real-client`: the real Claude Code and Codex CLIs against scripted model stand-ins and a
// real hansard server (test/real-client/README.md). Not part of `npm test`: a ~770 MB install.
export default defineConfig({
  test: {
    include: ['test/real-client/**/*.test.ts'],
    globalSetup: ['test/real-client/global-setup.ts'],
    // The first run downloads the clients in globalSetup; each test runs a client for a few seconds.
    testTimeout: 120_000,
    hookTimeout: 600_000,
    // One file at a time: each runs native clients and a server on a two-core machine.
    maxWorkers: 1,
    fileParallelism: false,
    env: { NO_COLOR: '1' },
  },
});

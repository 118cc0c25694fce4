// The unit tests of the data-guarding code Stryker mutates (stryker.config.json): fast, in-process, no
// servers, so each mutant runs in about a second. `npm run mutate`.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: [
      'test/log/evidence.test.ts',
      'test/service/status-retention.test.ts',
      'test/service/work-content.test.ts',
      'test/service/declared.test.ts',
    ],
    testTimeout: 30_000,
    env: { NO_COLOR: '1' },
  },
});

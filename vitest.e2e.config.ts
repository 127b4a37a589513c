import { defineConfig } from 'vitest/config';
import { E2E_TESTS, SHARED_TEST_OPTIONS } from './test/support/groups.js';

// `npm run test:e2e`: the browser tests in headless Chromium (docs/e2e.md).
export default defineConfig({
  test: {
    globalSetup: [...SHARED_TEST_OPTIONS.globalSetup],
    setupFiles: [...SHARED_TEST_OPTIONS.setupFiles],
    include: [...E2E_TESTS],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    fileParallelism: false,
    // Tabs open at once in one browser (it.concurrent): three keep two cores busy without starving
    // a full-page screenshot when CI's later-pass linters run beside the browser tests.
    maxConcurrency: 3,
  },
});

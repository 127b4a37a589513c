import { defineConfig } from 'vitest/config';
import { E2E_TESTS, SHARED_TEST_OPTIONS } from './test/support/groups.js';

// `npm run test:e2e`: the browser tests in headless Chromium (docs/e2e.md).
export default defineConfig({
  test: {
    // The docs site, built once for the files that serve it (test/support/build-site.ts).
    globalSetup: [...SHARED_TEST_OPTIONS.globalSetup, 'test/support/build-site.ts'],
    setupFiles: [...SHARED_TEST_OPTIONS.setupFiles],
    include: [...E2E_TESTS],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    // Two files at a time, each with its own Chromium: the tests mostly wait on the browser (the
    // docs tests used a third of the cores over their run), so two keep the cores busier.
    fileParallelism: true,
    maxWorkers: 2,
    // Tabs open at once in one file's browser (it.concurrent).
    maxConcurrency: 3,
  },
});

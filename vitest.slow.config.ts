import { defineConfig } from 'vitest/config';
import { COVERAGE_OPTIONS, SHARED_TEST_OPTIONS, SLOW_TESTS } from './test/support/groups.js';

// `npm run test:slow`: the slow end-to-end checks (test/support/groups.ts); `.ci/run` always runs them.
export default defineConfig({
  test: {
    globalSetup: [...SHARED_TEST_OPTIONS.globalSetup],
    setupFiles: [...SHARED_TEST_OPTIONS.setupFiles],
    coverage: { ...COVERAGE_OPTIONS, include: [...COVERAGE_OPTIONS.include], reporter: [...COVERAGE_OPTIONS.reporter] },
    include: [...SLOW_TESTS],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    fileParallelism: true,
    maxWorkers: 2,
  },
});

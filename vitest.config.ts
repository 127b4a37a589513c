import { defineConfig } from 'vitest/config';
import { COVERAGE_OPTIONS, E2E_TESTS, SHARED_TEST_OPTIONS, SLOW_TESTS } from './test/support/groups.js';

// `npm test`: every test file but the slow end-to-end group and the browser tests (test/support/groups.ts).
export default defineConfig({
  test: {
    globalSetup: [...SHARED_TEST_OPTIONS.globalSetup],
    setupFiles: [...SHARED_TEST_OPTIONS.setupFiles],
    coverage: { ...COVERAGE_OPTIONS, include: [...COVERAGE_OPTIONS.include], reporter: [...COVERAGE_OPTIONS.reporter] },
    include: ['test/**/*.test.ts'],
    exclude: [...E2E_TESTS, ...SLOW_TESTS, 'node_modules/**'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: true,
    maxWorkers: 2,
  },
});

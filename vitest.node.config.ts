import { defineConfig } from 'vitest/config';
import { NODE_PROCESS_TESTS, SHARED_TEST_OPTIONS } from './test/support/groups.js';

// `npm run test:node`: the slow group's Node-dependent processes (the sandbox's relaunch and
// signals, Prism as the mock), which `.ci/run` runs beside `npm test` on every Node it tries
// (test/support/groups.ts).
export default defineConfig({
  test: {
    globalSetup: [...SHARED_TEST_OPTIONS.globalSetup],
    setupFiles: [...SHARED_TEST_OPTIONS.setupFiles],
    include: [...NODE_PROCESS_TESTS],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    fileParallelism: true,
    maxWorkers: 2,
  },
});

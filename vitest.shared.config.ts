import { defineConfig } from 'vitest/config';
import { NOT_ON_SHARED_STORE, SHARED_STORE_TESTS, SHARED_TEST_OPTIONS } from './test/support/groups.js';

// `npm run test:shared`: the sandbox's tests again, each sandbox on a fresh database of a private
// PostgreSQL cluster (the shared store, --database-url), through the same harness
// (test/support/sandbox.ts). `.ci/run` always runs it. The files share each worker's module graph
// as in `npm test`'s shared-graph project (test/support/groups.ts, SHARED_GRAPH_TESTS).
export default defineConfig({
  test: {
    globalSetup: [...SHARED_TEST_OPTIONS.globalSetup, 'test/support/postgres-setup.ts'],
    setupFiles: [...SHARED_TEST_OPTIONS.setupFiles],
    include: [...SHARED_STORE_TESTS],
    exclude: [...NOT_ON_SHARED_STORE, 'node_modules/**'],
    isolate: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    fileParallelism: true,
    maxWorkers: 2,
  },
});

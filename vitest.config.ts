import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { COVERAGE_OPTIONS, E2E_TESTS, SHARED_GRAPH_TESTS, SHARED_TEST_OPTIONS, SLOW_TESTS } from './test/support/groups.js';

/**
 * The upgrade canary of openapi-fetch (.ci/openapi-fetch-canary.sh): with
 * `PAYLATER_OPENAPI_FETCH_CANARY` set to a folder where another release of openapi-fetch is
 * installed, the tests import that release instead of the pinned one.
 */
function openapiFetchCanary(): Record<string, string> {
  const folder = process.env.PAYLATER_OPENAPI_FETCH_CANARY;
  if (folder === undefined || folder === '') return {};
  const packageFolder = join(folder, 'node_modules', 'openapi-fetch');
  const manifest = JSON.parse(readFileSync(join(packageFolder, 'package.json'), 'utf8')) as { exports: { '.': { import: string } } };
  return { 'openapi-fetch': join(packageFolder, manifest.exports['.'].import) };
}

const EXCLUDED = [...E2E_TESTS, ...SLOW_TESTS, 'node_modules/**'];

/** What both projects share. Not set on the root with `extends: true`: that would add the root's `include` to each project's. */
const PROJECT = {
  globalSetup: [...SHARED_TEST_OPTIONS.globalSetup],
  setupFiles: [...SHARED_TEST_OPTIONS.setupFiles],
  testTimeout: 60_000,
  hookTimeout: 120_000,
};

// `npm test`: every test file but the slow end-to-end group and the browser tests (test/support/groups.ts),
// in two projects: the files that share each worker's module graph (`isolate: false`: the sandbox,
// the contract and the libraries imported once per worker, not once per file) and the rest, each
// file in a fresh module graph as by default (test/support/groups.ts says which and why).
export default defineConfig({
  test: {
    coverage: { ...COVERAGE_OPTIONS, include: [...COVERAGE_OPTIONS.include], reporter: [...COVERAGE_OPTIONS.reporter] },
    fileParallelism: true,
    maxWorkers: 2,
    projects: [
      {
        resolve: { alias: openapiFetchCanary() },
        test: { ...PROJECT, name: 'shared-graph', include: [...SHARED_GRAPH_TESTS], exclude: EXCLUDED, isolate: false },
      },
      {
        resolve: { alias: openapiFetchCanary() },
        test: { ...PROJECT, name: 'isolated', include: ['test/**/*.test.ts'], exclude: [...EXCLUDED, ...SHARED_GRAPH_TESTS], isolate: true },
      },
    ],
  },
});

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defineConfig } from 'vitest/config';
import { COVERAGE_OPTIONS, E2E_TESTS, SHARED_TEST_OPTIONS, SLOW_TESTS } from './test/support/groups.js';

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

// `npm test`: every test file but the slow end-to-end group and the browser tests (test/support/groups.ts).
export default defineConfig({
  resolve: { alias: openapiFetchCanary() },
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

/**
 * The test groups, one list each, read by the Vitest configurations:
 *
 * - `npm test` (vitest.config.ts): everything not listed below; the suite a contributor runs many
 *   times a day.
 * - `npm run test:slow` (vitest.slow.config.ts): the slow end-to-end checks, run by `.ci/run` on
 *   every submission: each code sample in its language, the contract kit through Prism (against
 *   mocks, and against the sandbox behind the validating proxy), the workflows as against a real
 *   implementation (they wait for a verification in real time) and every workflow run by
 *   `redocly respect`, the packed package installed into a project, `npm start` and the docs server
 *   as processes, the volume tests, and Spectral's rulesets over the bundles (what
 *   `npm run lint:spectral`, run by `.ci/run` before the tests, checks too).
 * - `npm run test:e2e` (vitest.e2e.config.ts): headless Chromium, everything under test/e2e/.
 *
 * A test file belongs to exactly one group; test/groups.test.ts checks that.
 */
export const SLOW_TESTS: readonly string[] = [
  'test/samples/curl.test.ts',
  'test/samples/node.test.ts',
  'test/samples/php.test.ts',
  'test/samples/python.test.ts',
  'test/samples/short-calls.test.ts',
  'test/docs/guide-snippets.test.ts',
  'test/scripts/contract-kit.test.ts',
  'test/sandbox/conformance.test.ts',
  'test/package.test.ts',
  'test/scripts/servers.test.ts',
  'test/scripts/mock-cli.test.ts',
  'test/sandbox/volume.test.ts',
  'test/sandbox/fuzz-volume.test.ts',
  'test/scripts/workflows-real.test.ts',
  'test/scripts/workflows-run.test.ts',
  'test/contract/spectral.test.ts',
  'test/shared/processes.test.ts',
  'test/shared/outage.test.ts',
];

export const E2E_TESTS: readonly string[] = ['test/e2e/**/*.test.ts'];

/**
 * `npm run test:shared` (vitest.shared.config.ts) runs these again with every sandbox on the
 * shared store (PostgreSQL): a second run of files of the groups above, not a group of its own.
 * The sandbox's tests, except those about the memory store itself or slow in any store.
 */
export const SHARED_STORE_TESTS: readonly string[] = ['test/sandbox/**/*.test.ts'];
export const NOT_ON_SHARED_STORE: readonly string[] = [
  // Slow in any store; run by test:slow.
  'test/sandbox/volume.test.ts',
  'test/sandbox/conformance.test.ts',
  'test/sandbox/fuzz-volume.test.ts',
];

/** What every group shares: the global setup (browser bundles, the transpiled CLI) and the guard. */
export const SHARED_TEST_OPTIONS = {
  globalSetup: ['test/support/build-browser.ts', 'test/support/build-sources.ts'],
  setupFiles: ['test/support/hermetic.ts'],
} as const;

/**
 * Coverage of src/ by the code the test processes run (`--coverage`, off unless asked for: see
 * docs/testing.md). Children started as processes (the CLI, Prism, the packed package) are not
 * measured.
 */
export const COVERAGE_OPTIONS = {
  provider: 'v8',
  include: ['src/**/*.ts'],
  reporter: ['text-summary', 'json-summary', 'html'],
  reportsDirectory: 'coverage',
} as const;

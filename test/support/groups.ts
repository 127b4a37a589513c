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
 *   `npm run lint:spectral`, run by `.ci/run` before the tests, checks too), and the processes
 *   whose behaviour depends on the Node that runs them (`npm run test:node`, below).
 * - `npm run test:node` (vitest.node.config.ts): those Node-dependent processes alone, a part of
 *   the slow group that `.ci/run`'s later Node passes run beside `npm test`.
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
  // The Node-dependent processes (below): in this group on step 1's Node, and run on every later
  // Node of `.ci/run` by `npm run test:node`.
  'test/cli/heap.test.ts',
  'test/scripts/mock.test.ts',
  'test/compat/mock.test.ts',
];

/**
 * `npm run test:node` (vitest.node.config.ts): the slow group's files whose outcome depends on the
 * Node that runs them, which `.ci/run` runs beside `npm test` on each later Node (24, 26) as well.
 * They start processes, which is what they test: the sandbox relaunched with its heap flags and
 * stopped by signals (Ctrl+C of the relaunched sandbox once failed on Node 24 only), and Prism, the
 * mock, run as `npm run mock` runs it (the mock's stops and answers; the integrations' flows
 * against it). Out of `npm test` because starting those processes is most of their cost.
 */
export const NODE_PROCESS_TESTS: readonly string[] = ['test/cli/heap.test.ts', 'test/scripts/mock.test.ts', 'test/compat/mock.test.ts'];

export const E2E_TESTS: readonly string[] = ['test/e2e/**/*.test.ts'];

/**
 * The files of `npm test` that share their worker's module graph (Vitest's `isolate: false`,
 * vitest.config.ts): each worker imports the sandbox, the contract documents and the libraries once
 * for all of them, where an isolated file imports them again (on Node 20 the imports were a third
 * of the suite's time). The other files of `npm test` run isolated, each in a fresh module graph.
 *
 * A file here leaves nothing behind for the next file of its worker: no environment variable,
 * global or spy left stubbed, no process listener, no module state that another file reads (each
 * file starts its own sandboxes and closes them). Not here: the CLI's tests (the commands run
 * in-process spy on the standard streams, stub `PAYLATER_` variables, install signal handlers),
 * the shared store's (not yet tried without isolation), the layer and hermetic
 * checks (they count what importing does), the browser bundles, the benches and the examples.
 * The setup file (test/support/hermetic.ts) runs again before each file either way.
 */
export const SHARED_GRAPH_TESTS: readonly string[] = [
  'test/sandbox/**/*.test.ts',
  'test/contract/**/*.test.ts',
  'test/clients/**/*.test.ts',
  'test/webhooks/**/*.test.ts',
  'test/signature.test.ts',
  'test/http/**/*.test.ts',
  'test/docs/**/*.test.ts',
  'test/compat/**/*.test.ts',
  'test/scripts/**/*.test.ts',
];

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

/**
 * The layers of the project and the rules that keep their imports one way (docs/architecture.md):
 *
 *   generated/  ->  library (src/clients, src/signature.ts, src/webhooks*, src/contract*, src/http,
 *                   src/browser, src/index.ts)  ->  src/sandbox  ->  src/cli, scripts, bench, test
 *
 * A module may import from its own layer and the layers to its left, never to its right. Inside the
 * sandbox, the families and the gateway engine reach the scale machinery (webhook delivery,
 * retention) only through its entry modules. Run by
 * test/layers.test.ts (so CI fails on a regression) and by hand: `npm run lint:layers`.
 */
const LIBRARY = '^src/(clients/|signature\\.ts$|webhooks|contract|http/|browser/|index\\.ts$)';
const SANDBOX = '^src/sandbox/';
const TOP = '^(src/cli/|scripts/|bench/|test/|examples/)';
/** The sandbox's domain modules: the families and the gateway engine. */
const DOMAIN = '^src/sandbox/(families|gateway)/';
/** The machinery behind the small interfaces the domain modules use (delivery/index.ts, retention.ts, clock.ts). */
const MACHINERY_INTERNALS = '^src/sandbox/(delivery/|trimming\\.ts$)';
/** Entries a browser bundle may include: nothing from Node in them or what they import. */
const BROWSER_SAFE = '^src/(browser/|clients/(gateway|extras|transport|retry-safety|statuses)\\.ts$)';

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle: the modules cannot be understood (or loaded) one after the other.',
      from: { path: '^(src|scripts)/' },
      to: { circular: true },
    },
    {
      name: 'generated-imports-nothing-hand-written',
      severity: 'error',
      comment: 'generated/ is made from openapi/ alone.',
      from: { path: '^generated/' },
      to: { path: '^(src|scripts|bench|test|examples)/' },
    },
    {
      name: 'library-above-sandbox',
      severity: 'error',
      comment: 'The published library imports nothing from the sandbox, the CLI, scripts, bench or tests.',
      from: { path: LIBRARY },
      to: { path: [SANDBOX, TOP] },
    },
    {
      name: 'sandbox-below-tools',
      severity: 'error',
      comment: 'The sandbox imports nothing from the CLI, scripts, bench or tests.',
      from: { path: SANDBOX },
      to: { path: TOP },
    },
    {
      name: 'domain-through-machinery-entries',
      severity: 'error',
      comment:
        "The families and the gateway engine use the sandbox's scale machinery through its small interfaces: webhook delivery through delivery/index.ts only, retention through retention.ts, never trimming.ts or another file of delivery/.",
      from: { path: DOMAIN },
      to: { path: MACHINERY_INTERNALS, pathNot: '^src/sandbox/delivery/index\\.ts$' },
    },
    {
      name: 'cli-not-into-tools',
      severity: 'error',
      comment: 'The CLI is published: it imports nothing from scripts, bench or tests.',
      from: { path: '^src/cli/' },
      to: { path: '^(scripts|bench|test|examples)/' },
    },
    {
      name: 'no-dev-dependency-at-run-time',
      severity: 'error',
      comment: 'A devDependency is not installed with the package: runtime code may only import its types.',
      from: { path: '^src/' },
      to: { dependencyTypes: ['npm-dev'], dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'browser-safe-without-node',
      severity: 'error',
      comment: 'Browser-safe entries and everything they import use no Node built-in module.',
      from: { path: BROWSER_SAFE },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'browser-safe-imports-browser-safe',
      severity: 'error',
      comment: 'What a browser-safe entry imports from src/ is browser-safe too.',
      from: { path: BROWSER_SAFE },
      to: { path: '^src/', pathNot: BROWSER_SAFE },
    },
    {
      name: 'not-to-unresolvable',
      severity: 'error',
      comment: "An import that resolves to nothing (Dredd's `hooks` exists only inside Dredd's hook runner).",
      from: {},
      to: { couldNotResolve: true, pathNot: '^hooks$' },
    },
  ],
  options: {
    doNotFollow: { path: ['node_modules'] },
    exclude: { path: ['^node_modules/', '^dist/'] },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
  },
};

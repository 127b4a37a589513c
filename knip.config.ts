/**
 * knip (`npm run lint:unused`, run by `.ci/run`): no unused file, export, type or dependency, and
 * no dependency used but not listed.
 *
 * The entries are what runs or is imported from outside the tree: the package's `exports` and
 * `bin` (their exports are the public API, used by integrators, so knip reports none of them), the
 * scripts and benches started by `npm run` or by hand, the contract kit's Dredd files (bundled by
 * esbuild when it runs), the example, and, through knip's own Vitest plugin, the Vitest
 * configurations and every test file. `generated/` is written by `npm run generate` and checked
 * for staleness, not for use.
 */
import type { KnipConfig } from 'knip';

const config: KnipConfig = {
  entry: [
    // package.json `exports` and `bin`, as their sources (tsconfig.build.json: src -> dist).
    'src/index.ts',
    'src/signature.ts',
    'src/webhooks/index.ts',
    'src/clients/{gateway,extras,web,sdk}.ts',
    'src/sandbox/server.ts',
    'src/cli/main.ts',
    // The browser scripts, bundled by scripts/build-browser.ts into dist/browser/.
    'src/browser/{sdk,checkout,dashboard}.ts',
    // Run by `npm run` (knip reads those too) or by hand with tsx.
    'scripts/*.ts',
    'bench/*.ts',
    // The contract kit's Dredd side, bundled by scripts/contract/bundle.ts.
    'scripts/contract/{driver,hooks}.ts',
    'examples/**/*.ts',
  ],
  project: ['src/**/*.ts', 'scripts/**/*.ts', 'bench/**/*.ts', 'test/**/*.ts', 'examples/**/*.ts'],
  ignoreDependencies: [
    // Command-line tools run by .ci/run on the packed package (`npx --no -- publint`, `attw`).
    'publint',
    '@arethetypeswrong/cli',
    // Run as programs or read as files, by path: Spectral and its OWASP ruleset
    // (scripts/lint-spectral.ts, scripts/spectral/*.yaml), mermaid's bundled script
    // (scripts/docs-diagrams.ts), Scalar's standalone bundle (scripts/docs-pages/console.ts),
    // openapi-typescript's program (scripts/generate.ts), axe-core's script injected into the
    // dashboard by its browser test (test/e2e/dashboard.test.ts).
    '@stoplight/spectral-cli',
    '@stoplight/spectral-owasp-ruleset',
    'mermaid',
    '@scalar/api-reference',
    'openapi-typescript',
    'axe-core',
    // Not a package: the module Dredd gives its hook files at run time (scripts/contract/dredd.d.ts).
    'hooks',
  ],
  // System programs, not packages: the shared sandbox's fault bench mounts a small tmpfs for its
  // full-disk case (bench/shared-faults.ts).
  ignoreBinaries: ['mount', 'umount'],
};

export default config;

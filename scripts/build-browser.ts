/**
 * Builds the browser code under src/browser/ into dist/browser/ (run after `tsc -p
 * tsconfig.build.json`, which leaves src/browser out):
 *
 * - dist/browser/sdk.js: the browser script of the web flow, one minified IIFE (es2019), served by
 *   the sandbox at `GET /sdk.js`;
 * - dist/browser/checkout.js: the script of the sandbox's hosted checkout page (inlined into it);
 * - dist/browser/dashboard.js: the script of the sandbox's dashboard (inlined into it);
 * - dist/browser/sdk.d.ts and types.d.ts: the public types of sdk.js (tsconfig.browser.json).
 *
 *   tsx scripts/build-browser.ts
 *
 * The sandbox reads the built files (src/sandbox/browser-assets.ts); the test suite runs
 * {@link buildBrowser} without the types before it starts (test/support/build-browser.ts).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';

/** Each file under dist/browser/ and its entry point under src/browser/. */
const ENTRIES: Record<string, string> = {
  'sdk.js': 'sdk.ts',
  'checkout.js': 'checkout.ts',
  'dashboard.js': 'dashboard.ts',
};

/** The esbuild options of every browser bundle: one minified IIFE for browsers of 2019 onwards. */
export const BROWSER_BUILD_OPTIONS = {
  bundle: true,
  format: 'iife',
  target: 'es2019',
  minify: true,
  platform: 'browser',
  legalComments: 'none',
  charset: 'utf8',
} as const;

const root = resolve(import.meta.dirname, '..');
const outDir = join(root, 'dist', 'browser');

/** Bundles every asset into dist/browser/ and, unless `types` is false, writes the public types. */
export async function buildBrowser({ types = true }: { types?: boolean } = {}): Promise<Record<string, number>> {
  mkdirSync(outDir, { recursive: true });
  const sizes: Record<string, number> = {};
  for (const [output, entry] of Object.entries(ENTRIES)) {
    const outfile = join(outDir, output);
    await build({ ...BROWSER_BUILD_OPTIONS, entryPoints: [join(root, 'src', 'browser', entry)], outfile, logLevel: 'warning' });
    sizes[output] = statSync(outfile).size;
  }
  if (!types) return sizes;
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const declarations = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.browser.json')], { cwd: root, encoding: 'utf8' });
  if (declarations.status !== 0) {
    throw new Error(`tsc -p tsconfig.browser.json failed:\n${declarations.stdout}${declarations.stderr}`);
  }
  return sizes;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  buildBrowser().then(
    (sizes) => {
      for (const [file, size] of Object.entries(sizes)) console.log(`dist/browser/${file}: ${size} bytes`);
      console.log('dist/browser/sdk.d.ts, dist/browser/types.d.ts: the public types');
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : error);
      process.exitCode = 1;
    },
  );
}

/**
 * Builds the browser code under src/browser/ into dist/browser/ (run after `tsc -p
 * tsconfig.build.json`, which leaves src/browser out):
 *
 * - dist/browser/sdk.js: the browser script of the web flow, one minified IIFE (es2019), served by
 *   the sandbox at `GET /sdk.js`;
 * - dist/browser/checkout.js: the script of the sandbox's hosted checkout page (inlined into it);
 * - dist/browser/sdk.d.ts and types.d.ts: the public types of sdk.js (tsconfig.browser.json).
 *
 *   tsx scripts/build-browser.ts
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import { BROWSER_ASSETS, BROWSER_BUILD_OPTIONS } from '../src/sandbox/browser-assets.js';

const root = resolve(import.meta.dirname, '..');
const outDir = join(root, 'dist', 'browser');

export async function buildBrowser(): Promise<Record<string, number>> {
  mkdirSync(outDir, { recursive: true });
  const sizes: Record<string, number> = {};
  for (const { entry, output } of Object.values(BROWSER_ASSETS)) {
    const outfile = join(outDir, output);
    await build({ ...BROWSER_BUILD_OPTIONS, entryPoints: [join(root, 'src', 'browser', entry)], outfile, logLevel: 'warning' });
    sizes[output] = statSync(outfile).size;
  }
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const types = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.browser.json')], { cwd: root, encoding: 'utf8' });
  if (types.status !== 0) {
    throw new Error(`tsc -p tsconfig.browser.json failed:\n${types.stdout}${types.stderr}`);
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

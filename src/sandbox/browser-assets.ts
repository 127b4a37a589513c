/**
 * The browser code the sandbox serves, written in TypeScript under src/browser/ and bundled at build
 * time by scripts/build-browser.ts (`npm run build`, or `npm run build:browser` alone) into
 * dist/browser/:
 *
 * - `sdk`: the browser script `sdk.js` of the web flow (`GET /sdk.js`);
 * - `checkout`: the script of the hosted checkout page (`/checkout/{id}`), inlined into the page;
 * - `dashboard`: the script of the dashboard (`/dashboard`), inlined into the page.
 *
 * The sandbox only reads the built files (the bundler is a development tool, absent when the
 * package is installed); the test suite builds them before it starts, and `paylater sandbox`
 * refuses to start without them ({@link missingBrowserAssets}). A file is read once and kept for the
 * life of the process; a missing one (a sandbox created in-process from the sources) is looked for
 * again on the next request.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export type BrowserAssetName = 'sdk' | 'checkout' | 'dashboard';

/** The file of each asset under dist/browser/. */
const BROWSER_ASSET_FILES: Record<BrowserAssetName, string> = {
  sdk: 'sdk.js',
  checkout: 'checkout.js',
  dashboard: 'dashboard.js',
};

export type BrowserAsset = { ok: true; code: string; from: string } | { ok: false; problem: string };

/** The repository (or installed package) root: two levels above src/sandbox or dist/sandbox. */
function packageRoot(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
}

/**
 * The built files that are missing, as paths under the package root (`dist/browser/sdk.js`, ...);
 * empty when the sandbox can serve its browser code.
 */
export function missingBrowserAssets(root: string = packageRoot()): string[] {
  return Object.values(BROWSER_ASSET_FILES)
    .map((file) => `dist/browser/${file}`)
    .filter((path) => !existsSync(join(root, path)));
}

const cache = new Map<BrowserAssetName, BrowserAsset>();

/** The code of a browser asset; never rejects (a problem is described for a 500 answer). */
export async function loadBrowserAsset(name: BrowserAssetName): Promise<BrowserAsset> {
  const cached = cache.get(name);
  if (cached !== undefined) return cached;
  const output = BROWSER_ASSET_FILES[name];
  const file = join(packageRoot(), 'dist', 'browser', output);
  if (!existsSync(file)) {
    return { ok: false, problem: `The browser code '${output}' is not built (run \`npm run build\`): dist/browser/${output} is missing.` };
  }
  const asset: BrowserAsset = { ok: true, code: readFileSync(file, 'utf8'), from: file };
  cache.set(name, asset);
  return asset;
}

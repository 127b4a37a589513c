/**
 * The browser code the sandbox serves, written in TypeScript under src/browser/ and bundled by
 * esbuild into one small file each (scripts/build-browser.ts writes them to dist/browser/):
 *
 * - `sdk`: the browser script `sdk.js` of the web flow (`GET /sdk.js`);
 * - `checkout`: the script of the hosted checkout page (`/checkout/{id}`), inlined into the page.
 *
 * {@link loadBrowserAsset} finds the code: run from the sources (tsx, vitest) it bundles
 * src/browser/ in memory so the code is never stale; run from dist/ it reads dist/browser/, and
 * bundles the sources only when that file is missing and esbuild and the sources are at hand (a
 * checkout built with tsc alone). The result is cached for the life of the process.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export type BrowserAssetName = 'sdk' | 'checkout';

/** The entry point of each asset under src/browser/ and its output file under dist/browser/. */
export const BROWSER_ASSETS: Record<BrowserAssetName, { entry: string; output: string }> = {
  sdk: { entry: 'sdk.ts', output: 'sdk.js' },
  checkout: { entry: 'checkout.ts', output: 'checkout.js' },
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

export type BrowserAsset = { ok: true; code: string; from: string } | { ok: false; problem: string };

const here = dirname(fileURLToPath(import.meta.url));
const runningFromSource = fileURLToPath(import.meta.url).endsWith('.ts');
/** The repository (or installed package) root: two levels above src/sandbox or dist/sandbox. */
const root = resolve(here, '..', '..');

const cache = new Map<BrowserAssetName, Promise<BrowserAsset>>();

/** The code of a browser asset; never rejects (a problem is described for a 500 answer). */
export function loadBrowserAsset(name: BrowserAssetName): Promise<BrowserAsset> {
  let pending = cache.get(name);
  if (pending === undefined) {
    pending = locate(name).then((asset) => {
      if (!asset.ok) cache.delete(name); // try again on the next request (the build may have run since)
      return asset;
    });
    cache.set(name, pending);
  }
  return pending;
}

async function locate(name: BrowserAssetName): Promise<BrowserAsset> {
  const { entry, output } = BROWSER_ASSETS[name];
  const source = join(root, 'src', 'browser', entry);
  const built = join(root, 'dist', 'browser', output);
  const attempts = runningFromSource ? [() => bundle(source), () => read(built)] : [() => read(built), () => bundle(source)];
  const problems: string[] = [];
  for (const attempt of attempts) {
    const result = await attempt();
    if (result.ok) return result;
    problems.push(result.problem);
  }
  return { ok: false, problem: `The browser code '${output}' is not built (run \`npm run build\`): ${problems.join('; ')}.` };
}

function read(file: string): BrowserAsset {
  if (!existsSync(file)) return { ok: false, problem: `${relative(file)} is missing` };
  return { ok: true, code: readFileSync(file, 'utf8'), from: file };
}

/** Bundles one entry with esbuild (a devDependency: present in a checkout, absent when installed). */
async function bundle(entry: string): Promise<BrowserAsset> {
  if (!existsSync(entry)) return { ok: false, problem: `${relative(entry)} is missing` };
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch {
    return { ok: false, problem: 'esbuild is not installed' };
  }
  try {
    const result = await esbuild.build({ ...BROWSER_BUILD_OPTIONS, entryPoints: [entry], write: false, logLevel: 'silent' });
    const file = result.outputFiles[0];
    if (file === undefined) return { ok: false, problem: `esbuild produced nothing for ${relative(entry)}` };
    return { ok: true, code: file.text, from: entry };
  } catch (error) {
    return { ok: false, problem: `esbuild failed on ${relative(entry)}: ${error instanceof Error ? error.message.split('\n', 1)[0] : 'unknown error'}` };
  }
}

function relative(file: string): string {
  return file.startsWith(`${root}/`) ? file.slice(root.length + 1) : file;
}

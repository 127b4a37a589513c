/**
 * The package in a browser build, with a real bundler (Vite, as a web app builds it): the package is
 * laid out as it is published (package.json, dist/ from the sources, the browser script, the
 * Node-only stubs of scripts/build-node-only.ts, generated/) and every entry is bundled for the
 * browser. The browser entries (the Basic-auth clients, the checkout script) bundle without a Node
 * built-in, and the clients run in a context that has only what a browser has (the checkout
 * script, which needs a page, runs in Chromium in test/e2e/checkout.test.ts); each Node-only entry bundles too
 * (no "is not exported by __vite-browser-external") and, when run, throws the message that says it
 * runs on Node only and which entries a browser can use.
 */
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createContext, runInContext } from 'node:vm';
import { build } from 'vite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NODE_ONLY_REASONS, nodeOnlyMessage, writeNodeOnlyStubs } from '../../scripts/build-node-only.js';
import { CLI_BUILD } from '../support/cli.js';
import { REPOSITORY } from '../support/hermetic.js';

type Conditions = { types?: string; browser?: string; import?: string; default?: string };
const manifest = JSON.parse(readFileSync(join(REPOSITORY, 'package.json'), 'utf8')) as { exports: Record<string, string | Conditions> };

/** The JavaScript entries of `exports` (not the types, the documents or package.json), by specifier. */
const entries = Object.entries(manifest.exports)
  .filter(([entry, target]) => (typeof target === 'string' ? target.endsWith('.js') : (target.import ?? target.default) !== undefined) && entry !== './package.json')
  .map(([entry, target]) => ({
    specifier: entry === '.' ? 'paylater-api' : `paylater-api/${entry.slice(2)}`,
    entry,
    nodeOnly: typeof target !== 'string' && target.browser !== undefined,
  }));
const browserEntries = entries.filter((e) => !e.nodeOnly);
const nodeOnlyEntries = entries.filter((e) => e.nodeOnly);

let work: string;

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'paylater-bundles-'));
  const modules = join(work, 'node_modules');
  const pkg = join(modules, 'paylater-api');
  mkdirSync(pkg, { recursive: true });
  // The app's own package.json, and a workspace marker: Vite looks for a workspace root upwards
  // and stops at the marker, so it reads nothing outside the temporary folder.
  writeFileSync(join(work, 'package.json'), '{ "name": "browser-app", "private": true, "type": "module" }\n');
  writeFileSync(join(work, 'pnpm-workspace.yaml'), 'packages: []\n');
  // The package's own dependencies, as an installed app has them beside it.
  for (const name of readdirSync(join(REPOSITORY, 'node_modules'))) {
    if (name.startsWith('.')) continue;
    symlinkSync(join(REPOSITORY, 'node_modules', name), join(modules, name));
  }
  cpSync(join(REPOSITORY, 'package.json'), join(pkg, 'package.json'));
  // The sources transpiled by the suite's global setup (the tree of dist/), and the browser script.
  cpSync(CLI_BUILD, join(pkg, 'dist'), { recursive: true });
  cpSync(join(REPOSITORY, 'dist', 'browser'), join(pkg, 'dist', 'browser'), { recursive: true });
  symlinkSync(join(REPOSITORY, 'generated'), join(pkg, 'generated'));
  await writeNodeOnlyStubs(pkg);
});

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

/** Bundles `code` for the browser with Vite (one IIFE) and returns the bundle's text. */
async function bundle(name: string, code: string): Promise<string> {
  const entry = join(work, `${name}.js`);
  writeFileSync(entry, code);
  const outDir = join(work, 'out', name);
  await build({
    root: work,
    configFile: false,
    logLevel: 'silent',
    envDir: false,
    build: {
      outDir,
      emptyOutDir: true,
      minify: false,
      lib: { entry, formats: ['iife'], name: 'bundle', fileName: () => 'bundle.js' },
    },
  });
  return readFileSync(join(outDir, 'bundle.js'), 'utf8');
}

/** Runs a bundle in a context with only what a browser has (no require, process or Buffer). */
function runInBrowserLikeContext(code: string): Record<string, unknown> {
  const context = createContext({ fetch, Request, Response, Headers, URL, URLSearchParams, AbortController, AbortSignal, TextEncoder, TextDecoder, btoa, atob, console, setTimeout, clearTimeout, crypto: globalThis.crypto });
  runInContext(`${code}\nglobalThis.__bundle = bundle;`, context);
  return context.__bundle as Record<string, unknown>;
}

it('every entry of exports is either a browser entry or Node-only with a reason', () => {
  expect(browserEntries.map((e) => e.entry).sort()).toEqual(['./browser/sdk.js', './clients/extras', './clients/gateway']);
  expect(nodeOnlyEntries.map((e) => e.entry).sort()).toEqual(Object.keys(NODE_ONLY_REASONS).sort());
});

describe.each(browserEntries)('the browser entry $specifier', ({ specifier }) => {
  it('bundles with Vite without a Node built-in and runs with only what a browser has', async () => {
    const code = await bundle(specifier.replace(/\W+/g, '-'), `export * from '${specifier}';\nimport '${specifier}';\n`);
    expect(code).not.toMatch(/__vite-browser-external|node:|require\(/);
    if (specifier.startsWith('paylater-api/clients/')) {
      const exported = runInBrowserLikeContext(code);
      const factories = Object.entries(exported).filter(([name, value]) => name.startsWith('create') && typeof value === 'function');
      expect(factories.length).toBeGreaterThan(0);
      for (const [, create] of factories) {
        const client = (create as (options: unknown) => Record<string, unknown>)({
          baseUrl: 'http://127.0.0.1:1',
          credentials: { username: 'user', password: 'secret' },
        });
        expect(typeof client.GET).toBe('function');
      }
    }
  });
});

describe.each(nodeOnlyEntries)('the Node-only entry $specifier', ({ specifier, entry }) => {
  it('bundles with Vite, and says when it runs that it runs on Node only', async () => {
    const code = await bundle(specifier.replace(/\W+/g, '-'), `export * from '${specifier}';\n`);
    expect(code).not.toContain('__vite-browser-external');
    expect(() => runInBrowserLikeContext(code)).toThrow(nodeOnlyMessage(entry));
    expect(nodeOnlyMessage(entry)).toMatch(/runs on Node\.js \(>= 20\.19\) only, not in a browser: .+paylater-api\/clients\/gateway/);
  });
});

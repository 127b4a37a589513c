/**
 * Bundles the contract kit's Dredd side (./driver.ts and the hook file ./hooks.ts) into CommonJS
 * with the project's esbuild, once per process: Dredd loads hook files with `require`, and the
 * bundles carry the kit's TypeScript, the contract model and src/signature.ts. Packages stay
 * outside (`dredd`, `ajv`, ...) and are found in the project's node_modules, which is why the
 * bundles are written under `node_modules/.cache/`.
 *
 * The folder is named after a hash of the bundles' content and written by rename, so runs in
 * parallel (several test files) share one copy, and a changed kit gets a new one.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, renameSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { build } from 'esbuild';

const here = import.meta.dirname;
const root = resolve(here, '..', '..');
const CACHE = join(root, 'node_modules', '.cache', 'paylater-contract-kit');

let bundled: Promise<string> | undefined;

/** The driver to fork, `driver.cjs`, with the hook file `hooks.cjs` beside it (built on the first call of the process). */
export function bundleKit(): Promise<string> {
  bundled ??= make().catch((error: unknown) => {
    bundled = undefined;
    throw error;
  });
  return bundled;
}

async function make(): Promise<string> {
  const result = await build({
    entryPoints: { driver: join(here, 'driver.ts'), hooks: join(here, 'hooks.ts') },
    outdir: 'kit',
    outExtension: { '.js': '.cjs' },
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    packages: 'external',
    write: false,
    logLevel: 'silent',
  });
  const hash = createHash('sha256');
  for (const file of result.outputFiles) hash.update(basename(file.path)).update(file.contents);
  const folder = join(CACHE, hash.digest('hex').slice(0, 16));
  const driver = join(folder, 'driver.cjs');
  if (existsSync(driver) && existsSync(join(folder, 'hooks.cjs'))) return driver;
  mkdirSync(folder, { recursive: true });
  for (const file of result.outputFiles) {
    const target = join(folder, basename(file.path));
    const temporary = `${target}.${randomBytes(6).toString('hex')}.tmp`;
    try {
      writeFileSync(temporary, file.contents);
      renameSync(temporary, target);
    } finally {
      rmSync(temporary, { force: true });
    }
  }
  return driver;
}

/**
 * Global setup of the test suites: transpiles src/ into `.test-build/` (one esbuild run, about a
 * second, no type check: `npm run typecheck` does that), so that the tests that start the CLI as a
 * process run plain JavaScript with `node` instead of compiling every module again in each child
 * through tsx. A `paylater` child then starts in about a tenth of the time.
 *
 * The tree keeps src/'s depth (`.test-build/cli/main.js` beside `src/cli/main.ts`), so the paths the
 * modules compute from their own location (the repository root two levels up: package.json,
 * generated/, dist/browser/) are the same as from src/ and dist/.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { build } from 'esbuild';
import { CLI_BUILD, REPOSITORY } from './cli.js';

export default async function setup(): Promise<void> {
  const src = join(REPOSITORY, 'src');
  const entryPoints = readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => join(src, file));
  rmSync(CLI_BUILD, { recursive: true, force: true });
  await build({
    entryPoints,
    outdir: CLI_BUILD,
    outbase: src,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    bundle: false,
    sourcemap: 'inline',
    logLevel: 'warning',
  });
}

/**
 * Global setup of the test suites: transpiles src/ into a folder of this run,
 * `.test-build-<pid>/` (one esbuild run, about a second, no type check: `npm run typecheck` does
 * that), so that the tests that start the CLI as a process run plain JavaScript with `node` instead
 * of compiling every module again in each child through tsx. A `paylater` child then starts in about
 * a tenth of the time. The folder's path reaches the tests as `inject('testBuild')`
 * (test/support/cli.ts); it is removed when the run ends.
 *
 * The tree keeps src/'s depth (`.test-build-<pid>/cli/main.js` beside `src/cli/main.ts`), so the
 * paths the modules compute from their own location (the repository root two levels up:
 * package.json, generated/, dist/browser/) are the same as from src/ and dist/. Each run has its
 * own folder, so two runs at once (a watch and a run, two groups) never remove each other's; a
 * folder left by a run that was killed is removed by the next run.
 */
import { readdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { build } from 'esbuild';
import type { TestProject } from 'vitest/node';
import { oncePerRun } from './once-per-run.js';

// Not hermetic.ts's REPOSITORY: importing that module wraps node:fs in the process that runs the setup.
const REPOSITORY = resolve(import.meta.dirname, '../..');
const PREFIX = '.test-build-';

/** Whether the process `pid` still runs. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function buildSources(): Promise<string> {
  for (const entry of readdirSync(REPOSITORY)) {
    const pid = Number(entry.slice(PREFIX.length));
    if (entry.startsWith(PREFIX) && Number.isInteger(pid) && pid !== process.pid && !alive(pid)) {
      rmSync(join(REPOSITORY, entry), { recursive: true, force: true });
    }
  }
  const folder = join(REPOSITORY, `${PREFIX}${process.pid}`);
  const src = join(REPOSITORY, 'src');
  const entryPoints = readdirSync(src, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => join(src, file));
  rmSync(folder, { recursive: true, force: true });
  await build({
    entryPoints,
    outdir: folder,
    outbase: src,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    bundle: false,
    sourcemap: 'inline',
    logLevel: 'warning',
  });
  return folder;
}

/** Builds once per run however many projects call it (once-per-run.ts); removed after the last project. */
export default async function setup(project: TestProject): Promise<() => void> {
  const { result: folder, teardown } = await oncePerRun('sources', buildSources, (built) => rmSync(built, { recursive: true, force: true }));
  project.provide('testBuild', folder);
  return teardown;
}

declare module 'vitest' {
  export interface ProvidedContext {
    /** The folder of src/ transpiled for this run (test/support/build-sources.ts). */
    testBuild: string;
  }
}

/**
 * `npm start`'s first step: builds `dist/` (`npm run build`) only when it is missing or its inputs
 * changed since the build this script last ran (scripts/stale.ts: by content, not dates), so that
 * a start with nothing changed takes seconds instead of a minute.
 *
 *   tsx scripts/build-if-stale.ts
 */
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isCurrent, recordBuild, type BuildInputs } from './stale.js';

/** What `npm run build` reads, and its record in dist/. */
export const DIST: BuildInputs = {
  inputs: [
    'src',
    'generated',
    'scripts/build-browser.ts',
    'scripts/build-node-only.ts',
    'tsconfig.json',
    'tsconfig.build.json',
    'tsconfig.browser.json',
    'package.json',
    'package-lock.json',
  ],
  record: 'dist/.build-inputs',
  made: 'dist/cli/main.js',
};

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(import.meta.dirname, '..');
  if (isCurrent(root, DIST)) {
    process.stderr.write('dist/ is up to date with src/: starting without a build (npm run build rebuilds it).\n');
  } else {
    process.stderr.write('Building dist/ (src/ changed since the last build, or there is none)...\n');
    const built = spawnSync(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
    if (built.status !== 0) process.exit(built.status ?? 1);
    recordBuild(root, DIST);
  }
}

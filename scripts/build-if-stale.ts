/**
 * `npm start`'s first step: builds `dist/` (`npm run build`) only when it is missing or older than
 * what it is built from, so that a start with nothing changed takes a second instead of a minute.
 *
 *   tsx scripts/build-if-stale.ts
 *
 * "Older" is decided by content, not by dates (a checkout or a copy changes dates, not content):
 * the SHA-256 of every input's path and bytes (src/, generated/, the build scripts, the TypeScript
 * and package settings) is written to `dist/.build-inputs` after a build this script ran, and a
 * start whose inputs hash the same skips the build. Any other build (`npm run build`,
 * `npm pack`) leaves the record as it was, so the next start builds once more: the safe side.
 * Hashing the inputs reads some 5 MB and takes tens of milliseconds.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** What `npm run build` reads: folders (every file in them) and files, relative to the root. */
const INPUTS = [
  'src',
  'generated',
  'scripts/build-browser.ts',
  'scripts/build-node-only.ts',
  'tsconfig.json',
  'tsconfig.build.json',
  'tsconfig.browser.json',
  'package.json',
  'package-lock.json',
];

const RECORD = join('dist', '.build-inputs');

function filesUnder(root: string, path: string): string[] {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) => filesUnder(root, join(path, entry.name)));
}

/** The SHA-256 of the build's inputs under `root`: each file's path and bytes, in a fixed order. */
export function buildInputsHash(root: string): string {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap((input) => filesUnder(root, input))) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** Whether `dist/` under `root` was built by this script from the inputs as they are now. */
export function buildIsCurrent(root: string): boolean {
  const record = join(root, RECORD);
  if (!existsSync(join(root, 'dist', 'cli', 'main.js')) || !existsSync(record)) return false;
  return readFileSync(record, 'utf8').trim() === buildInputsHash(root);
}

/** Records that `dist/` under `root` is built from its inputs as they are now. */
export function recordBuild(root: string): void {
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(join(root, RECORD), `${buildInputsHash(root)}\n`);
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const root = resolve(import.meta.dirname, '..');
  if (buildIsCurrent(root)) {
    process.stderr.write('dist/ is up to date with src/: starting without a build (npm run build rebuilds it).\n');
  } else {
    process.stderr.write('Building dist/ (src/ changed since the last build, or there is none)...\n');
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const built = spawnSync(npm, ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
    if (built.status !== 0) process.exit(built.status ?? 1);
    recordBuild(root);
  }
}

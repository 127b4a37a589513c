/**
 * Whether a built folder is up to date with what it is built from, by content: the SHA-256 of every
 * input's path and bytes, recorded in the folder after a build. `npm start` (build-if-stale.ts)
 * uses it for dist/ and `npm run docs:serve` for site/.
 *
 * Content, not dates: a checkout, `git stash` or a copy changes dates without changing what is
 * built, and a file edited back to what it was needs no build. A build that does not record (any
 * other than these two) leaves the old record, so the next check builds once more: a stale record
 * can only cost a build, never skip one. Hashing reads a few megabytes: tens of milliseconds.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/** What a build reads (folders: every file in them) and where its record is, relative to the root. */
export interface BuildInputs {
  inputs: readonly string[];
  /** The record of the last build's inputs, inside the built folder. */
  record: string;
  /** A file the build makes; without it the folder is stale whatever the record says. */
  made: string;
}

function filesUnder(root: string, path: string): string[] {
  const full = join(root, path);
  if (!existsSync(full)) return [];
  if (!statSync(full).isDirectory()) return [path];
  return readdirSync(full, { withFileTypes: true })
    .map((entry) => entry.name)
    .sort()
    .flatMap((name) => filesUnder(root, join(path, name)));
}

/** The SHA-256 of the inputs under `root`: each file's path and bytes, in a fixed order. */
export function inputsHash(root: string, build: BuildInputs): string {
  const hash = createHash('sha256');
  for (const file of build.inputs.flatMap((input) => filesUnder(root, input))) {
    hash.update(`${file}\0`);
    hash.update(readFileSync(join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

/** Whether the folder under `root` was built, and recorded, from the inputs as they are now. */
export function isCurrent(root: string, build: BuildInputs): boolean {
  const record = join(root, build.record);
  if (!existsSync(join(root, build.made)) || !existsSync(record)) return false;
  return readFileSync(record, 'utf8').trim() === inputsHash(root, build);
}

/** Records that the folder under `root` is built from its inputs as they are now. */
export function recordBuild(root: string, build: BuildInputs): void {
  mkdirSync(dirname(join(root, build.record)), { recursive: true });
  writeFileSync(join(root, build.record), `${inputsHash(root, build)}\n`);
}

/**
 * The suite reads nothing outside the repository: a stranger's clone in an empty folder passes it.
 * Two proofs: the in-process guard (test/support/hermetic.ts, a setup file of every test file)
 * records any read outside the allowed places, and a scan of every source the tests and scripts run
 * finds no path that climbs out of the repository.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isAllowedPath, REPOSITORY, takeViolations } from './support/hermetic.js';

// A folder a stranger's clone does not have: beside the repository, or, when the clone lives in a
// folder every test may use (such as /tmp), at the root of the file system.
const PARENT = dirname(REPOSITORY);
const SHARED_PARENT = PARENT === '/' || PARENT === resolve(tmpdir()) || PARENT === '/tmp';
const OUTSIDE = join(SHARED_PARENT ? '/' : PARENT, 'a-folder-beside-the-repository');
const BESIDE = join(OUTSIDE, 'file.txt');

describe('the hermetic guard', () => {
  it('allows the repository, its dependencies and the temporary folder', () => {
    expect(isAllowedPath(join(REPOSITORY, 'package.json'))).toBe(true);
    expect(isAllowedPath(join(REPOSITORY, 'node_modules', 'vitest', 'package.json'))).toBe(true);
    expect(isAllowedPath('/tmp/paylater-test/file')).toBe(true);
  });

  it('refuses anything beside the repository, but not the folders on the way to it', () => {
    expect(isAllowedPath(BESIDE)).toBe(false);
    expect(isAllowedPath(join(REPOSITORY, '..'))).toBe(true);
    expect(isAllowedPath(join(SHARED_PARENT ? '/' : PARENT, 'package.json'))).toBe(false);
    expect(isAllowedPath(new URL(`file://${BESIDE}`))).toBe(false);
  });

  it('records a synchronous and a promise read outside the repository, even when they fail', async () => {
    expect(() => readFileSync(BESIDE)).toThrow();
    expect(() => readdirSync(OUTSIDE)).toThrow();
    await expect(readFile(BESIDE)).rejects.toThrow();
    const recorded = takeViolations();
    expect(recorded.every((entry) => entry.includes('a-folder-beside-the-repository')), recorded.join('\n')).toBe(true);
    expect(recorded).toContain(`fs.readFileSync(${BESIDE})`);
    expect(recorded.some((entry) => entry.startsWith('fs.readdirSync('))).toBe(true);
    expect(recorded).toContain(`fs.promises.readFile(${BESIDE})`);
  });

  it('records nothing for reads inside the repository', () => {
    readFileSync(join(REPOSITORY, 'package.json'));
    expect(takeViolations()).toEqual([]);
  });
});

/** Every file the suite, the scripts, the benchmarks and CI run, as text. */
function sources(): { file: string; text: string }[] {
  const found: { file: string; text: string }[] = [];
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true })) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (/\.(ts|cts|mts|js|cjs|mjs|json|sh|yaml|yml)$/.test(entry.name) || folder.endsWith('.ci')) {
        found.push({ file: relative(REPOSITORY, path), text: readFileSync(path, 'utf8') });
      }
    }
  };
  for (const folder of ['src', 'test', 'scripts', 'bench', 'examples', '.ci']) walk(join(REPOSITORY, folder));
  for (const file of readdirSync(REPOSITORY)) {
    if (/^(vitest.*|tsconfig.*|redocly|package)\.(ts|json|yaml)$/.test(file)) {
      found.push({ file, text: readFileSync(join(REPOSITORY, file), 'utf8') });
    }
  }
  return found;
}

describe('no source the suite or the scripts run climbs out of the repository', () => {
  // Built from pieces so that this file does not match itself.
  const patterns = [
    new RegExp(['\\.\\.', 'shared'].join('/')),
    new RegExp(['shared', 'seeds'].join('/')),
    /\b(?:resolve|join)\(\s*ROOT\s*,\s*['"]\.\.['"/]/,
    /\b(?:resolve|join)\(\s*REPOSITORY\s*,\s*['"]\.\.(?:['"/])(?!\s*,\s*'a-folder-beside)/,
  ];

  it('finds the sources', () => {
    const files = sources().map((source) => source.file);
    expect(files).toContain('test/support/description.ts');
    expect(files).toContain('.ci/run');
  });

  it('none names a path outside the repository', () => {
    const offending = sources()
      .filter((source) => source.file !== 'test/hermetic.test.ts')
      .flatMap((source) =>
        source.text
          .split('\n')
          .map((line, index) => ({ line, index }))
          .filter(({ line }) => patterns.some((pattern) => pattern.test(line)))
          .map(({ line, index }) => `${source.file}:${index + 1}: ${line.trim()}`),
      );
    expect(offending).toEqual([]);
  });
});

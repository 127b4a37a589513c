/**
 * `npm start` skips the build when dist/ was built from the inputs as they are now
 * (scripts/build-if-stale.ts): the record follows content, not dates, and any change of an input
 * (a source, a generated file, a setting) or a missing dist/ means a build.
 */
import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DIST } from '../../scripts/build-if-stale.js';
import { SITE_INPUTS } from '../../scripts/docs-site.js';
import { inputsHash, isCurrent, recordBuild } from '../../scripts/stale.js';

const buildIsCurrent = (at: string) => isCurrent(at, DIST);
const buildInputsHash = (at: string) => inputsHash(at, DIST);

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'paylater-build-stale-'));
  for (const [path, text] of [
    ['src/cli/main.ts', 'console.log(1);\n'],
    ['src/index.ts', 'export {};\n'],
    ['generated/types/sdk.d.ts', 'export {};\n'],
    ['package.json', '{}\n'],
    ['dist/cli/main.js', 'console.log(1);\n'],
  ] as const) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), text);
  }
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe('npm start builds only when dist/ is stale', () => {
  it('is stale until a build is recorded, then current while nothing changes, whatever the dates', () => {
    expect(buildIsCurrent(root)).toBe(false);
    recordBuild(root, DIST);
    expect(buildIsCurrent(root)).toBe(true);
    utimesSync(join(root, 'src/index.ts'), new Date(), new Date(Date.now() + 60_000));
    expect(buildIsCurrent(root)).toBe(true);
  });

  it('is stale after a source, a generated file or a setting changes, or a file is added, and when dist/ is gone', () => {
    const changes: (() => void)[] = [
      () => writeFileSync(join(root, 'src/index.ts'), 'export const a = 1;\n'),
      () => writeFileSync(join(root, 'generated/types/sdk.d.ts'), 'export type A = 1;\n'),
      () => writeFileSync(join(root, 'package.json'), '{"name":"x"}\n'),
      () => writeFileSync(join(root, 'src/new.ts'), 'export {};\n'),
      () => rmSync(join(root, 'dist/cli/main.js')),
    ];
    for (const change of changes) {
      recordBuild(root, DIST);
      expect(buildIsCurrent(root)).toBe(true);
      const before = buildInputsHash(root);
      change();
      expect(buildIsCurrent(root)).toBe(false);
      if (buildInputsHash(root) === before) expect(change.toString()).toContain('dist');
    }
  });

  it('docs:serve builds the site when it is missing or a guide or a document changed since npm run docs', () => {
    mkdirSync(join(root, 'docs'));
    writeFileSync(join(root, 'docs', 'refunds.md'), '# Refunds\n');
    expect(isCurrent(root, SITE_INPUTS)).toBe(false);
    mkdirSync(join(root, 'site'));
    writeFileSync(join(root, 'site', 'index.html'), '<!doctype html>\n');
    recordBuild(root, SITE_INPUTS);
    expect(isCurrent(root, SITE_INPUTS)).toBe(true);
    writeFileSync(join(root, 'docs', 'refunds.md'), '# Refunds, retried safely\n');
    expect(isCurrent(root, SITE_INPUTS)).toBe(false);
    recordBuild(root, SITE_INPUTS);
    writeFileSync(join(root, 'generated', 'openapi.json'), '{}\n');
    expect(isCurrent(root, SITE_INPUTS)).toBe(true);
    mkdirSync(join(root, 'generated', 'openapi'));
    writeFileSync(join(root, 'generated', 'openapi', 'web.json'), '{}\n');
    expect(isCurrent(root, SITE_INPUTS)).toBe(false);
  });
});

/**
 * Every test file runs in exactly one group (test/support/groups.ts): `npm test`, `npm run
 * test:slow` or `npm run test:e2e`, and every file the slow group names exists, so that a renamed
 * file cannot drop out of CI silently.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import fastConfig from '../vitest.config.js';
import slowConfig from '../vitest.slow.config.js';
import e2eConfig from '../vitest.e2e.config.js';
import nodeConfig from '../vitest.node.config.js';
import sharedStoreConfig from '../vitest.shared.config.js';
import { REPOSITORY } from './support/hermetic.js';
import { E2E_TESTS, NODE_PROCESS_TESTS, SHARED_GRAPH_TESTS, SHARED_STORE_TESTS, SLOW_TESTS } from './support/groups.js';

const testFiles = readdirSync(join(REPOSITORY, 'test'), { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.test.ts'))
  .map((file) => `test/${file.split('\\').join('/')}`)
  .sort();

const matches = (pattern: string, file: string): boolean => picomatch.isMatch(file, pattern);

interface Selection {
  include?: string[];
  exclude?: string[];
}

/** Whether a configuration runs a file: one of its projects does, where it has projects. */
function selected(config: { test?: Selection & { projects?: unknown } }, file: string): boolean {
  const projects = (config.test?.projects ?? []) as { test?: Selection }[];
  if (projects.length > 0) return projects.some((project) => selected(project, file));
  const include = config.test?.include ?? [];
  const exclude = config.test?.exclude ?? [];
  return include.some((pattern) => matches(pattern, file)) && !exclude.some((pattern) => matches(pattern, file));
}

describe('the test groups', () => {
  it('name only files that exist', () => {
    for (const file of SLOW_TESTS) expect(existsSync(join(REPOSITORY, file)), file).toBe(true);
    expect(testFiles.filter((file) => E2E_TESTS.some((pattern) => matches(pattern, file))).length).toBeGreaterThan(0);
  });

  it('put every test file in exactly one of npm test, test:slow and test:e2e', () => {
    expect(testFiles.length).toBeGreaterThan(50);
    const configs = { test: fastConfig, 'test:slow': slowConfig, 'test:e2e': e2eConfig } as const;
    const wrong = testFiles
      .map((file) => ({ file, groups: Object.entries(configs).filter(([, config]) => selected(config, file)).map(([name]) => name) }))
      .filter(({ groups }) => groups.length !== 1);
    expect(wrong).toEqual([]);
  });

  it("put each file of npm test in exactly one of its projects (a shared module graph or isolated)", () => {
    const projects = (fastConfig.test?.projects ?? []) as { test?: Selection & { name?: string; isolate?: boolean } }[];
    expect(projects.map((project) => [project.test?.name, project.test?.isolate])).toEqual([
      ['shared-graph', false],
      ['isolated', true],
    ]);
    const inFast = testFiles.filter((file) => selected(fastConfig, file));
    const wrong = inFast
      .map((file) => ({ file, projects: projects.filter((project) => selected(project, file)).map((project) => project.test?.name) }))
      .filter(({ projects: names }) => names.length !== 1);
    expect(wrong).toEqual([]);
    expect(inFast.filter((file) => selected(projects[0] as { test?: Selection }, file)).length).toBeGreaterThan(50);
  });

  it('share a module graph in test:shared only for files that share one in npm test', () => {
    expect(sharedStoreConfig.test?.isolate).toBe(false);
    for (const pattern of SHARED_STORE_TESTS) expect(SHARED_GRAPH_TESTS, pattern).toContain(pattern);
  });

  it('run the Node-dependent processes in the slow group and again, alone, in test:node', () => {
    expect(NODE_PROCESS_TESTS.length).toBeGreaterThan(0);
    expect(testFiles.filter((file) => selected(nodeConfig, file))).toEqual([...NODE_PROCESS_TESTS].sort());
    for (const file of NODE_PROCESS_TESTS) expect(SLOW_TESTS, file).toContain(file);
  });

  it('keep the slow group out of npm test', () => {
    for (const file of SLOW_TESTS) {
      expect(selected(fastConfig, file), file).toBe(false);
      expect(selected(slowConfig, file), file).toBe(true);
    }
  });
});

/**
 * The Node samples against the sandbox: each imports 'paylater-api', which resolves to this
 * repository's sources (run through tsx) in the work folder, as an installed package would. They are
 * also type-checked as JavaScript (`checkJs`) against the package's types: the typed clients accept
 * every path, parameter and body they send.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT, nodeProject, sampleFile, samplesOf, workFolder } from './support.js';
import { describeSamples } from './suite.js';

let node: ReturnType<typeof nodeProject> | undefined;

describeSamples({
  label: 'Node',
  files: { operation: 'sample.mjs', webhook: 'receiver.mjs' },
  prepare: (dir) => {
    node = nodeProject(dir);
  },
  run: (file) => ({ command: node!.command, args: node!.args(file) }),
  receiver: { server: (file) => ({ command: node!.command, args: node!.args(file) }) },
});

describe('Node samples and the package types', () => {
  const work = workFolder('node-types');
  afterAll(() => work.cleanup());

  it('type-check as JavaScript against the typed clients and webhook handler', () => {
    nodeProject(work.dir);
    for (const sample of samplesOf('Node')) sampleFile(work.dir, sample, sample.kind === 'operation' ? 'sample.mjs' : 'receiver.mjs');
    const tsc = spawnSync(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', work.dir], { encoding: 'utf8' });
    expect(`${tsc.stdout}${tsc.stderr}`.trim()).toBe('');
    expect(tsc.status).toBe(0);
  }, 180_000);
});

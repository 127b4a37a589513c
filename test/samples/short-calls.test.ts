/**
 * The short calls the reference shows first, pasted as they are: each operation's call in each
 * language is taken from the reference's copy of the bundle (`x-codeSamples` after
 * `withShortCalls`, what the rendered reference shows) and run unchanged, the shell one fed to bash
 * on its standard input as a terminal paste is, the others saved to a file and run with node, php
 * and python3. The environment holds only the sandbox's address (a free port here, which is why the
 * snippets read `PAYLATER_BASE_URL`): no credentials and no ids, so each call must make its own and
 * use the sandbox's test credentials by default. Each must end with a 2xx status. The complete
 * programs run in the other files of this folder.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { withShortCalls } from '../../scripts/samples/short.js';
import { FAMILIES } from '../../src/contract/index.js';
import { LABELS, ROOT, nodeProject, runProgram, startSandbox, workFolder, type Label, type SampleSandbox } from './support.js';

interface Snippet {
  family: string;
  operationId: string;
  label: string;
  source: string;
}

/** Every short call of the four references, as the rendered reference carries them. */
const snippets: Snippet[] = FAMILIES.flatMap((family) => {
  const copy = withShortCalls(family, JSON.parse(readFileSync(join(ROOT, 'generated', 'openapi', `${family}.json`), 'utf8')));
  return Object.values<any>(copy.paths).flatMap((item) =>
    Object.values<any>(item)
      .filter((operation) => operation && typeof operation === 'object' && typeof operation.operationId === 'string')
      .flatMap((operation) => (operation['x-codeSamples'] ?? []).map((sample: any) => ({ family, operationId: operation.operationId, label: sample.label, source: sample.source }))),
  );
});

/** The status a run printed: the last line, `HTTP <status>` (shell) or `<status> <answer>`. */
function printedStatus(label: string, stdout: string): number {
  const last = stdout.trimEnd().split('\n').at(-1) ?? '';
  const match = label === 'curl' ? /^HTTP (\d{3})\b/.exec(last) : /^(\d{3})\b/.exec(last);
  return match ? Number(match[1]) : NaN;
}

let running: SampleSandbox;
let work: ReturnType<typeof workFolder>;
let node: ReturnType<typeof nodeProject>;

beforeAll(async () => {
  running = await startSandbox();
  work = workFolder('short');
  node = nodeProject(work.dir);
});

afterAll(async () => {
  await running?.close();
  work?.cleanup();
});

describe('the short calls run as pasted', () => {
  it('there is one per operation and language', () => {
    const operations = new Set(snippets.map((snippet) => `${snippet.family}/${snippet.operationId}`));
    expect(operations.size).toBe(25);
    expect(snippets).toHaveLength(operations.size * LABELS.length);
  });

  const run = async (snippet: Snippet) => {
    // Nothing from the test's own environment but PATH: no credentials, the address of this sandbox only.
    const env = { PATH: process.env.PATH ?? '', HOME: work.dir, PAYLATER_BASE_URL: running.url };
    const label = snippet.label as Label;
    if (label === 'curl') return runProgram('bash', ['-s'], { cwd: work.dir, env, input: snippet.source, clean: true });
    const file = join(work.dir, `${snippet.family}-${snippet.operationId}.${{ Node: 'mjs', PHP: 'php', Python: 'py' }[label]}`);
    writeFileSync(file, snippet.source);
    if (label === 'Node') return runProgram(node.command, node.args(file), { cwd: work.dir, env, clean: true });
    return runProgram(label === 'PHP' ? 'php' : 'python3', [file], { cwd: work.dir, env, clean: true });
  };

  it.each(snippets.map((snippet) => [`${snippet.family} ${snippet.operationId} in ${snippet.label}`, snippet] as const))('%s', async (_name, snippet) => {
    expect(snippet.source).not.toMatch(/<[a-z][A-Za-z]*>/); // no placeholder to fill in
    const result = await run(snippet);
    expect(result.stderr, result.stdout).toBe('');
    expect(result.code, result.stdout).toBe(0);
    const status = printedStatus(snippet.label, result.stdout);
    expect(status, result.stdout).toBeGreaterThanOrEqual(200);
    expect(status, result.stdout).toBeLessThan(300);
  });
});

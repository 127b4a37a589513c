/**
 * The layers run one way (.dependency-cruiser.cjs, docs/architecture.md):
 *   generated/ -> library -> src/sandbox -> src/cli, scripts, bench, tests.
 * The repository breaks no rule; and each rule does fail on a small tree that breaks it, so a
 * regression (a cycle, an import against the layers, a devDependency at run time, Node in a
 * browser-safe entry, a family reaching past the entry modules of the sandbox's machinery) fails
 * CI. Importing any module of src/ starts nothing (package.json's `sideEffects` relies on it).
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ICruiseResult } from 'dependency-cruiser';
import { afterAll, describe, expect, it } from 'vitest';
import { CLI_BUILD } from './support/cli.js';
import { REPOSITORY } from './support/hermetic.js';

const CONFIG = join(REPOSITORY, '.dependency-cruiser.cjs');
/** dependency-cruiser's command, found through its package's `bin` entry. */
const DEPCRUISE = (() => {
  const folder = join(REPOSITORY, 'node_modules', 'dependency-cruiser');
  const manifest = JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as { bin: Record<string, string> };
  return join(folder, manifest.bin.depcruise!);
})();

/**
 * The rule violations of the tree under `cwd`, as `rule: from -> to`. Run as a child process:
 * module resolution looks for node_modules folders above the tree, which the in-process guard
 * against reading outside the repository would count.
 */
async function violations(cwd: string, folders: string[]): Promise<string[]> {
  const child = spawn(process.execPath, [DEPCRUISE, '--config', CONFIG, '--output-type', 'json', ...folders], { cwd });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  await new Promise((resolve) => child.on('close', resolve));
  if (stdout.trim() === '') throw new Error(`dependency-cruiser wrote no result: ${stderr}`);
  const result = JSON.parse(stdout) as ICruiseResult;
  return result.summary.violations.map(
    (violation) => `${violation.rule.name}: ${violation.from} -> ${violation.cycle?.map((step) => step.name).join(' -> ') ?? violation.to}`,
  );
}

describe('the repository', () => {
  it('has no cycle in src/ or scripts/, and every import runs with the layers', async () => {
    const found = await violations(REPOSITORY, ['src', 'scripts', 'bench', 'test', 'generated', 'examples']);
    expect(found).toEqual([]);
  });
});

describe('importing a module', () => {
  it('starts nothing: no exit hook, no timer, no socket, for every module of src/ but the CLI entry', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'paylater-imports-'));
    try {
      // Every module as transpiled for this run (test/support/build-sources.ts: src/'s tree, one
      // JavaScript file per module), run by plain Node: no loader compiling the modules in the
      // child, whose own work (a transform cache written while the modules load) would be counted.
      const script = join(folder, 'import-all.mjs');
      writeFileSync(
        script,
        `import { readdirSync } from 'node:fs';
const src = ${JSON.stringify(CLI_BUILD)};
const files = readdirSync(src, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.js') && !file.startsWith('browser/') && file !== 'cli/main.js');
// Node makes the standard streams' handles on first use; a module that reads process.stderr (its
// isTTY, say) starts nothing. They are made before the count, as tsx's loader used to make them.
void process.stdout.isTTY;
void process.stderr.isTTY;
const exitHooks = process.listenerCount('exit');
const resources = process.getActiveResourcesInfo();
for (const file of files) await import(src + '/' + file);
const added = process.getActiveResourcesInfo();
for (const resource of resources) added.splice(added.indexOf(resource), 1);
process.stdout.write(JSON.stringify({ files: files.length, exitHooks: process.listenerCount('exit') - exitHooks, resources: added }));
`,
      );
      const child = spawn(process.execPath, [script], { cwd: REPOSITORY, env: { ...process.env } });
      let stdout = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr.resume();
      await new Promise((resolve) => child.on('close', resolve));
      const result = JSON.parse(stdout) as { files: number; exitHooks: number; resources: string[] };
      expect(result.files).toBeGreaterThan(50);
      expect(result.exitHooks).toBe(0);
      expect(result.resources).toEqual([]);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});

describe('each rule', () => {
  const fixture = mkdtempSync(join(tmpdir(), 'paylater-layers-'));
  afterAll(() => rmSync(fixture, { recursive: true, force: true }));

  const write = (file: string, text: string) => {
    mkdirSync(dirname(join(fixture, file)), { recursive: true });
    writeFileSync(join(fixture, file), text);
  };
  write('package.json', JSON.stringify({ name: 'fixture', type: 'module', devDependencies: { esbuild: '*' }, dependencies: { 'openapi-fetch': '*' } }));
  write('tsconfig.json', JSON.stringify({ compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true }, include: ['src'] }));
  symlinkSync(join(REPOSITORY, 'node_modules'), join(fixture, 'node_modules'), 'dir');
  // The library imports the sandbox; the sandbox imports the CLI.
  write('src/signature.ts', "import { serve } from './sandbox/server.js';\nexport const sign = serve;\n");
  write('src/sandbox/server.ts', "import { run } from '../cli/main.js';\nexport const serve = run;\n");
  write('src/cli/main.ts', 'export const run = 1;\n');
  // A cycle inside the sandbox, through a type-only import.
  write('src/sandbox/web.ts', "import type { Checkout } from './web-checkout.js';\nexport type Web = Checkout | 1;\n");
  write('src/sandbox/web-checkout.ts', "import type { Web } from './web.js';\nexport type Checkout = Web | 2;\n");
  // A devDependency at run time; Node in a browser-safe client.
  write('src/sandbox/assets.ts', "import { build } from 'esbuild';\nexport const bundle = build;\n");
  write('src/clients/gateway.ts', "import { createHash } from 'node:crypto';\nimport createClient from 'openapi-fetch';\nexport const client = [createHash, createClient];\n");

  // A family and the gateway engine reach into the machinery behind its entry modules.
  write('src/sandbox/delivery/index.ts', "export type { Receivers } from './queue.js';\n");
  write('src/sandbox/delivery/queue.ts', 'export type Receivers = 1;\n');
  write('src/sandbox/trimming.ts', 'export const trim = 1;\n');
  write('src/sandbox/families/sdk.ts', "import type { Receivers } from '../delivery/index.js';\nimport type { Receivers as Queue } from '../delivery/queue.js';\nexport type Sdk = Receivers | Queue;\n");
  write('src/sandbox/gateway/engine.ts', "import { trim } from '../trimming.js';\nexport const engine = trim;\n");

  it('fails on a tree that breaks it', async () => {
    const found = await violations(fixture, ['src']);
    expect(found).toEqual(
      expect.arrayContaining([
        'library-above-sandbox: src/signature.ts -> src/sandbox/server.ts',
        'sandbox-below-tools: src/sandbox/server.ts -> src/cli/main.ts',
        expect.stringMatching(/^no-circular: src\/sandbox\/web(-checkout)?\.ts -> /),
        expect.stringMatching(/^no-dev-dependency-at-run-time: src\/sandbox\/assets\.ts -> .*node_modules\/esbuild\//),
        'browser-safe-without-node: src/clients/gateway.ts -> crypto',
        'domain-through-machinery-entries: src/sandbox/families/sdk.ts -> src/sandbox/delivery/queue.ts',
        'domain-through-machinery-entries: src/sandbox/gateway/engine.ts -> src/sandbox/trimming.ts',
      ]),
    );
    expect(found).not.toContain('domain-through-machinery-entries: src/sandbox/families/sdk.ts -> src/sandbox/delivery/index.ts');
  });
});

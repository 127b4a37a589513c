/**
 * Points the generators and validators that integrators use at the four bundled documents and
 * fails when one of them cannot consume a bundle:
 *
 *   npm run check:generators            all tools, all families
 *   npm run check:generators -- --keep  keep the temporary folder (its path is printed)
 *
 * Each tool is installed at a pinned version (the newest that runs on Node 20) into a temporary
 * folder, never into the project. Zod output is checked from two generators, hey-api's zod plugin
 * and orval's `client: 'zod'`, besides openapi-zod-client, and compiled against zod 3.25 (whose
 * root is the v3 API these versions write). orval stays on 7.x: every 8.x release needs Node 22.18. A generator must finish and its TypeScript output must compile
 * under `--strict`; a validator must finish its run (its own style findings are its business, a
 * crash is ours). CI runs it after the tests (`.ci/run`).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FAMILIES, type Family } from './families.js';

const root = resolve(import.meta.dirname, '..');

/** The tools, at the newest versions whose engines accept Node 20. */
const TOOLS = {
  '@hey-api/openapi-ts': '0.95.0',
  orval: '7.13.0',
  'swagger-typescript-api': '13.13.0',
  'openapi-zod-client': '1.18.3',
  'ibm-openapi-validator': '1.38.4',
  // What the generated code imports, to compile it.
  zod: '3.25.76',
  '@zodios/core': '10.9.6',
  typescript: '5.9.3',
} as const;

interface Outcome {
  tool: string;
  family: Family;
  ok: boolean;
  detail: string;
}

function run(command: string, args: string[], cwd: string): { status: number | null; output: string } {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 300_000, env: { ...process.env, NO_COLOR: '1' } });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}`;
  return { status: result.status, output };
}

function bin(work: string, name: string): string {
  return join(work, 'node_modules', '.bin', name);
}

/** tsc --strict over the TypeScript files of a folder (or one file); '' when it compiles. */
function compile(work: string, target: string): string {
  const files = target.endsWith('.ts')
    ? [target]
    : readdirSync(target, { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.ts'))
        .map((file) => join(target, file));
  const tsc = run(
    bin(work, 'tsc'),
    ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', ...files],
    work,
  );
  return tsc.status === 0 ? '' : tsc.output.split('\n').slice(0, 8).join('\n');
}

function last(output: string): string {
  return output.trim().split('\n').slice(-8).join('\n');
}

function checkFamily(work: string, family: Family): Outcome[] {
  const document = join(root, 'generated', 'openapi', `${family}.json`);
  const out = join(work, 'out', family);
  mkdirSync(out, { recursive: true });
  const outcomes: Outcome[] = [];
  const generator = (tool: string, args: string[], target: string): void => {
    const generated = run(bin(work, args[0] as string), args.slice(1), work);
    if (generated.status !== 0) {
      outcomes.push({ tool, family, ok: false, detail: `exited ${generated.status}:\n${last(generated.output)}` });
      return;
    }
    const problems = compile(work, target);
    outcomes.push({ tool, family, ok: problems === '', detail: problems === '' ? 'generated, compiles' : `does not compile:\n${problems}` });
  };

  generator('@hey-api/openapi-ts', ['openapi-ts', '-i', document, '-o', join(out, 'hey-api')], join(out, 'hey-api'));

  // hey-api's zod plugin beside its types: the zod schemas of every request and response.
  generator('@hey-api/openapi-ts (zod plugin)', ['openapi-ts', '-i', document, '-o', join(out, 'hey-api-zod'), '-p', '@hey-api/typescript', 'zod'], join(out, 'hey-api-zod'));

  // orval twice: its fetch client, and its zod output (`client: 'zod'`).
  for (const [client, folder] of [['fetch', 'orval'], ['zod', 'orval-zod']] as const) {
    const orvalConfig = join(out, `${folder}.config.cjs`);
    writeFileSync(
      orvalConfig,
      `module.exports = { api: { input: ${JSON.stringify(document)}, output: { target: ${JSON.stringify(join(out, folder, 'api.ts'))}, client: '${client}' } } };\n`,
    );
    generator(`orval (${client === 'fetch' ? 'fetch client' : 'zod schemas'})`, ['orval', '--config', orvalConfig], join(out, folder));
  }

  generator(
    'swagger-typescript-api',
    ['swagger-typescript-api', 'generate', '-p', document, '-o', join(out, 'swagger-typescript-api')],
    join(out, 'swagger-typescript-api'),
  );

  const zodFile = join(out, 'zod-client.ts');
  generator('openapi-zod-client', ['openapi-zod-client', document, '-o', zodFile], zodFile);

  // The IBM validator reports its own style rules (exit 1 with findings); what counts is that it
  // reads the whole document instead of stopping with an internal error.
  const ibm = run(bin(work, 'lint-openapi'), [document], work);
  const crashed = /problem with spectral|Error running|TypeError|must be a schema object/.test(ibm.output) || !/Validation Results/.test(ibm.output);
  outcomes.push({
    tool: 'ibm-openapi-validator',
    family,
    ok: !crashed,
    detail: crashed ? `could not read the document:\n${last(ibm.output)}` : 'read the whole document',
  });
  return outcomes;
}

function main(): void {
  const keep = process.argv.includes('--keep');
  const work = mkdtempSync(join(tmpdir(), 'paylater-generators-'));
  try {
    writeFileSync(join(work, 'package.json'), '{"name":"paylater-generators-check","private":true}\n');
    console.log(`installing ${Object.entries(TOOLS).map(([name, version]) => `${name}@${version}`).join(', ')}`);
    const install = run(
      'npm',
      ['install', '--no-audit', '--no-fund', '--loglevel=error', ...Object.entries(TOOLS).map(([name, version]) => `${name}@${version}`)],
      work,
    );
    if (install.status !== 0) {
      console.error(`could not install the tools:\n${last(install.output)}`);
      process.exitCode = 2;
      return;
    }
    const outcomes = FAMILIES.flatMap((family) => checkFamily(work, family));
    for (const outcome of outcomes) {
      console.log(`${outcome.ok ? 'ok  ' : 'FAIL'} ${outcome.family.padEnd(8)} ${outcome.tool}: ${outcome.detail.split('\n')[0]}`);
      if (!outcome.ok) console.log(outcome.detail.split('\n').slice(1).map((line) => `       ${line}`).join('\n'));
    }
    const failed = outcomes.filter((outcome) => !outcome.ok).length;
    console.log(`generators and validators: ${outcomes.length - failed} of ${outcomes.length} checks consumed the bundles`);
    if (failed > 0) process.exitCode = 1;
  } finally {
    if (keep) console.log(`kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

main();

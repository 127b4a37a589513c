/**
 * Points the generators and validators that integrators use at the four bundled documents and
 * fails when one of them cannot consume a bundle:
 *
 *   npm run check:generators                         all tools, all families
 *   npm run check:generators -- --keep               keep the temporary folder (its path is printed)
 *   npm run check:generators -- --tools DIR --install-only
 *                                                    install the tools into DIR and stop
 *   npm run check:generators -- --tools DIR          the check, with the tools in DIR (installed there
 *                                                    when missing; DIR is kept)
 *
 * Each tool is installed at a pinned version (the newest that runs on Node 20) into a temporary
 * folder, never into the project. Zod output is checked from two generators, hey-api's zod plugin
 * and orval's `client: 'zod'`, besides openapi-zod-client, and compiled against zod 3.25 (whose
 * root is the v3 API these versions write). orval stays on 7.x: every 8.x release needs Node 22.18. A generator must finish and its TypeScript output must compile
 * under `--strict`; a validator must finish its run (its own style findings are its business, a
 * crash is ours). CI runs it after the tests (`.ci/run`).
 *
 * The generators run two at a time (the machines have two cores), and everything they wrote is
 * compiled by one `tsc` program at the end, each error charged to the output it is in: one
 * compiler per output spent four fifths of the check's CPU time loading TypeScript and the
 * standard library 24 times. Every output is a module, so one program checks each as alone.
 *
 * `--tools DIR --install-only` lets CI download the tools in the background while other steps use
 * the cores, and run the check later on the same folder (`.ci/run`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';
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

/** How many tools run at once. */
const PARALLEL = 2;

interface Outcome {
  tool: string;
  family: Family;
  ok: boolean;
  detail: string;
}

/** One run of a tool over a family's bundle; `target` is the TypeScript it writes (a folder or a file), if any. */
interface Job {
  tool: string;
  family: Family;
  command: string;
  args: string[];
  target?: string;
  /** Judges a validator's run (a generator's is judged by its exit code and its output's compilation). */
  judge?: (output: string) => Outcome;
}

interface Run {
  status: number | null;
  output: string;
}

const ENV = { ...process.env, NO_COLOR: '1' };

function run(command: string, args: string[], cwd: string): Run {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8', timeout: 300_000, env: ENV });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}`;
  return { status: result.status, output };
}

function runAsync(command: string, args: string[], cwd: string): Promise<Run> {
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    const child = spawn(command, args, { cwd, env: ENV, stdio: ['ignore', 'pipe', 'pipe'], timeout: 300_000 });
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', (error) => chunks.push(Buffer.from(String(error))));
    child.on('close', (status) => done({ status, output: Buffer.concat(chunks).toString('utf8') }));
  });
}

function bin(work: string, name: string): string {
  return join(work, 'node_modules', '.bin', name);
}

function last(output: string): string {
  return output.trim().split('\n').slice(-8).join('\n');
}

function typescriptFiles(target: string): string[] {
  return target.endsWith('.ts')
    ? [target]
    : readdirSync(target, { recursive: true, encoding: 'utf8' })
        .filter((file) => file.endsWith('.ts'))
        .map((file) => join(target, file));
}

function familyJobs(work: string, family: Family): Job[] {
  const document = join(root, 'generated', 'openapi', `${family}.json`);
  const out = join(work, 'out', family);
  mkdirSync(out, { recursive: true });
  const jobs: Job[] = [];
  const generator = (tool: string, args: string[], target: string): void => {
    jobs.push({ tool, family, command: bin(work, args[0] as string), args: args.slice(1), target });
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
  jobs.push({
    tool: 'ibm-openapi-validator',
    family,
    command: bin(work, 'lint-openapi'),
    args: [document],
    judge: (output) => {
      const crashed = /problem with spectral|Error running|TypeError|must be a schema object/.test(output) || !/Validation Results/.test(output);
      return {
        tool: 'ibm-openapi-validator',
        family,
        ok: !crashed,
        detail: crashed ? `could not read the document:\n${last(output)}` : 'read the whole document',
      };
    },
  });
  return jobs;
}

/** Runs the jobs `PARALLEL` at a time; the runs come back in the jobs' order. */
async function runJobs(work: string, jobs: readonly Job[]): Promise<Run[]> {
  const runs: Run[] = new Array<Run>(jobs.length);
  let next = 0;
  const lane = async (): Promise<void> => {
    while (next < jobs.length) {
      const index = next++;
      const job = jobs[index] as Job;
      runs[index] = await runAsync(job.command, job.args, work);
    }
  };
  await Promise.all(Array.from({ length: PARALLEL }, lane));
  return runs;
}

/**
 * tsc --strict over every generated output in one program; the errors of each output by target
 * ('' when it compiles). An error outside every output (a compiler option, a missing library) is
 * charged to each of them.
 */
function compileAll(work: string, targets: readonly string[]): Map<string, string> {
  const problems = new Map<string, string[]>(targets.map((target) => [target, []]));
  if (targets.length === 0) return new Map();
  const files = targets.flatMap(typescriptFiles);
  const tsc = run(
    bin(work, 'tsc'),
    ['--noEmit', '--strict', '--target', 'es2022', '--module', 'nodenext', '--moduleResolution', 'nodenext', '--skipLibCheck', '--pretty', 'false', ...files],
    work,
  );
  if (tsc.status !== 0) {
    let owners: readonly string[] = targets;
    for (const line of tsc.output.split('\n').filter((text) => text.trim() !== '')) {
      // tsc names files relative to its working folder: `out/gateway/orval/api.ts(12,3): error TS…`;
      // an indented line continues the error above it.
      if (!/^\s/.test(line)) {
        const path = resolve(work, line.split('(')[0] as string);
        const found = targets.filter((target) => !relative(target, path).startsWith('..'));
        owners = found.length > 0 ? found : targets;
      }
      for (const owner of owners) problems.get(owner)?.push(line);
    }
    // A failed compile that printed nothing a target can own still fails every target.
    if ([...problems.values()].every((lines) => lines.length === 0)) for (const lines of problems.values()) lines.push(last(tsc.output) || `tsc exited ${tsc.status}`);
  }
  return new Map([...problems].map(([target, lines]) => [target, lines.slice(0, 8).join('\n')]));
}

async function check(work: string): Promise<Outcome[]> {
  const jobs = FAMILIES.flatMap((family) => familyJobs(work, family));
  const runs = await runJobs(work, jobs);
  const generated = jobs.filter((job, index) => job.target !== undefined && runs[index]?.status === 0).map((job) => job.target as string);
  const compiled = compileAll(work, generated);
  return jobs.map((job, index): Outcome => {
    const result = runs[index] as Run;
    if (job.judge !== undefined) return job.judge(result.output);
    const { tool, family } = job;
    if (result.status !== 0) return { tool, family, ok: false, detail: `exited ${result.status}:\n${last(result.output)}` };
    const problems = compiled.get(job.target as string) ?? '';
    return { tool, family, ok: problems === '', detail: problems === '' ? 'generated, compiles' : `does not compile:\n${problems}` };
  });
}

const USAGE = 'usage: npm run check:generators [-- --keep] [-- --tools DIR [--install-only]]';

async function main(): Promise<void> {
  let options: { keep: boolean; tools: string | undefined; installOnly: boolean };
  try {
    const { values } = parseArgs({
      options: { keep: { type: 'boolean', default: false }, tools: { type: 'string' }, 'install-only': { type: 'boolean', default: false } },
    });
    options = { keep: values.keep, tools: values.tools, installOnly: values['install-only'] };
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  if (options.installOnly && options.tools === undefined) {
    console.error(`--install-only needs --tools DIR, the folder the check will use later\n${USAGE}`);
    process.exitCode = 2;
    return;
  }
  const kept = options.keep || options.tools !== undefined;
  const work = options.tools === undefined ? mkdtempSync(join(tmpdir(), 'paylater-generators-')) : resolve(options.tools);
  try {
    mkdirSync(work, { recursive: true });
    writeFileSync(join(work, 'package.json'), '{"name":"paylater-generators-check","private":true}\n');
    console.log(`installing ${Object.entries(TOOLS).map(([name, version]) => `${name}@${version}`).join(', ')}`);
    // With the tools already in the folder, npm finds nothing to do and returns within seconds.
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
    if (options.installOnly) {
      console.log(`installed in ${work}`);
      return;
    }
    rmSync(join(work, 'out'), { recursive: true, force: true });
    const outcomes = await check(work);
    for (const outcome of outcomes) {
      console.log(`${outcome.ok ? 'ok  ' : 'FAIL'} ${outcome.family.padEnd(8)} ${outcome.tool}: ${outcome.detail.split('\n')[0]}`);
      if (!outcome.ok) console.log(outcome.detail.split('\n').slice(1).map((line) => `       ${line}`).join('\n'));
    }
    const failed = outcomes.filter((outcome) => !outcome.ok).length;
    console.log(`generators and validators: ${outcomes.length - failed} of ${outcomes.length} checks consumed the bundles`);
    if (failed > 0) process.exitCode = 1;
  } finally {
    if (kept) console.log(`kept ${work}`);
    else rmSync(work, { recursive: true, force: true });
  }
}

await main();

/**
 * The published package as an integrator gets it. The repository is copied without node_modules,
 * dist/ or other build output (as a fresh clone has it) into a temporary folder, where `npm pack`
 * must build the package itself (prepack); the tarball is inspected, installed into a separate
 * project, imported and required from its subpaths, type-checked under strict NodeNext settings
 * (the README's sample too, read from README.md), and its `paylater` bin run. Every run works in
 * its own temporary folder, so two runs at once do not meet; the repository's own dist/ is never
 * touched.
 *
 * On other Node versions: `PAYLATER_TEST_NODES` names more Node binaries (separated by `:`; `.ci/run`
 * gives Node 22, 24 and 26 from the npm registry). The installed package is imported and required,
 * the README's sample runs against a sandbox started from the package, and the bin prints its
 * version and signs, on this Node and on each of them.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix, relative, resolve, sep } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { transform } from 'esbuild';
import { sdkSignature } from '../src/signature.js';

const root = resolve(import.meta.dirname, '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const tsc = join(root, 'node_modules/typescript/bin/tsc');
/** What a fresh clone does not have: installed packages, build output, local files. */
const NOT_IN_A_CLONE = new Set(['node_modules', 'dist', 'site', 'artifacts', 'coverage', '.git', '.vite']);

let work: string;
let project: string;
/** The files of the tarball, relative to its `package/` folder, with `/` separators. */
let packed: string[];
let unpacked: string;

/** The first ```ts block of the README's "Using the package" section. */
function readmeSample(): string {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  const section = /^## Using the package\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1];
  if (section === undefined) throw new Error('README.md has no "## Using the package" section');
  const sample = /^```ts\n([\s\S]*?)^```$/m.exec(section)?.[1];
  if (sample === undefined) throw new Error('the "Using the package" section of README.md has no ```ts block');
  return sample;
}

function filesUnder(folder: string): string[] {
  return readdirSync(folder, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(folder, join(entry.parentPath, entry.name)).split(sep).join('/'));
}

/** Runs a node script in the consumer project; `code` is the file's text, `name` its file name. */
function runInProject(name: string, code: string, node = process.execPath, env: NodeJS.ProcessEnv = process.env) {
  writeFileSync(join(project, name), code);
  return spawnSync(node, [join(project, name)], { cwd: project, encoding: 'utf8', env });
}

/** This Node and the binaries `PAYLATER_TEST_NODES` names, each with the version it reports. */
const NODES: { binary: string; version: string }[] = [process.execPath, ...(process.env.PAYLATER_TEST_NODES ?? '').split(':').filter((path) => path !== '')].map(
  (binary) => ({ binary, version: execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim() }),
);

let typeChecked: { status: number | null; problems: string[] } | undefined;

/** The problems tsc reports in `file` of the consumer project (one tsc run checks every file). */
function typeProblems(file: string): string[] {
  if (typeChecked === undefined) {
    const run = spawnSync(process.execPath, [tsc, '-p', project], { cwd: project, encoding: 'utf8' });
    const problems = `${run.stdout}${run.stderr}`.split('\n').filter((line) => line.trim() !== '');
    typeChecked = { status: run.status, problems };
    // A failure that names no file (a bad option, a crash) belongs to every file.
    if (run.status !== 0 && !problems.some((line) => /^\w+\.ts\(/.test(line))) problems.push(`tsc exited with ${run.status}`);
  }
  return typeChecked.problems.filter((line) => !/^\w+\.ts\(/.test(line) || line.startsWith(`${file}(`));
}

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'paylater-pack-'));

  // A fresh clone: the sources without build output, with the repository's installed packages.
  const clone = join(work, 'clone');
  cpSync(root, clone, {
    recursive: true,
    filter: (source) => {
      const path = relative(root, source);
      return path === '' || (!NOT_IN_A_CLONE.has(path.split(sep)[0]!) && !path.startsWith('.test-build-') && !path.endsWith('.tgz'));
    },
  });
  symlinkSync(join(root, 'node_modules'), join(clone, 'node_modules'), 'junction');
  execFileSync(npm, ['pack', '--silent', '--pack-destination', work], { cwd: clone, stdio: 'pipe' });
  const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'));
  if (tarball === undefined) throw new Error('npm pack produced no tarball');
  rmSync(clone, { recursive: true, force: true });

  unpacked = join(work, 'unpacked');
  mkdirSync(unpacked);
  execFileSync('tar', ['-xzf', join(work, tarball), '-C', unpacked], { stdio: 'pipe' });
  packed = filesUnder(join(unpacked, 'package'));

  project = join(work, 'consumer');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  execFileSync(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', join(work, tarball)], { cwd: project, stdio: 'pipe' });

  writeFileSync(
    join(project, 'consumer.ts'),
    `import { createMerchantApiClient, createSdkClient, sdkSignature, verifyGatewayWebhook, WebhookVerificationError } from 'paylater-api';
import { webSignature, verifyWebSignature } from 'paylater-api/signature';
import { createWebhookHandler } from 'paylater-api/webhooks';
import { createWebClient } from 'paylater-api/clients/web';
import { createTransactionalApiClient } from 'paylater-api/clients/gateway';
import { createExtrasClient } from 'paylater-api/clients/extras';
import { createSdkClient as createSdkClientFromSubpath } from 'paylater-api/clients/sdk';
import { createSandbox, type Sandbox } from 'paylater-api/sandbox';
import type { components } from 'paylater-api/types/gateway';
import type { InitiateServiceTransactionOnElementClick } from 'paylater-api/browser';

type Merchant = components['schemas']['GatewayMerchant'];
const stage: Merchant['stage'] = 'enabled';
const gateway = createMerchantApiClient({ baseUrl: 'http://127.0.0.1:1', credentials: { username: 'u', password: 'p' } });
const sdk = createSdkClient({ baseUrl: 'http://127.0.0.1:1', partnerId: 'p', privateKey: 'k' });
const web = createWebClient({ baseUrl: 'http://127.0.0.1:1', partnerId: 'p', privateKey: 'k' });
// A call that type-checks only with the generated paths: the signature header is the client's job.
const pending: Promise<unknown> = sdk.POST('/merchant/credit/checkTransactionStatus', { body: { merchantTransactionId: 'x' } }).catch(() => undefined);
const starting: Promise<Sandbox> | undefined = Math.random() > 2 ? createSandbox() : undefined;
let initiate: InitiateServiceTransactionOnElementClick | undefined;
void pending; void gateway; void web; void createWebhookHandler; void verifyGatewayWebhook; void stage; void starting; void initiate;
void createTransactionalApiClient; void createExtrasClient; void createSdkClientFromSubpath;
const signature: string = sdkSignature('{}', 'k');
console.log(JSON.stringify({
  sdk: signature,
  web: webSignature('', '/api/transaction/status?id=1', 'k'),
  verified: verifyWebSignature(webSignature('a', '/p', 'k'), 'a', '/p', 'k'),
  errorClass: typeof WebhookVerificationError,
}));
`,
  );
  writeFileSync(join(project, 'readme.ts'), readmeSample());
  const compilerOptions = {
    target: 'ES2022',
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    strict: true,
    noEmit: true,
    lib: ['ES2023', 'DOM'],
    // A Node consumer has @types/node; this repository's copy stands in for it.
    typeRoots: [join(root, 'node_modules/@types')],
    types: ['node'],
  };
  writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.ts', 'readme.ts'] }));
}, 300_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the tarball', () => {
  it('is built by npm pack itself: dist/ with declarations, the bin, the browser script and the documents', () => {
    for (const file of [
      'dist/index.js',
      'dist/index.d.ts',
      'dist/clients/gateway.js',
      'dist/clients/gateway.d.ts',
      'dist/sandbox/server.js',
      'dist/sandbox/json-worker.js',
      'dist/cli/main.js',
      'dist/browser/sdk.js',
      'dist/browser/sdk.d.ts',
      'dist/node-only/clients-web.js',
      'generated/types/gateway.d.ts',
      'generated/openapi/gateway.json',
      'package.json',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'SECURITY.md',
    ]) {
      expect(packed, file).toContain(file);
    }
    expect(packed.filter((file) => /^(test|node_modules|scripts|\.ci)\//.test(file))).toEqual([]);
  });

  it('has no dangling source map: every map it names is shipped, and so is every source a map names', () => {
    const problems: string[] = [];
    for (const file of packed) {
      const text = readFileSync(join(unpacked, 'package', file), 'utf8');
      if (/\.(js|d\.ts)$/.test(file)) {
        const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(text)?.[1];
        if (url !== undefined && !url.startsWith('data:')) {
          const map = posix.join(posix.dirname(file), url);
          if (!packed.includes(map)) problems.push(`${file} names ${map}, which is not in the tarball`);
        }
      }
      if (file.endsWith('.map')) {
        const { sourceRoot = '', sources = [] } = JSON.parse(text) as { sourceRoot?: string; sources?: string[] };
        for (const source of sources) {
          const target = posix.join(posix.dirname(file), sourceRoot, source);
          if (!packed.includes(target)) problems.push(`${file} points at ${target}, which is not in the tarball`);
        }
      }
    }
    expect(problems).toEqual([]);
  });

  it('is licensed as package.json says', () => {
    const manifest = JSON.parse(readFileSync(join(unpacked, 'package/package.json'), 'utf8')) as { license: string };
    expect(manifest.license).toBe('MIT');
    expect(readFileSync(join(unpacked, 'package/LICENSE'), 'utf8')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} paylater-api contributors\n/);
  });
});

/** tsc over the installed package takes seconds alone and much longer on a busy machine. */
const TYPE_CHECK_TIMEOUT_MS = 240_000;

describe('the installed package', () => {
  it('type-checks a consumer that imports the root and every subpath', () => {
    expect(typeProblems('consumer.ts')).toEqual([]);
  }, TYPE_CHECK_TIMEOUT_MS);

  it("type-checks the README's \"Using the package\" sample", () => {
    expect(readFileSync(join(project, 'readme.ts'), 'utf8')).toMatch(/from 'paylater-api'/);
    expect(typeProblems('readme.ts')).toEqual([]);
  }, TYPE_CHECK_TIMEOUT_MS);

  it('runs the sandbox from paylater-api/sandbox, with the built browser script', () => {
    const js = runInProject(
      'sandbox.mjs',
      `import { createSandbox } from 'paylater-api/sandbox';
       const quiet = { info() {}, warn() {}, error() {} };
       const sandbox = await createSandbox({ logger: quiet });
       try {
         const url = await sandbox.listen(0, '127.0.0.1');
         const script = await fetch(url + '/sdk.js');
         const body = await script.text();
         console.log(JSON.stringify({ status: script.status, defines: body.includes('initiateServiceTransactionOnElementClick') }));
       } finally {
         await sandbox.close();
       }`,
    );
    expect(js.stderr).toBe('');
    expect(JSON.parse(js.stdout)).toEqual({ status: 200, defines: true });
  });

  it("starts the sandbox's large-body worker from its built module", () => {
    // Internal, so imported by its path: the worker answers (without it, large bodies would be parsed on the event loop).
    const js = runInProject(
      'worker.mjs',
      `const { JsonOffload } = await import('./node_modules/paylater-api/dist/sandbox/json-offload.js');
       const offload = new JsonOffload();
       const body = Buffer.from(JSON.stringify({ id: 'w', notes: { a: [1, {}] } }));
       const answer = await offload.parse(body, ['/notes'], { maxDepth: 64, jsonMembers: 100, jsonDepth: 8 });
       await offload.close();
       console.log(JSON.stringify({ value: answer?.value, notes: answer?.free.get('/notes') }));`,
    );
    expect(js.stderr).toBe('');
    expect(JSON.parse(js.stdout)).toEqual({ value: { id: 'w', notes: {} }, notes: { text: '{"a":[1,{}]}', bytes: 12 } });
  });

  it('does not export its internal modules', () => {
    const internal = ['paylater-api/clients/transport', 'paylater-api/clients/signed', 'paylater-api/dist/index.js', 'paylater-api/src/index.ts'];
    const imported = runInProject(
      'internal.mjs',
      `const codes = {};
       for (const path of ${JSON.stringify(internal)}) {
         codes[path] = await import(path).then(() => 'imported', (error) => error.code);
       }
       console.log(JSON.stringify(codes));`,
    );
    const required = runInProject(
      'internal.cjs',
      `const codes = {};
       for (const path of ${JSON.stringify(internal)}) {
         try { require(path); codes[path] = 'required'; } catch (error) { codes[path] = error.code; }
       }
       console.log(JSON.stringify(codes));`,
    );
    const expected = Object.fromEntries(internal.map((path) => [path, 'ERR_PACKAGE_PATH_NOT_EXPORTED']));
    expect(JSON.parse(imported.stdout)).toEqual(expected);
    expect(JSON.parse(required.stdout)).toEqual(expected);
  });

});

describe.each(NODES)('the installed package on Node $version', ({ binary }) => {
  it('runs: the root and subpath imports work and sign like the repository', () => {
    const js = runInProject(
      'imports.mjs',
      `import { readFileSync } from 'node:fs';
       import { fileURLToPath } from 'node:url';
       import { sdkSignature, WebhookVerificationError } from 'paylater-api';
       import { webSignature, verifyWebSignature } from 'paylater-api/signature';
       import { createWebhookHandler } from 'paylater-api/webhooks';
       import { createWebClient } from 'paylater-api/clients/web';
       import { createMerchantApiClient } from 'paylater-api/clients/gateway';
       import { createExtrasClient } from 'paylater-api/clients/extras';
       import { createSdkClient } from 'paylater-api/clients/sdk';
       const document = JSON.parse(readFileSync(fileURLToPath(import.meta.resolve('paylater-api/openapi/gateway.json')), 'utf8'));
       console.log(JSON.stringify({ sdk: sdkSignature('{}', 'k'), web: webSignature('', '/a?b=1', 'k'),
         verified: verifyWebSignature(webSignature('a', '/p', 'k'), 'a', '/p', 'k'),
         handler: typeof createWebhookHandler, error: typeof WebhookVerificationError,
         clients: [createWebClient, createMerchantApiClient, createExtrasClient, createSdkClient].map((f) => typeof f),
         openapi: document.openapi }));`,
      binary,
    );
    expect(js.stderr).toBe('');
    const out = JSON.parse(js.stdout) as Record<string, unknown>;
    expect(out).toEqual({
      sdk: sdkSignature('{}', 'k'),
      web: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
      verified: true,
      handler: 'function',
      error: 'function',
      clients: ['function', 'function', 'function', 'function'],
      openapi: expect.stringMatching(/^3\.1\./),
    });
  });

  it('works with require() from CommonJS (require(esm), Node >= 20.19)', () => {
    const cjs = runInProject(
      'require.cjs',
      `const api = require('paylater-api');
       const { verifySdkSignature } = require('paylater-api/signature');
       const { createWebhookHandler } = require('paylater-api/webhooks');
       const { createSandbox } = require('paylater-api/sandbox');
       const clients = ['gateway', 'extras', 'web', 'sdk'].map((family) => Object.keys(require('paylater-api/clients/' + family)).length > 0);
       console.log(JSON.stringify({
         sdk: api.sdkSignature('{}', 'k'),
         verified: verifySdkSignature(api.sdkSignature('a', 'k'), 'a', 'k'),
         handler: typeof createWebhookHandler, sandbox: typeof createSandbox, clients,
         openapi: require('paylater-api/openapi/sdk.json').openapi,
       }));`,
      binary,
    );
    expect(cjs.stderr).not.toMatch(/ERR_|Error/);
    expect(cjs.status).toBe(0);
    expect(JSON.parse(cjs.stdout)).toEqual({
      sdk: sdkSignature('{}', 'k'),
      verified: true,
      handler: 'function',
      sandbox: 'function',
      clients: [true, true, true, true],
      openapi: expect.stringMatching(/^3\.1\./),
    });
  });

  it("runs the README's \"Using the package\" sample against a sandbox started from the package", async () => {
    // The sample, its types stripped, pointed at a sandbox on a free port through PAYLATER_BASE_URL, which it reads.
    const { code } = await transform(readmeSample(), { loader: 'ts', format: 'esm' });
    expect(code).toMatch(/process\.env\.PAYLATER_BASE_URL \|\| ['"]http:\/\/127\.0\.0\.1:4000['"]/);
    writeFileSync(join(project, 'readme-sample.mjs'), code);
    const js = runInProject(
      'readme-run.mjs',
      `import { createSandbox } from 'paylater-api/sandbox';
       const requests = [];
       const logger = { info(line) { requests.push(line.split(' ').slice(0, 2).join(' ')); }, warn() {}, error() {} };
       const sandbox = await createSandbox({ logger, logRequests: true });
       try {
         process.env.PAYLATER_BASE_URL = await sandbox.listen(0, '127.0.0.1');
         await import('./readme-sample.mjs');
         console.log(JSON.stringify({ ran: true, requests }));
       } finally {
         await sandbox.close();
       }`,
      binary,
      { ...process.env, PAYLATER_PRIVATE_KEY: 'test_private_key' },
    );
    expect(js.stderr).toBe('');
    // Each client of the sample reached the sandbox: the merchant read, the web status and refund, the SDK status.
    expect(JSON.parse(js.stdout.trim().split('\n').at(-1)!)).toEqual({
      ran: true,
      requests: expect.arrayContaining(['GET /api/merchant/m_1', 'GET /api/transaction/status', 'POST /api/refund', 'POST /merchant/credit/checkTransactionStatus']),
    });
  });

  it('installs the paylater bin, which prints its version and signs', () => {
    const bin = join(project, 'node_modules/paylater-api/dist/cli/main.js');
    const run = spawnSync(binary, [bin, 'sign', 'sdk', '-'], {
      input: '{"a":1}',
      encoding: 'utf8',
      env: { ...process.env, PAYLATER_PRIVATE_KEY: 'k' },
    });
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe(sdkSignature('{"a":1}', 'k'));
    const help = spawnSync(binary, [bin, '--help'], { encoding: 'utf8' });
    expect(help.stdout).toMatch(/sandbox/);
    const version = spawnSync(binary, [bin, '--version'], { encoding: 'utf8' });
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toBe((JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string }).version);
    // The bin link npm made runs the same file.
    expect(spawnSync(join(project, 'node_modules/.bin/paylater'), ['--version'], { encoding: 'utf8' }).stdout).toBe(version.stdout);
  });
});

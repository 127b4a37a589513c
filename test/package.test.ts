/**
 * The published package as an integrator gets it: `npm pack`, installed into a separate project,
 * imported from its subpaths, type-checked under strict settings, and its `paylater` bin run.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sdkSignature } from '../src/signature.js';

const root = resolve(import.meta.dirname, '..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
let work: string;
let project: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'paylater-pack-'));
  execFileSync(npm, ['run', 'build', '--silent'], { cwd: root, stdio: 'pipe' });
  execFileSync(npm, ['pack', '--silent', '--pack-destination', work], { cwd: root, stdio: 'pipe' });
  const tarball = readdirSync(work).find((name) => name.endsWith('.tgz'));
  if (tarball === undefined) throw new Error('npm pack produced no tarball');

  project = join(work, 'consumer');
  execFileSync('mkdir', ['-p', project]);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  execFileSync(npm, ['install', '--no-audit', '--no-fund', '--prefer-offline', join(work, tarball)], { cwd: project, stdio: 'pipe' });

  writeFileSync(
    join(project, 'consumer.ts'),
    `import { createMerchantApiClient, createSdkClient, sdkSignature, verifyGatewayWebhook, WebhookVerificationError } from 'paylater-api';
import { webSignature, verifyWebSignature } from 'paylater-api/signature';
import { createWebhookHandler } from 'paylater-api/webhooks';
import { createWebClient } from 'paylater-api/clients/web';
import type { components } from 'paylater-api/types/gateway';

type Merchant = components['schemas']['GatewayMerchant'];
const stage: Merchant['stage'] = 'enabled';
const gateway = createMerchantApiClient({ baseUrl: 'http://127.0.0.1:1', credentials: { username: 'u', password: 'p' } });
const sdk = createSdkClient({ baseUrl: 'http://127.0.0.1:1', partnerId: 'p', privateKey: 'k' });
const web = createWebClient({ baseUrl: 'http://127.0.0.1:1', partnerId: 'p', privateKey: 'k' });
// A call that type-checks only with the generated paths: the signature header is the client's job.
const pending: Promise<unknown> = sdk.POST('/merchant/credit/checkTransactionStatus', { body: { merchantTransactionId: 'x' } }).catch(() => undefined);
void pending; void gateway; void web; void createWebhookHandler; void verifyGatewayWebhook; void stage;
const signature: string = sdkSignature('{}', 'k');
console.log(JSON.stringify({
  sdk: signature,
  web: webSignature('', '/api/transaction/status?id=1', 'k'),
  verified: verifyWebSignature(webSignature('a', '/p', 'k'), 'a', '/p', 'k'),
  errorClass: typeof WebhookVerificationError,
}));
`,
  );
  writeFileSync(
    join(project, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        noEmit: true,
        lib: ['ES2023', 'DOM'],
        // A Node consumer has @types/node; this repository's copy stands in for it.
        typeRoots: [join(root, 'node_modules/@types')],
        types: ['node'],
      },
      files: ['consumer.ts'],
    }),
  );
}, 300_000);

afterAll(() => {
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('type-checks a consumer that imports the root and every subpath', () => {
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', project], { cwd: project, encoding: 'utf8' });
    expect(`${tsc.stdout}${tsc.stderr}`.trim()).toBe('');
    expect(tsc.status).toBe(0);
  });

  it('runs: the root and subpath imports work and sign like the repository', () => {
    const js = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { sdkSignature, WebhookVerificationError } from 'paylater-api';
         import { webSignature, verifyWebSignature } from 'paylater-api/signature';
         import { createWebhookHandler } from 'paylater-api/webhooks';
         import { createWebClient } from 'paylater-api/clients/web';
         console.log(JSON.stringify({ sdk: sdkSignature('{}', 'k'), web: webSignature('', '/a?b=1', 'k'),
           verified: verifyWebSignature(webSignature('a', '/p', 'k'), 'a', '/p', 'k'),
           handler: typeof createWebhookHandler, client: typeof createWebClient, error: typeof WebhookVerificationError }));`,
      ],
      { cwd: project, encoding: 'utf8' },
    );
    expect(js.stderr).toBe('');
    const out = JSON.parse(js.stdout) as Record<string, unknown>;
    expect(out).toEqual({
      sdk: sdkSignature('{}', 'k'),
      web: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
      verified: true,
      handler: 'function',
      client: 'function',
      error: 'function',
    });
  });

  it('installs the paylater bin', () => {
    const run = spawnSync(join(project, 'node_modules/.bin/paylater'), ['sign', 'sdk', '-'], {
      input: '{"a":1}',
      encoding: 'utf8',
      env: { ...process.env, PAYLATER_PRIVATE_KEY: 'k' },
    });
    expect(run.status).toBe(0);
    expect(run.stdout.trim()).toBe(sdkSignature('{"a":1}', 'k'));
    const help = spawnSync(join(project, 'node_modules/.bin/paylater'), ['--help'], { encoding: 'utf8' });
    expect(help.stdout).toMatch(/sandbox/);
  });
});

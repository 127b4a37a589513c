/**
 * The short calls the reference shows first (scripts/samples/short.ts), run as shown: the web and
 * SDK initiates in bash (curl and openssl), PHP and Python, with the sandbox's test partner in the
 * environment, each against a sandbox of its own (their example ids are fixed). The complete
 * programs run in the other files of this folder.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { samplePlans, type OperationPlan } from '../../scripts/samples/plan.js';
import { shortCall } from '../../scripts/samples/short.js';
import { TEST_CREDENTIALS } from '../../src/sandbox/fixtures.js';
import { startSandbox } from '../support/sandbox.js';

const root = resolve(import.meta.dirname, '..', '..');
const plans = (['web', 'sdk'] as const).flatMap((family) =>
  samplePlans(family, JSON.parse(readFileSync(join(root, 'generated', 'openapi', `${family}.json`), 'utf8'))).filter((plan): plan is OperationPlan => plan.kind === 'operation'),
);
const scratch = mkdtempSync(join(tmpdir(), 'paylater-short-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

describe('the short calls run as shown', () => {
  const runners: Record<string, [string, string]> = { curl: ['bash', 'call.sh'], PHP: ['php', 'call.php'], Python: ['python3', 'call.py'] };
  const cases = (['initiateWebTransaction', 'initiateSdkTransaction'] as const).flatMap((id) => Object.keys(runners).map((label) => [id, label] as const));
  it.each(cases)('%s in %s', async (operationId, label) => {
    const plan = plans.find((p) => p.operationId === operationId)!;
    const [interpreter, file] = runners[label]!;
    const path = join(scratch, `${operationId}-${file}`);
    writeFileSync(path, shortCall(plan, label));
    const sandbox = await startSandbox();
    try {
      // Run asynchronously: the sandbox answers in this process.
      const env = { PATH: process.env.PATH, PAYLATER_BASE_URL: sandbox.url, PAYLATER_PARTNER_ID: TEST_CREDENTIALS.partner.id, PAYLATER_PRIVATE_KEY: TEST_CREDENTIALS.partner.privateKey };
      const result = await new Promise<{ stdout: string; stderr: string }>((done) => {
        execFile(interpreter, [path], { env, timeout: 30_000 }, (_error, stdout, stderr) => done({ stdout, stderr }));
      });
      expect(result.stderr).toBe('');
      expect(result.stdout).toContain('TRANSACTION_INITIATED');
    } finally {
      await sandbox.sandbox.close();
    }
  });
});

/**
 * The checkout guide's refund script (docs/web-checkout.md, step 5) run as written against a
 * sandbox with `node`: `refund.mjs` imports `paylater-api/clients/web` (here this repository's
 * sources transpiled for this run: test/support/guide-project.ts), and the answers the guide prints are the ones the sandbox gives, request ids aside.
 */
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createWebClient } from '../../src/clients/web.js';
import { guideProject } from '../support/guide-project.js';
import { startSandbox, type TestSandbox } from '../support/sandbox.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..', '..');
const GUIDE = readFileSync(join(ROOT, 'docs', 'web-checkout.md'), 'utf8');

/** The guide's block of `file=name`, byte for byte. */
function fileBlock(name: string): string {
  const match = new RegExp(`^\`\`\`[\\w-]+ file=${name.replace('.', '\\.')}\\n([\\s\\S]*?)^\`\`\`$`, 'm').exec(GUIDE);
  if (match === null) throw new Error(`docs/web-checkout.md has no block file=${name}`);
  return match[1]!;
}

/** The `node refund.mjs ...` lines of step 5 and the answers printed under each. */
function shownRuns(): { args: string[]; answer: string }[] {
  const step = GUIDE.slice(GUIDE.indexOf('## 5. Refund an order'), GUIDE.indexOf('## 6.'));
  const runs: { args: string[]; answer: string }[] = [];
  for (const match of step.matchAll(/^node refund\.mjs (.*)\n# (.*)$/gm)) {
    runs.push({ args: match[1]!.split(' '), answer: match[2]! });
  }
  return runs;
}

let work: string;
let t: TestSandbox;
beforeAll(async () => {
  work = guideProject('paylater-refund-guide-', { './clients/web': './src/clients/web.js' }, { 'refund.mjs': fileBlock('refund.mjs') });
  t = await startSandbox();
});
afterAll(async () => {
  await t?.close();
  rmSync(work, { recursive: true, force: true });
});

async function refund(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const env = { PATH: process.env.PATH ?? '', PAYLATER_BASE_URL: t.url, PAYLATER_PRIVATE_KEY: '' };
  try {
    const { stdout, stderr } = await run(process.execPath, ['refund.mjs', ...args], { cwd: work, env });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

describe('the checkout guide refunds an order', () => {
  it('answers each run of step 5 as the guide prints it', async () => {
    const id = 'order_refund_guide_1';
    const client = createWebClient({ baseUrl: t.url, partnerId: 'partner_test', privateKey: 'test_private_key' });
    const initiated = await client.POST('/api/transaction', { body: { id, amount: 150_000, user: { name: 'Asha Rao', phoneNumber: '+919000000001' } } });
    expect(initiated.response.status).toBe(200);
    expect((await t.request('POST', `/sandbox/web/transactions/${id}/confirm`)).status).toBe(200);

    const runs = shownRuns();
    expect(runs.map((shown) => shown.answer.split(' ')[0])).toEqual(['200', '400', '200', '400']);
    for (const shown of runs) {
      const args = shown.args.map((arg) => (arg === 'order_6b0e…' ? id : arg));
      const result = await refund(args);
      const printed = result.stdout.trim().replace(/"requestId":"req_\w+"/, '"requestId":"req_…"');
      expect(printed, `node refund.mjs ${args.join(' ')}`).toBe(shown.answer);
      expect(result.code).toBe(shown.answer.startsWith('200') ? 0 : 1);
    }
  });

  it('says the unit of a fractional amount, and its usage without an id', async () => {
    const fractional = await refund(['order_refund_guide_1', '1500.5']);
    expect(fractional.stdout).toContain('"detail":"/amount must be a whole number of paise, an integer (₹1 = 100 paise: ₹1,500 is 150000)"');
    const usage = await refund([]);
    expect([usage.code, usage.stderr.trim()]).toEqual([2, 'usage: node refund.mjs <transaction id> [amount in paise, e.g. 50000 for ₹500]']);
  });
});

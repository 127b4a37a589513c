/**
 * The refunds guide's sample (docs/refunds.md, `refund-safely.mjs`) run as written against a
 * sandbox with `node`: `paylater-api/clients/web` and `/sdk` are this repository's sources,
 * transpiled for this run (test/support/guide-project.ts). The
 * runs the guide shows print what the guide prints; a full refund whose answer is dropped on the
 * way back is sent again and refunds the order once; a partial refund whose answer is dropped is not
 * sent again; a transaction that is not SUCCESS is not refunded.
 */
import { execFile } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { createServer, request, type Server } from 'node:http';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guideProject } from '../support/guide-project.js';
import { startSandbox, type TestSandbox } from '../support/sandbox.js';

const run = promisify(execFile);
const ROOT = resolve(import.meta.dirname, '..', '..');
const GUIDE = readFileSync(join(ROOT, 'docs', 'refunds.md'), 'utf8');

function fileBlock(name: string): string {
  const match = new RegExp(`^\`\`\`[\\w-]+ file=${name.replace('.', '\\.')}\\n([\\s\\S]*?)^\`\`\`$`, 'm').exec(GUIDE);
  if (match === null) throw new Error(`docs/refunds.md has no block file=${name}`);
  return match[1]!;
}

/** The `node refund-safely.mjs ...` lines the guide shows and the line printed under each. */
function shownRuns(): { args: string[]; printed: string }[] {
  return [...GUIDE.matchAll(/^node refund-safely\.mjs (.*)\n# (.*)$/gm)].map((match) => ({ args: match[1]!.split(' '), printed: match[2]! }));
}

/**
 * A proxy in front of the sandbox that forwards everything and, while `drop` is above 0, lets the
 * sandbox answer a refund and then cuts the connection instead of passing the answer on.
 */
async function droppingProxy(target: string): Promise<{ url: string; drop: number; server: Server }> {
  const proxy = { url: '', drop: 0, server: undefined as unknown as Server };
  proxy.server = createServer((req, res) => {
    const refund = req.url === '/api/refund' || req.url === '/merchant/credit/refundTransaction';
    const upstream = request(new URL(req.url ?? '/', target), { method: req.method, headers: req.headers }, (answer) => {
      if (refund && proxy.drop > 0) {
        proxy.drop -= 1;
        answer.resume();
        answer.on('end', () => res.socket?.destroy());
        return;
      }
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((done) => proxy.server.listen(0, '127.0.0.1', done));
  proxy.url = `http://127.0.0.1:${(proxy.server.address() as { port: number }).port}`;
  return proxy;
}

let work: string;
let t: TestSandbox;
let proxy: Awaited<ReturnType<typeof droppingProxy>>;
beforeAll(async () => {
  const exports = { './clients/web': './src/clients/web.js', './clients/sdk': './src/clients/sdk.js' };
  work = guideProject('paylater-refunds-guide-', exports, { 'refund-safely.mjs': fileBlock('refund-safely.mjs') });
  t = await startSandbox();
  proxy = await droppingProxy(t.url);
});
afterAll(async () => {
  await t?.close();
  await new Promise<void>((done) => (proxy ? proxy.server.close(() => done()) : done()));
  rmSync(work, { recursive: true, force: true });
});

async function refundSafely(args: string[], baseUrl = t.url): Promise<{ code: number; stdout: string }> {
  // The sample's own defaults are the published test credentials: only the address is set.
  const env = { PATH: process.env.PATH ?? '', PAYLATER_BASE_URL: baseUrl };
  try {
    const { stdout } = await run(process.execPath, ['refund-safely.mjs', ...args], { cwd: work, env });
    return { code: 0, stdout };
  } catch (error) {
    const failed = error as { code: number; stdout: string };
    return { code: failed.code, stdout: failed.stdout };
  }
}

let orders = 0;
/** A paid order of 150000 paise on `flow`; its id. */
async function paidOrder(flow: 'web' | 'sdk', paid = true): Promise<string> {
  const id = `refunds_guide_${flow}_${++orders}`;
  if (flow === 'web') {
    const answer = await t.web('POST', '/api/transaction', { id, amount: 150_000, user: { name: 'Asha Rao', phoneNumber: '+919000000001' } });
    expect(answer.status).toBe(200);
  } else {
    const answer = await t.sdk('/merchant/credit/initiateTransaction', { merchantTransactionId: id, userPhoneNumber: '+919000000001', userId: 'user_1', amount: 150_000 });
    expect(answer.status).toBe(201);
  }
  if (paid) expect((await t.request('POST', `/sandbox/${flow}/transactions/${id}/confirm`)).status).toBe(200);
  return id;
}

async function refunded(flow: 'web' | 'sdk', id: string): Promise<{ refundedAmount: number; refunds: number }> {
  const answer = await t.request('GET', `/sandbox/${flow}/transactions/${id}`);
  const body = answer.body as { refundedAmount: number; refunds: unknown[] };
  return { refundedAmount: body.refundedAmount, refunds: body.refunds.length };
}

describe('the refunds guide', () => {
  it('prints what the guide shows, run after run', async () => {
    const id = await paidOrder('web');
    const runs = shownRuns();
    expect(runs).toHaveLength(4);
    for (const shown of runs) {
      const result = await refundSafely(shown.args.map((arg) => (arg === 'order_6b0e…' ? id : arg)));
      expect(result.stdout.trim(), shown.args.join(' ')).toBe(shown.printed);
    }
    expect(await refunded('web', id)).toEqual({ refundedAmount: 150_000, refunds: 2 });
  });

  for (const flow of ['web', 'sdk'] as const) {
    it(`${flow}: a full refund whose answer is lost is sent again and refunds the order once`, async () => {
      const id = await paidOrder(flow);
      proxy.drop = 1;
      const result = await refundSafely([flow, id], proxy.url);
      expect(result.stdout).toBe('attempt 1: the answer was lost; a full refund is safe to send again\nrefunded: the whole order\n');
      expect(result.code).toBe(0);
      expect(proxy.drop).toBe(0);
      expect(await refunded(flow, id)).toEqual({ refundedAmount: 150_000, refunds: 1 });
    });

    it(`${flow}: a partial refund whose answer is lost is not sent again`, async () => {
      const id = await paidOrder(flow);
      proxy.drop = 1;
      const result = await refundSafely([flow, id, '50000'], proxy.url);
      expect(result).toEqual({ code: 3, stdout: 'unknown: the answer was lost; not sent again: reconcile it (docs/refunds.md)\n' });
      expect(await refunded(flow, id)).toEqual({ refundedAmount: 50_000, refunds: 1 });
    });
  }

  it('refunds nothing of a transaction that is not SUCCESS, and says why', async () => {
    const id = await paidOrder('sdk', false);
    expect(await refundSafely(['sdk', id])).toEqual({ code: 1, stdout: 'not refunded: the transaction is PENDING, not SUCCESS\n' });
    expect(await refundSafely(['web', 'no_such_order'])).toEqual({ code: 1, stdout: 'not refunded: the transaction is unknown to the service or unreachable, not SUCCESS\n' });
    expect((await refunded('sdk', id)).refundedAmount).toBe(0);
  });
});

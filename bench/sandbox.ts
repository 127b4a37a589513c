/**
 * The sandbox against the Prism mock on the same operations, with the same load generator
 * (autocannon, 20 connections) in the same run: a transaction read (gateway) and an SDK-flow
 * initiate (a new signed id per request, since the sandbox rejects duplicates).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { resolve } from 'node:path';
import autocannon from 'autocannon';
import { startMocks } from '../scripts/mock-servers.js';
import { createMerchantApiClient, createTransactionalApiClient, transactionalCredentials } from '../src/clients/gateway.js';
import { sdkSignature } from '../src/signature.js';

const root = resolve(import.meta.dirname, '..');
const CONNECTIONS = 20;
const SECONDS = 4;
const ROUNDS = 2;

export interface ServerFigures {
  operation: string;
  server: 'sandbox' | 'prism';
  requestsPerSecond: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

export interface SandboxFigures {
  rows: ServerFigures[];
  /** Per operation: sandbox requests/s ÷ Prism requests/s. */
  ratios: { operation: string; ratio: number; sandboxP99Ms: number }[];
}

/** Resolves once `url` answers; fails when `child` (the server) exits first or time runs out. */
export async function waitFor(url: string, child?: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child !== undefined && child.exitCode !== null) throw new Error(`the server for ${url} exited with code ${child.exitCode}`);
    try {
      await fetch(url);
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

function startSandbox(port: number): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'sandbox', '--port', String(port)], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

const PDF = Buffer.from('%PDF-1.4\n% bench\n').toString('base64');
const PARTNER = { id: 'partner_test', key: 'test_private_key' };

/** The headers of an SDK-flow call of the sandbox's test partner, signed over `body`. */
export function sdkHeaders(body: string): Record<string, string> {
  return { 'Content-Type': 'application/json', 'X-Partnerid': PARTNER.id, 'X-Signature': sdkSignature(body, PARTNER.key) };
}

/** autocannon's request of an SDK initiate: a new signed merchantTransactionId each time. */
export const SDK_INITIATE_REQUEST = {
  method: 'POST',
  path: '/merchant/credit/initiateTransaction',
  setupRequest(request: { method?: string; path?: string; headers?: Record<string, string>; body?: string }) {
    const body = JSON.stringify({ merchantTransactionId: `ord_${randomUUID().slice(0, 18)}`, userPhoneNumber: '+919000000001', userId: 'u_bench', amount: 250000 });
    return { ...request, body, headers: sdkHeaders(body) };
  },
};

/** A transaction to read on the sandbox: an enabled merchant and one transaction. */
async function sandboxTransaction(base: string): Promise<{ path: string; authorization: string }> {
  const merchants = createMerchantApiClient({ baseUrl: base, credentials: { username: 'pg_test', password: 'pg_test_secret' } });
  const id = `m_bench_${Date.now()}`;
  await merchants.POST('/api/merchant', {
    body: { merchant: { id, brandName: 'Bench', entityName: 'Bench Pvt Ltd', brandHomePageUrl: 'https://bench.example.in', mccCode: 5812 } },
  });
  for (const documentType of ['PAN', 'CANCELLED_CHEQUE'] as const) {
    await merchants.POST('/api/merchant/{id}/document', { params: { path: { id } }, body: { documentType, document: { type: 'base64', value: PDF } } });
  }
  await fetch(`${base}/sandbox/clock/advance`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"ms":600000}' });
  const merchant = await merchants.GET('/api/merchant/{id}', { params: { path: { id } } });
  const credentials = merchant.data ? transactionalCredentials(merchant.data.merchant) : undefined;
  if (credentials === undefined) throw new Error('the bench merchant was not enabled by the sandbox');
  const transactions = createTransactionalApiClient({ baseUrl: base, credentials });
  const created = await transactions.POST('/api/merchant/transaction', {
    body: { transaction: { id: 'txn_bench', amount: 150000 }, user: { name: 'Bench', phoneNumber: '+919000000001' }, deviceInformation: { userAgent: 'bench', ipAddress: '127.0.0.1' } },
  });
  if (created.response.status !== 200) throw new Error(`creating the bench transaction answered ${created.response.status}`);
  return { path: '/api/merchant/transaction/txn_bench', authorization: `Basic ${Buffer.from(`${credentials.username}:${credentials.password}`).toString('base64')}` };
}

async function load(url: string, operation: 'read' | 'initiate', read: { path: string; authorization: string }, duration = SECONDS) {
  if (operation === 'read') {
    return autocannon({ url: `${url}${read.path}`, connections: CONNECTIONS, duration, headers: { Authorization: read.authorization } });
  }
  return autocannon({ url, connections: CONNECTIONS, duration, requests: [SDK_INITIATE_REQUEST] });
}

export async function benchSandbox(): Promise<SandboxFigures> {
  const sandboxPort = 4500;
  const sandboxProcess = startSandbox(sandboxPort);
  const mocks = await startMocks({ families: ['gateway', 'sdk'], ports: { gateway: 4510, sdk: 4513 } });
  try {
    const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
    await waitFor(`${sandboxUrl}/sandbox/clock`);
    const sandboxRead = await sandboxTransaction(sandboxUrl);
    const prismRead = { path: '/api/merchant/transaction/txn_bench', authorization: `Basic ${Buffer.from('u:p').toString('base64')}` };
    const targets = {
      sandbox: { read: sandboxUrl, initiate: sandboxUrl, readRequest: sandboxRead },
      prism: { read: mocks.urls.gateway as string, initiate: mocks.urls.sdk as string, readRequest: prismRead },
    };
    const rows: ServerFigures[] = [];
    for (const operation of ['read', 'initiate'] as const) {
      // An unrecorded warm-up of each server, so that neither is measured while its JIT is cold.
      for (const server of ['sandbox', 'prism'] as const) await load(targets[server][operation], operation, targets[server].readRequest, 2);
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? (['sandbox', 'prism'] as const) : (['prism', 'sandbox'] as const);
        for (const server of order) {
          const target = targets[server];
          const result = await load(target[operation], operation, target.readRequest);
          rows.push({
            operation: operation === 'read' ? 'GET transaction' : 'SDK initiate',
            server,
            requestsPerSecond: result.requests.average,
            p99Ms: result.latency.p99,
            non2xx: result.non2xx,
            errors: result.errors + result.timeouts,
          });
        }
      }
    }
    const ratios = ['GET transaction', 'SDK initiate'].map((operation) => {
      const of = (server: string) => rows.filter((r) => r.operation === operation && r.server === server);
      const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
      return {
        operation,
        ratio: mean(of('sandbox').map((r) => r.requestsPerSecond)) / mean(of('prism').map((r) => r.requestsPerSecond)),
        sandboxP99Ms: Math.max(...of('sandbox').map((r) => r.p99Ms)),
      };
    });
    return { rows, ratios };
  } finally {
    sandboxProcess.kill('SIGTERM');
    await mocks.stop();
  }
}

/**
 * The sandbox against the limit of Node's HTTP and against the Prism mock, with the same load
 * generator (autocannon, 20 connections) in the same run, on three operations:
 * - `GET /sandbox/clock`: the cheapest endpoint (no authentication, no store, no contract);
 * - a transaction read (gateway, HTTP Basic);
 * - an SDK-flow initiate (a new signed id per request, since the sandbox rejects duplicates).
 * Each operation is also sent, request for request, to a bare `node:http` server that answers
 * every request with a small JSON (`node`): the sandbox's throughput divided by that server's is
 * how close the sandbox comes to what Node's HTTP itself costs. Prism serves the two contract
 * operations, in a process of its own (with its error proxies), as the sandbox and the bare server
 * are. Like for like: every server gets the same unrecorded 2 s warm-up, then the same rounds (20
 * connections, the same seconds, the same requests) in the same run, in alternating order; each
 * ratio is the median of the rounds' ratios ({@link ROUNDS}). Each sandbox is the built one `npm start` runs (its tree built first when stale). With
 * `--sandbox-before DIR` (a checkout of another commit, its `node_modules` in place), that tree's sandbox is measured beside this one (`before`), so that a
 * change is measured side by side in one run. Every server is its own process on a free port.
 * Beside each rate, the server process's CPU time per request (/proc/<pid>/stat): on a machine
 * shared with other work the rates move with the load, the CPU a request costs far less; the bare
 * server's ÷ the sandbox's is reported as a second ratio (Prism, several processes, has none).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import autocannon from 'autocannon';
import { createMerchantApiClient, createTransactionalApiClient, transactionalCredentials } from '../src/clients/gateway.js';
import { sdkSignature } from '../src/signature.js';
import { npmStartNodeOptions } from './start-options.js';
import { stopChild } from './attack/processes.js';
import { cpuMs } from './measure.js';

const root = resolve(import.meta.dirname, '..');
const CONNECTIONS = 20;
/**
 * Rounds of every server, each a load of SECONDS seconds, in alternating order: a ratio is taken
 * within a round, between loads seconds apart, and the median of the rounds' ratios is reported
 * (beside the ratio of the means). On this shared machine the host's load moves a server's rate by
 * a third from one load to the next (a bare server measured 32,278 then 24,508 req/s): a slow
 * spell then weighs on one round's ratio, not on the figure.
 */
const SECONDS = 3;
const ROUNDS = 5;

type ServerName = 'sandbox' | 'before' | 'node' | 'prism';
type OperationName = 'GET /sandbox/clock' | 'GET transaction' | 'SDK initiate';

export interface ServerFigures {
  operation: OperationName;
  server: ServerName;
  /** The round (0 to ROUNDS - 1) the load was in. */
  round: number;
  requestsPerSecond: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  /** The server process's CPU time per request, µs (undefined for Prism). */
  cpuMicroseconds: number | undefined;
}

export interface RatioFigures {
  operation: OperationName;
  /** Sandbox requests/s ÷ the bare Node server's, on the same requests: the median of the rounds' ratios. */
  ofNode: number;
  /** The same as the ratio of the rounds' mean rates (what earlier runs reported). */
  ofNodeOfMeans: number;
  /** Sandbox requests/s ÷ Prism's, the median of the rounds' (undefined where Prism does not serve the operation). */
  ofPrism: number | undefined;
  /** The `--sandbox-before` tree's sandbox requests/s ÷ the bare Node server's, the median of the rounds'. */
  beforeOfNode: number | undefined;
  /** The bare Node server's CPU time per request ÷ the sandbox's (1 would be the pipeline costing nothing). */
  cpuOfNode: number;
  /** The same for the `--sandbox-before` tree's sandbox. */
  beforeCpuOfNode: number | undefined;
  /** The worst p99 of the sandbox's rounds. */
  sandboxP99Ms: number;
  /** The median of the sandbox's rounds' p99s (a slow spell of the host lands in one round). */
  sandboxP99MedianMs: number;
  /** What `ofNode` must reach. */
  nodeTarget: number;
}

export interface SandboxFigures {
  rows: ServerFigures[];
  ratios: RatioFigures[];
}

/** What the sandbox ÷ bare Node ratio must reach: the cheapest endpoint 0.6x, an operation with real work 0.4x. */
const NODE_TARGETS: Record<OperationName, number> = { 'GET /sandbox/clock': 0.6, 'GET transaction': 0.4, 'SDK initiate': 0.4 };

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

/** `count` different ports free now (the kernel's choice), so that two benches on one machine do not collide. */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  const ports = await Promise.all(
    servers.map(
      (server) =>
        new Promise<number>((resolvePort, reject) => {
          server.once('error', reject);
          server.listen(0, '127.0.0.1', () => resolvePort((server.address() as { port: number }).port));
        }),
    ),
  );
  await Promise.all(servers.map((server) => new Promise((closed) => server.close(closed))));
  return ports;
}

/**
 * The tree at `cwd` built as `npm start` builds it: `dist/` rebuilt only when its inputs changed
 * (scripts/build-if-stale.ts), or with `npm run build` in a tree that has no such script.
 */
export async function buildTree(cwd = root): Promise<void> {
  const command = existsSync(resolve(cwd, 'scripts/build-if-stale.ts'))
    ? [process.execPath, ['--import', 'tsx', 'scripts/build-if-stale.ts']]
    : [process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'build', '--silent']];
  const child = spawn(command[0] as string, command[1] as string[], { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
  const code = await new Promise<number | null>((done) => child.on('exit', done));
  if (code !== 0) throw new Error(`building ${cwd} failed (${code})`);
}

/**
 * The sandbox of the tree at `cwd` as `npm start` runs it: the built `dist/cli/main.js sandbox`
 * with the start script's Node options, its log line per request written to a discarded stdout.
 */
export function startSandbox(
  port: number,
  cwd = root,
  extra: { nodeOptions?: string[]; args?: string[]; stdout?: number } = {},
): ChildProcess {
  const options = [...npmStartNodeOptions(resolve(cwd, 'package.json')), ...(extra.nodeOptions ?? [])];
  return spawn(process.execPath, [...options, 'dist/cli/main.js', 'sandbox', '--port', String(port), ...(extra.args ?? [])], {
    cwd,
    stdio: ['ignore', extra.stdout ?? 'ignore', 'inherit'],
  });
}

/** The baseline: Node's HTTP server answering every request with a small JSON, nothing else. */
export const BARE_SERVER = `
const { createServer } = require('node:http');
createServer((request, response) => {
  const body = JSON.stringify({ ok: true, at: Date.now() });
  response.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
  response.end(body);
}).listen(Number(process.argv[1]), '127.0.0.1');
`;

/**
 * The Prism mock (gateway and SDK) in a process of its own (bench/mock-process.ts): its error
 * proxies then have their own event loop, as the sandbox and the bare server do, instead of sharing
 * the load generator's.
 */
function startMockProcess(gateway: number, sdk: number): ChildProcess {
  return spawn(process.execPath, ['--import', 'tsx', 'bench/mock-process.ts', String(gateway), String(sdk)], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
}

/** Resolves once the mock process printed `ready`; fails when it exits first. */
function mockReady(child: ChildProcess): Promise<void> {
  return new Promise((ready, failed) => {
    let text = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (text.includes('ready\n')) ready();
    });
    child.once('exit', (code) => failed(new Error(`the Prism mock process exited with code ${code} before it was ready`)));
  });
}

function startBareServer(port: number): ChildProcess {
  return spawn(process.execPath, ['-e', BARE_SERVER, String(port)], { stdio: ['ignore', 'ignore', 'inherit'] });
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
export async function sandboxTransaction(base: string): Promise<{ path: string; authorization: string }> {
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

interface Target {
  url: string;
  /** The transaction read's path and Authorization. */
  read: { path: string; authorization: string };
}

/**
 * After Prism's load, Prism goes on answering what it queued (its p99 is seconds) and takes the CPU
 * from whichever server is measured next: it is given this long to finish first.
 */
const PRISM_SETTLE_MS = 3000;
/** A pause after a sandbox's initiates expired, for its trimming and collector to finish before the next server's round (so as not to take that server's CPU, as Prism's backlog would). */
const EXPIRY_SETTLE_MS = 2000;

async function load(target: Target, operation: OperationName, duration = SECONDS) {
  if (operation === 'GET /sandbox/clock') return autocannon({ url: `${target.url}/sandbox/clock`, connections: CONNECTIONS, duration });
  if (operation === 'GET transaction') {
    return autocannon({ url: `${target.url}${target.read.path}`, connections: CONNECTIONS, duration, headers: { Authorization: target.read.authorization } });
  }
  return autocannon({ url: target.url, connections: CONNECTIONS, duration, requests: [SDK_INITIATE_REQUEST] });
}

/**
 * After a round of initiates on a sandbox, its clock moved past their expiry (an SDK transaction
 * expires 60 s after it was made), and a pause while it trims them: a sandbox holds at most 200,000
 * pending transactions and answers 429 past them, and five rounds of 3 s at 13,000 initiates a
 * second reach that (the last round measured 7,768 of those answers).
 */
export async function expireInitiates(base: string): Promise<void> {
  const answer = await fetch(`${base}/sandbox/clock/advance`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"ms":61000}' });
  if (answer.status !== 200) throw new Error(`the clock's advance after the initiates answered ${answer.status}: ${await answer.text()}`);
  await new Promise((settled) => setTimeout(settled, EXPIRY_SETTLE_MS));
}

export async function benchSandbox(options: { before?: string } = {}): Promise<SandboxFigures> {
  const [sandbox, before, node, gateway, sdk] = await freePorts(5);
  const ports = { sandbox: sandbox!, before: before!, node: node!, gateway: gateway!, sdk: sdk! };
  const children: ChildProcess[] = [];
  const spawned = (child: ChildProcess) => {
    children.push(child);
    return child;
  };
  await buildTree();
  if (options.before !== undefined) await buildTree(resolve(options.before));
  const sandboxProcess = spawned(startSandbox(ports.sandbox));
  const beforeProcess = options.before === undefined ? undefined : spawned(startSandbox(ports.before, resolve(options.before)));
  const nodeProcess = spawned(startBareServer(ports.node));
  const mockProcess = spawned(startMockProcess(ports.gateway, ports.sdk));
  const mocks = { urls: { gateway: `http://127.0.0.1:${ports.gateway}`, sdk: `http://127.0.0.1:${ports.sdk}` } };
  try {
    await mockReady(mockProcess);
    const url = (port: number) => `http://127.0.0.1:${port}`;
    await waitFor(`${url(ports.sandbox)}/sandbox/clock`, sandboxProcess);
    await waitFor(url(ports.node), nodeProcess);
    const prismRead = { path: '/api/merchant/transaction/txn_bench', authorization: `Basic ${Buffer.from('u:p').toString('base64')}` };
    const sandboxRead = await sandboxTransaction(url(ports.sandbox));
    const targets = new Map<ServerName, Record<'read' | 'initiate', Target>>();
    const same = (target: Target) => ({ read: target, initiate: target });
    targets.set('sandbox', same({ url: url(ports.sandbox), read: sandboxRead }));
    if (beforeProcess !== undefined) {
      await waitFor(`${url(ports.before)}/sandbox/clock`, beforeProcess);
      targets.set('before', same({ url: url(ports.before), read: await sandboxTransaction(url(ports.before)) }));
    }
    // The bare server gets the sandbox's requests, byte for byte.
    targets.set('node', same({ url: url(ports.node), read: sandboxRead }));
    targets.set('prism', {
      read: { url: mocks.urls.gateway as string, read: prismRead },
      initiate: { url: mocks.urls.sdk as string, read: prismRead },
    });
    const pids = new Map<ServerName, number | undefined>([
      ['sandbox', sandboxProcess.pid],
      ['before', beforeProcess?.pid],
      ['node', nodeProcess.pid],
    ]);
    const rows: ServerFigures[] = [];
    const operations: OperationName[] = ['GET /sandbox/clock', 'GET transaction', 'SDK initiate'];
    for (const operation of operations) {
      const servers = [...targets.keys()].filter((server) => server !== 'prism' || operation !== 'GET /sandbox/clock');
      const targetOf = (server: ServerName) => targets.get(server)![operation === 'SDK initiate' ? 'initiate' : 'read'];
      // An unrecorded warm-up of each server, so that none is measured while its JIT is cold.
      const measure = async (server: ServerName, duration?: number) => {
        const result = await load(targetOf(server), operation, duration);
        if (server === 'prism') await new Promise((settled) => setTimeout(settled, PRISM_SETTLE_MS));
        if (operation === 'SDK initiate' && (server === 'sandbox' || server === 'before')) await expireInitiates(targetOf(server).url);
        return result;
      };
      for (const server of servers) await measure(server, 2);
      for (let round = 0; round < ROUNDS; round++) {
        // Alternate the order, so that no server is always measured first (or last) on a noisy machine.
        const order = round % 2 === 0 ? servers : [...servers].reverse();
        for (const server of order) {
          const pid = pids.get(server);
          const cpuBefore = pid === undefined ? 0 : cpuMs(pid);
          const result = await measure(server);
          const cpu = pid === undefined ? undefined : cpuMs(pid) - cpuBefore;
          rows.push({
            operation,
            server,
            round,
            requestsPerSecond: result.requests.average,
            p99Ms: result.latency.p99,
            non2xx: result.non2xx,
            errors: result.errors + result.timeouts,
            cpuMicroseconds: cpu === undefined ? undefined : (cpu * 1000) / Math.max(1, result.requests.total),
          });
        }
      }
    }
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const median = (values: number[]) => {
      const sorted = [...values].sort((a, b) => a - b);
      const middle = Math.floor(sorted.length / 2);
      return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
    };
    const ratios = operations.map((operation): RatioFigures => {
      const of = (server: ServerName) => rows.filter((r) => r.operation === operation && r.server === server);
      const throughput = (server: ServerName) => (of(server).length === 0 ? undefined : mean(of(server).map((r) => r.requestsPerSecond)));
      // Within each round, `server`'s rate ÷ `other`'s; the median of those.
      const perRound = (server: ServerName, other: ServerName) => {
        if (of(server).length === 0 || of(other).length === 0) return undefined;
        const ratios = of(server).map((row) => row.requestsPerSecond / of(other).find((o) => o.round === row.round)!.requestsPerSecond);
        return median(ratios);
      };
      const cpu = (server: ServerName) => (of(server).length === 0 ? undefined : mean(of(server).map((r) => r.cpuMicroseconds ?? 0)));
      const nodeCpu = cpu('node')!;
      const beforeCpu = cpu('before');
      return {
        operation,
        ofNode: perRound('sandbox', 'node')!,
        ofNodeOfMeans: throughput('sandbox')! / throughput('node')!,
        ofPrism: perRound('sandbox', 'prism'),
        beforeOfNode: perRound('before', 'node'),
        cpuOfNode: nodeCpu / cpu('sandbox')!,
        beforeCpuOfNode: beforeCpu === undefined ? undefined : nodeCpu / beforeCpu,
        sandboxP99Ms: Math.max(...of('sandbox').map((r) => r.p99Ms)),
        sandboxP99MedianMs: median(of('sandbox').map((r) => r.p99Ms)),
        nodeTarget: NODE_TARGETS[operation],
      };
    });
    return { rows, ratios };
  } finally {
    for (const child of children) child.kill('SIGTERM');
    // Its Prism processes stop with it (SIGTERM); SIGKILL only if that takes over 10 s.
    await stopChild(mockProcess, 10_000);
  }
}

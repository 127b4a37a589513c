/**
 * `npm run bench -- --only soak [--transactions N] [--timers N]`: the sandbox under a payment
 * gateway's load test. N transactions (default 1,000,000) across the four families go through one
 * sandbox process, with webhook receivers answering every event:
 *   - SDK: signed initiate, the user's confirmation (webhook), every 10th a refund;
 *   - web: signed initiate, the user's confirmation (webhook);
 *   - gateway: a transaction created FAILED at once (a risk-declined user; webhook), every 100th
 *     followed by a read of the transaction list, every 1,000th by a settlement read;
 *   - extras: a data push for one of 50,000 phone numbers.
 * The sandbox runs as `npm start` runs it (built first, then `node` with the start script's heap
 * flags, bench/start-options.ts, and `dist/cli/main.js sandbox`).
 * The load generator runs a fixed number of requests at once and keeps only the latencies of the
 * first and the last 10 % of the transactions (preallocated arrays): its own memory is bounded.
 *
 * It prints requests/s and p99 latency of the first and the last 10 % (target: the last within
 * 1.5x of the first), the sandbox's RSS at the end (target: under 500 MB with the default
 * retention), and the time of one clock advance that fires `--timers` expiries (default 100,000;
 * target: under 1 s); also the RSS before the advance's transactions were initiated and after 10 s
 * without requests at the end. `--sandbox-node-options="--cpu-prof"` (with `=`) passes options to the
 * sandbox's Node process (to profile it). Before that, an in-process measurement of the memory one transaction takes
 * in the sandbox (its records, its webhook delivery and the indexes), after garbage collection.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { Agent, createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createSandbox } from '../src/sandbox/server.js';
import { sdkSignature, webSignature } from '../src/signature.js';
import { npmStartNodeOptions } from './start-options.js';

const root = resolve(import.meta.dirname, '..');
/**
 * Requests in flight at once. With 8 webhook attempts at once per receiver (the default), the
 * sandbox answers requests and sends webhooks in about the ratio of these numbers: 16 lets the
 * partner's receiver (half an event per transaction against 1.5 requests) keep up.
 */
const CONCURRENCY = 16;
const PARTNER = { id: 'partner_test', key: 'test_private_key' };
const MERCHANT_API = `Basic ${Buffer.from('pg_test:pg_test_secret').toString('base64')}`;
const EXTRAS = `Basic ${Buffer.from('extras_test:extras_test_secret').toString('base64')}`;
const PDF = Buffer.from('%PDF-1.4\n% soak\n').toString('base64');
const DEVICE = { userAgent: 'soak', ipAddress: '127.0.0.1' };

export interface SoakOptions {
  transactions: number;
  timers: number;
  log?: (line: string) => void;
  /** Options for the sandbox's Node process, e.g. `--cpu-prof` to profile it. */
  sandboxNodeOptions?: readonly string[];
}

export interface WindowFigures {
  requests: number;
  requestsPerSecond: number;
  p99Ms: number;
}

export interface SoakFigures {
  transactions: number;
  requests: number;
  failures: number;
  seconds: number;
  first: WindowFigures;
  last: WindowFigures;
  webhooksExpected: number;
  webhooksReceived: number;
  rssEndMb: number;
  /** The RSS before the `timers` pending transactions were initiated, and after 10 s without requests at the end. */
  rssBeforeAdvanceMb: number;
  rssIdleMb: number;
  /** `cpuMs`: the sandbox process's CPU time during the advance (all its threads, the GC's included). */
  advance: { timers: number; ms: number; cpuMs: number; webhooks: number };
  memory: { transactions: number; bytesPerTransaction: number };
}

// ---------------------------------------------------------------------------------------------
// HTTP with a keep-alive pool: the load generator's own cost stays small and bounded.

export interface Target {
  host: string;
  port: number;
  agent: Agent;
}

export interface Answer {
  status: number;
  body: string;
}

export function target(url: string, sockets: number): Target {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port), agent: new Agent({ keepAlive: true, maxSockets: sockets }) };
}

export function send(to: Target, method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolveAnswer, reject) => {
    const request = httpRequest(
      {
        host: to.host,
        port: to.port,
        method,
        path,
        agent: to.agent,
        headers: body === undefined ? headers : { ...headers, 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
      },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => resolveAnswer({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}

// ---------------------------------------------------------------------------------------------
// Receivers: answer 200 to every webhook and count them.

export async function startReceiver(): Promise<{ url: string; count: () => number; close: () => Promise<void> }> {
  let count = 0;
  const server: Server = createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      count++;
      response.writeHead(200, { 'Content-Length': '2' }).end('ok');
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    count: () => count,
    close: () =>
      new Promise<void>((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

// ---------------------------------------------------------------------------------------------
// The work of one transaction

export interface Driver {
  sandbox: Target;
  gatewayAuth: string;
  run: string;
}

/** Runs transaction `index`; calls `record` with the latency of each request. Returns the webhooks it causes. */
async function transaction(driver: Driver, index: number, record: (ms: number, ok: boolean) => void): Promise<number> {
  const { sandbox, run } = driver;
  const timed = async (method: string, path: string, headers: Record<string, string>, body?: string): Promise<Answer> => {
    const started = performance.now();
    try {
      const answer = await send(sandbox, method, path, headers, body);
      record(performance.now() - started, answer.status >= 200 && answer.status < 300);
      return answer;
    } catch (error) {
      record(performance.now() - started, false);
      return { status: 0, body: String(error) };
    }
  };
  const id = `${run}_${index}`;
  switch (index % 4) {
    case 0: {
      const body = JSON.stringify({ merchantTransactionId: id, userPhoneNumber: '+919000000001', userId: 'u_soak', amount: 250_000 });
      await timed('POST', '/merchant/credit/initiateTransaction', { 'X-Partnerid': PARTNER.id, 'X-Signature': sdkSignature(body, PARTNER.key) }, body);
      await timed('POST', `/sandbox/sdk/transactions/${id}/confirm`, {});
      if (index % 40 === 0) {
        const refund = JSON.stringify({ merchantTransactionId: id, amount: 50_000 });
        await timed('POST', '/merchant/credit/refundTransaction', { 'X-Partnerid': PARTNER.id, 'X-Signature': sdkSignature(refund, PARTNER.key) }, refund);
      }
      return 1;
    }
    case 1: {
      const body = JSON.stringify({ id, amount: 150_000, user: { name: 'Soak', phoneNumber: '+919000000001' } });
      await timed('POST', '/api/transaction', { 'X-Partner-Id': PARTNER.id, 'X-Signature': webSignature(body, '/api/transaction', PARTNER.key) }, body);
      await timed('POST', `/sandbox/web/transactions/${id}/confirm`, {});
      return 1;
    }
    case 2: {
      const body = JSON.stringify({ transaction: { id, amount: 10_000 }, user: { name: 'Soak', phoneNumber: '+919000000002' }, deviceInformation: DEVICE });
      await timed('POST', '/api/merchant/transaction', { Authorization: driver.gatewayAuth }, body);
      if (index % 400 === 2) await timed('GET', '/api/merchant/transaction?limit=20&status=FAILED', { Authorization: driver.gatewayAuth });
      if (index % 4000 === 2) await timed('GET', '/api/merchant/settlement', { Authorization: driver.gatewayAuth });
      return 1;
    }
    default: {
      const phone = `+9198${String(index % 50_000).padStart(8, '0')}`;
      const body = JSON.stringify({ userPhoneNumber: phone, data: { orderId: id, amount: 125_000 } });
      await timed('POST', '/service/database/merchant/user/feed/merchant-data', { Authorization: EXTRAS }, body);
      return 0;
    }
  }
}

/**
 * An enabled gateway merchant whose webhooks go to `webhookUrl` (none: its transactions' own, or
 * recorded `not_sent`); answers its Transactional API Basic header.
 */
export async function onboard(sandbox: Target, webhookUrl: string | undefined, run: string): Promise<string> {
  const id = `m_${run}`;
  const created = await send(sandbox, 'POST', '/api/merchant', { Authorization: MERCHANT_API }, JSON.stringify({
    merchant: { id, brandName: 'Soak', entityName: 'Soak Pvt Ltd', brandHomePageUrl: 'https://soak.example.in', mccCode: 5812, defaultWebhookUrl: webhookUrl },
  }));
  if (created.status !== 201) throw new Error(`creating the soak merchant answered ${created.status}: ${created.body}`);
  for (const documentType of ['PAN', 'CANCELLED_CHEQUE']) {
    await send(sandbox, 'POST', `/api/merchant/${id}/document`, { Authorization: MERCHANT_API }, JSON.stringify({ documentType, document: { type: 'base64', value: PDF } }));
  }
  await send(sandbox, 'POST', `/sandbox/gateway/merchants/${id}/verify`, {});
  const merchant = JSON.parse((await send(sandbox, 'GET', `/api/merchant/${id}`, { Authorization: MERCHANT_API })).body) as {
    merchant: { basicAuthDetails?: { username: string; password: string } };
  };
  const details = merchant.merchant.basicAuthDetails;
  if (details === undefined) throw new Error('the soak merchant was not enabled');
  return `Basic ${Buffer.from(`${details.username}:${details.password}`).toString('base64')}`;
}

/** Runs `count` transactions, CONCURRENCY requests at once; `onLatency` sees each request. */
export async function drive(
  driver: Driver,
  count: number,
  onLatency: (index: number, ms: number, ok: boolean) => void,
  progress?: (done: number) => void,
): Promise<number> {
  let next = 0;
  let done = 0;
  let webhooks = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const index = next++;
        const caused = await transaction(driver, index, (ms, ok) => onLatency(index, ms, ok));
        webhooks += caused;
        done++;
        progress?.(done);
      }
    }),
  );
  return webhooks;
}

/** Initiates `count` web transactions and leaves them pending. */
async function initiateWeb(sandbox: Target, run: string, count: number): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < count) {
        const id = `${run}_${next++}`;
        const body = JSON.stringify({ id, amount: 150_000, user: { name: 'Soak', phoneNumber: '+919000000001' } });
        const answer = await send(sandbox, 'POST', '/api/transaction', { 'X-Partner-Id': PARTNER.id, 'X-Signature': webSignature(body, '/api/transaction', PARTNER.key) }, body);
        if (answer.status !== 200) throw new Error(`a web initiate answered ${answer.status}: ${answer.body}`);
      }
    }),
  );
}

/** Collects the latencies of a range of transactions in a preallocated array. */
class Window {
  private readonly latencies: Float64Array;
  private count = 0;
  private started = Number.POSITIVE_INFINITY;
  private ended = 0;

  constructor(
    readonly from: number,
    readonly to: number,
  ) {
    // At most three requests per transaction.
    this.latencies = new Float64Array(Math.max(1, (to - from) * 3));
  }

  covers(index: number): boolean {
    return index >= this.from && index < this.to;
  }

  add(ms: number): void {
    const now = performance.now();
    this.started = Math.min(this.started, now - ms);
    this.ended = Math.max(this.ended, now);
    if (this.count < this.latencies.length) this.latencies[this.count++] = ms;
  }

  figures(): WindowFigures {
    const sorted = this.latencies.slice(0, this.count).sort();
    const p99 = sorted.length === 0 ? 0 : sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.99) - 1)]!;
    const seconds = Math.max(1e-3, (this.ended - this.started) / 1000);
    return { requests: this.count, requestsPerSecond: this.count / seconds, p99Ms: p99 };
  }
}

/**
 * CPU time the process used so far, in ms (user + system, from /proc; 10 ms steps): on a shared
 * machine the advance's wall time also counts other processes' turns, its CPU time does not.
 */
function cpuMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Fields 14 and 15 of stat (utime, stime) in clock ticks of 1/100 s.
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

function rssMb(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = Number(/VmRSS:\s+([0-9]+) kB/.exec(status)?.[1] ?? Number.NaN);
  return kb / 1024;
}

/** Builds the package as `npm start` does, so that the sandbox measured is the one users run. */
export async function build(): Promise<void> {
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const child = spawn(npm, ['run', 'build', '--silent'], { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const code = await new Promise<number | null>((done) => child.once('exit', done));
  if (code !== 0) throw new Error(`npm run build failed (${code})`);
}

async function startSandboxProcess(webhookUrl: string, nodeOptions: readonly string[]): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [...npmStartNodeOptions(), ...nodeOptions, 'dist/cli/main.js', 'sandbox', '--port', '0', '--quiet', '--webhook-url', webhookUrl],
    { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const url = await new Promise<string>((found, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error('the sandbox did not start within 60 s')), 60_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const match = /listening on (http:\/\/[^\s]+)/.exec(text);
      if (match !== null) {
        clearTimeout(timer);
        found(match[1]!);
      }
    });
    child.once('exit', (code) => reject(new Error(`the sandbox exited with ${code}`)));
  });
  child.stdout!.resume();
  return { child, url };
}

async function waitUntil(check: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) return false;
    await new Promise((done) => setTimeout(done, 100));
  }
  return true;
}

/** The memory one mixed transaction takes in an in-process sandbox, after garbage collection. */
async function measureMemory(count: number): Promise<{ transactions: number; bytesPerTransaction: number }> {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  const receiver = await startReceiver();
  const sandbox = await createSandbox({ config: { partner: { webhookUrl: receiver.url } }, logger: { info() {}, warn() {}, error() {} } });
  const url = await sandbox.listen(0, '127.0.0.1');
  const to = target(url, CONCURRENCY);
  try {
    const run = `mem${Date.now().toString(36)}`;
    const driver: Driver = { sandbox: to, gatewayAuth: await onboard(to, receiver.url, run), run };
    // A warm-up that is not counted (code, caches), then the measured transactions.
    await drive({ ...driver, run: `${run}w` }, 2_000, () => undefined);
    await sandbox.deliveries.idle();
    gc();
    const before = process.memoryUsage().heapUsed;
    await drive(driver, count, () => undefined);
    await waitUntil(() => sandbox.deliveries.pendingCount === 0, 60_000);
    await sandbox.deliveries.idle();
    gc();
    const after = process.memoryUsage().heapUsed;
    return { transactions: count, bytesPerTransaction: (after - before) / count };
  } finally {
    to.agent.destroy();
    await sandbox.close();
    await receiver.close();
  }
}

export async function benchSoak(options: SoakOptions): Promise<SoakFigures> {
  const log = options.log ?? (() => undefined);
  const count = options.transactions;
  const memory = await measureMemory(Math.min(20_000, Math.max(1_000, Math.floor(count / 10))));
  log(`  memory: ${memory.bytesPerTransaction.toFixed(0)} bytes per transaction (${memory.transactions} in process, after GC)`);

  await build();
  const partner = await startReceiver();
  const merchant = await startReceiver();
  const { child, url } = await startSandboxProcess(partner.url, options.sandboxNodeOptions ?? []);
  log(`  sandbox (dist/, as npm start runs it) at ${url}, RSS ${rssMb(child.pid!).toFixed(0)} MB`);
  const sandbox = target(url, CONCURRENCY);
  try {
    const run = `s${Date.now().toString(36)}`;
    const driver: Driver = { sandbox, gatewayAuth: await onboard(sandbox, merchant.url, run), run };
    // An unrecorded warm-up, so that the first 10 % are not measured while the JIT is cold.
    const warmUp = Math.min(5_000, Math.max(400, Math.floor(count / 20)));
    const warmWebhooks = await drive({ ...driver, run: `${run}w` }, warmUp, () => undefined);
    const tenth = Math.max(1, Math.floor(count / 10));
    const first = new Window(0, tenth);
    const last = new Window(count - tenth, count);
    let requests = 0;
    let failures = 0;
    let reported = 0;
    const started = performance.now();
    const webhooksExpected = await drive(
      driver,
      count,
      (index, ms, ok) => {
        requests++;
        if (!ok) failures++;
        if (first.covers(index)) first.add(ms);
        else if (last.covers(index)) last.add(ms);
      },
      (done) => {
        if (done >= reported + tenth) {
          reported = done;
          log(`  ${done} transactions, ${requests} requests, ${((performance.now() - started) / 1000).toFixed(0)} s, sandbox RSS ${rssMb(child.pid!).toFixed(0)} MB`);
        }
      },
    );
    const seconds = (performance.now() - started) / 1000;
    const received = () => partner.count() + merchant.count() - warmWebhooks;
    await waitUntil(() => received() >= webhooksExpected, 300_000);
    const webhooksReceived = received();

    // The clock: `timers` pending web transactions (15-minute expiry) expire in one advance.
    const timers = options.timers;
    log(`  ${webhooksReceived} of ${webhooksExpected} webhooks received; initiating ${timers} web transactions to expire`);
    const rssBeforeAdvanceMb = rssMb(child.pid!);
    await initiateWeb(sandbox, `${run}t`, timers);
    const advanceStarted = performance.now();
    const cpuBefore = cpuMs(child.pid!);
    const advanced = await send(sandbox, 'POST', '/sandbox/clock/advance', {}, JSON.stringify({ ms: 15 * 60_000 + 1_000 }));
    const advanceMs = performance.now() - advanceStarted;
    const advanceCpuMs = cpuMs(child.pid!) - cpuBefore;
    if (advanced.status !== 200) throw new Error(`the advance answered ${advanced.status}: ${advanced.body}`);
    // Every expiry sends a webhook; beyond a receiver's backlog limit (20,000) they are recorded
    // not_sent. Wait until they all arrived, or until no more arrive.
    let seen = -1;
    let quietSince = Date.now();
    await waitUntil(() => {
      const now = received();
      if (now !== seen) {
        seen = now;
        quietSince = Date.now();
      }
      return now >= webhooksReceived + timers || Date.now() - quietSince > 3_000;
    }, 300_000);
    const expiryWebhooks = received() - webhooksReceived;
    const rssEndMb = rssMb(child.pid!);
    // Then nothing for 10 s: what the sandbox holds once its garbage collector has caught up.
    await new Promise((done) => setTimeout(done, 10_000));
    const rssIdleMb = rssMb(child.pid!);
    return {
      transactions: count,
      requests,
      failures,
      seconds,
      first: first.figures(),
      last: last.figures(),
      webhooksExpected,
      webhooksReceived,
      rssEndMb,
      rssBeforeAdvanceMb,
      rssIdleMb,
      advance: { timers, ms: advanceMs, cpuMs: advanceCpuMs, webhooks: expiryWebhooks },
      memory,
    };
  } finally {
    sandbox.agent.destroy();
    child.kill('SIGTERM');
    await partner.close();
    await merchant.close();
  }
}

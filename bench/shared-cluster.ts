/**
 * What the shared sandbox's benches (bench/shared.ts, bench/shared-faults.ts) drive, all from the
 * outside so that they measure any design of the shared store unchanged: `paylater sandbox
 * --database-url` processes started as `npm start` runs them (from the sources, through tsx, so that
 * no build is needed), signed HTTP calls to them, a webhook receiver that checks every copy's
 * signature, probes that time a cheap request sent at an interval, and plain SQL on the database
 * for what no endpoint answers (commits, deliveries by status). "The writer", where a case needs
 * one, is simply the process started first.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Worker } from 'node:worker_threads';
import { resolve } from 'node:path';
import pg from 'pg';
import { verifySdkSignature, webSignature } from '../src/signature.js';
import { TEST_CREDENTIALS } from '../src/sandbox/fixtures.js';
import { startOnFreePort, stopChild } from '../test/support/processes.js';
import { sdkHeaders } from './sandbox.js';
import { npmStartNodeOptions } from './start-options.js';

const root = resolve(import.meta.dirname, '..');
const PARTNER = TEST_CREDENTIALS.partner;

export interface SandboxProcess {
  url: string;
  child: ChildProcess;
  /** The last 8,000 characters it wrote. */
  output(): string;
  alive(): boolean;
  /** From the spawn to its "listening" line. */
  readyMs: number;
}

/**
 * A `paylater sandbox` process on a free port (memory without `databaseUrl`), resolved once it says
 * it listens. One process, not one that starts the sandbox as its child, so that SIGKILL kills the
 * sandbox itself.
 */
export async function startSandboxProcess(databaseUrl?: string, args: string[] = [], timeoutMs = 300_000): Promise<SandboxProcess> {
  const spawned = performance.now();
  const started = await startOnFreePort(
    (port) => {
      const argv = [...npmStartNodeOptions(), '--import', 'tsx', 'src/cli/main.ts', 'sandbox', '--port', String(port), '--quiet', ...args];
      if (databaseUrl !== undefined) argv.push('--database-url', databaseUrl);
      return spawn(process.execPath, argv, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NO_COLOR: '1' } });
    },
    { ready: /listening on http/, timeoutMs },
  );
  const child = started.child;
  return {
    url: `http://127.0.0.1:${started.port}`,
    child,
    output: started.output,
    alive: () => child.exitCode === null && child.signalCode === null,
    readyMs: performance.now() - spawned,
  };
}

export async function stopAll(processes: (SandboxProcess | undefined)[]): Promise<void> {
  await Promise.all(processes.map((p) => (p === undefined ? undefined : stopChild(p.child))));
}

export interface Answer {
  /** 0: no HTTP answer at all (refused, reset, timed out). */
  status: number;
  retryAfter: string | null;
  body: Record<string, unknown>;
  ms: number;
}

/** One request; never throws: a connection that fails is status 0 with the cause in `body.error`. */
export async function call(url: string, path: string, body?: string, headers: Record<string, string> = {}, method = 'POST'): Promise<Answer> {
  const sent = performance.now();
  try {
    const response = await fetch(`${url}${path}`, {
      method,
      headers: { 'Content-Type': 'application/json', ...headers },
      ...(body === undefined ? {} : { body }),
      signal: AbortSignal.timeout(120_000),
    });
    const text = await response.text();
    let parsed: Record<string, unknown>;
    try {
      parsed = JSON.parse(text) as Record<string, unknown>;
    } catch {
      parsed = { text: text.slice(0, 200) };
    }
    return { status: response.status, retryAfter: response.headers.get('retry-after'), body: parsed, ms: performance.now() - sent };
  } catch (error) {
    return { status: 0, retryAfter: null, body: { error: (error as Error).message }, ms: performance.now() - sent };
  }
}

/** A signed SDK-flow call of the test partner. */
export function sdk(url: string, path: string, body: unknown): Promise<Answer> {
  const text = JSON.stringify(body);
  return call(url, path, text, sdkHeaders(text));
}

export const initiateOn = (url: string, id: string, amount = 10_000): Promise<Answer> =>
  sdk(url, '/merchant/credit/initiateTransaction', { merchantTransactionId: id, userPhoneNumber: '+919000000001', userId: 'u_bench', amount });

export const statusOn = (url: string, id: string): Promise<Answer> => sdk(url, '/merchant/credit/checkTransactionStatus', { merchantTransactionId: id });

/** A web-flow initiate (it expires after 15 minutes of virtual time, where an SDK one expires after 60 s). */
export function webInitiateOn(url: string, id: string): Promise<Answer> {
  const body = JSON.stringify({ id, amount: 150_000, user: { name: 'Bench', phoneNumber: '+919000000001' } });
  return call(url, '/api/transaction', body, { 'X-Partner-Id': PARTNER.id, 'X-Signature': webSignature(body, '/api/transaction', PARTNER.privateKey) });
}

/** Runs `task(0..count-1)` with `concurrency` at a time. */
export async function inParallel(count: number, concurrency: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, count) }, async () => {
      while (next < count) await task(next++);
    }),
  );
}

export const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

export async function until(check: () => boolean | Promise<boolean>, timeoutMs: number, everyMs = 100): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) return false;
    await sleep(everyMs);
  }
  return true;
}

export interface ProbeFigures {
  latencies: number[];
  maxMs: number;
  medianMs: number;
  /** Probes answered anything but 2xx, or not at all. */
  failed: number;
}

/**
 * The probe's loop, in a worker thread of its own: its latencies are not those of the bench's
 * main thread, whose collector (its heap holds what the load before left: scavenges of up to 15 ms
 * were seen during an advance) would otherwise be counted as the sandbox's. It sends the same signed
 * request again `everyMs` after each answer, on one kept-alive connection, until told to stop. A
 * first request, not counted, opens the connection and warms the worker before it says it is ready,
 * so that neither its start nor the connection's falls in what is measured.
 */
const PROBE_WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { url, body, headers, everyMs } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
let running = true;
parentPort.once('message', () => { running = false; });
const once = () => new Promise((resolve) => {
  const sent = performance.now();
  const request = http.request(url, { method: 'POST', agent, headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body), ...headers } }, (response) => {
    response.resume();
    response.on('end', () => resolve([response.statusCode, performance.now() - sent]));
    response.on('error', () => resolve([0, performance.now() - sent]));
  });
  request.setTimeout(120000, () => request.destroy());
  request.on('error', () => resolve([0, performance.now() - sent]));
  request.end(body);
});
(async () => {
  const latencies = [];
  let failed = 0;
  await once();
  parentPort.postMessage('ready');
  while (running) {
    const [status, ms] = await once();
    latencies.push(ms);
    if (status < 200 || status > 299) failed += 1;
    await new Promise((done) => setTimeout(done, everyMs));
  }
  agent.destroy();
  parentPort.postMessage({ latencies, failed });
})();
`;

/**
 * Checks the status of the SDK transaction `id` on `url` again `everyMs` after each answer until
 * `stop()`, from a worker thread; every answer's latency. Answers once the worker is ready.
 */
export async function probeStatus(url: string, id: string, everyMs: number): Promise<{ stop(): Promise<ProbeFigures> }> {
  const body = JSON.stringify({ merchantTransactionId: id });
  const worker = new Worker(PROBE_WORKER, {
    eval: true,
    workerData: { url: `${url}/merchant/credit/checkTransactionStatus`, body, headers: sdkHeaders(body), everyMs },
  });
  let ready: () => void = () => undefined;
  const started = new Promise<void>((resolveStarted) => (ready = resolveStarted));
  const result = new Promise<{ latencies: number[]; failed: number }>((resolveResult, rejectResult) => {
    worker.on('message', (message: 'ready' | { latencies: number[]; failed: number }) => (message === 'ready' ? ready() : resolveResult(message)));
    worker.once('error', rejectResult);
    worker.once('exit', (code) => rejectResult(new Error(`the probe's worker exited (${code}) before it answered`)));
  });
  await Promise.race([started, result]);
  return {
    async stop() {
      worker.postMessage('stop');
      const { latencies, failed } = await result;
      await worker.terminate();
      const sorted = [...latencies].sort((a, b) => a - b);
      return { latencies, maxMs: sorted[sorted.length - 1] ?? 0, medianMs: sorted[Math.floor(sorted.length / 2)] ?? 0, failed };
    },
  };
}

export interface Receiver {
  url: string;
  /** Copies received per `X-Event-Id` (every copy, whether its sender lived to read the answer). */
  copies: Map<string, number>;
  /** The body of each event (the last copy). */
  bodies: Map<string, string>;
  /** Answers written per `X-Event-Id` (to a sender that may be gone by then). */
  answered: Map<string, number>;
  /** Copies whose `X-Signature` did not verify with the test partner's key. */
  unsigned: number;
  /** How long it takes to answer 200. */
  delayMs: number;
  close(): Promise<void>;
}

/** A webhook receiver that counts every copy and verifies its signature with src/signature.ts. */
export async function startReceiver(delayMs = 0): Promise<Receiver> {
  const receiver: Receiver = { url: '', copies: new Map(), answered: new Map(), bodies: new Map(), unsigned: 0, delayMs, close: async () => undefined };
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const eventId = String(request.headers['x-event-id']);
      if (!verifySdkSignature(request.headers['x-signature'], body, PARTNER.privateKey)) receiver.unsigned += 1;
      receiver.copies.set(eventId, (receiver.copies.get(eventId) ?? 0) + 1);
      receiver.bodies.set(eventId, body);
      setTimeout(() => {
        receiver.answered.set(eventId, (receiver.answered.get(eventId) ?? 0) + 1);
        response.writeHead(200).end();
      }, receiver.delayMs);
    });
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  receiver.close = () =>
    new Promise((closed) => {
      server.closeAllConnections();
      server.close(() => closed());
    });
  return receiver;
}

/** The merchantTransactionIds of the events received, each once. */
export function receivedIds(receiver: Receiver): Set<string> {
  const ids = new Set<string>();
  for (const body of receiver.bodies.values()) {
    const id = (JSON.parse(body) as { merchantTransactionId?: string }).merchantTransactionId;
    if (id !== undefined) ids.add(id);
  }
  return ids;
}

/** Runs `use` with a client of `databaseUrl`, ended afterwards. */
export async function withClient<T>(databaseUrl: string, use: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client(databaseUrl);
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await use(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * The committed transactions of the database of `databaseUrl` so far (pg_stat_database), read
 * from the cluster's `postgres` database so that the reading is not one of them. Statistics reach
 * that view within about a second of a commit: the caller waits for the sandbox to be idle first.
 */
export async function commitsOf(adminUrl: string, databaseUrl: string): Promise<number> {
  const name = new URL(databaseUrl).pathname.slice(1);
  return withClient(adminUrl, async (client) => {
    await client.query('SELECT pg_stat_clear_snapshot()');
    const result = await client.query<{ commits: string }>('SELECT xact_commit::text AS commits FROM pg_stat_database WHERE datname = $1', [name]);
    return Number(result.rows[0]?.commits ?? 0);
  });
}

/** A figure in a report line. */
export const fmt = (n: number, digits = 0): string => n.toFixed(digits);

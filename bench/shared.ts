/**
 * The shared sandbox (`--database-url`) against the in-memory one, side by side in one run, with
 * the load of the sandbox bench (autocannon, 20 connections): the SDK initiate (a new signed id per
 * request) and the SDK status check of one transaction, on
 * - memory: one `paylater sandbox` process, the default store;
 * - PostgreSQL, one process;
 * - PostgreSQL, two processes on one database, the 20 connections split between them (as behind a
 *   proxy that spreads connections).
 * PostgreSQL is a private cluster of Debian's binaries started for the run (test/support/postgres.ts),
 * each setup on a fresh database. Targets: PostgreSQL at least a quarter of memory on the initiate,
 * p99 under 25 ms, no failed request; two processes no slower than one.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import autocannon from 'autocannon';

type LoadResult = Awaited<ReturnType<typeof autocannon>>;
import { SDK_INITIATE_REQUEST, sdkHeaders, waitFor } from './sandbox.js';
import { npmStartNodeOptions } from './start-options.js';
import { postgresUnavailable, startPostgres } from '../test/support/postgres.js';

const root = resolve(import.meta.dirname, '..');
const CONNECTIONS = 20;
const SECONDS = 4;
const ROUNDS = 2;

export type Setup = 'memory' | 'postgres x1' | 'postgres x2';
export type Operation = 'SDK initiate' | 'SDK status';

export interface SharedRow {
  setup: Setup;
  operation: Operation;
  requestsPerSecond: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
}

export interface SharedFigures {
  rows: SharedRow[];
  /** Mean requests/s and worst p99 per setup and operation. */
  summary: { setup: Setup; operation: Operation; requestsPerSecond: number; p99Ms: number; failed: number }[];
}

let nextPort = 4600;

async function startSandbox(databaseUrl?: string): Promise<{ url: string; child: ChildProcess }> {
  const port = nextPort++;
  // With npm start's Node options: the one process that serves (D84).
  const args = [...npmStartNodeOptions(), '--import', 'tsx', 'src/cli/main.ts', 'sandbox', '--port', String(port), '--quiet'];
  if (databaseUrl !== undefined) args.push('--database-url', databaseUrl);
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(`${url}/sandbox/clock`, child);
  return { url, child };
}

async function load(url: string, operation: Operation, connections: number, duration: number): Promise<LoadResult> {
  if (operation === 'SDK status') {
    const body = JSON.stringify({ merchantTransactionId: 'ord_bench_status' });
    return autocannon({ url: `${url}/merchant/credit/checkTransactionStatus`, method: 'POST', connections, duration, body, headers: sdkHeaders(body) });
  }
  return autocannon({ url, connections, duration, requests: [SDK_INITIATE_REQUEST] });
}

/** One measurement of a setup: its processes share the connections; figures summed, worst p99. */
async function measure(urls: string[], operation: Operation, duration = SECONDS): Promise<Omit<SharedRow, 'setup' | 'operation'>> {
  const share = Math.floor(CONNECTIONS / urls.length);
  const results: LoadResult[] = await Promise.all(urls.map((url) => load(url, operation, share, duration)));
  return {
    requestsPerSecond: results.reduce((sum, r) => sum + r.requests.average, 0),
    p99Ms: Math.max(...results.map((r) => r.latency.p99)),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    errors: results.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
  };
}

export async function benchShared(log: (line: string) => void): Promise<SharedFigures | undefined> {
  const unavailable = postgresUnavailable();
  if (unavailable !== undefined) {
    log(`  skipped: ${unavailable}`);
    return undefined;
  }
  const cluster = (await startPostgres())!;
  const children: ChildProcess[] = [];
  try {
    const memory = await startSandbox();
    const one = await startSandbox(await cluster.createDatabase());
    const twoDatabase = await cluster.createDatabase();
    const two = [await startSandbox(twoDatabase), await startSandbox(twoDatabase)];
    children.push(memory.child, one.child, ...two.map((s) => s.child));
    const setups: Record<Setup, string[]> = {
      memory: [memory.url],
      'postgres x1': [one.url],
      'postgres x2': two.map((s) => s.url),
    };
    // The transaction the status checks read, on each store.
    for (const urls of Object.values(setups)) {
      const body = JSON.stringify({ merchantTransactionId: 'ord_bench_status', userPhoneNumber: '+919000000001', userId: 'u_bench', amount: 250000 });
      const answer = await fetch(`${urls[0]}/merchant/credit/initiateTransaction`, { method: 'POST', body, headers: sdkHeaders(body) });
      if (answer.status !== 201) throw new Error(`the bench transaction was answered ${answer.status}`);
    }
    const rows: SharedRow[] = [];
    const names = Object.keys(setups) as Setup[];
    // The status checks first: the initiates' transactions expire 60 s later, which would fall in
    // the next phase's measurement.
    for (const operation of ['SDK status', 'SDK initiate'] as const) {
      // An unrecorded warm-up of each setup, so that none is measured while its JIT is cold.
      for (const setup of names) await measure(setups[setup], operation, 2);
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? names : [...names].reverse();
        for (const setup of order) rows.push({ setup, operation, ...(await measure(setups[setup], operation)) });
      }
    }
    const summary = names.flatMap((setup) =>
      (['SDK initiate', 'SDK status'] as const).map((operation) => {
        const of = rows.filter((r) => r.setup === setup && r.operation === operation);
        return {
          setup,
          operation,
          requestsPerSecond: of.reduce((sum, r) => sum + r.requestsPerSecond, 0) / of.length,
          p99Ms: Math.max(...of.map((r) => r.p99Ms)),
          failed: of.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
        };
      }),
    );
    return { rows, summary };
  } finally {
    for (const child of children) child.kill('SIGTERM');
    await new Promise((r) => setTimeout(r, 500));
    await cluster.stop();
  }
}

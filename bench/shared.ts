/**
 * The shared sandbox (`--database-url`) against the in-memory one, side by side in one run, with
 * the load of the sandbox bench (autocannon, 20 connections): the SDK initiate (a new signed id per
 * request) and the SDK status check of one transaction, on
 * - memory: one `paylater sandbox` process, the default store;
 * - PostgreSQL, one, two and three processes on one database, the 20 connections split between
 *   them (as behind a proxy that spreads connections);
 * - PostgreSQL, two processes started with `--role-port`, every connection to the one whose role
 *   check answers 200 (as behind a load balancer that checks it: the writer).
 * Each row also gives the database's commits per request answered: the growth of
 * pg_stat_database.xact_commit of the sandbox's database over the measurement ÷ the requests
 * answered (a design where each process makes the others work grows it with the processes).
 *
 * Then a long clock advance: `expiries` web transactions (15 minutes to expire) created, the clock
 * advanced past their expiry on one process while another process answers a status check every
 * 20 ms; the advance's duration and the checks' latencies, beside the same on one in-memory process
 * (the check sent to the process that advances), `advanceRounds` times each. PostgreSQL is a private cluster of Debian's
 * binaries started for the run (test/support/postgres.ts), each setup on a fresh database; the
 * processes are driven from the outside only (bench/shared-cluster.ts), so that any design of the
 * shared store is measured unchanged. Targets: x2 ÷ x1 >= 0.9, the status check during the advance
 * within 2x memory's, no failed request. `advanceOnly` runs the long advance alone (minutes, not a
 * quarter of an hour), for comparing changes to the advance on a shared machine.
 */
import { loadavg } from 'node:os';
import autocannon from 'autocannon';
import { postgresUnavailable, startPostgres, type PostgresCluster } from '../test/support/postgres.js';
import { cpuMs, postgresCpuMs } from './measure.js';
import { buildTree, SDK_INITIATE_REQUEST, sdkHeaders } from './sandbox.js';
import {
  call,
  commitsOf,
  inParallel,
  initiateOn,
  probeStatus,
  sleep,
  startSandboxProcess,
  statusOn,
  stopAll,
  webInitiateOn,
  withClient,
  type ProbeFigures,
  type SandboxProcess,
} from './shared-cluster.js';

type LoadResult = Awaited<ReturnType<typeof autocannon>>;

const CONNECTIONS = 20;
const SECONDS = 4;
const ROUNDS = 2;
/** How long the statistics take to reach pg_stat_database after the last commit (at most a second). */
const STATS_SETTLE_MS = 1_500;

export type Setup = 'memory' | 'postgres x1' | 'postgres x2' | 'postgres x3' | 'postgres x2 to writer';
export type Operation = 'SDK initiate' | 'SDK status';

export interface SharedRow {
  setup: Setup;
  operation: Operation;
  requestsPerSecond: number;
  p99Ms: number;
  non2xx: number;
  errors: number;
  /** Database commits per request answered (undefined in memory). */
  commitsPerRequest: number | undefined;
}

export interface AdvanceFigures {
  store: 'memory' | 'postgres x2';
  expiries: number;
  /** How long creating the transactions took. */
  createMs: number;
  advanceMs: number;
  /** The machine's one-minute load average as the advance began. */
  loadAverage: number;
  /** The write-ahead log the cluster wrote during the advance (shared only): what its commits sent. */
  walBytes: number | undefined;
  /** The CPU time the advancing process used during the advance, ms (its user + system time). */
  sandboxCpuMs: number;
  /** The CPU time the database server used during the advance, ms (shared only). */
  databaseCpuMs: number | undefined;
  /** The status checks sent every 20 ms during the advance (on the other process when shared). */
  probe: ProbeFigures;
}

export interface SharedFigures {
  rows: SharedRow[];
  /** Mean requests/s, worst p99 and mean commits per request, per setup and operation. */
  summary: { setup: Setup; operation: Operation; requestsPerSecond: number; p99Ms: number; failed: number; commitsPerRequest: number | undefined }[];
  advance: AdvanceFigures[];
}

function load(url: string, operation: Operation, connections: number, duration: number): Promise<LoadResult> {
  if (operation === 'SDK status') {
    const body = JSON.stringify({ merchantTransactionId: 'ord_bench_status' });
    return autocannon({ url: `${url}/merchant/credit/checkTransactionStatus`, method: 'POST', connections, duration, body, headers: sdkHeaders(body) });
  }
  return autocannon({ url, connections, duration, requests: [SDK_INITIATE_REQUEST] });
}

interface Target {
  urls: string[];
  /** The cluster and database, to count commits (PostgreSQL setups). */
  database?: { adminUrl: string; url: string };
}

/** One measurement of a setup: its processes share the connections; figures summed, worst p99. */
async function measure(target: Target, operation: Operation, duration = SECONDS): Promise<Omit<SharedRow, 'setup' | 'operation'>> {
  const { urls, database } = target;
  if (database !== undefined) await sleep(STATS_SETTLE_MS);
  const before = database === undefined ? 0 : await commitsOf(database.adminUrl, database.url);
  const results: LoadResult[] = await Promise.all(
    urls.map((url, index) => load(url, operation, Math.floor(CONNECTIONS / urls.length) + (index < CONNECTIONS % urls.length ? 1 : 0), duration)),
  );
  const answered = results.reduce((sum, r) => sum + r.requests.total, 0);
  let commitsPerRequest: number | undefined;
  if (database !== undefined) {
    await sleep(STATS_SETTLE_MS);
    commitsPerRequest = ((await commitsOf(database.adminUrl, database.url)) - before) / Math.max(1, answered);
  }
  return {
    requestsPerSecond: results.reduce((sum, r) => sum + r.requests.average, 0),
    p99Ms: Math.max(...results.map((r) => r.latency.p99)),
    non2xx: results.reduce((sum, r) => sum + r.non2xx, 0),
    errors: results.reduce((sum, r) => sum + r.errors + r.timeouts, 0),
    commitsPerRequest,
  };
}

/** Starts `count` processes on a fresh database, one after the other (the first is the writer, where there is one). */
async function sharedSetup(cluster: PostgresCluster, count: number, started: SandboxProcess[]): Promise<Target> {
  const url = await cluster.createDatabase();
  const urls: string[] = [];
  for (let n = 0; n < count; n++) {
    const sandbox = await startSandboxProcess(url);
    started.push(sandbox);
    urls.push(sandbox.url);
  }
  return { urls, database: { adminUrl: cluster.url, url } };
}

/**
 * Two processes on a fresh database, each with a role check (`--role-port`), and every connection
 * sent to the one whose check answers 200: what a load balancer that checks it does.
 */
async function roleCheckedSetup(cluster: PostgresCluster, started: SandboxProcess[]): Promise<Target> {
  const url = await cluster.createDatabase();
  const serving: string[] = [];
  for (let n = 0; n < 2; n++) {
    const sandbox = await startSandboxProcess(url, ['--role-port', '0']);
    started.push(sandbox);
    const check = /Role check[^:]*: (http:\/\/\S+)/.exec(sandbox.output())?.[1];
    if (check === undefined) throw new Error(`a process started with --role-port printed no role check:\n${sandbox.output()}`);
    if ((await fetch(check)).status === 200) serving.push(sandbox.url);
  }
  if (serving.length !== 1) throw new Error(`${serving.length} of 2 processes answered their role check 200, where one is the writer`);
  return { urls: serving, database: { adminUrl: cluster.url, url } };
}

/** The cluster's write-ahead log position now (it is one log for every database of the cluster). */
const walPosition = (databaseUrl: string): Promise<string> =>
  withClient(databaseUrl, async (client) => (await client.query<{ at: string }>('SELECT pg_current_wal_lsn()::text AS at')).rows[0]!.at);
/** The bytes of write-ahead log written since `position`. */
const walSince = (databaseUrl: string, position: string): Promise<number> =>
  withClient(databaseUrl, async (client) => Number((await client.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1)::text AS bytes', [position])).rows[0]!.bytes));

/**
 * `expiries` web transactions created over `creators`, then the clock advanced past their expiry on
 * `advancer` while `prober` answers a status check every 20 ms, from the advance's start to its answer.
 */
async function advanceUnderProbe(
  store: AdvanceFigures['store'],
  creators: string[],
  advancer: string,
  prober: string,
  expiries: number,
  advancerPid: number,
  database?: { url: string; port: number },
): Promise<AdvanceFigures> {
  const probeId = `ord_advance_probe_${store.replace(/\W/g, '')}`;
  if ((await initiateOn(prober, probeId)).status !== 201) throw new Error(`the probe's transaction was refused on ${prober}`);
  const created = performance.now();
  await inParallel(expiries, CONNECTIONS, async (index) => {
    const answer = await webInitiateOn(creators[index % creators.length]!, `adv_${index}`);
    if (answer.status !== 200) throw new Error(`a web initiate for the advance answered ${answer.status}: ${JSON.stringify(answer.body)}`);
  });
  const createMs = performance.now() - created;
  await sleep(1_000);
  const loadAverage = loadavg()[0]!;
  const walBefore = database === undefined ? undefined : await walPosition(database.url);
  const cpuBefore = { sandbox: cpuMs(advancerPid), database: database === undefined ? 0 : postgresCpuMs(database.port) };
  const probing = await probeStatus(prober, probeId, 20);
  const advanced = await call(advancer, '/sandbox/clock/advance', JSON.stringify({ ms: 16 * 60_000 }));
  const figures = await probing.stop();
  const sandboxCpuMs = cpuMs(advancerPid) - cpuBefore.sandbox;
  const databaseCpuMs = database === undefined ? undefined : postgresCpuMs(database.port) - cpuBefore.database;
  if (advanced.status !== 200) throw new Error(`the advance answered ${advanced.status}: ${JSON.stringify(advanced.body)}`);
  const walBytes = walBefore === undefined ? undefined : await walSince(database!.url, walBefore);
  return { store, expiries, createMs, advanceMs: advanced.ms, loadAverage, walBytes, sandboxCpuMs, databaseCpuMs, probe: figures };
}

/** The throughput of each setup (memory, shared x1, x2, x3), side by side, in alternating rounds. */
async function throughput(cluster: PostgresCluster, started: SandboxProcess[], log: (line: string) => void): Promise<Pick<SharedFigures, 'rows' | 'summary'>> {
  const memory = await startSandboxProcess();
  started.push(memory);
  const setups: Record<Setup, Target> = {
    memory: { urls: [memory.url] },
    'postgres x1': await sharedSetup(cluster, 1, started),
    'postgres x2': await sharedSetup(cluster, 2, started),
    'postgres x3': await sharedSetup(cluster, 3, started),
    'postgres x2 to writer': await roleCheckedSetup(cluster, started),
  };
  // The transaction the status checks read, on each store.
  for (const { urls } of Object.values(setups)) {
    const body = JSON.stringify({ merchantTransactionId: 'ord_bench_status', userPhoneNumber: '+919000000001', userId: 'u_bench', amount: 250000 });
    const answer = await call(urls[0]!, '/merchant/credit/initiateTransaction', body, sdkHeaders(body));
    if (answer.status !== 201) throw new Error(`the bench transaction was answered ${answer.status}`);
  }
  const rows: SharedRow[] = [];
  const names = Object.keys(setups) as Setup[];
  // The status checks first: the initiates' transactions expire 60 s later, which would fall in
  // the next phase's measurement.
  for (const operation of ['SDK status', 'SDK initiate'] as const) {
    // An unrecorded warm-up of each setup, so that none is measured while its JIT is cold.
    for (const setup of names) await measure({ urls: setups[setup].urls }, operation, 2);
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 === 0 ? names : [...names].reverse();
      for (const setup of order) {
        const row: SharedRow = { setup, operation, ...(await measure(setups[setup], operation)) };
        rows.push(row);
        log(`  (${operation} ${setup}: ${row.requestsPerSecond.toFixed(0)} req/s)`);
      }
    }
  }
  await stopAll(started.splice(0));
  const summary = names.flatMap((setup) =>
    (['SDK initiate', 'SDK status'] as const).map((operation) => {
      const of = rows.filter((r) => r.setup === setup && r.operation === operation);
      const commits = of.map((r) => r.commitsPerRequest).filter((c): c is number => c !== undefined);
      return {
        setup,
        operation,
        requestsPerSecond: of.reduce((sum, r) => sum + r.requestsPerSecond, 0) / of.length,
        p99Ms: Math.max(...of.map((r) => r.p99Ms)),
        failed: of.reduce((sum, r) => sum + r.non2xx + r.errors, 0),
        commitsPerRequest: commits.length === 0 ? undefined : commits.reduce((sum, c) => sum + c, 0) / commits.length,
      };
    }),
  );
  return { rows, summary };
}

export async function benchShared(log: (line: string) => void, options: { expiries: number; advanceRounds: number; advanceOnly?: boolean }): Promise<SharedFigures | undefined> {
  const unavailable = postgresUnavailable();
  if (unavailable !== undefined) {
    log(`  skipped: ${unavailable}`);
    return undefined;
  }
  await buildTree();
  const cluster = (await startPostgres())!;
  const started: SandboxProcess[] = [];
  try {
    const { rows, summary } = options.advanceOnly ? { rows: [], summary: [] } : await throughput(cluster, started, log);

    // The long advance, `advanceRounds` times on each store, memory and shared in turn, each on
    // fresh processes (and a fresh database): in memory on one process, shared with the check on the
    // second process. One advance sees one or two full collections at most, so the longest check of
    // a single advance is mostly chance; the longest over several is compared.
    const advance: AdvanceFigures[] = [];
    for (let round = 0; round < options.advanceRounds; round++) {
      const alone = await startSandboxProcess();
      started.push(alone);
      const inMemory = await advanceUnderProbe('memory', [alone.url], alone.url, alone.url, options.expiries, alone.child.pid!);
      advance.push(inMemory);
      log(`  (advance in memory, round ${round + 1}: ${inMemory.advanceMs.toFixed(0)} ms, longest check ${inMemory.probe.maxMs.toFixed(0)} ms)`);
      await stopAll(started.splice(0));
      const pair = await sharedSetup(cluster, 2, started);
      const [first, second] = pair.urls as [string, string];
      // The first process started is the writer: it advances, the second forwards the checks.
      const shared = await advanceUnderProbe('postgres x2', pair.urls, first, second, options.expiries, started[0]!.child.pid!, {
        url: pair.database!.url,
        port: cluster.port,
      });
      advance.push(shared);
      log(`  (advance shared, round ${round + 1}: ${shared.advanceMs.toFixed(0)} ms, longest check ${shared.probe.maxMs.toFixed(0)} ms)`);
      await stopAll(started.splice(0));
    }
    return { rows, summary, advance };
  } finally {
    await stopAll(started);
    await cluster.stop();
  }
}

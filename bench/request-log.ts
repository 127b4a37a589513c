/**
 * The request log's cost (D220): two sandboxes in processes of their own, one with the request log
 * (the default) and one without (`createSandbox({ requestLog: false })`), loaded in turns by the
 * same autocannon (20 connections) in the same run, on a signed SDK initiate (a new id each time:
 * the request log keeps its headers, body and answer) and on `GET /sandbox/clock` (the smallest
 * request, where the log's share is largest). Two figures per load: the requests per second, and
 * the sandbox process's CPU time per request (user + system, from /proc/<pid>/stat), which the
 * other processes of a shared machine disturb far less than the rate. Also the dashboard page's
 * weight: bytes, gzipped and Brotli-compressed (quality 11).
 *
 *   npm run bench -- --only request-log
 *
 * Run as `tsx bench/request-log.ts --serve on|off`, it is one of the two sandboxes: it prints its
 * URL and runs until killed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { brotliCompressSync, constants as zlib, gzipSync } from 'node:zlib';
import autocannon from 'autocannon';
import { createSandbox } from '../src/sandbox/server.js';
import { SDK_INITIATE_REQUEST } from './sandbox.js';
import { cpuMs } from './measure.js';

const root = resolve(import.meta.dirname, '..');
const CONNECTIONS = 20;
const SECONDS = 4;
const ROUNDS = 3;

type Setting = 'on' | 'off';

export interface RequestLogFigures {
  rows: { operation: string; log: Setting; requestsPerSecond: number; cpuMicroseconds: number; p99Ms: number; non2xx: number; errors: number }[];
  /** Per operation: requests/s with the log ÷ without, and CPU time per request with ÷ without. */
  ratios: { operation: string; ratio: number; cpuRatio: number }[];
  page: { bytes: number; gzippedBytes: number; brotliBytes: number };
  /** Requests the sandbox with the log logged over the run (the oldest forgotten beyond its budget). */
  logged: number;
}

async function startChild(setting: Setting): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/request-log.ts', '--serve', setting], { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((done, fail) => {
    child.once('exit', (code) => fail(new Error(`the ${setting} sandbox exited with code ${code}`)));
    lines.once('line', (line) => done(line.trim()));
  });
  return { url, child };
}

function load(url: string, operation: 'initiate' | 'clock', duration = SECONDS) {
  if (operation === 'clock') return autocannon({ url: `${url}/sandbox/clock`, connections: CONNECTIONS, duration });
  return autocannon({ url, connections: CONNECTIONS, duration, requests: [SDK_INITIATE_REQUEST] });
}

export async function benchRequestLog(): Promise<RequestLogFigures> {
  const servers = { on: await startChild('on'), off: await startChild('off') };
  try {
    const rows: RequestLogFigures['rows'] = [];
    const names = { initiate: 'SDK initiate', clock: 'GET clock' } as const;
    for (const operation of ['initiate', 'clock'] as const) {
      for (const log of ['on', 'off'] as const) await load(servers[log].url, operation, 2);
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
        for (const log of order) {
          const pid = servers[log].child.pid!;
          const before = cpuMs(pid);
          const result = await load(servers[log].url, operation);
          const cpuMicroseconds = ((cpuMs(pid) - before) * 1000) / Math.max(1, result.requests.total);
          rows.push({
            operation: names[operation],
            log,
            requestsPerSecond: result.requests.average,
            cpuMicroseconds,
            p99Ms: result.latency.p99,
            non2xx: result.non2xx,
            errors: result.errors + result.timeouts,
          });
        }
      }
    }
    const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
    const ratios = Object.values(names).map((operation) => {
      const of = (log: Setting, figure: 'requestsPerSecond' | 'cpuMicroseconds') =>
        mean(rows.filter((row) => row.operation === operation && row.log === log).map((row) => row[figure]));
      return { operation, ratio: of('on', 'requestsPerSecond') / of('off', 'requestsPerSecond'), cpuRatio: of('on', 'cpuMicroseconds') / of('off', 'cpuMicroseconds') };
    });
    const page = Buffer.from(await (await fetch(`${servers.on.url}/dashboard`)).arrayBuffer());
    const latest = (await (await fetch(`${servers.on.url}/sandbox/requests?limit=1`)).json()) as { latest: number };
    const brotliBytes = brotliCompressSync(page, { params: { [zlib.BROTLI_PARAM_QUALITY]: 11 } }).length;
    return { rows, ratios, page: { bytes: page.length, gzippedBytes: gzipSync(page, { level: 9 }).length, brotliBytes }, logged: latest.latest };
  } finally {
    servers.on.child.kill('SIGTERM');
    servers.off.child.kill('SIGTERM');
  }
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  const { values } = parseArgs({ options: { serve: { type: 'string' } } });
  if (values.serve !== 'on' && values.serve !== 'off') {
    process.stderr.write('Usage: tsx bench/request-log.ts --serve on|off (npm run bench -- --only request-log starts both)\n');
    process.exit(2);
  }
  const sandbox = await createSandbox({ requestLog: values.serve === 'on' });
  process.stdout.write(`${await sandbox.listen(0, '127.0.0.1')}\n`);
  process.on('SIGTERM', () => void sandbox.close().then(() => process.exit(0)));
}

/**
 * `npx tsx bench/sandbox-tail.ts [--operation clock,read,initiate] [--seconds N] [--node-options "..."] [--args="..."] [--tree DIR]`:
 * where the sandbox's slow requests come from. The built sandbox runs as `npm start` runs it (its
 * heap flags, plus `--node-options`), with a preloaded observer that records every collector pause
 * (`PerformanceObserver` of `gc` entries, on the wall clock) to a file; autocannon (20 connections)
 * records the end time and duration of every answer slower than {@link SLOW_MS}. The report puts the
 * two side by side: scavenges and full collections (count a second, mean and longest pause), the
 * slow answers, and how many of them were under way while the process was paused by its collector,
 * against the share that chance would give (the pauses' time, widened by the answers' length, over
 * the run's). The same load is sent to the bare `node:http` server of bench/sandbox.ts in the same
 * run, for its own p99 beside: the load generator shares the cores with the server it measures.
 * `--args` are the sandbox's own options; `--tree DIR` measures another checkout's sandbox (built
 * first when stale), so that two trees are measured one after the other in one session.
 * A hand-written observer rather than `--trace-gc`: its lines carry the time since the process
 * started, which cannot be set beside the client's times to the millisecond.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { BARE_SERVER, buildTree, freePorts, SDK_INITIATE_REQUEST, sandboxTransaction, startSandbox, waitFor } from './sandbox.js';

const OPERATIONS = ['clock', 'read', 'initiate'] as const;
type Operation = (typeof OPERATIONS)[number];
/** An answer slower than this is counted (the issue's p99 target). */
const SLOW_MS = 5;

const { values } = parseArgs({
  options: { operation: { type: 'string' }, seconds: { type: 'string' }, 'node-options': { type: 'string' }, args: { type: 'string' }, tree: { type: 'string' } },
});
const operations = (values.operation?.split(',').map((name) => name.trim()) ?? [...OPERATIONS]) as Operation[];
const seconds = Number(values.seconds ?? 10);
const nodeOptions = values['node-options']?.split(/\s+/).filter(Boolean) ?? [];
const sandboxArgs = values.args?.split(/\s+/).filter(Boolean) ?? [];

/** The observer preloaded into the sandbox: each pause as `kind start duration` (wall ms), written at exit. */
const OBSERVER = `
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { writeFileSync } from 'node:fs';
const lines = [];
new PerformanceObserver((list) => {
  for (const e of list.getEntries()) lines.push(e.detail.kind + ' ' + (performance.timeOrigin + e.startTime).toFixed(2) + ' ' + e.duration.toFixed(3));
}).observe({ entryTypes: ['gc'] });
const flush = () => { writeFileSync(process.env.PAYLATER_GC_FILE, lines.join('\\n')); process.exit(0); };
process.on('SIGTERM', flush);
process.on('SIGUSR2', () => { writeFileSync(process.env.PAYLATER_GC_FILE, lines.join('\\n')); lines.length = 0; });
`;

interface Pause {
  kind: number;
  start: number;
  duration: number;
}

const dir = mkdtempSync(join(tmpdir(), 'sandbox-tail-'));
const observer = join(dir, 'observer.mjs');
const gcFile = join(dir, 'gc.txt');
writeFileSync(observer, OBSERVER);
const tree = values.tree === undefined ? undefined : resolve(values.tree);
await buildTree(tree);
const [port, barePort] = await freePorts(2);
process.env.PAYLATER_GC_FILE = gcFile;
const sandbox = startSandbox(port!, tree, { nodeOptions: ['--import', observer, ...nodeOptions], args: sandboxArgs, stdout: openSync('/dev/null', 'w') });
const bare = spawn(process.execPath, ['-e', BARE_SERVER, String(barePort)], { stdio: ['ignore', 'ignore', 'inherit'] });
const url = `http://127.0.0.1:${port!}`;
const bareUrl = `http://127.0.0.1:${barePort!}`;

/** The pauses recorded since the last call (the observer writes them on SIGUSR2). */
async function pausesSince(): Promise<Pause[]> {
  sandbox.kill('SIGUSR2');
  await new Promise((settled) => setTimeout(settled, 300));
  return readFileSync(gcFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [kind, start, duration] = line.split(' ').map(Number);
      return { kind: kind!, start: start!, duration: duration! };
    });
}

async function run(base: string, operation: Operation, read: { path: string; authorization: string }, duration: number) {
  const common = { connections: 20, duration };
  const options =
    operation === 'clock'
      ? { ...common, url: `${base}/sandbox/clock` }
      : operation === 'read'
        ? { ...common, url: `${base}${read.path}`, headers: { Authorization: read.authorization } }
        : { ...common, url: base, requests: [SDK_INITIATE_REQUEST] };
  const slow: { end: number; ms: number }[] = [];
  const instance = autocannon(options);
  instance.on('response', (_client: unknown, _status: number, _bytes: number, responseTime: number) => {
    if (responseTime > SLOW_MS) slow.push({ end: performance.timeOrigin + performance.now(), ms: responseTime });
  });
  const started = Date.now();
  const result = await instance;
  return { result, slow, started, ended: Date.now() };
}

const fmt = (value: number, digits = 1) => value.toFixed(digits);
try {
  await waitFor(`${url}/sandbox/clock`, sandbox);
  await waitFor(bareUrl, bare);
  const read = await sandboxTransaction(url);
  for (const operation of operations) {
    await run(url, operation, read, 2);
    await run(bareUrl, operation, read, 2);
    await pausesSince();
    const { result, slow, started, ended } = await run(url, operation, read, seconds);
    const pauses = (await pausesSince()).filter((p) => p.start >= started && p.start <= ended);
    const bareRun = await run(bareUrl, operation, read, seconds);
    const span = (ended - started) / 1000;
    const minor = pauses.filter((p) => p.kind === 1);
    const major = pauses.filter((p) => p.kind === 4);
    const stats = (list: Pause[]) => {
      const total = list.reduce((sum, p) => sum + p.duration, 0);
      const longest = list.reduce((max, p) => Math.max(max, p.duration), 0);
      return `${list.length} (${fmt(list.length / span)}/s), mean ${fmt(list.length === 0 ? 0 : total / list.length, 2)} ms, longest ${fmt(longest, 2)} ms, ${fmt((100 * total) / (span * 1000), 2)} % of the time`;
    };
    // An answer was held by a pause when the pause began while the answer was under way.
    const held = slow.filter((answer) => pauses.some((p) => p.start + p.duration >= answer.end - answer.ms && p.start <= answer.end)).length;
    const meanSlow = slow.length === 0 ? 0 : slow.reduce((sum, a) => sum + a.ms, 0) / slow.length;
    const chance = Math.min(1, pauses.reduce((sum, p) => sum + p.duration + meanSlow, 0) / (ended - started));
    const longestGaps = [...pauses].sort((a, b) => b.duration - a.duration).slice(0, 5).map((p) => `${p.kind === 1 ? 'minor' : p.kind === 4 ? 'major' : `kind ${p.kind}`} ${fmt(p.duration, 1)}`);
    process.stdout.write(
      [
        `== ${operation}: ${fmt(result.requests.average, 0)} req/s, p50 ${result.latency.p50} ms, p99 ${result.latency.p99} ms, p99.9 ${result.latency.p99_9} ms, max ${result.latency.max} ms`,
        `   bare node, same load after it: ${fmt(bareRun.result.requests.average, 0)} req/s, p99 ${bareRun.result.latency.p99} ms, p99.9 ${bareRun.result.latency.p99_9} ms`,
        `   scavenges: ${stats(minor)}`,
        `   full collections: ${stats(major)}`,
        `   longest pauses, ms: ${longestGaps.join(', ')}`,
        `   answers over ${SLOW_MS} ms: ${slow.length} of ${result.requests.total} (${fmt((100 * slow.length) / Math.max(1, result.requests.total), 2)} %), mean ${fmt(meanSlow)} ms;` +
          ` under way during a pause: ${held} (${fmt((100 * held) / Math.max(1, slow.length))} %; chance ${fmt(100 * chance)} %)`,
        '',
      ].join('\n'),
    );
  }
} finally {
  sandbox.kill('SIGTERM');
  bare.kill('SIGTERM');
  await new Promise((settled) => setTimeout(settled, 300));
  rmSync(dir, { recursive: true, force: true });
}

/**
 * The stall probe: a cheap request (`GET /sandbox/clock`) to the sandbox every 10 ms over one
 * keep-alive connection, and the longest time one took to be answered. While the sandbox's event
 * loop is blocked (a long parse, a big answer being built) the probe waits; its worst latency is the
 * longest stall a client saw.
 *
 * - The probe runs in a worker thread with its own event loop, so the attacker's own work in the
 *   main thread (building 1 MiB bodies, holding 5,000 sockets) does not count as the sandbox's stall.
 * - It warms up before it records: its connection opened and a few requests answered one after the
 *   other (the sandbox's first answers compile code; the worker's start and the first connection
 *   are the probe's own cost), and {@link Probe.ready} resolves only then, so an attack starts its
 *   clock after the warm-up. "N s into the attack" counts from there.
 * - A wait is charged to the sandbox less the time the sandbox's event-loop thread was ready to
 *   run but waited for a CPU, and the time the probe's own thread did (the run-queue delays of
 *   `/proc/<pid>/schedstat` and `/proc/thread-self/schedstat`, in ns; the larger of the two, as
 *   they may overlap). On this shared 2-core
 *   machine a process is often not scheduled for hundreds of milliseconds while others run: such a
 *   wait is the machine's, not a stall the sandbox caused. Everything else counts: the sandbox
 *   answering the attacker first, a long parse, garbage collection, and time it sat idle while
 *   the probe waited. Both figures are reported: the longest stall charged, and the longest
 *   wall-clock wait.
 * A request still unanswered when the probe stops counts with the time it has waited. The worker is
 * plain JavaScript evaluated from a string: it loads nothing from the repository.
 */
import { Worker } from 'node:worker_threads';

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { readFileSync } = require('node:fs');
const { host, port, path, intervalMs, timeoutMs, pid, warmUp } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
// The run-queue delay (ns, the second field of schedstat) of a thread, as ms: time it was ready to
// run and waited for a CPU. NaN where the kernel does not tell it.
function runDelayMs(file) {
  try {
    return Number(readFileSync(file, 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return Number.NaN;
  }
}
// The sandbox's main thread (its event loop) and this thread, each since the request started.
const delays = () => [runDelayMs('/proc/' + pid + '/schedstat'), runDelayMs('/proc/thread-self/schedstat')];
// The larger of the two: they may overlap, and what is not subtracted is charged to the sandbox.
const delayedSince = (start) => { const now = delays(); return Math.max(now[0] - start[0], now[1] - start[1]); };
let born = performance.now();
let recording = false, warmed = 0;
let worst = 0, worstWall = 0, worstAt = 0, longestWait = 0, answered = 0, failures = 0, started = 0, delayAtStart = [0, 0], stopped = false;
// The stall charged to the sandbox: the wait less the run-queue delays during it.
function charged(wall, delay) {
  return Number.isNaN(delay) ? wall : Math.max(0, wall - delay);
}
function note(wall, delay) {
  const stall = charged(wall, delay);
  if (stall > worst) { worst = stall; worstWall = wall; worstAt = started - born; }
  if (wall > longestWait) longestWait = wall;
}
function finish(ok) {
  const ms = performance.now() - started;
  const delay = delayedSince(delayAtStart);
  if (!recording) {
    warmed = ok ? warmed + 1 : 0;
    if (warmed >= warmUp) {
      recording = true;
      born = performance.now();
      parentPort.postMessage('ready');
    }
  } else {
    note(ms, delay);
    if (ok) answered++; else failures++;
  }
  started = 0;
  if (!stopped) setTimeout(once, Math.max(0, intervalMs - ms));
}
function once() {
  if (stopped) return;
  started = performance.now();
  delayAtStart = delays();
  let done = false;
  const end = (ok) => { if (!done) { done = true; finish(ok); } };
  const request = http.request({ host, port, path, agent, method: 'GET' }, (response) => {
    response.resume();
    response.on('end', () => end(response.statusCode === 200));
    response.on('error', () => end(false));
  });
  request.setTimeout(timeoutMs, () => request.destroy(new Error('timeout')));
  request.on('error', () => end(false));
  request.end();
}
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  stopped = true;
  if (recording && started !== 0) note(performance.now() - started, delayedSince(delayAtStart));
  agent.destroy();
  parentPort.postMessage({ worstMs: worst, worstWallMs: worstWall, worstAtMs: worstAt, longestWaitMs: longestWait, answered, failures, warmed: recording });
});
once();
`;

/** Requests answered in a row before the probe records. */
const WARM_UP = 5;
/** How long the warm-up may take before the attack goes on anyway (recording from then on). */
const WARM_UP_LIMIT_MS = 15_000;

interface ProbeFigures {
  /** The longest stall charged to the sandbox: a wait less the run-queue delays during it, ms. */
  worstMs: number;
  /** The wall-clock time of that wait, ms. */
  worstWallMs: number;
  /** When that wait began, ms after the warm-up ended. */
  worstAtMs: number;
  /** The longest wall-clock wait of any request, ms (the machine's delays included). */
  longestWaitMs: number;
  answered: number;
  /** Requests that got no 200 (refused, reset, timed out after 10 s). */
  failures: number;
  /** Whether the warm-up ended (else nothing was recorded). */
  warmed: boolean;
}

export interface Probe {
  /** Resolves once the probe warmed up and records (or after 15 s, whatever happened). */
  readonly ready: Promise<void>;
  stop(): Promise<ProbeFigures>;
}

/** Starts probing `url` (`http://host:port`), served by process `pid`; `stop()` ends it and tells the figures. */
export function startProbe(url: string, pid: number, path = '/sandbox/clock', intervalMs = 10): Probe {
  const parsed = new URL(url);
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { host: parsed.hostname, port: Number(parsed.port), path, intervalMs, timeoutMs: 10_000, pid, warmUp: WARM_UP },
  });
  let result: Promise<ProbeFigures> | undefined;
  let limit: NodeJS.Timeout | undefined;
  const ready = new Promise<void>((resolve) => {
    limit = setTimeout(resolve, WARM_UP_LIMIT_MS);
    worker.on('message', (message: unknown) => {
      if (message === 'ready') resolve();
    });
  }).finally(() => clearTimeout(limit));
  return {
    ready,
    stop() {
      clearTimeout(limit);
      result ??= new Promise<ProbeFigures>((resolve) => {
        const timer = setTimeout(() => {
          void worker.terminate();
          resolve({ worstMs: Number.NaN, worstWallMs: Number.NaN, worstAtMs: 0, longestWaitMs: Number.NaN, answered: 0, failures: 0, warmed: false });
        }, 5_000);
        worker.on('message', (figures: ProbeFigures | 'ready') => {
          if (figures === 'ready') return;
          clearTimeout(timer);
          void worker.terminate();
          resolve(figures);
        });
        worker.postMessage('stop');
      });
      return result;
    },
  };
}

/**
 * The stall probe: a cheap request (`GET /sandbox/clock`) to the sandbox every 10 ms over one
 * keep-alive connection, opened before the attack starts, and the longest time one took to be
 * answered. While the sandbox's event loop is blocked (a long parse, a big answer being built) the
 * probe waits; its worst latency is the longest stall a client saw.
 *
 * The probe runs in a worker thread with its own event loop, so the attacker's own work in the
 * main thread (building 1 MiB bodies, holding 5,000 sockets) does not count as the sandbox's
 * stall. A request still unanswered when the probe stops counts with the time it has waited.
 * The worker is plain JavaScript evaluated from a string: it loads nothing from the repository.
 */
import { Worker } from 'node:worker_threads';

const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const { host, port, path, intervalMs, timeoutMs } = workerData;
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const born = performance.now();
let worst = 0, worstAt = 0, answered = 0, failures = 0, started = 0, stopped = false;
function finish(ok) {
  const ms = performance.now() - started;
  if (ms > worst) { worst = ms; worstAt = started - born; }
  started = 0;
  if (ok) answered++; else failures++;
  if (!stopped) setTimeout(once, Math.max(0, intervalMs - ms));
}
function once() {
  if (stopped) return;
  started = performance.now();
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
  const waiting = started === 0 ? 0 : performance.now() - started;
  if (waiting > worst) { worst = waiting; worstAt = started - born; }
  agent.destroy();
  parentPort.postMessage({ worstMs: worst, worstAtMs: worstAt, answered, failures });
});
once();
`;

export interface ProbeFigures {
  /** The longest a probe request took (or has been waiting, at the stop), ms. */
  worstMs: number;
  /** When the longest began, ms after the probe started. */
  worstAtMs: number;
  answered: number;
  /** Requests that got no 200 (refused, reset, timed out after 10 s). */
  failures: number;
}

export interface Probe {
  stop(): Promise<ProbeFigures>;
}

/** Starts probing `url` (`http://host:port`); `stop()` ends it and tells the figures. */
export function startProbe(url: string, path = '/sandbox/clock', intervalMs = 10): Probe {
  const parsed = new URL(url);
  const worker = new Worker(WORKER, {
    eval: true,
    workerData: { host: parsed.hostname, port: Number(parsed.port), path, intervalMs, timeoutMs: 10_000 },
  });
  let result: Promise<ProbeFigures> | undefined;
  return {
    stop() {
      result ??= new Promise<ProbeFigures>((resolve) => {
        const timer = setTimeout(() => {
          void worker.terminate();
          resolve({ worstMs: Number.NaN, worstAtMs: 0, answered: 0, failures: 0 });
        }, 5_000);
        worker.once('message', (figures: ProbeFigures) => {
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

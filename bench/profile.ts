/**
 * `npx tsx bench/profile.ts [--operation clock,read,initiate] [--seconds N] [--top N] [--min-percent P] [--keep DIR] [--built]`:
 * where a sandbox request's time goes. For each operation, a sandbox is started in a child Node
 * process (through tsx, as the sandbox bench runs it, with the heap flags of `npm start`,
 * bench/start-options.ts, and a line logged per request to a discarded stdout); autocannon warms
 * it up, then loads it with 20 connections for N seconds (default 10) while V8's CPU profiler runs
 * in the sandbox's process (node:inspector, started and stopped by a message, so that neither the
 * start-up nor the warm-up is in the profile), and the profile is printed as Markdown
 * (bench/cpuprofile.ts). The operations: `clock`, `GET /sandbox/clock` (no authentication, no
 * store); `read`, the sandbox bench's transaction read; `initiate`, its signed SDK initiate.
 * `--keep DIR` also writes each `.cpuprofile` there (for Chrome's DevTools or speedscope).
 * `--built` profiles the built sandbox (`dist/`, built first when stale), the code `npm start` runs:
 * through tsx every function carries tsx's naming helper, a few per cent of a cheap request.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import autocannon from 'autocannon';
import { pathToFileURL } from 'node:url';
import { summariseProfile, type CpuProfile } from './cpuprofile.js';
import { buildTree, freePorts, SDK_INITIATE_REQUEST, sandboxTransaction, waitFor } from './sandbox.js';
import { npmStartNodeOptions } from './start-options.js';

const root = resolve(import.meta.dirname, '..');
const OPERATIONS = ['clock', 'read', 'initiate'] as const;
type Operation = (typeof OPERATIONS)[number];

/** The child's side: a sandbox on `port` (the built one when `built`), the profiler started and stopped by messages. */
async function serve(port: number, built: boolean): Promise<void> {
  const module = built ? pathToFileURL(resolve(root, 'dist/sandbox/server.js')).href : '../src/sandbox/server.js';
  const { createSandbox } = (await import(module)) as typeof import('../src/sandbox/server.js');
  const sandbox = await createSandbox({ logRequests: true });
  await sandbox.listen(port, '127.0.0.1');
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.setSamplingInterval', { interval: 500 });
  process.on('message', (message: string) => {
    void (async () => {
      if (message === 'start') {
        await session.post('Profiler.start');
        process.send!('started');
      } else if (message === 'stop') {
        const { profile } = await session.post('Profiler.stop');
        process.send!(JSON.stringify(profile), () => {
          void sandbox.close().then(() => process.exit(0));
        });
      }
    })();
  });
  process.send!('ready');
}

function reply(child: ChildProcess, wanted?: string): Promise<string> {
  return new Promise((resolveMessage, reject) => {
    const onMessage = (message: unknown) => {
      if (wanted !== undefined && message !== wanted) return;
      child.off('message', onMessage);
      child.off('exit', onExit);
      resolveMessage(String(message));
    };
    const onExit = (code: number | null) => reject(new Error(`the profiled sandbox exited with code ${code}`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

async function profileOne(
  operation: Operation,
  seconds: number,
  built: boolean,
): Promise<{ profile: CpuProfile; requestsPerSecond: number; p99Ms: number }> {
  const [port] = await freePorts(1);
  const child = fork(import.meta.filename, ['--serve', String(port!), ...(built ? ['--built'] : [])], {
    cwd: root,
    execArgv: [...npmStartNodeOptions(), '--import', 'tsx'],
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  try {
    await reply(child, 'ready');
    const url = `http://127.0.0.1:${port!}`;
    await waitFor(`${url}/sandbox/clock`, child);
    let options: Parameters<typeof autocannon>[0];
    if (operation === 'clock') options = { url: `${url}/sandbox/clock` };
    else if (operation === 'read') {
      const read = await sandboxTransaction(url);
      options = { url: `${url}${read.path}`, headers: { Authorization: read.authorization } };
    } else options = { url, requests: [SDK_INITIATE_REQUEST] };
    // A warm-up outside the profile, then the measured load.
    await autocannon({ ...options, connections: 20, duration: 2 });
    child.send('start');
    await reply(child, 'started');
    const result = await autocannon({ ...options, connections: 20, duration: seconds });
    child.send('stop');
    const profile = JSON.parse(await reply(child)) as CpuProfile;
    if (result.non2xx > 0 || result.errors > 0) throw new Error(`${operation}: ${result.non2xx} answers not 2xx, ${result.errors} errors`);
    return { profile, requestsPerSecond: result.requests.average, p99Ms: result.latency.p99 };
  } finally {
    child.kill('SIGTERM');
  }
}

const { values } = parseArgs({
  options: {
    operation: { type: 'string' },
    seconds: { type: 'string' },
    top: { type: 'string' },
    'min-percent': { type: 'string' },
    keep: { type: 'string' },
    serve: { type: 'string' },
    built: { type: 'boolean' },
  },
});
const built = values.built === true;
if (values.serve !== undefined) {
  await serve(Number(values.serve), built);
} else {
  const operations = (values.operation?.split(',').map((name) => name.trim()) ?? [...OPERATIONS]) as Operation[];
  const wrong = operations.filter((name) => !(OPERATIONS as readonly string[]).includes(name));
  if (wrong.length > 0) {
    process.stderr.write(`Unknown operation: ${wrong.join(', ')} (choose from ${OPERATIONS.join(', ')})\n`);
    process.exit(2);
  }
  const seconds = Number(values.seconds ?? 10);
  const top = Number(values.top ?? 20);
  const minPercent = Number(values['min-percent'] ?? 2);
  if (built) await buildTree();
  for (const operation of operations) {
    const { profile, requestsPerSecond, p99Ms } = await profileOne(operation, seconds, built);
    if (values.keep !== undefined) {
      mkdirSync(values.keep, { recursive: true });
      writeFileSync(resolve(values.keep, `${operation}.cpuprofile`), JSON.stringify(profile));
    }
    process.stdout.write(
      `\n## ${operation}: ${requestsPerSecond.toFixed(0)} req/s, p99 ${p99Ms.toFixed(1)} ms (with the profiler on)\n\n` +
        `${summariseProfile(profile, { top, minPercent, root })}\n`,
    );
  }
}

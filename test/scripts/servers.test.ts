/**
 * The long-running commands as processes: `npm start` (the sandbox) and `npm run docs:serve` stop on
 * SIGTERM sent to npm and on SIGINT sent as Ctrl+C does, leave no process behind (npm's shell, node,
 * tsx, esbuild), and do so promptly even with a keep-alive connection open; a port in use ends them with exit code 1
 * and a message naming the port and how to change it, without a stack trace.
 *
 * `npm start` builds first when dist/ is stale (tsc and esbuild, some seconds). Every server takes a free port.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CLI_ENTRY } from '../support/cli.js';

const root = resolve(import.meta.dirname, '../..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
let site: string;

beforeAll(() => {
  site = mkdtempSync(join(tmpdir(), 'paylater-site-'));
  writeFileSync(join(site, 'index.html'), '<!doctype html><title>docs</title><p>docs</p>\n');
});
afterAll(() => {
  rmSync(site, { recursive: true, force: true });
});

/** Every process group a test started: killed after the test, whatever happened in it. */
const groups: number[] = [];
afterEach(() => {
  for (const group of groups.splice(0)) {
    try {
      process.kill(-group, 'SIGKILL');
    } catch {
      // Already gone (the usual case).
    }
  }
});

interface Running {
  child: ChildProcess;
  output: () => string;
  /** Settles when every process writing to the output pipes has closed them. */
  outputClosed: Promise<unknown>;
  url: string;
}

/** Starts a command in a process group of its own and waits until it prints its address. */
async function start(command: string, args: string[], env: Record<string, string>, timeoutMs: number): Promise<Running> {
  const child = spawn(command, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  if (child.pid !== undefined) groups.push(child.pid);
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const outputClosed = Promise.all([child.stdout, child.stderr].map((stream) => new Promise((done) => stream?.once('close', done))));
  const url = await waitFor(() => /(http:\/\/127\.0\.0\.1:\d+)/.exec(output)?.[1], timeoutMs, () => `output so far:\n${output}`);
  return { child, output: () => output, outputClosed, url };
}

/** Every process below `pid` (children, grandchildren, ...), from ps. */
function descendants(pid: number): number[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number) as [number, number]);
  const found: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const parent = queue.shift()!;
    for (const [child, ppid] of rows) {
      if (ppid === parent && !found.includes(child)) {
        found.push(child);
        queue.push(child);
      }
    }
  }
  return found;
}

/** Whether a process exists and is not a zombie waiting to be reaped. */
function isRunning(pid: number): boolean {
  try {
    const state = execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).trim();
    return state !== '' && !state.startsWith('Z');
  } catch {
    return false; // ps exits 1 when there is no such process
  }
}

/** Opens a keep-alive connection to `url` (one request answered, the socket kept open). */
async function keepAlive(url: string, path: string): Promise<Agent> {
  const agent = new Agent({ keepAlive: true, keepAliveMsecs: 60_000 });
  await new Promise<void>((resolveRequest, reject) => {
    const outgoing = request(`${url}${path}`, { agent }, (response) => {
      response.resume();
      response.on('end', () => resolveRequest());
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
  await waitFor(() => (Object.values(agent.freeSockets).flat().length === 1 ? true : undefined), 5_000, () => 'no idle keep-alive socket');
  return agent;
}

/**
 * How a signal reaches npm: SIGTERM to npm alone (a process manager, a CI job), SIGINT to its whole
 * process group (Ctrl+C in a terminal). npm passes either to its shell only, and the shell does not
 * pass it on: SIGTERM kills the shell, which the server notices; SIGINT sent to npm alone is waited
 * out by the shell, so nothing would stop (not tested: only `exec` in the npm script could help).
 */
const HOW = { SIGTERM: 'npm alone', SIGINT: 'the process group' } as const;

/** Sends the signal as {@link HOW} says and checks that npm and everything below it end promptly. */
async function expectCleanStop(running: Running, signal: keyof typeof HOW, agent: Agent): Promise<void> {
  const pid = running.child.pid!;
  const below = descendants(pid);
  expect(below.length, `processes below npm:\n${running.output()}`).toBeGreaterThanOrEqual(2); // sh, node, ...
  try {
    process.kill(HOW[signal] === 'npm alone' ? pid : -pid, signal);
    // Generous: the server notices within a second that npm's shell has ended.
    await waitFor(() => ([pid, ...below].some(isRunning) ? undefined : true), 15_000, () => {
      const left = [pid, ...below].filter(isRunning);
      return `still running after ${signal}: ${execFileSync('ps', ['-o', 'pid,stat,args', '-p', left.join(',')], { encoding: 'utf8' })}\n${running.output()}`;
    });
  } finally {
    agent.destroy();
  }
}

describe.each(['SIGTERM', 'SIGINT'] as const)('npm start, then %s', (signal) => {
  it('stops the sandbox (keep-alive connection open) and leaves no process behind', async () => {
    const running = await start(npm, ['start', '--silent'], { PAYLATER_PORT: '0' }, 150_000);
    const agent = await keepAlive(running.url, '/sandbox/clock');
    await expectCleanStop(running, signal, agent);
    await running.outputClosed; // the last lines may still be on their way
    expect(running.output()).toContain('Stopping the sandbox...');
  }, 200_000);
});

describe.each(['SIGTERM', 'SIGINT'] as const)('npm run docs:serve, then %s', (signal) => {
  it('stops the docs server (keep-alive connection open) and leaves no process behind', async () => {
    const running = await start(npm, ['run', '--silent', 'docs:serve', '--', '--port', '0', '--dir', site], {}, 60_000);
    const agent = await keepAlive(running.url, '/');
    await expectCleanStop(running, signal, agent);
  }, 90_000);
});

describe('a port in use', () => {
  let blocker: Server;
  let port: number;
  beforeAll(async () => {
    blocker = createServer();
    await new Promise<void>((resolveListen) => blocker.listen(0, '127.0.0.1', resolveListen));
    port = (blocker.address() as { port: number }).port;
  });
  afterAll(() => {
    blocker.close();
  });

  it('paylater sandbox --port: exit 1, the port and how to change it, no stack trace', async () => {
    const result = await run([CLI_ENTRY, 'sandbox', '--port', String(port)], {});
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `paylater: port ${port} on 127.0.0.1 is already in use; choose another with --port PORT or PAYLATER_PORT (0 picks a free port).\n`,
    );
  });

  it('PAYLATER_PORT: the same', async () => {
    const result = await run([CLI_ENTRY, 'sandbox'], { PAYLATER_PORT: String(port) });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`port ${port} on 127.0.0.1 is already in use; choose another with --port PORT or PAYLATER_PORT`);
    expect(result.stderr).not.toMatch(/\n\s+at /);
  });

  it('docs:serve --port: exit 1, the port and the flag, no stack trace', async () => {
    const result = await run(['--import', 'tsx', 'scripts/serve-docs.ts', '--port', String(port), '--dir', site], {});
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(
      `docs:serve: Port ${port} is already in use on 127.0.0.1; choose another with --port <n> (npm run docs:serve -- --port 4080; 0 picks a free port).\n`,
    );
  });
});

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    const child = spawn(process.execPath, args, { cwd: root, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`no exit within 45 s:\n${stdout}\n${stderr}`));
    }, 45_000);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolveRun({ code, stdout, stderr });
    });
  });
}

async function waitFor<T>(check: () => T | undefined, timeoutMs: number, describeFailure: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms; ${describeFailure()}`);
    await new Promise((done) => setTimeout(done, 200));
  }
}

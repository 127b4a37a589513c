/**
 * The sandbox process's heap flags (src/cli/heap.ts, D63, D65) and how they reach its Node command
 * line (src/cli/relaunch.ts, D84): `npm start` gives them; `paylater sandbox` started without them
 * runs itself again once as a child with them, passes a stop on without doubling it, ends with the
 * child's exit code, and leaves no child behind when it is killed. A flag the user gave is kept.
 * Every sandbox listens on a port the system picks.
 */
import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { npmStartNodeOptions } from '../../bench/start-options.js';
import { missingHeapFlags, SANDBOX_HEAP_FLAGS } from '../../src/cli/heap.js';
import { CLI_BUILD, CLI_ENTRY } from '../support/cli.js';

const FLAGS = SANDBOX_HEAP_FLAGS.map(({ flag }) => flag);

describe('the heap flags', () => {
  it('are all missing from a command line without them, and each one the user gave is kept', () => {
    expect(missingHeapFlags([])).toEqual(['--heap-growing-percent=100']);
    expect(missingHeapFlags(['--max-old-space-size=512'])).toEqual(FLAGS);
    expect(missingHeapFlags(['--heap-growing-percent=30'])).toEqual([]);
    expect(missingHeapFlags(['--heap_growing_percent=30'])).toEqual([]);
    expect(missingHeapFlags(['--no-heap-growing-percent'])).toEqual([]);
    // Compaction is set at run time (compaction.ts), never on the command line.
    expect(missingHeapFlags(['--compact-on-every-full-gc'])).toEqual(['--heap-growing-percent=100']);
    expect(missingHeapFlags(['--heap-growing-percentage=5'])).toEqual(FLAGS);
  });

  it('are the options of npm start', () => {
    expect(npmStartNodeOptions()).toEqual(FLAGS);
  });

  it('are flags this Node version has, and that NODE_OPTIONS refuses (so the command line carries them)', () => {
    const options = execFileSync(process.execPath, ['--v8-options'], { encoding: 'utf8' });
    for (const { name } of SANDBOX_HEAP_FLAGS) expect(options).toContain(`--${name} `);
    for (const flag of FLAGS) {
      const result = spawnSync(process.execPath, ['-e', '0'], { env: { ...process.env, NODE_OPTIONS: flag }, encoding: 'utf8' });
      expect(result.status, flag).not.toBe(0);
      expect(result.stderr).toContain('is not allowed in NODE_OPTIONS');
    }
  });
});

interface Started {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
  url: string;
}

const started: ChildProcess[] = [];
afterEach(() => {
  for (const child of started.splice(0)) {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
});

/**
 * `node [nodeOptions] main.js sandbox --port 0` in a process group of its own, once it listens;
 * with `through`, that script runs it (and `child` is that script's process).
 */
async function startSandbox(nodeOptions: string[] = [], through?: string): Promise<Started> {
  const command = [...nodeOptions, CLI_ENTRY, 'sandbox', '--port', '0', '--quiet'];
  const child = spawn(process.execPath, through === undefined ? command : [through, JSON.stringify(command)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  started.push(child);
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((done) => child.once('close', (code) => done(code)));
  const url = await waitFor(() => /listening on (http:\/\/[^\s]+)/.exec(output)?.[1], () => output);
  return { child, output: () => output, exited, url };
}

/** The processes whose parent is `pid`, with their command lines. */
function children(pid: number): { pid: number; args: string }[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' }).trim().split('\n');
  return rows
    .map((row) => /^\s*(\d+)\s+(\d+)\s+(.*)$/.exec(row))
    .filter((match) => match !== null && Number(match[2]) === pid)
    .map((match) => ({ pid: Number(match![1]), args: match![3]! }));
}

function isRunning(pid: number): boolean {
  const state = spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).stdout.trim();
  return state !== '' && !state.startsWith('Z');
}

async function waitFor<T>(check: () => T | undefined, describe: () => string, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out; so far:\n${describe()}`);
    await new Promise((done) => setTimeout(done, 100));
  }
}

/** The one sandbox child of a relaunching `paylater sandbox`, checked to carry the heap flags. */
function sandboxChild(running: Started): number {
  const below = children(running.child.pid!);
  expect(below, running.output()).toHaveLength(1);
  for (const flag of FLAGS) expect(below[0]!.args).toContain(flag);
  expect(below[0]!.args).toContain('sandbox --port 0 --quiet');
  return below[0]!.pid;
}

describe('paylater sandbox started without the heap flags', () => {
  it('runs itself again once with them; a SIGTERM to it stops the sandbox cleanly with exit code 0', async () => {
    const running = await startSandbox();
    const inner = sandboxChild(running);
    expect(children(inner)).toEqual([]);
    const answer = await fetch(`${running.url}/sandbox/clock`);
    expect(answer.status).toBe(200);
    process.kill(running.child.pid!, 'SIGTERM');
    expect(await running.exited).toBe(0);
    expect(running.output()).toContain('Stopping the sandbox...\n');
    expect(running.output()).not.toContain('Stopped.');
    await waitFor(() => (isRunning(inner) ? undefined : true), () => `pid ${inner} still running`);
  }, 60_000);

  it('Ctrl+C (SIGINT to the process group) stops it once, cleanly, with exit code 0', async () => {
    const running = await startSandbox();
    const inner = sandboxChild(running);
    process.kill(-running.child.pid!, 'SIGINT');
    expect(await running.exited).toBe(0);
    expect(running.output().match(/Stopping the sandbox\.\.\./g)).toHaveLength(1);
    expect(running.output()).not.toContain('Stopped.');
    await waitFor(() => (isRunning(inner) ? undefined : true), () => `pid ${inner} still running`);
  }, 60_000);

  it('stops the sandbox when the npm process that started it ends', async () => {
    // A stand-in for npm: launcher.ts knows npm by an `npm-cli.js` on its command line.
    const folder = mkdtempSync(join(tmpdir(), 'paylater-npm-'));
    try {
      const npm = join(folder, 'npm-cli.js');
      writeFileSync(
        npm,
        `const { spawn } = require('node:child_process');
         spawn(process.execPath, JSON.parse(process.argv[2]), { stdio: 'inherit' });`,
      );
      const running = await startSandbox([], npm);
      const [parent] = children(running.child.pid!);
      expect(parent).toBeDefined();
      const inner = children(parent!.pid)[0]!.pid;
      running.child.kill('SIGKILL');
      await waitFor(() => ([parent!.pid, inner].some(isRunning) ? undefined : true), running.output);
      // The last lines may still be on their way through the pipe.
      const stopped = `The process that started the sandbox (pid ${running.child.pid}) has ended.\nStopping the sandbox...\n`;
      await waitFor(() => (running.output().includes(stopped) ? true : undefined), running.output);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);

  it('leaves no sandbox behind when it is killed', async () => {
    const running = await startSandbox();
    const inner = sandboxChild(running);
    running.child.kill('SIGKILL');
    await running.exited;
    await waitFor(() => (isRunning(inner) ? undefined : true), () => `pid ${inner} still running`);
  }, 60_000);
});

describe('paylater sandbox started with the heap flags, or with values of its own', () => {
  it.each([[FLAGS], [['--heap-growing-percent=30', '--no-compact-on-every-full-gc']]])('runs in its own process (%j)', async (options) => {
    const running = await startSandbox(options);
    expect(children(running.child.pid!)).toEqual([]);
    process.kill(running.child.pid!, 'SIGTERM');
    expect(await running.exited).toBe(0);
    expect(running.output()).toContain('Stopping the sandbox...\n');
  }, 60_000);

  it('given other Node options, runs again with the growth flag added, the user’s options kept', async () => {
    const running = await startSandbox(['--max-old-space-size=512']);
    const below = children(running.child.pid!);
    expect(below).toHaveLength(1);
    expect(below[0]!.args).toContain('--heap-growing-percent=100 --max-old-space-size=512 ');
    // Compaction is turned on and off at run time (compaction.ts), never given on the command line.
    expect(below[0]!.args).not.toContain('compact');
    process.kill(running.child.pid!, 'SIGTERM');
    expect(await running.exited).toBe(0);
  }, 60_000);
});

describe('relaunch', () => {
  /** A child that reports each stop it is passed, and ends with 3 after two. */
  const CHILD = `
    let seen = 0;
    const report = (what) => {
      console.log(what);
      if (++seen === 2) process.exit(3);
    };
    process.on('message', (message) => report('message ' + JSON.stringify(message)));
    for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => report('signal ' + signal));
    console.log('ready ' + process.execArgv.join(' ') + ' ' + process.argv.slice(2).join(' '));
  `;

  it('passes the first stop as a message and later ones as signals, and ends with the child\'s exit code', async () => {
    const folder = mkdtempSync(join(tmpdir(), 'paylater-relaunch-'));
    try {
      const script = join(folder, 'child.cjs');
      writeFileSync(script, CHILD);
      const relaunch = pathToFileURL(join(CLI_BUILD, 'cli', 'relaunch.js')).href;
      const parentScript = join(folder, 'parent.mjs');
      writeFileSync(
        parentScript,
        `const { relaunch } = await import(${JSON.stringify(relaunch)});
         process.exitCode = await relaunch(['--no-warnings'], ${JSON.stringify(script)}, ['a', 'b']);`,
      );
      const parent = spawn(process.execPath, [parentScript], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_OPTIONS: '' }, detached: true });
      started.push(parent);
      let output = '';
      parent.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
      const exited = new Promise<number | null>((done) => parent.once('close', (code) => done(code)));
      await waitFor(() => (output.includes('ready') ? true : undefined), () => output);
      expect(output).toBe('ready --no-warnings a b\n');
      parent.kill('SIGTERM');
      await waitFor(() => (output.includes('message') ? true : undefined), () => output);
      parent.kill('SIGINT');
      expect(await exited).toBe(3);
      expect(output).toBe('ready --no-warnings a b\nmessage {"paylaterStop":"SIGTERM"}\nsignal SIGINT\n');
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  }, 60_000);
});

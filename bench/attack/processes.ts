/**
 * The processes the attack suite starts: sandboxes (the built CLI, `node [npm start's heap flags]
 * dist/cli/main.js sandbox --host 127.0.0.1 --port 0`, as bench/soak.ts runs it) and CLI commands. Every child is killed when the
 * suite ends, however it ends (normal exit, an exception, Ctrl+C); each one's memory is sampled from
 * `/proc/<pid>/status` every 50 ms (VmHWM, the kernel's own peak, is exact whatever the sampling
 * rate, as long as a sample is taken before the process ends), and a child whose RSS passes a hard
 * ceiling is killed so that an attack cannot take the machine's memory.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { npmStartNodeOptions } from '../start-options.js';
import { parseProcStatus } from './verdict.js';

const ROOT = resolve(import.meta.dirname, '../..');
const CLI = 'dist/cli/main.js';
/** What one sandbox may print that the suite keeps (to look for secrets in it): the first 8 MiB. */
const MAX_OUTPUT = 8 * 1024 * 1024;

const children = new Set<ChildProcess>();
let exitHooks = false;

/** Kills every child still running: on exit, on Ctrl+C and on SIGTERM. */
function installExitHooks(): void {
  if (exitHooks) return;
  exitHooks = true;
  const killAll = () => {
    for (const child of children) child.kill('SIGKILL');
  };
  process.on('exit', killAll);
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.once(signal, () => {
      killAll();
      process.exit(130);
    });
  }
}

function track(child: ChildProcess): void {
  installExitHooks();
  children.add(child);
  child.once('exit', () => children.delete(child));
}

/** Samples a process's memory until it ends; kills it when its RSS passes `killAboveMb`. */
class MemoryWatch {
  peakKb = 0;
  /** Set when the watch killed the process for its memory. */
  killedAtMb: number | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly child: ChildProcess,
    private readonly killAboveMb: number,
  ) {
    this.timer = setInterval(() => this.sample(), 50);
    this.timer.unref();
    child.once('exit', () => clearInterval(this.timer));
    this.sample();
  }

  sample(): void {
    const pid = this.child.pid;
    if (pid === undefined || this.child.exitCode !== null || this.child.signalCode !== null) return;
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/status`, 'utf8');
    } catch {
      return;
    }
    const { hwmKb, rssKb } = parseProcStatus(text);
    this.peakKb = Math.max(this.peakKb, hwmKb ?? 0, rssKb ?? 0);
    if ((rssKb ?? 0) / 1024 > this.killAboveMb && this.killedAtMb === undefined) {
      this.killedAtMb = (rssKb ?? 0) / 1024;
      this.child.kill('SIGKILL');
    }
  }

  get peakMb(): number {
    return this.peakKb / 1024;
  }

  stop(): void {
    this.sample();
    clearInterval(this.timer);
  }
}

export interface SandboxProcess {
  readonly child: ChildProcess;
  readonly url: string;
  readonly memory: MemoryWatch;
  /** What it printed (stdout and stderr, interleaved as received; the first 8 MiB). */
  output(): string;
  /** Whether it is still running. */
  alive(): boolean;
  /** How it ended, for a reason: `exit code 1`, `signal SIGKILL`. */
  ended(): string | undefined;
  /** SIGTERM, then SIGKILL after 3 s; resolves once it ended. */
  stop(): Promise<void>;
  /** Whether it ended because {@link stop} was called. */
  stopped(): boolean;
}

/** Collects a child's output, bounded. */
function collect(child: ChildProcess): () => string {
  const chunks: Buffer[] = [];
  let size = 0;
  const take = (chunk: Buffer) => {
    if (size >= MAX_OUTPUT) return;
    chunks.push(chunk);
    size += chunk.length;
  };
  child.stdout?.on('data', take);
  child.stderr?.on('data', take);
  return () => Buffer.concat(chunks).toString('utf8');
}

function endedOf(child: ChildProcess): string | undefined {
  if (child.exitCode !== null) return `exit code ${child.exitCode}`;
  if (child.signalCode !== null) return `signal ${child.signalCode}`;
  return undefined;
}

/** SIGTERM, then SIGKILL after `killAfterMs`; resolves once it ended (at once when it had). */
export async function stopChild(child: ChildProcess, killAfterMs = 3_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
  await exited;
  clearTimeout(timer);
}

/** The reason a sandbox did not start: it exited (with what it printed), or it took too long. */
export class SandboxStartFailure extends Error {
  override readonly name = 'SandboxStartFailure';
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(message);
  }
}

/**
 * Starts `paylater sandbox` from the build on 127.0.0.1 and a free port (unless `args` give
 * `--port`) with `args` (and
 * `nodeOptions` for Node itself, such as `--cpu-prof`); resolves when
 * it prints its address. Rejects with {@link SandboxStartFailure} when it exits first (a refused
 * flag) or does not start within 30 s.
 */
export async function startSandboxProcess(args: readonly string[], killAboveMb: number, nodeOptions: readonly string[] = []): Promise<SandboxProcess> {
  // `--port` may be given once: a free port unless `args` name one.
  const port = args.includes('--port') ? [] : ['--port', '0'];
  const child = spawn(process.execPath, [...npmStartNodeOptions(), ...nodeOptions, CLI, 'sandbox', '--host', '127.0.0.1', ...port, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  track(child);
  const output = collect(child);
  const memory = new MemoryWatch(child, killAboveMb);
  let stopped = false;
  const url = await new Promise<string>((found, reject) => {
    let text = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new SandboxStartFailure('the sandbox did not start within 30 s', output()));
    }, 30_000);
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const match = /listening on (http:\/\/[^\s]+)/.exec(text);
      if (match !== null) {
        clearTimeout(timer);
        child.stdout!.off('data', onData);
        found(match[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new SandboxStartFailure(`the sandbox exited before listening (${endedOf(child)})`, output()));
    });
  });
  return {
    child,
    url,
    memory,
    output,
    alive: () => child.exitCode === null && child.signalCode === null,
    ended: () => endedOf(child),
    stop: () => {
      stopped = true;
      return stopChild(child);
    },
    stopped: () => stopped,
  };
}

export interface CommandResult {
  /** Exit code, or null when it was killed. */
  code: number | null;
  signal: string | null;
  ms: number;
  peakMb: number;
  /** Killed by the suite: over its time limit, or over its memory ceiling. */
  killedFor: 'time' | 'memory' | undefined;
  stdout: string;
  stderr: string;
}

/**
 * Runs `paylater <args>` from the build, with standard input from `stdin` (a file descriptor, or
 * `ignore`); kills it after `timeoutMs` or above `killAboveMb` of RSS.
 */
export async function runCommand(
  args: readonly string[],
  options: { stdin?: 'ignore' | number; env?: NodeJS.ProcessEnv; timeoutMs: number; killAboveMb: number },
): Promise<CommandResult> {
  const started = performance.now();
  const child = spawn(process.execPath, [CLI, ...args], {
    cwd: ROOT,
    stdio: [options.stdin ?? 'ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...options.env },
  });
  track(child);
  const memory = new MemoryWatch(child, options.killAboveMb);
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let outSize = 0;
  let errSize = 0;
  child.stdout!.on('data', (chunk: Buffer) => {
    if ((outSize += chunk.length) <= 65_536) out.push(chunk);
  });
  child.stderr!.on('data', (chunk: Buffer) => {
    if ((errSize += chunk.length) <= 65_536) err.push(chunk);
  });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, options.timeoutMs);
  const [code, signal] = await new Promise<[number | null, string | null]>((done) => child.once('close', (c, s) => done([c, s])));
  clearTimeout(timer);
  memory.stop();
  return {
    code,
    signal,
    ms: performance.now() - started,
    peakMb: memory.peakMb,
    killedFor: timedOut ? 'time' : memory.killedAtMb !== undefined ? 'memory' : undefined,
    stdout: Buffer.concat(out).toString('utf8'),
    stderr: Buffer.concat(err).toString('utf8'),
  };
}

/** What `paylater sandbox --help` prints: which flags this sandbox accepts. */
export async function sandboxHelp(): Promise<string> {
  const result = await runCommand(['sandbox', '--help'], { timeoutMs: 30_000, killAboveMb: 1_000 });
  return result.stdout;
}

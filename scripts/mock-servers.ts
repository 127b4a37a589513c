/**
 * Starts and stops the Prism mock servers: one Prism process per API family, each serving the
 * bundled document generated/openapi/<family>.json on an internal port of 127.0.0.1, behind a small
 * proxy on the family's public port that answers a rejected request with what is wrong in the
 * family's error format (scripts/mock-proxy.ts explains why).
 *
 * Used by `npm run mock` (scripts/mock.ts), the mock tests and the contract kit:
 *
 *   const mocks = await startMocks({ families: ['sdk'], ports: { sdk: 4113 } });
 *   await fetch(`${mocks.urls.sdk}/merchant/credit/initiateTransaction`, ...);
 *   await mocks.stop();
 *
 * Every failure to start (a document missing, a port in use, Prism not answering in time, Prism
 * exiting) is a {@link MockStartError} with a message for a person; the processes already started
 * are stopped before it is thrown.
 *
 * Why a process per family rather than `@stoplight/prism-http-server` in this process: a mock that
 * crashes or hangs takes only its family down, and is seen as such (`unexpectedExit`, tested with
 * the pids); stopping is a signal to a process group, never a wait on servers that may not close;
 * Prism's logger, its global `fetch` polyfills and its memory stay out of the tests' and the
 * contract kit's own process; and docs/mock.md promises exactly this (one Prism process per
 * family; when one dies the others are stopped and the mock exits 1).
 * The command is found through the `bin` entry of `@stoplight/prism-cli`'s package.json.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { FAMILIES, familyInfo, MOCK_PORTS, type Family } from './families.js';
import { startErrorProxy, type ErrorProxy } from './mock-proxy.js';

const root = resolve(import.meta.dirname, '..');

/** Prism's command line: the `prism` entry of the `bin` field of its package, or undefined when not installed. */
function prismEntry(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    const manifestPath = require.resolve('@stoplight/prism-cli/package.json');
    const manifest = require(manifestPath) as { bin?: string | Record<string, string> };
    const bin = typeof manifest.bin === 'string' ? manifest.bin : manifest.bin?.prism;
    return bin === undefined ? undefined : join(dirname(manifestPath), bin);
  } catch {
    return undefined;
  }
}

/** What each family's mock serves, for people reading the start-up lines (`apis` of its row). */
export function familyLabel(family: Family): string {
  return familyInfo(family).apis;
}

export interface MockOptions {
  /** The families to serve; default all four. */
  families?: readonly Family[];
  /** The address Prism listens on; default 127.0.0.1. */
  host?: string;
  /** Ports per family; default {@link MOCK_PORTS} (gateway 4010, extras 4011, web 4012, sdk 4013). */
  ports?: Partial<Record<Family, number>>;
  /** Where the bundled documents are; default generated/openapi of this repository. */
  documentsDir?: string;
  /** How long to wait for each Prism to answer, in milliseconds; default 60 000. */
  startTimeoutMs?: number;
  /** Called with every line Prism writes (its start-up log, then one line per request). */
  onOutput?: (family: Family, line: string) => void;
}

/** A Prism process that ended while it was expected to run. */
export interface MockExit {
  family: Family;
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The last lines Prism wrote. */
  output: string;
}

export interface RunningMocks {
  /** Base URL per started family, e.g. `{ sdk: 'http://127.0.0.1:4013' }`. */
  urls: Partial<Record<Family, string>>;
  /** Port per started family (the proxy's: the one to call). */
  ports: Partial<Record<Family, number>>;
  /**
   * Where each family's Prism itself listens, behind its proxy: a port of 127.0.0.1 the system
   * picked at start, whatever `host` and the public ports are (`--port-offset` does not move it, and
   * it is never reachable from another machine; D78). Internal: call the public port.
   */
  internalPorts: Partial<Record<Family, number>>;
  /** Process id of each family's Prism. */
  pids: Partial<Record<Family, number>>;
  /**
   * Settles when the first Prism ends on its own (a crash, or a signal from outside); never
   * settles for the ends caused by {@link RunningMocks.stop}.
   */
  unexpectedExit: Promise<MockExit>;
  /** Stops every Prism and waits until each has exited. Safe to call more than once. */
  stop(): Promise<void>;
}

/** The mocks could not be started; the message says why and what to do. */
export class MockStartError extends Error {
  override readonly name = 'MockStartError';

  constructor(
    message: string,
    /** The port that could not be used, when that is the reason. */
    readonly port?: number,
  ) {
    super(message);
  }
}

/** Where Prism listens, behind the proxy. */
const PRISM_HOST = '127.0.0.1';
const OUTPUT_LINES_KEPT = 60;
const STOP_GRACE_MS = 5_000;
/** How many ports Prism is tried on when the one picked is taken before it binds. */
const PRISM_START_ATTEMPTS = 5;

interface Child {
  family: Family;
  process: ChildProcess;
  port: number;
  output: string[];
  exited: Promise<void>;
  hasExited: () => boolean;
  /** Called with each line Prism writes, while someone waits for one. */
  onLine?: ((line: string) => void) | undefined;
}

/** Starts one Prism per family and resolves once each of them accepts connections. */
export async function startMocks(options: MockOptions = {}): Promise<RunningMocks> {
  const families = [...new Set(options.families ?? FAMILIES)];
  const host = options.host ?? '127.0.0.1';
  const documentsDir = options.documentsDir ?? join(root, 'generated', 'openapi');
  const timeoutMs = options.startTimeoutMs ?? 60_000;
  if (families.length === 0) throw new MockStartError('No family to start.');
  for (const family of families) {
    if (!(FAMILIES as readonly string[]).includes(family)) {
      throw new MockStartError(`Unknown family '${family}'; the families are ${FAMILIES.join(', ')}.`);
    }
  }
  const prism = prismEntry();
  if (prism === undefined || !existsSync(prism)) {
    throw new MockStartError('Prism is not installed (@stoplight/prism-cli has no `prism` command); run `npm ci`.');
  }

  const ports = Object.fromEntries(families.map((f) => [f, options.ports?.[f] ?? MOCK_PORTS[f]])) as Record<Family, number>;
  const seen = new Map<number, Family>();
  for (const family of families) {
    const port = ports[family];
    if (!Number.isInteger(port) || port < 1 || port > 65_535) {
      throw new MockStartError(`Port ${port} for ${family} is not a valid TCP port (1-65535).`);
    }
    const other = seen.get(port);
    if (other) throw new MockStartError(`Port ${port} is given to both ${other} and ${family}.`);
    seen.set(port, family);
  }

  const documents = new Map<Family, string>();
  for (const family of families) {
    const document = join(documentsDir, `${family}.json`);
    if (!existsSync(document)) {
      throw new MockStartError(
        `The bundled document of ${family} (${relative(process.cwd(), document)}) is missing; run \`npm run generate\` first.`,
      );
    }
    documents.set(family, document);
  }

  for (const family of families) {
    const problem = await portProblem(host, ports[family]);
    if (problem) throw new MockStartError(`Port ${ports[family]} (${family}) ${problem} on ${host}.`, ports[family]);
  }

  // Prism listens on a free port of the loopback interface; the proxy on the public one. The port
  // is free when picked but may be taken before Prism binds it (another process's listener, or an
  // outgoing connection's local port): Prism then exits with EADDRINUSE and is started again on
  // another port. Readiness is Prism's own "listening" line, never a connection that any other
  // server on that port could accept.
  const children: Child[] = [];
  const spawned: Child[] = [];
  let stopping = false;
  let stopped: Promise<void> | undefined;
  // A safety net: if this process exits without stop() (an uncaught error, process.exit() during
  // start-up), kill the Prism processes rather than leave them running.
  const killOnExit = () => {
    for (const child of spawned) signal(child, 'SIGKILL');
  };
  process.once('exit', killOnExit);
  const stop = (): Promise<void> => {
    stopping = true;
    stopped ??= Promise.all([...proxies.map((proxy) => proxy.close()), ...spawned.map(stopChild)]).then(() => {
      process.removeListener('exit', killOnExit);
    });
    return stopped;
  };
  const proxies: ErrorProxy[] = [];
  const startPrism = async (family: Family): Promise<Child> => {
    for (let attempt = 1; ; attempt++) {
      const child = spawnPrism(prism, family, documents.get(family) as string, PRISM_HOST, await freePort(PRISM_HOST), options.onOutput);
      spawned.push(child);
      try {
        await waitUntilListening(child, timeoutMs);
        return child;
      } catch (error) {
        if (!(error instanceof PortTakenError) || attempt >= PRISM_START_ATTEMPTS) throw error;
      }
    }
  };

  try {
    children.push(...(await Promise.all(families.map(startPrism))));
  } catch (error) {
    await stop();
    throw error;
  }

  const unexpectedExit = new Promise<MockExit>((resolveExit) => {
    for (const child of children) {
      void child.exited.then(() => {
        if (stopping) return;
        resolveExit({
          family: child.family,
          code: child.process.exitCode,
          signal: child.process.signalCode,
          output: child.output.join('\n'),
        });
      });
    }
  });

  try {
    for (const child of children) {
      const document = documents.get(child.family) as string;
      const proxy = await startErrorProxy({ family: child.family, document, host, port: ports[child.family], target: { host: PRISM_HOST, port: child.port } }).catch(
        (error: NodeJS.ErrnoException) => {
          throw new MockStartError(`Port ${ports[child.family]} (${child.family}) cannot be used on ${host}: ${error.code ?? error.message}.`, ports[child.family]);
        },
      );
      proxies.push(proxy);
    }
  } catch (error) {
    await stop();
    throw error;
  }

  const urlHost = connectHost(host).includes(':') ? `[${connectHost(host)}]` : connectHost(host);
  const result: RunningMocks = { urls: {}, ports: {}, internalPorts: {}, pids: {}, unexpectedExit, stop };
  for (const child of children) {
    result.urls[child.family] = `http://${urlHost}:${ports[child.family]}`;
    result.ports[child.family] = ports[child.family];
    result.internalPorts[child.family] = child.port;
    if (child.process.pid !== undefined) result.pids[child.family] = child.process.pid;
  }
  return result;
}

function spawnPrism(
  prism: string,
  family: Family,
  document: string,
  host: string,
  port: number,
  onOutput: MockOptions['onOutput'],
): Child {
  // Prism runs in a process group of its own (detached), so that stopping it can signal the whole
  // group; Node is started directly (no npx, no shell) so the pid is Prism's own.
  const child = spawn(process.execPath, [prism, 'mock', '-h', host, '-p', String(port), document], {
    cwd: root,
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
  });
  const output: string[] = [];
  let done = false;
  const started: Child = { family, process: child, port, output, exited: Promise.resolve(), hasExited: () => done };
  const collect = (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split(/\r?\n/)) {
      if (line.trim() === '') continue;
      output.push(line);
      if (output.length > OUTPUT_LINES_KEPT) output.shift();
      onOutput?.(family, line);
      started.onLine?.(line);
    }
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<void>((resolveExit) => {
    // 'close' rather than 'exit': the last lines (an EADDRINUSE) have been read by then.
    child.once('close', () => {
      done = true;
      resolveExit();
    });
    child.once('error', (error) => {
      output.push(`could not start Prism: ${error.message}`);
      done = true;
      resolveExit();
    });
  });
  started.exited = exited;
  return started;
}

async function stopChild(child: Child): Promise<void> {
  if (child.hasExited()) return;
  signal(child, 'SIGTERM');
  const timer = setTimeout(() => signal(child, 'SIGKILL'), STOP_GRACE_MS);
  try {
    await child.exited;
  } finally {
    clearTimeout(timer);
  }
}

function signal(child: Child, name: NodeJS.Signals): void {
  const pid = child.process.pid;
  if (pid === undefined || child.hasExited()) return;
  try {
    // The negative pid addresses the process group: Prism and anything it started.
    process.kill(process.platform === 'win32' ? pid : -pid, name);
  } catch {
    try {
      child.process.kill(name);
    } catch {
      // Already gone.
    }
  }
}

/** Prism's port was taken between the pick and its bind: start it again on another one. */
class PortTakenError extends Error {}

/** Resolves once Prism writes that it listens on its port; fails when it exits first or time runs out. */
function waitUntilListening(child: Child, timeoutMs: number): Promise<void> {
  const listening = `Prism is listening on http://${PRISM_HOST}:${child.port}`;
  return new Promise((resolveReady, rejectReady) => {
    let timer: NodeJS.Timeout | undefined;
    const finish = (error?: Error) => {
      clearTimeout(timer);
      child.onLine = undefined;
      if (error) rejectReady(error);
      else resolveReady();
    };
    timer = setTimeout(() => {
      finish(
        new MockStartError(
          `Prism for ${child.family} did not start listening on port ${child.port} within ${Math.round(timeoutMs / 1000)} s. Its output:\n${indent(child.output)}`,
        ),
      );
    }, timeoutMs);
    child.onLine = (line) => {
      if (line.includes(listening)) finish();
    };
    if (child.output.some((line) => line.includes(listening))) finish();
    void child.exited.then(() => {
      if (child.output.some((line) => /EADDRINUSE/.test(line))) {
        finish(new PortTakenError(`port ${child.port} was taken`));
        return;
      }
      finish(
        new MockStartError(
          `Prism for ${child.family} (port ${child.port}) exited while starting` +
            `${child.process.exitCode === null ? '' : ` with code ${child.process.exitCode}`}. Its output:\n${indent(child.output)}`,
        ),
      );
    });
  });
}

function indent(lines: string[]): string {
  return lines.length === 0 ? '  (no output)' : lines.map((line) => `  ${line}`).join('\n');
}

/** Where to connect to reach a server listening on `host` (a wildcard address means this machine). */
function connectHost(host: string): string {
  if (host === '0.0.0.0' || host === '') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '::1';
  return host.replace(/^\[(.*)\]$/, '$1');
}

/** A port of `host` that is free now (the OS picks it). */
function freePort(host: string): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ host, port: 0, exclusive: true }, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolvePort(port));
    });
  });
}

/**
 * Tries to bind the port the way the proxy will; resolves undefined when it is free, else a phrase
 * saying why it cannot be used ("is already in use", ...).
 */
export function portProblem(host: string, port: number): Promise<string | undefined> {
  return new Promise((resolveProblem) => {
    const server = createServer();
    server.unref();
    server.once('error', (error: NodeJS.ErrnoException) => {
      if (error.code === 'EADDRINUSE') resolveProblem('is already in use');
      else if (error.code === 'EACCES') resolveProblem('may not be used by this user');
      else if (error.code === 'EADDRNOTAVAIL') resolveProblem('cannot be bound: the address is not on this machine');
      else resolveProblem(`cannot be bound (${error.code ?? error.message})`);
    });
    server.listen({ host: host.replace(/^\[(.*)\]$/, '$1'), port, exclusive: true }, () => {
      server.close(() => resolveProblem(undefined));
    });
  });
}

/** Child processes the tests start (Prism mocks and proxies): free ports for them, wait for them, stop them. */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';

/**
 * A port that is free now, for a child process that cannot listen on port 0 and report it. Every
 * test takes its ports this way, so two copies of the suite can run at once on one machine.
 *
 * The port is picked at random below the OS's range of ephemeral ports (32768-60999 on Linux, read
 * from /proc where it can be): the ports the OS hands to `listen(0)` and to every outgoing connection
 * come from that range, and thousands of test requests cycle through it, so a port picked there and
 * released can be taken again before the child binds it. Below the range only another picker like
 * this one competes, and it never hands out the same port twice in one process.
 */
export async function freePort(): Promise<number> {
  const [low] = ephemeralRange();
  const floor = 10_000;
  for (let tries = 0; tries < 200; tries++) {
    const port = low > floor + 1_000 ? floor + Math.floor(Math.random() * (low - floor)) : 0;
    if (port !== 0 && handedOut.has(port)) continue;
    const bound = await tryListen(port);
    if (bound === undefined) continue;
    handedOut.add(bound);
    return bound;
  }
  throw new Error('no free port found below the ephemeral range after 200 tries');
}

const handedOut = new Set<number>();

function ephemeralRange(): [number, number] {
  try {
    const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/).map(Number);
    if (Number.isInteger(low) && Number.isInteger(high)) return [low as number, high as number];
  } catch {
    // Not Linux: the IANA range, which macOS and Windows use.
  }
  return [49_152, 65_535];
}

/** Binds `port` (0: any) on 127.0.0.1 and releases it; the port, or undefined when it is taken. */
function tryListen(port: number): Promise<number | undefined> {
  return new Promise((done) => {
    const server = createServer();
    server.once('error', () => done(undefined));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () => {
      const bound = (server.address() as AddressInfo).port;
      server.close(() => done(bound));
    });
  });
}

/** One free port per family. */
export async function freePorts<K extends string>(keys: readonly K[]): Promise<Record<K, number>> {
  const ports = {} as Record<K, number>;
  for (const key of keys) ports[key] = await freePort();
  return ports;
}

/** Resolves once `url` answers at all; fails when the child exits first or time runs out. */
async function waitUntilAnswers(url: string, child: ChildProcess, timeoutMs = 90_000, output: () => string = () => ''): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`${url}: the server exited with code ${child.exitCode}\n${output()}`);
    try {
      await fetch(url, { signal: AbortSignal.timeout(2_000) });
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms\n${output()}`);
      await new Promise((done) => setTimeout(done, 250));
    }
  }
}

export interface StartedChild {
  port: number;
  child: ChildProcess;
  /** The child's output so far (the last 8,000 characters). */
  output(): string;
}

/**
 * Starts a server process on a free port and resolves once it is ready: `ready` is seen in its
 * output (the server's own "listening" line, so that no other server on that port can pass for it)
 * or, without `ready`, once `probe(port)` answers. A child that exits because its port was taken
 * in the meantime (EADDRINUSE) is started again on another port, up to five times.
 */
export async function startOnFreePort(
  start: (port: number) => ChildProcess,
  options: { ready?: RegExp; probe?: (port: number) => string; timeoutMs?: number } = {},
): Promise<StartedChild> {
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = start(port);
    let output = '';
    let onOutput: (() => void) | undefined;
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString('utf8')).slice(-8_000);
      onOutput?.();
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const closed = new Promise<void>((done) => child.once('close', () => done()));
    try {
      if (options.ready) {
        const pattern = options.ready;
        await new Promise<void>((resolveReady, rejectReady) => {
          const timer = setTimeout(
            () => rejectReady(new Error(`port ${port}: not ready within ${options.timeoutMs ?? 90_000} ms\n${output}`)),
            options.timeoutMs ?? 90_000,
          );
          onOutput = () => {
            if (pattern.test(output)) {
              clearTimeout(timer);
              resolveReady();
            }
          };
          onOutput();
          void closed.then(() => {
            clearTimeout(timer);
            rejectReady(new Error(`port ${port}: the server exited with code ${child.exitCode}\n${output}`));
          });
        });
        onOutput = undefined;
      } else {
        const url = (options.probe ?? ((p: number) => `http://127.0.0.1:${p}/`))(port);
        await waitUntilAnswers(url, child, options.timeoutMs, () => output);
      }
      return { port, child, output: () => output };
    } catch (error) {
      await stopChild(child);
      await closed;
      if (!/EADDRINUSE|address already in use/i.test(output) || attempt >= 5) throw error;
    }
  }
}

/** SIGTERM, then SIGKILL after 5 s; resolves when the child has exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

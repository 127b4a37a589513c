/** Child processes the tests start (Prism mocks and proxies): free ports for them, wait for them, stop them. */
import type { ChildProcess } from 'node:child_process';
import { createServer, type AddressInfo } from 'node:net';

/**
 * A port the OS says is free now, for a child process that cannot listen on port 0 and report it.
 * Every test takes its ports this way, so two copies of the suite can run at once on one machine.
 */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** One free port per family. */
export async function freePorts<K extends string>(keys: readonly K[]): Promise<Record<K, number>> {
  const ports = {} as Record<K, number>;
  for (const key of keys) ports[key] = await freePort();
  return ports;
}

/** Resolves once `url` answers at all; fails when the child exits first or time runs out. */
export async function waitUntilAnswers(url: string, child: ChildProcess, timeoutMs = 90_000, output: () => string = () => ''): Promise<void> {
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

/** SIGTERM, then SIGKILL after 5 s; resolves when the child has exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/** Child processes the tests start (Prism mocks and proxies): wait for them, and stop them. */
import type { ChildProcess } from 'node:child_process';

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

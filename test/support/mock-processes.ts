/**
 * The mock's processes as the tests see them (test/scripts/mock.test.ts and, for all four
 * families, the slow group's test/scripts/mock-cli.test.ts): free blocks of ports at a random
 * offset from the usual ones, the Prism processes below a pid (from ps), and the check that
 * `npm run mock` leaves none of them behind after SIGTERM.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:net';
import { resolve } from 'node:path';
import { expect } from 'vitest';
import { FAMILIES, MOCK_PORTS, type Family } from '../../scripts/families.js';
import { familyLabel } from '../../scripts/mock-servers.js';

const root = resolve(import.meta.dirname, '../..');

/** `npm run mock -- --family ...` (as its script, through tsx) answers SIGTERM by ending every Prism it started and then itself. */
export async function expectCliStopsItsPrisms(families: readonly Family[]): Promise<void> {
  const offset = await freeOffset();
  const ports = portsAt(offset);
  const cli = spawn(process.execPath, ['--import', 'tsx', 'scripts/mock.ts', ...families.flatMap((family) => ['--family', family]), '--port-offset', String(offset), '--quiet'], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true, // a process group of its own, so that the finally below can clean up whatever happens
  });
  let stdout = '';
  let stderr = '';
  cli.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  cli.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  let prisms: number[] = [];
  try {
    await waitFor(() => families.every((f) => stdout.includes(`127.0.0.1:${ports[f]} `)), 60_000, () => `CLI output:\n${stdout}\n${stderr}`);
    for (const family of families) {
      expect(stdout).toMatch(new RegExp(`^${family}\\s+http://127\\.0\\.0\\.1:${ports[family]}\\s+\\(${familyLabel(family).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; its Prism, internal: 127\\.0\\.0\\.1:\\d+\\)$`, 'm'));
    }
    prisms = prismPids(cli.pid as number);
    expect(prisms).toHaveLength(families.length);

    process.kill(cli.pid as number, 'SIGTERM');
    await waitFor(() => prisms.every((pid) => !isAlive(pid)), 20_000, () => `still running: ${prisms.filter(isAlive).join(', ')}`);
    await waitFor(() => !groupAlive(cli.pid as number), 20_000, () => 'the CLI process group is still running');
  } finally {
    try {
      process.kill(-(cli.pid as number), 'SIGKILL');
    } catch {
      // Already gone.
    }
    for (const pid of prisms) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        // Already gone.
      }
    }
  }
}

export function portsAt(offset: number): Record<Family, number> {
  return Object.fromEntries(FAMILIES.map((f) => [f, MOCK_PORTS[f] + offset])) as Record<Family, number>;
}

/** A random offset (a multiple of 10 between 1000 and 20990) at which the four mock ports are free. */
export async function freeOffset(): Promise<number> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const offset = 1000 + 10 * Math.floor(Math.random() * 2000);
    const free = await Promise.all(Object.values(portsAt(offset)).map(isFree));
    if (free.every(Boolean)) return offset;
  }
  throw new Error('found no block of four free ports');
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolveFree) => {
    const server = createServer();
    server.once('error', () => resolveFree(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolveFree(true)));
  });
}

export function occupy(port: number): Promise<Server> {
  return new Promise((resolveServer, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => resolveServer(server));
  });
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The pids of the Prism mock processes below `root` (children, grandchildren, ...), from ps. */
function prismPids(root: number): number[] {
  const rows = execFileSync('ps', ['-eo', 'pid=,ppid=,args='], { encoding: 'utf8' })
    .split('\n')
    .map((line) => line.trim().match(/^(\d+)\s+(\d+)\s+(.*)$/))
    .filter((m): m is RegExpMatchArray => m !== null)
    .map(([, pid, ppid, args]) => ({ pid: Number(pid), ppid: Number(ppid), args: args ?? '' }));
  const below = new Set([root]);
  for (let grew = true; grew; ) {
    grew = false;
    for (const row of rows) {
      if (below.has(row.ppid) && !below.has(row.pid)) {
        below.add(row.pid);
        grew = true;
      }
    }
  }
  return rows.filter((row) => below.has(row.pid) && /prism-cli\/dist\/index\.js mock /.test(row.args)).map((row) => row.pid);
}

export async function waitFor(condition: () => boolean, timeoutMs: number, describeFailure: () => string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms; ${describeFailure()}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

export function finished(child: ChildProcess, timeoutMs: number): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolveRun, reject) => {
    let stdout = '';
    let stderr = '';
    child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`the CLI did not exit within ${timeoutMs} ms; output:\n${stdout}\n${stderr}`));
    }, timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolveRun({ code, stdout, stderr });
    });
  });
}

/**
 * Side-by-side measurement: two variants run in alternating rounds in one process, so that a
 * noisy, shared machine slows both alike; the figure reported is the median of the per-round ratios.
 * Also a process's CPU time ({@link cpuMs}), which the benches of servers divide by the requests
 * served: a figure that other processes of a shared machine disturb far less than a rate.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** The CPU time a process has used, ms (Linux: utime + stime of /proc/<pid>/stat, in ticks of 10 ms). */
export function cpuMs(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10;
}

/**
 * The CPU time a PostgreSQL server listening on `port` has used, ms: its postmaster's (with the
 * children it reaped) and that of each of its processes alive now (backends, WAL writer, checkpointer).
 */
export function postgresCpuMs(port: number): number {
  const stats = new Map<number, { ppid: number; ms: number; reapedMs: number }>();
  let postmaster: number | undefined;
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      const [comm, rest] = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ') as [string, string];
      if (!comm.endsWith('(postgres')) continue;
      const fields = rest.split(' ');
      stats.set(pid, { ppid: Number(fields[1]), ms: (Number(fields[11]) + Number(fields[12])) * 10, reapedMs: (Number(fields[13]) + Number(fields[14])) * 10 });
      if (postmaster === undefined && readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').includes(` -p ${port} `)) postmaster = pid;
    } catch {
      // A process that ended meanwhile.
    }
  }
  if (postmaster === undefined) throw new Error(`no PostgreSQL server on port ${port} among the processes`);
  let total = stats.get(postmaster)!.ms + stats.get(postmaster)!.reapedMs;
  for (const stat of stats.values()) if (stat.ppid === postmaster) total += stat.ms;
  return total;
}

export interface Pair {
  /** The median over rounds of `subject ops/s ÷ baseline ops/s`. */
  ratio: number;
  subjectOpsPerSecond: number;
  baselineOpsPerSecond: number;
}

function timeLoop(fn: () => unknown, iterations: number): number {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

async function timeLoopAsync(fn: () => Promise<unknown>, iterations: number): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) await fn();
  return Number(process.hrtime.bigint() - start) / 1e9;
}

export const median = (values: number[]): number => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
};

function summarise(subject: number[], baseline: number[], iterations: number): Pair {
  const ratios = subject.map((seconds, i) => (baseline[i] as number) / seconds);
  return {
    ratio: median(ratios),
    subjectOpsPerSecond: iterations / median(subject),
    baselineOpsPerSecond: iterations / median(baseline),
  };
}

/** Throughput of `subject` relative to `baseline` (1.0 = as fast; above 1 = faster). */
export function compare(subject: () => unknown, baseline: () => unknown, iterations: number, rounds = 9): Pair {
  timeLoop(subject, Math.ceil(iterations / 4));
  timeLoop(baseline, Math.ceil(iterations / 4));
  const s: number[] = [];
  const b: number[] = [];
  for (let round = 0; round < rounds; round++) {
    // Alternate which goes first, so neither always runs on a warmer or a busier machine.
    if (round % 2 === 0) {
      s.push(timeLoop(subject, iterations));
      b.push(timeLoop(baseline, iterations));
    } else {
      b.push(timeLoop(baseline, iterations));
      s.push(timeLoop(subject, iterations));
    }
  }
  return summarise(s, b, iterations);
}

export async function compareAsync(
  subject: () => Promise<unknown>,
  baseline: () => Promise<unknown>,
  iterations: number,
  rounds = 9,
): Promise<Pair> {
  await timeLoopAsync(subject, Math.ceil(iterations / 4));
  await timeLoopAsync(baseline, Math.ceil(iterations / 4));
  const s: number[] = [];
  const b: number[] = [];
  for (let round = 0; round < rounds; round++) {
    if (round % 2 === 0) {
      s.push(await timeLoopAsync(subject, iterations));
      b.push(await timeLoopAsync(baseline, iterations));
    } else {
      b.push(await timeLoopAsync(baseline, iterations));
      s.push(await timeLoopAsync(subject, iterations));
    }
  }
  return summarise(s, b, iterations);
}

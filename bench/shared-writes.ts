/**
 * Case f of the shared sandbox's fault suite (bench/shared-faults.ts): large writes. Three clients
 * each send web initiates with about 1 MiB of notes (the attack suite's body of empty objects, the
 * costliest to parse and keep), one after the other, while a status check is sent every 20 ms. In
 * memory every request goes to one process; shared, each client writes through a process of its
 * own (three processes on one database) and the check goes to a process that is not the writer.
 * The case passes when the longest check on the shared sandbox is within 2x the longest in memory,
 * the same bound as the long advance's (bench/shared.ts), and every request was answered 2xx.
 */
import type { PostgresCluster } from '../test/support/postgres.js';
import { BODY_LIMIT, emptyObjects, webInitiate } from './attack/flows.js';
import { fmt, initiateOn, probeStatus, sleep, startSandboxProcess, statusOn, stopAll, type SandboxProcess } from './shared-cluster.js';
import type { FaultCase } from './shared-faults.js';

const WRITERS = 3;
const INITIATES_EACH = 8;
/** Room for the rest of a body around the notes. */
const ENVELOPE = 512;

interface WritesFigures {
  maxMs: number;
  medianMs: number;
  checks: number;
  failedChecks: number;
  written: number;
  refused: string[];
  ms: number;
}

/** The three writers on `writeTo` (by index, wrapping), the check on `checkOn`. */
async function writesUnderProbe(writeTo: string[], checkOn: string, tag: string): Promise<WritesFigures> {
  const probeId = `ord_writes_probe_${tag}`;
  if ((await initiateOn(checkOn, probeId)).status !== 201) throw new Error(`the probe's transaction was refused on ${checkOn}`);
  const notes = emptyObjects(BODY_LIMIT - ENVELOPE, 'object');
  const refused: string[] = [];
  let written = 0;
  await sleep(500);
  const started = performance.now();
  const probing = await probeStatus(checkOn, probeId, 20);
  // The checks stop whatever became of the writes, so that a failed case leaves nothing running.
  const failure = await Promise.all(
    Array.from({ length: WRITERS }, async (_, writer) => {
      for (let n = 0; n < INITIATES_EACH; n++) {
        const reply = await webInitiate(writeTo[writer % writeTo.length]!, `writes_${tag}_${writer}_${n}`, notes, { timeoutMs: 60_000, keepBytes: 300 });
        if (reply.status === 200) written += 1;
        else refused.push(`${reply.status} ${reply.body.slice(0, 120)}`);
      }
    }),
  ).then(
    () => undefined,
    (error: unknown) => ({ error }),
  );
  const ms = performance.now() - started;
  const checks = await probing.stop();
  if (failure !== undefined) throw failure.error;
  return { maxMs: checks.maxMs, medianMs: checks.medianMs, checks: checks.latencies.length, failedChecks: checks.failed, written, refused, ms };
}

export async function largeWrites(cluster: PostgresCluster): Promise<FaultCase> {
  const started: SandboxProcess[] = [];
  try {
    const alone = await startSandboxProcess();
    started.push(alone);
    const memory = await writesUnderProbe([alone.url], alone.url, 'memory');
    await stopAll(started.splice(0));
    const url = await cluster.createDatabase();
    for (let n = 0; n < WRITERS; n++) started.push(await startSandboxProcess(url));
    const urls = started.map((p) => p.url);
    // The check on the second process (it forwards); the writers on all three, the writer included.
    const shared = await writesUnderProbe(urls, urls[1]!, 'shared');
    const total = WRITERS * INITIATES_EACH;
    const pass = memory.written === total && shared.written === total && shared.failedChecks === 0 && memory.failedChecks === 0 && shared.maxMs <= 2 * memory.maxMs;
    const line = (name: string, f: WritesFigures) =>
      `${name}: ${f.written} of ${total} initiates of ${fmt(BODY_LIMIT / 1024 / 1024, 1)} MiB answered 200 in ${fmt(f.ms / 1000, 1)} s; ` +
      `${f.checks} status checks, longest ${fmt(f.maxMs)} ms, median ${fmt(f.medianMs)} ms, failed ${f.failedChecks}` +
      (f.refused.length === 0 ? '' : `; refused: ${f.refused.slice(0, 3).join(' | ')}`);
    return {
      name: 'f. three clients writing 1 MiB notes',
      pass,
      figures: [
        line('memory, one process', memory),
        line('shared, three processes, the check on one that forwards', shared),
        `longest check shared ÷ memory ${fmt(shared.maxMs / Math.max(1, memory.maxMs), 1)}x (target <= 2)`,
      ],
    };
  } finally {
    await stopAll(started);
  }
}

/**
 * The shared sandbox under faults, as black-box cases (`npm run bench -- --only shared-faults`),
 * each answering PASS or FAIL with its figures:
 * a. PostgreSQL stopped under load (`pg_ctl -m immediate`, then `-m fast`), 20 workers doing SDK
 *    initiates, confirms and refunds across two processes: no process exits, 503 with Retry-After
 *    in the contract's error format meanwhile, both answer again without a restart, every
 *    acknowledged initiate is there afterwards, no transaction refunded beyond its amount;
 * b. PostgreSQL restarted with 200 webhook deliveries in flight: each event delivered, none left
 *    pending with no attempt due, none sent again (a takeover after it included);
 * c. a full disk: the cluster on a small tmpfs, filled while the processes write;
 * d. SIGKILL of the first-started process with 20 webhooks in flight to a receiver answering after
 *    2 s: all delivered by the survivor, every copy's signature verified, and when the survivor
 *    answers writes again;
 * e. two and three processes starting at once on a database of `rows` records (bench/shared-starts.ts);
 * f. three clients writing 1 MiB notes through three processes while another checks a status,
 *    against the same on one process in memory (bench/shared-writes.ts).
 * Everything is driven from outside the processes (bench/shared-cluster.ts), so that any design of
 * the shared store is measured unchanged.
 */
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deliveriesInDatabase, postgresUnavailable, startPostgres, type PostgresCluster } from '../test/support/postgres.js';
import { buildTree } from './sandbox.js';
import { largeWrites } from './shared-writes.js';
import {
  call,
  fmt,
  inParallel,
  initiateOn,
  receivedIds,
  sdk,
  sleep,
  startReceiver,
  startSandboxProcess,
  statusOn,
  stopAll,
  until,
  withClient,
  type Answer,
  type SandboxProcess,
} from './shared-cluster.js';
import { startsOnLargeDatabase } from './shared-starts.js';

export interface FaultCase {
  name: string;
  pass: boolean;
  figures: string[];
}

const WORKERS = 20;
const AMOUNT = 10_000;
/** Two refunds of this much are sent at once on the two processes: at most one may be accepted. */
const REFUND = 6_000;

/**
 * 20 workers, each a loop over the processes: an initiate on one, its confirm on the other, then
 * two refunds at once (one on each) that together exceed the amount. Counts every answer.
 */
class Load {
  readonly acknowledged: string[] = [];
  /** Refunds answered 2xx per transaction. */
  readonly refunds = new Map<string, number>();
  /** `what status code` -> count. */
  readonly answers = new Map<string, number>();
  unavailable = 0;
  /** 503s without Retry-After or without SERVICE_UNAVAILABLE in the error body. */
  badUnavailable = 0;
  /** No HTTP answer at all (a process gone). */
  noAnswer = 0;
  /** The last 2xx per process (performance.now()). */
  readonly lastOk = new Map<string, number>();
  private running = true;
  private readonly workers: Promise<void>[];

  constructor(
    private readonly processes: SandboxProcess[],
    prefix: string,
    private readonly withRefunds: boolean,
  ) {
    this.workers = Array.from({ length: WORKERS }, (_, index) => this.worker(`${prefix}-${index}`, index));
  }

  private note(what: string, url: string, answer: Answer): boolean {
    const code = String(answer.body.errorCode ?? answer.body.message ?? answer.body.error ?? '');
    const key = `${what} ${answer.status} ${answer.status >= 200 && answer.status < 300 ? '' : code.slice(0, 60)}`.trim();
    this.answers.set(key, (this.answers.get(key) ?? 0) + 1);
    if (answer.status === 0) this.noAnswer += 1;
    if (answer.status === 503) {
      this.unavailable += 1;
      if (answer.retryAfter === null || code !== 'SERVICE_UNAVAILABLE') this.badUnavailable += 1;
    }
    const ok = answer.status >= 200 && answer.status < 300;
    if (ok) this.lastOk.set(url, performance.now());
    return ok;
  }

  private async worker(prefix: string, index: number): Promise<void> {
    for (let n = 0; this.running; n++) {
      const id = `${prefix}-${n}`;
      const here = this.processes[(index + n) % this.processes.length]!.url;
      const there = this.processes[(index + n + 1) % this.processes.length]!.url;
      const initiated = await initiateOn(here, id, AMOUNT);
      if (!this.note('initiate', here, initiated)) {
        await sleep(initiated.status === 0 ? 100 : 20);
        continue;
      }
      this.acknowledged.push(id);
      if (!this.withRefunds) continue;
      if (!this.note('confirm', there, await call(there, `/sandbox/sdk/transactions/${id}/confirm`))) continue;
      const refunds = await Promise.all([here, there].map((url) => sdk(url, '/merchant/credit/refundTransaction', { merchantTransactionId: id, amount: REFUND })));
      const accepted = refunds.filter((answer, n2) => this.note('refund', n2 === 0 ? here : there, answer)).length;
      this.refunds.set(id, accepted);
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
  }

  /** Waits until every process answered a 2xx after `since`; the ms each took (undefined: never). */
  async recovery(since: number, timeoutMs: number): Promise<(number | undefined)[]> {
    await until(() => this.processes.every((p) => (this.lastOk.get(p.url) ?? 0) > since), timeoutMs);
    return this.processes.map((p) => {
      const at = this.lastOk.get(p.url) ?? 0;
      return at > since ? at - since : undefined;
    });
  }

  /** The acknowledged initiates that no process can read (answered anything but 200, or NO_SUCH_TRANSACTION). */
  async lost(): Promise<string[]> {
    const lost: string[] = [];
    await inParallel(this.acknowledged.length, WORKERS, async (index) => {
      const id = this.acknowledged[index]!;
      const answer = await statusOn(this.processes[index % this.processes.length]!.url, id);
      if (answer.status !== 200 || answer.body.message === 'NO_SUCH_TRANSACTION') lost.push(id);
    });
    return lost;
  }

  /** Transactions with more than one of the two refunds accepted (refunded beyond the amount). */
  overRefunded(): number {
    return [...this.refunds.values()].filter((accepted) => accepted * REFUND > AMOUNT).length;
  }

  summary(): string {
    return [...this.answers].map(([key, count]) => `${key}: ${count}`).join(', ');
  }
}

const seconds = (ms: number | undefined): string => (ms === undefined ? 'never' : `${fmt(ms / 1000, 1)} s`);

/** What every outage case checks once the load stopped: processes up, 503s well formed, recovered, nothing lost. */
async function judgeOutage(load: Load, processes: SandboxProcess[], recovered: (number | undefined)[], figures: string[]): Promise<boolean> {
  const lost = await load.lost();
  const alive = processes.filter((p) => p.alive()).length;
  figures.push(
    `processes alive ${alive} of ${processes.length}; 503 answers ${load.unavailable} (${load.badUnavailable} without Retry-After or SERVICE_UNAVAILABLE); ` +
      `no answer at all ${load.noAnswer}; recovered after ${recovered.map(seconds).join(' / ')}`,
    `acknowledged initiates ${load.acknowledged.length}, lost ${lost.length}${lost.length > 0 ? ` (${lost.slice(0, 5).join(', ')})` : ''}; ` +
      `refunded beyond the amount ${load.overRefunded()} of ${load.refunds.size}`,
    `answers: ${load.summary()}`,
  );
  const otherFailures = [...load.answers].filter(([key]) => / 5\d\d/.test(key) && !/ 503 /.test(key)).length;
  return (
    alive === processes.length &&
    load.unavailable > 0 &&
    load.badUnavailable === 0 &&
    load.noAnswer === 0 &&
    otherFailures === 0 &&
    recovered.every((ms) => ms !== undefined) &&
    lost.length === 0 &&
    load.overRefunded() === 0
  );
}

async function twoProcesses(databaseUrl: string, args: string[] = []): Promise<SandboxProcess[]> {
  const first = await startSandboxProcess(databaseUrl, args);
  return [first, await startSandboxProcess(databaseUrl, args)];
}

/** a. PostgreSQL stopped under load and started again after `outageMs`. */
async function stoppedUnderLoad(cluster: PostgresCluster, mode: 'immediate' | 'fast'): Promise<FaultCase> {
  const processes = await twoProcesses(await cluster.createDatabase());
  const figures: string[] = [];
  try {
    const load = new Load(processes, mode, true);
    await until(() => load.acknowledged.length >= 100, 30_000);
    await cluster.pause(mode);
    await sleep(3_000);
    figures.push(`processes alive during the outage: ${processes.filter((p) => p.alive()).length} of 2`);
    await cluster.start();
    const restarted = performance.now();
    const recovered = await load.recovery(restarted, 60_000);
    await sleep(2_000);
    await load.stop();
    return { name: `a. stopped under load (pg_ctl -m ${mode})`, pass: await judgeOutage(load, processes, recovered, figures), figures };
  } finally {
    await stopAll(processes);
  }
}

/** b. PostgreSQL restarted for 4 s with 200 deliveries in flight to a receiver answering after 600 ms. */
async function restartedWithDeliveries(cluster: PostgresCluster): Promise<FaultCase> {
  const receiver = await startReceiver();
  const databaseUrl = await cluster.createDatabase();
  const processes = await twoProcesses(databaseUrl, ['--sdk-webhook-url', receiver.url]);
  const figures: string[] = [];
  try {
    const ids = Array.from({ length: 200 }, (_, index) => `in-flight-${index}`);
    await inParallel(ids.length, WORKERS, async (index) => {
      const answer = await initiateOn(processes[index % 2]!.url, ids[index]!);
      if (answer.status !== 201) throw new Error(`an initiate answered ${answer.status}`);
    });
    await until(async () => (await deliveriesInDatabase(databaseUrl)).pending === 0, 30_000);
    const before = new Map(receiver.copies);
    receiver.delayMs = 600;
    const confirmed = await Promise.all(ids.map((id, n) => call(processes[(n + 1) % 2]!.url, `/sandbox/sdk/transactions/${id}/confirm`)));
    const refused = confirmed.filter((answer) => answer.status !== 200).length;
    await cluster.pause('immediate');
    await sleep(4_000);
    await cluster.start();
    const restarted = performance.now();
    const wanted = new Set(ids);
    const allReceived = await until(() => [...receivedIds(receiver)].filter((id) => wanted.has(id)).length === ids.length, 60_000);
    const receivedMs = performance.now() - restarted;
    receiver.delayMs = 0;
    await until(async () => (await deliveriesInDatabase(databaseUrl).catch(() => ({ pending: 1 }))).pending === 0, 30_000);
    const afterRecovery = await deliveriesInDatabase(databaseUrl);
    const sentBeforeTakeover = [...receiver.copies.values()].reduce((sum, n) => sum + n, 0);
    // A takeover after it (the second process killed) must send nothing again.
    processes[1]!.child.kill('SIGKILL');
    await sleep(6_000);
    const sentByTakeover = [...receiver.copies.values()].reduce((sum, n) => sum + n, 0) - sentBeforeTakeover;
    const duplicates = [...receiver.copies].filter(([eventId, n]) => n - (before.get(eventId) ?? 0) > 1).length;
    const received = [...receivedIds(receiver)].filter((id) => wanted.has(id)).length;
    figures.push(
      `confirms refused ${refused}; events received ${received} of ${ids.length}${allReceived ? ` (all ${seconds(receivedMs)} after the restart)` : ''}; ` +
        `unsigned copies ${receiver.unsigned}`,
      `deliveries in the database after recovery: delivered ${afterRecovery.delivered}, pending ${afterRecovery.pending}, stranded (pending, no attempt due) ${afterRecovery.stranded}, other ${afterRecovery.other}`,
      `events received more than once ${duplicates}; copies sent by the takeover after it ${sentByTakeover}; first process alive ${processes[0]!.alive()}`,
    );
    const pass = refused === 0 && allReceived && afterRecovery.pending === 0 && afterRecovery.stranded === 0 && receiver.unsigned === 0 && duplicates === 0 && processes[0]!.alive();
    return { name: 'b. restarted with 200 deliveries in flight', pass, figures };
  } finally {
    await stopAll(processes);
    await receiver.close();
  }
}

/** Fills the file system of `folder` with a file of its own (1 MiB writes until ENOSPC); answers its path and size. */
function fillDisk(folder: string): { path: string; bytes: number } {
  const path = join(folder, 'filler');
  const chunk = Buffer.alloc(1 << 20, 1);
  const fd = openSync(path, 'w');
  let bytes = 0;
  try {
    for (;;) bytes += writeSync(fd, chunk);
  } catch {
    // ENOSPC: full.
  } finally {
    closeSync(fd);
  }
  return { path, bytes };
}

/** c. The cluster on a `sizeMb` tmpfs, filled while two processes take initiates, then space freed. */
async function fullDisk(sizeMb: number): Promise<FaultCase> {
  const mountPoint = mkdtempSync(join(tmpdir(), 'paylater-tmpfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${sizeMb}m,mode=0777`, 'tmpfs', mountPoint]);
  const savedTmpdir = process.env.TMPDIR;
  let cluster: PostgresCluster | undefined;
  let processes: SandboxProcess[] = [];
  const figures: string[] = [];
  try {
    process.env.TMPDIR = mountPoint;
    cluster = (await startPostgres())!;
    if (savedTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmpdir;
    processes = await twoProcesses(await cluster.createDatabase());
    const load = new Load(processes, 'disk', false);
    await until(() => load.acknowledged.length >= 100, 30_000);
    const filler = fillDisk(mountPoint);
    const filled = performance.now();
    // Dirty pages reach the files at checkpoints: ask for them, so that the data files must grow too.
    const full = await until(async () => {
      await withClient(cluster!.url, (client) => client.query('CHECKPOINT')).catch(() => undefined);
      return load.unavailable > 0;
    }, 90_000, 1_000);
    const fullMs = performance.now() - filled;
    await sleep(2_000);
    figures.push(`filler ${fmt(filler.bytes / (1 << 20))} MiB on a ${sizeMb} MiB tmpfs; first 503 ${full ? `${seconds(fullMs)} after` : 'never'}; processes alive while full ${processes.filter((p) => p.alive()).length} of 2`);
    rmSync(filler.path);
    let freed = performance.now();
    // PostgreSQL may have stopped itself (a WAL write that fails is a PANIC); start it again if so,
    // and count the recovery from that start.
    const serverUp = await until(() => withClient(cluster!.url, async () => true).catch(() => false), 15_000, 500);
    if (!serverUp) {
      figures.push('PostgreSQL itself had stopped on the full disk (15 s without a connection after the space was freed): started again with pg_ctl');
      await cluster.start();
      freed = performance.now();
    }
    const recovered = await load.recovery(freed, 60_000);
    await sleep(2_000);
    await load.stop();
    return { name: `c. full disk (${sizeMb} MiB tmpfs)`, pass: full && (await judgeOutage(load, processes, recovered, figures)), figures };
  } finally {
    process.env.TMPDIR = savedTmpdir;
    if (savedTmpdir === undefined) delete process.env.TMPDIR;
    await stopAll(processes);
    await cluster?.stop();
    try {
      execFileSync('umount', [mountPoint]);
    } catch {
      execFileSync('umount', ['-l', mountPoint]);
    }
    rmSync(mountPoint, { recursive: true, force: true });
  }
}

/** d. SIGKILL of the first-started process with 20 webhooks in flight to a receiver answering after 2 s. */
async function writerKilled(cluster: PostgresCluster): Promise<FaultCase> {
  const receiver = await startReceiver();
  const databaseUrl = await cluster.createDatabase();
  // Attempts at once per receiver above the 20 (8 by default), so that all 20 are in flight together.
  const args = ['--sdk-webhook-url', receiver.url, '--webhook-concurrency', '32'];
  const [first, survivor] = (await twoProcesses(databaseUrl, args)) as [SandboxProcess, SandboxProcess];
  const figures: string[] = [];
  try {
    const ids = Array.from({ length: 20 }, (_, index) => `killed-${index}`);
    for (const id of ids) if ((await initiateOn(first.url, id)).status !== 201) throw new Error(`the initiate of ${id} was refused`);
    await until(async () => (await deliveriesInDatabase(databaseUrl)).pending === 0, 30_000);
    const before = new Map(receiver.copies);
    receiver.delayMs = 2_000;
    const confirmed = await Promise.all(ids.map((id) => call(first.url, `/sandbox/sdk/transactions/${id}/confirm`)));
    const refused = confirmed.filter((answer) => answer.status !== 200).length;
    const wanted = new Set(ids);
    const inFlight = await until(() => [...receivedIds(receiver)].filter((id) => wanted.has(id)).length === ids.length, 10_000, 20);
    first.child.kill('SIGKILL');
    const killed = performance.now();
    const copiesAtKill = new Map(receiver.copies);
    // In flight at the kill: received, not yet answered.
    const inFlightAtKill = [...receiver.copies].filter(([eventId, n]) => !before.has(eventId) && n > (receiver.answered.get(eventId) ?? 0)).length;
    // How long until the survivor takes a write again.
    let writes = 0;
    const answering = await until(async () => (await initiateOn(survivor.url, `after-kill-${writes++}`)).status === 201, 60_000, 100);
    const answeringMs = performance.now() - killed;
    // Every event sent again by the survivor (the first process never read an answer).
    const resent = () => [...receiver.copies].filter(([eventId, n]) => n > (copiesAtKill.get(eventId) ?? 0) && !before.has(eventId)).length;
    const allResent = await until(() => resent() >= inFlightAtKill, 90_000);
    const resentMs = performance.now() - killed;
    receiver.delayMs = 0;
    await sleep(3_000);
    const extra = [...receiver.copies].filter(([eventId, n]) => !before.has(eventId) && n > 2).length;
    const left = await deliveriesInDatabase(databaseUrl);
    figures.push(
      `confirms refused ${refused}; all 20 received before the kill ${inFlight ? 'yes' : 'no'}, in flight (not yet answered) at the kill ${inFlightAtKill}; survivor alive ${survivor.alive()}`,
      `survivor answers writes ${answering ? seconds(answeringMs) : 'never'} after the kill; events sent again by it ${resent()} of the ${inFlightAtKill} in flight` +
        `${allResent ? ` (all ${seconds(resentMs)} after the kill)` : ''}; copies with a bad signature ${receiver.unsigned}; events sent more than twice ${extra}`,
      `deliveries in the database at the end: delivered ${left.delivered}, pending ${left.pending} (stranded, no attempt due: ${left.stranded}), other ${left.other}`,
    );
    const pass =
      refused === 0 && inFlight && inFlightAtKill === ids.length && answering && allResent && left.pending === 0 && receiver.unsigned === 0 && survivor.alive();
    return { name: 'd. SIGKILL of the first process, 20 webhooks in flight', pass, figures };
  } finally {
    await stopAll([first, survivor]);
    await receiver.close();
  }
}

const CASES = ['a', 'b', 'c', 'd', 'e', 'f'] as const;

export async function benchSharedFaults(options: { rows: number; cases?: string[]; tmpfsMb?: number; log: (line: string) => void }): Promise<FaultCase[]> {
  const { log } = options;
  const unavailable = postgresUnavailable();
  if (unavailable !== undefined) {
    log(`  skipped: ${unavailable}`);
    return [];
  }
  const chosen = options.cases ?? [...CASES];
  const unknown = chosen.filter((name) => !(CASES as readonly string[]).includes(name));
  if (unknown.length > 0) throw new Error(`unknown case ${unknown.join(', ')}: choose from ${CASES.join(', ')}`);
  await buildTree();
  const results: FaultCase[] = [];
  const report = (result: FaultCase) => {
    results.push(result);
    log(`  ${result.pass ? 'PASS' : 'FAIL'}  ${result.name}`);
    for (const line of result.figures) log(`        ${line}`);
  };
  const attempt = async (name: string, run: () => Promise<FaultCase | FaultCase[]>) => {
    const started = performance.now();
    try {
      const outcome = await run();
      for (const result of Array.isArray(outcome) ? outcome : [outcome]) report(result);
    } catch (error) {
      report({ name, pass: false, figures: [`did not complete: ${(error as Error).message.split('\n')[0]}`] });
    }
    log(`        (${seconds(performance.now() - started)})`);
  };
  const cluster = (await startPostgres())!;
  try {
    if (chosen.includes('a')) {
      for (const mode of ['immediate', 'fast'] as const) await attempt(`a. stopped under load (pg_ctl -m ${mode})`, () => stoppedUnderLoad(cluster, mode));
    }
    if (chosen.includes('b')) await attempt('b. restarted with 200 deliveries in flight', () => restartedWithDeliveries(cluster));
    if (chosen.includes('d')) await attempt('d. SIGKILL of the first process', () => writerKilled(cluster));
    if (chosen.includes('e')) await attempt('e. starts on a large database', () => startsOnLargeDatabase(cluster, options.rows, log));
    if (chosen.includes('f')) await attempt('f. three clients writing 1 MiB notes', () => largeWrites(cluster));
  } finally {
    await cluster.stop();
  }
  if (chosen.includes('c')) await attempt('c. full disk', () => fullDisk(options.tmpfsMb ?? 64));
  return results;
}

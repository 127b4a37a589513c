/**
 * Case e of the shared sandbox's fault suite (bench/shared-faults.ts): processes starting on a large
 * database. The database is filled with SQL (INSERT ... SELECT generate_series), fast: each row a
 * copy of a record the sandbox itself wrote (a confirmed SDK transaction, read back from
 * sandbox_records, its id replaced), so that the rows have the shape the running code writes,
 * whatever it is; a status check of one of them proves the sandbox accepts them. Then:
 * - two, then three, processes started at once: the time until each answers that status check;
 * - one process running, two more started at once: the longest a status check on the running one
 *   (sent every 50 ms) waited while the others started.
 */
import type { PostgresCluster } from '../test/support/postgres.js';
import { call, fmt, initiateOn, probeStatus, startSandboxProcess, statusOn, stopAll, until, withClient, type SandboxProcess } from './shared-cluster.js';
import type { FaultCase } from './shared-faults.js';

const TEMPLATE = 'bulk_template';
/** The longest a running process may leave a status check unanswered while others start. */
const STALL_LIMIT_MS = 1_000;

/** A fresh database holding `rows` confirmed SDK transactions `bulk_1`... (and the template's own records). */
async function largeDatabase(cluster: PostgresCluster, rows: number): Promise<string> {
  const databaseUrl = await cluster.createDatabase();
  const writer = await startSandboxProcess(databaseUrl);
  try {
    if ((await initiateOn(writer.url, TEMPLATE)).status !== 201) throw new Error('the template transaction was refused');
    if ((await call(writer.url, `/sandbox/sdk/transactions/${TEMPLATE}/confirm`)).status !== 200) throw new Error('the template transaction was not confirmed');
  } finally {
    await stopAll([writer]);
  }
  await withClient(databaseUrl, async (client) => {
    const template = await client.query<{ collection: string; data: string }>("SELECT collection, data FROM sandbox_records WHERE id = $1 AND collection LIKE 'sdk.%'", [TEMPLATE]);
    const row = template.rows[0];
    if (row === undefined) throw new Error(`no record of ${TEMPLATE} in sandbox_records`);
    await client.query(
      `INSERT INTO sandbox_records (collection, id, data, seq)
         SELECT $1, 'bulk_' || g, replace($2, '"${TEMPLATE}"', '"bulk_' || g || '"'), nextval('sandbox_seq')
           FROM generate_series(1, $3::int) AS g`,
      [row.collection, row.data, rows],
    );
    await client.query('VACUUM ANALYZE sandbox_records');
  });
  return databaseUrl;
}

interface Start {
  sandbox: SandboxProcess;
  /** From the spawn until it answered the status check of a bulk record. */
  answeringMs: number;
}

/** Starts `count` processes at once; each one's time until it answers a bulk record's status as SUCCESS. */
async function startTogether(databaseUrl: string, count: number, args: string[]): Promise<Start[]> {
  return Promise.all(
    Array.from({ length: count }, async () => {
      const spawned = performance.now();
      const sandbox = await startSandboxProcess(databaseUrl, args, 600_000);
      const answered = await until(async () => (await statusOn(sandbox.url, 'bulk_1')).body.message === 'SUCCESS', 300_000, 50);
      if (!answered) throw new Error(`a process never answered the status of bulk_1\n${sandbox.output()}`);
      return { sandbox, answeringMs: performance.now() - spawned };
    }),
  );
}

const secondsList = (starts: Start[]): string => starts.map((s) => `${fmt(s.answeringMs / 1000, 1)} s`).join(', ');

export async function startsOnLargeDatabase(cluster: PostgresCluster, rows: number, log: (line: string) => void): Promise<FaultCase[]> {
  const filled = performance.now();
  const databaseUrl = await largeDatabase(cluster, rows);
  log(`        (${rows} records written with SQL in ${fmt((performance.now() - filled) / 1000, 1)} s)`);
  // Retention above the rows, so that a start does not begin by dropping most of them.
  const args = ['--retain-transactions', String(rows + 100_000)];
  const results: FaultCase[] = [];
  for (const count of [2, 3]) {
    const starts = await startTogether(databaseUrl, count, args);
    await stopAll(starts.map((s) => s.sandbox));
    results.push({ name: `e. ${count} processes starting at once on ${rows} records`, pass: true, figures: [`each answering after ${secondsList(starts)}`] });
  }
  const running = (await startTogether(databaseUrl, 1, args))[0]!;
  const started: SandboxProcess[] = [running.sandbox];
  try {
    const quiet = await probeStatus(running.sandbox.url, 'bulk_7', 50);
    await new Promise((done) => setTimeout(done, 2_000));
    const alone = await quiet.stop();
    const probing = await probeStatus(running.sandbox.url, 'bulk_7', 50);
    const others = await startTogether(databaseUrl, 2, args);
    started.push(...others.map((s) => s.sandbox));
    const during = await probing.stop();
    const alive = started.every((s) => s.alive());
    results.push({
      name: `e. 2 processes starting beside a running one on ${rows} records`,
      pass: during.failed === 0 && alive && during.maxMs <= STALL_LIMIT_MS,
      figures: [
        `the new ones answering after ${secondsList(others)}; all alive ${alive}`,
        `the running one meanwhile: ${during.latencies.length} status checks, longest ${fmt(during.maxMs)} ms, median ${fmt(during.medianMs)} ms, failed ${during.failed} ` +
          `(alone before: longest ${fmt(alone.maxMs)} ms, median ${fmt(alone.medianMs)} ms; target: longest <= ${STALL_LIMIT_MS} ms)`,
      ],
    });
  } finally {
    await stopAll(started);
  }
  return results;
}

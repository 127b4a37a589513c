/**
 * A private PostgreSQL cluster for the tests: Debian's `postgresql` binaries (initdb, pg_ctl), a
 * cluster in a temporary folder, listening on 127.0.0.1 on a free port, with its socket in that
 * folder. Run as root (CI, these machines), the binaries run as the `postgres` user, as PostgreSQL
 * refuses to run as root. Nothing is mocked: the tests talk to a real server.
 *
 *   const cluster = await startPostgres();   // undefined when no PostgreSQL binaries are present
 *   ... cluster.url ...                        // postgres://postgres@127.0.0.1:PORT/postgres
 *   const url = await cluster.createDatabase(); // a fresh, empty database of its own
 *   await cluster.stop();
 */
import { execFile, execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './processes.js';

const run = promisify(execFile);

/** Where the binaries are: Debian keeps them under /usr/lib/postgresql/<major>/bin. */
function postgresBinaries(): string | undefined {
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const majors = readdirSync(root)
      .filter((name) => /^\d+$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    for (const major of majors) {
      const bin = join(root, major, 'bin');
      if (existsSync(join(bin, 'pg_ctl')) && existsSync(join(bin, 'initdb'))) return bin;
    }
  }
  try {
    const found = execFileSync('sh', ['-c', 'command -v pg_ctl'], { encoding: 'utf8' }).trim();
    return found === '' ? undefined : found.replace(/\/pg_ctl$/, '');
  } catch {
    return undefined;
  }
}

/**
 * Why the PostgreSQL tests are skipped here, or undefined when they run. Without PostgreSQL's
 * binaries they fail (CI must never pass by skipping them) unless `PAYLATER_SKIP_POSTGRES=1` asks
 * to skip them.
 */
export function postgresUnavailable(env: NodeJS.ProcessEnv = process.env, binaries: () => string | undefined = postgresBinaries): string | undefined {
  if (binaries() !== undefined) return undefined;
  const missing = "no PostgreSQL binaries (initdb, pg_ctl) on this machine: install Debian's postgresql package (.ci/run does)";
  if (env.PAYLATER_SKIP_POSTGRES === '1') return `${missing}; skipped as PAYLATER_SKIP_POSTGRES=1 asks`;
  throw new Error(`${missing}, or set PAYLATER_SKIP_POSTGRES=1 to skip the tests that need it`);
}

export interface PostgresCluster {
  /** The cluster's `postgres` database, as the superuser. */
  readonly url: string;
  readonly port: number;
  /** Creates an empty database and answers its URL. */
  createDatabase(): Promise<string>;
  /** Stops the server at once (`pg_ctl -m immediate`) and deletes the folder. */
  stop(): Promise<void>;
  /**
   * Stops the server, keeping the folder, so that {@link start} starts it again (a database going
   * away): `immediate` (the default) kills it, `fast` ends every connection with an error first.
   */
  pause(mode?: 'immediate' | 'fast'): Promise<void>;
  start(): Promise<void>;
}

let databases = 0;

/** Creates an empty database on the cluster of `adminUrl` (its `postgres` database) and answers its URL. */
export async function createTestDatabase(adminUrl: string): Promise<string> {
  databases += 1;
  const name = `sandbox_${process.pid}_${databases}`;
  const { default: pg } = await import('pg');
  const client = new pg.Client(adminUrl);
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * The webhook deliveries in the database of `databaseUrl` (a shared sandbox's) by status, and how
 * many are pending with no attempt due: stranded, as no process will ever try them again.
 */
export async function deliveriesInDatabase(databaseUrl: string): Promise<{ delivered: number; pending: number; stranded: number; other: number }> {
  const { default: pg } = await import('pg');
  const client = new pg.Client(databaseUrl);
  client.on('error', () => undefined);
  await client.connect();
  try {
    const rows = await client.query<{ status: string; due: boolean; count: string }>(
      `SELECT data::json->>'status' AS status, (data::json->>'nextAttemptAt') IS NOT NULL AS due, count(*)::text AS count
         FROM sandbox_records WHERE collection = 'sandbox.deliveries' AND data IS NOT NULL GROUP BY 1, 2`,
    );
    const counts = { delivered: 0, pending: 0, stranded: 0, other: 0 };
    for (const row of rows.rows) {
      const count = Number(row.count);
      if (row.status === 'delivered') counts.delivered += count;
      else if (row.status === 'pending') {
        counts.pending += count;
        if (!row.due) counts.stranded += count;
      } else counts.other += count;
    }
    return counts;
  } finally {
    await client.end().catch(() => undefined);
  }
}

export async function startPostgres(): Promise<PostgresCluster | undefined> {
  const bin = postgresBinaries();
  if (bin === undefined) return undefined;
  const folder = mkdtempSync(join(tmpdir(), 'paylater-pg-'));
  chmodSync(folder, 0o777);
  const data = join(folder, 'data');
  const log = join(folder, 'server.log');
  const asRoot = process.getuid?.() === 0;
  const exec = async (command: string, args: string[]) => {
    if (!asRoot) return run(join(bin, command), args);
    const quoted = [join(bin, command), ...args].map((part) => `'${part.replace(/'/g, `'\\''`)}'`).join(' ');
    return run('su', ['postgres', '-s', '/bin/sh', '-c', quoted]);
  };
  await exec('initdb', ['-D', data, '-A', 'trust', '-U', 'postgres', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const port = await freePort();
  const options = `-p ${port} -k ${folder} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  const start = () => exec('pg_ctl', ['-D', data, '-o', options, '-l', log, '-w', 'start']);
  await start();
  const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
  return {
    url,
    port,
    createDatabase: () => createTestDatabase(url),
    async stop() {
      await exec('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']).catch(() => undefined);
      rmSync(folder, { recursive: true, force: true });
    },
    async pause(mode = 'immediate') {
      await exec('pg_ctl', ['-D', data, '-m', mode, 'stop']);
    },
    async start() {
      await start();
    },
  };
}

/**
 * The processes of one shared sandbox (`--database-url`): each registers where it listens in
 * `sandbox_processes` and renews its row every {@link HEARTBEAT_MS}, so that
 * - every process knows where the others listen, and refuses webhooks to any of them
 *   (webhook-targets.ts);
 * - the processes that forward know where the writer listens: the process whose connection holds
 *   the writer's lock (lease.ts), read from PostgreSQL's own `pg_locks`, never from a row that
 *   could outlive it.
 *
 * Every connection has an 'error' listener: a database that goes away never ends the process; the
 * last list known stays meanwhile.
 */
import pg from 'pg';
import { APPLICATION, WRITER_LOCK } from './lease.js';

/** How often a process renews its row of `sandbox_processes` and reads the others'. */
const HEARTBEAT_MS = 2_000;
/** A process's row counts as live this long after its last renewal. */
const PROCESS_TTL_SECONDS = 10;
/** How long a process's row stays after it expired (then purged). */
const PURGE_MINUTES = 10;
/** The channel on which a process says it started listening. */
const PROCESSES_CHANNEL = 'paylater_sandbox_processes';

/** The writer, as the forwarding processes see it. */
export interface WriterAt {
  /** Its process id. */
  id: string;
  /** Where it listens (what it announced), or undefined before it announced. */
  address: unknown;
}

export class SandboxProcesses {
  private readonly pool: pg.Pool;
  private announced: string | undefined;
  private onOthers: ((others: unknown[]) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private ticks = 0;
  private listener: pg.Client | undefined;

  constructor(
    url: string,
    readonly processId: string,
  ) {
    this.pool = new pg.Pool({
      connectionString: url,
      max: 2,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 30_000,
      application_name: `${APPLICATION}${processId}`,
    });
    this.pool.on('connect', (client) => client.on('error', () => undefined));
    this.pool.on('error', () => undefined);
    this.url = url;
  }

  private readonly url: string;

  /**
   * Registers where this process listens (JSON), renewed every {@link HEARTBEAT_MS}, and tells
   * `onOthers` where the other live processes listen: at once, at each renewal, and when another
   * process announces itself.
   */
  announce(where: unknown, onOthers: (others: unknown[]) => void): void {
    this.announced = JSON.stringify(where);
    this.onOthers = onOthers;
    void this.heartbeat(true);
    this.timer = setInterval(() => void this.heartbeat(false), HEARTBEAT_MS);
    this.timer.unref();
    void this.listen();
  }

  /** Listens for processes announcing themselves (read at once); connects again after a failure. */
  private async listen(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.url, application_name: `${APPLICATION}${this.processId}` });
    const retry = () => {
      if (this.listener !== client) return;
      this.listener = undefined;
      void client.end().catch(() => undefined);
      setTimeout(() => void this.listen(), 1000).unref();
    };
    this.listener = client;
    client.on('error', retry);
    client.on('end', retry);
    client.on('notification', () => this.refresh());
    try {
      await client.connect();
      await client.query(`LISTEN ${PROCESSES_CHANNEL}`);
    } catch {
      retry();
    }
  }

  /** Reads at once where the others listen (a process announced itself). */
  refresh(): void {
    void this.readOthers().catch(() => undefined);
  }

  /** The writer now: the process whose connection holds the writer's lock; undefined when none does. */
  async writer(): Promise<WriterAt | undefined> {
    const result = await this.pool.query<{ name: string; address: string | null }>(
      `SELECT a.application_name AS name, p.address FROM pg_locks l ` +
        `JOIN pg_stat_activity a ON a.pid = l.pid ` +
        `LEFT JOIN sandbox_processes p ON a.application_name = '${APPLICATION}' || p.id ` +
        `WHERE l.locktype = 'advisory' AND l.granted AND l.classid = 0 AND l.objid = ${WRITER_LOCK} AND l.objsubid = 1 ` +
        `AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    const row = result.rows[0];
    if (row === undefined || !row.name.startsWith(APPLICATION)) return undefined;
    return { id: row.name.slice(APPLICATION.length), address: row.address === null ? undefined : JSON.parse(row.address) };
  }

  /** Stops renewing, removes this process's row, closes the connections. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
    if (this.announced !== undefined) {
      await this.pool.query('DELETE FROM sandbox_processes WHERE id = $1', [this.processId]).catch(() => undefined);
    }
    await this.pool.end().catch(() => undefined);
  }

  private async heartbeat(first: boolean): Promise<void> {
    if (this.closed || this.announced === undefined) return;
    try {
      await this.pool.query(
        `INSERT INTO sandbox_processes (id, address, expires_at) VALUES ($1, $2, now() + interval '${PROCESS_TTL_SECONDS} seconds') ` +
          'ON CONFLICT (id) DO UPDATE SET address = EXCLUDED.address, expires_at = EXCLUDED.expires_at',
        [this.processId, this.announced],
      );
      if (first) await this.pool.query(`NOTIFY ${PROCESSES_CHANNEL}`);
      // Once a minute: the rows of processes gone long ago.
      if (this.ticks++ % 30 === 0) {
        await this.pool.query(`DELETE FROM sandbox_processes WHERE expires_at < now() - interval '${PURGE_MINUTES} minutes'`);
      }
      await this.readOthers();
    } catch {
      // The database is away: tried again at the next renewal.
    }
  }

  private async readOthers(): Promise<void> {
    const result = await this.pool.query<{ address: string }>(
      'SELECT address FROM sandbox_processes WHERE expires_at > now() AND id <> $1',
      [this.processId],
    );
    if (!this.closed) this.onOthers?.(result.rows.map((row) => JSON.parse(row.address) as unknown));
  }
}

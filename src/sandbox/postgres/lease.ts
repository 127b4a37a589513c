/**
 * The writer's role of a shared sandbox (`--database-url`): one process at a time holds it, and
 * only that process runs units of work and writes records (store.ts); the others forward their
 * requests to it (sandbox/shared-role.ts).
 *
 * The role is a session-level advisory lock held by one dedicated connection: PostgreSQL releases
 * it when that connection ends, so a writer that dies (SIGKILL, a crash, its machine gone) frees
 * the role at once, and no process can write without holding it: every unit's transaction runs on
 * that very connection (a commit on a connection that lost the lock is impossible).
 *
 * When the connection is lost while the process lives (the database restarted, the connection
 * killed), the lease connects again, every half second, and takes the lock again: units meanwhile
 * fail with a {@link StoreUnavailableError} (503). If another process took the role in between,
 * the lease is deposed for good ({@link WriterLease.deposed}) and the sandbox forwards from then on.
 *
 * Hand-written on `pg`: the lock, the connection it lives on and the reconnection are the point;
 * no library offers a leader lease over one PostgreSQL connection.
 */
import pg from 'pg';
import { StoreUnavailableError } from '../store.js';

/** The session lock of the writer's role (any number, the same in every process). */
export const WRITER_LOCK = 7_207_003;
/** The `application_name` prefix of a sandbox's connections; the process's id follows. */
export const APPLICATION = 'paylater-sandbox:';
/** How often a lost connection is tried again. */
const RECONNECT_MS = 500;
/** Seconds a client is asked to wait when this process lost the role (another serves). */
const RETRY_AFTER_SECONDS = 2;

/**
 * What the store needs of the lease's connection (a `pg` client): declared here so that the
 * package's declarations do not name `pg`'s types, which its users need not install.
 */
export interface QueryClient {
  query<R = Record<string, unknown>>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
  /** A named statement: prepared on the connection the first time, then run by its name. */
  query<R = Record<string, unknown>>(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: R[] }>;
}

export interface HeldConnection {
  client: QueryClient;
  /** True the first time after the lock was taken again: what others wrote meanwhile is to be read. */
  fresh: boolean;
}

export class WriterLease {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private retakeTimer: NodeJS.Timeout | undefined;
  private fresh = false;
  private closed = false;
  /** Another process holds the role now: this one never writes again. */
  deposed = false;

  constructor(
    private readonly url: string,
    private readonly processId: string,
    /** Told once when another process took the role while this one's connection was away. */
    private readonly onDeposed: () => void,
  ) {}

  /** Whether the lock is held now (its connection up). */
  get held(): boolean {
    return this.client !== undefined;
  }

  /** Tries to take the role: true when this process holds it now; throws when the database is away. */
  async tryTake(): Promise<boolean> {
    if (this.client !== undefined) return true;
    const client = await this.lockedClient();
    return client !== undefined;
  }

  /**
   * The connection holding the lock, connected and locked again after a loss. Rejects with the
   * database's error while it is away, with a {@link StoreUnavailableError} when the role is lost.
   */
  async connection(): Promise<HeldConnection> {
    if (this.client !== undefined) {
      const fresh = this.fresh;
      this.fresh = false;
      return { client: this.client as unknown as QueryClient, fresh };
    }
    if (this.deposed || this.closed) throw this.lostRole();
    try {
      this.connecting ??= this.retake();
      await this.connecting;
    } finally {
      this.connecting = undefined;
    }
    return this.connection();
  }

  /** Ends the connection, which releases the role. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.retakeTimer !== undefined) clearTimeout(this.retakeTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private lostRole(): StoreUnavailableError {
    return new StoreUnavailableError(
      this.closed ? 'the sandbox is stopping' : 'this sandbox process is no longer the shared sandbox\'s writer; send the request again',
      RETRY_AFTER_SECONDS,
    );
  }

  /** Connects and takes the lock again after a loss; deposed when another process holds it. */
  private async retake(): Promise<pg.Client> {
    const client = await this.lockedClient();
    if (client === undefined) {
      this.deposed = true;
      this.onDeposed();
      throw this.lostRole();
    }
    this.fresh = true;
    return client;
  }

  /** A new connection holding the lock, or undefined (and no connection) when another holds it. */
  private async lockedClient(): Promise<pg.Client | undefined> {
    const client = new pg.Client({ connectionString: this.url, application_name: `${APPLICATION}${this.processId}` });
    // A connection the server drops emits 'error'; one nobody listens to would end the process.
    client.on('error', () => this.lost(client));
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      const result = await client.query<{ locked: boolean }>(`SELECT pg_try_advisory_lock(${WRITER_LOCK}) AS locked`);
      if (result.rows[0]?.locked !== true) {
        await client.end().catch(() => undefined);
        return undefined;
      }
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      throw this.lostRole();
    }
    this.client = client;
    return client;
  }

  /** The connection ended: the lock went with it; taken again in the background, soon. */
  private lost(client: pg.Client): void {
    if (this.client !== client) return;
    this.client = undefined;
    void client.end().catch(() => undefined);
    this.scheduleRetake();
  }

  private scheduleRetake(): void {
    if (this.closed || this.deposed || this.retakeTimer !== undefined) return;
    this.retakeTimer = setTimeout(() => {
      this.retakeTimer = undefined;
      if (this.client !== undefined || this.closed || this.deposed) return;
      this.connecting ??= this.retake();
      this.connecting.then(
        () => {
          this.connecting = undefined;
        },
        () => {
          this.connecting = undefined;
          this.scheduleRetake();
        },
      );
    }, RECONNECT_MS);
    this.retakeTimer.unref();
  }
}

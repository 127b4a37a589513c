/**
 * The roles of the processes of a shared sandbox (`--database-url`): one writer, the others
 * forwarding to it.
 *
 * - At start every process applies the schema's migrations, then tries to take the writer's role
 *   (postgres/lease.ts). The one that gets it reads every record (postgres/store.ts) and serves
 *   every request itself, as a sandbox in memory does, writing behind to the database. The others
 *   read nothing: they start at once, and forward every request to the writer (forward.ts), found
 *   as the holder of the role's lock (postgres/processes.ts). So no process ever waits for
 *   another's work, and a process starting on a large database never stops the others.
 * - Every {@link LOOK_MS} a forwarding process looks for the writer. When no process holds the
 *   role, it takes it: the writer died (its connection ended with it, and the lock with it). When
 *   the last writer seen still listens (a TCP connection to it opens), it is given
 *   {@link GRACE_MS} to take the role again first: its database connection was lost (the database
 *   restarted), not its process.
 * - A writer that took over reads every record first, then serves; it also delivers the pending
 *   webhooks of the writer before it (delivery/journal.ts: a delivery whose owner is not the
 *   writer is taken over).
 * - A writer whose connection was lost and that finds another process holding the role when it
 *   connects again is deposed: it stops its clock and deliveries and forwards from then on.
 *
 * Per-partner partitions of the writer (a lock per partner, requests forwarded by partner) are the
 * path past one machine; docs/sandbox.md describes it.
 */
import type { Server } from 'node:http';
import { connect } from 'node:net';
import type { Logger } from './router.js';
import type { ErrorHelpers } from './errors.js';
import type { Forwarder, ForwardTarget } from './forward.js';
import { WriterLease } from './postgres/lease.js';
import { SandboxProcesses, type WriterAt } from './postgres/processes.js';
import { migrateDatabase } from './postgres/schema.js';
import type { PostgresStore } from './postgres/store.js';
import { TunnelAcceptor } from './tunnel-ends.js';
import { connectHost, isListeningAddress } from './webhook-targets.js';

/** How often a forwarding process looks for the writer. */
const LOOK_MS = 1_000;
/** How long the last writer seen, still listening, has to take its role again after a loss. */
const GRACE_MS = 10_000;
/** How long a TCP connection to the last writer may take to open. */
const PROBE_MS = 2_000;
/**
 * How long a request waits for a writer when none is known (the processes started together, and
 * the writer has not said where it listens yet): then it is forwarded, or answered 503.
 */
const WAIT_FOR_WRITER_MS = 3_000;
/** How often a request waiting for a writer looks again. */
const WAIT_STEP_MS = 50;

export type Role = 'forwarding' | 'taking over' | 'writer' | 'deposed';

export interface SharedRoleOptions {
  url: string;
  store: PostgresStore;
  forwarder: Forwarder;
  log: Logger;
  /** Called when this process stops being the writer: the clock and the deliveries stop. */
  onDeposed: () => void;
}

export class SharedRole {
  readonly processes: SandboxProcesses;
  private lease: WriterLease;
  private current: Role = 'forwarding';
  private target: ForwardTarget | undefined;
  /** The last writer followed (its id in the target). */
  private lastWriter: ForwardTarget | undefined;
  /** When this process first saw no writer while the last one still listened. */
  private orphanedSince: number | undefined;
  private timer: NodeJS.Timeout | undefined;
  private looking = false;
  private closed = false;
  /** The one wait for a writer that every request arriving with none known shares. */
  private waiting: Promise<void> | undefined;
  /** The tunnels forwarding processes opened to this one while it is the writer (tunnel-ends.ts). */
  private tunnels: TunnelAcceptor | undefined;

  constructor(private readonly options: SharedRoleOptions) {
    this.processes = new SandboxProcesses(options.url, options.store.processId);
    this.lease = this.newLease();
  }

  private newLease(): WriterLease {
    return new WriterLease(this.options.url, this.options.store.processId, () => this.deposed());
  }

  /** What this process is now. */
  get role(): Role {
    return this.current;
  }

  /** Whether this process serves requests itself (else it forwards them). */
  get serving(): boolean {
    return this.current === 'writer';
  }

  /**
   * Applies the migrations and takes the writer's role if no process holds it (reading every
   * record), else starts forwarding. Throws with the cause when the database cannot be used.
   */
  async start(): Promise<void> {
    await migrateDatabase(this.options.url);
    if (await this.lease.tryTake()) {
      await this.options.store.open(this.lease);
      this.current = 'writer';
    } else {
      await this.look();
    }
    this.timer = setInterval(() => void this.look(), LOOK_MS);
    this.timer.unref();
  }

  /**
   * Forwards a request to the writer. When no writer is known (processes that started together:
   * the writer has not said where it listens yet), the request waits up to
   * {@link WAIT_FOR_WRITER_MS} for one, sharing one wait with the others; it is served here when
   * this process took the role meanwhile (`serve`), and answered 503 when there is still none.
   */
  forward(request: Parameters<Forwarder['forward']>[1], response: Parameters<Forwarder['forward']>[2], serve: () => void): void {
    if (this.target !== undefined || this.closed) {
      this.options.forwarder.forward(this.target, request, response);
      return;
    }
    this.waiting ??= this.waitForWriter().finally(() => {
      this.waiting = undefined;
    });
    void this.waiting.then(() => {
      if (this.serving) serve();
      else this.options.forwarder.forward(this.target, request, response);
    });
  }

  /**
   * Relays each connection `server` accepts to the writer while this process forwards and knows
   * where the writer listens (forward.ts); the others are this process's own to serve.
   */
  relayConnections(server: Server): void {
    this.options.forwarder.relayConnections(server, () => (this.serving || this.closed ? undefined : this.target));
  }

  /**
   * Takes the tunnels that forwarding processes open to `server` while this process is the writer;
   * each of their connections is one of `server`'s, under `maxConnections` as the others are.
   */
  acceptTunnels(server: Server, maxConnections: number, errors: ErrorHelpers): void {
    this.tunnels = new TunnelAcceptor(server, (id) => this.serving && id === this.options.store.processId, maxConnections, errors);
  }

  private async waitForWriter(): Promise<void> {
    const until = Date.now() + WAIT_FOR_WRITER_MS;
    while (this.target === undefined && !this.closed && !this.serving && Date.now() < until) {
      await this.look();
      if (this.target !== undefined || this.serving) return;
      await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
    }
  }

  /** Closes the connections relayed to the writer and the kept ones to it, and the tunnels to this one. */
  closeConnections(): void {
    this.options.forwarder.close();
    this.tunnels?.close();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) clearInterval(this.timer);
    while (this.looking) await new Promise((resolve) => setTimeout(resolve, 5));
    this.options.forwarder.close();
    await this.lease.close();
    await this.processes.close();
  }

  /** Finds the writer; takes the role when there is none (or the last one is gone). */
  private async look(): Promise<void> {
    if (this.looking || this.closed || this.current !== 'forwarding' && this.current !== 'deposed') return;
    this.looking = true;
    try {
      const writer = await this.processes.writer();
      if (writer !== undefined) {
        this.follow(writer);
        return;
      }
      if (this.lastWriter !== undefined && (await listens(this.lastWriter))) {
        // The last writer lives: its database connection was lost; it takes the role again first,
        // and answers meanwhile (its own 503 while the database is away).
        this.target = this.lastWriter;
        this.orphanedSince ??= Date.now();
        if (Date.now() - this.orphanedSince < GRACE_MS || this.current === 'deposed') return;
      }
      // The last writer is gone: this process takes the role if it can. The last target stays
      // until another writer is found (forwarding to it answers 503 meanwhile).
      if (this.current === 'deposed') return;
      await this.takeOver();
    } catch {
      // The database is away: the last writer known is kept, looked for again soon.
    } finally {
      this.looking = false;
    }
  }

  private follow(writer: WriterAt): void {
    this.orphanedSince = undefined;
    if (writer.id === this.options.store.processId || !isListeningAddress(writer.address)) {
      // The writer took the role but has not said where it listens yet.
      this.target = undefined;
      return;
    }
    const target = { host: connectHost(writer.address), port: writer.address.port, id: writer.id };
    this.target = target;
    this.lastWriter = target;
  }

  private async takeOver(): Promise<void> {
    if (!(await this.lease.tryTake())) return;
    this.current = 'taking over';
    this.options.log.warn('no sandbox process is the writer: this one takes the role (reading every record first)');
    try {
      await this.options.store.open(this.lease);
    } catch (error) {
      this.options.log.error(`taking the writer's role failed: ${error instanceof Error ? error.message : String(error)}`);
      // The role goes back; this process forwards and may try again.
      await this.lease.close();
      this.lease = this.newLease();
      this.current = 'forwarding';
      return;
    }
    this.lastWriter = undefined;
    this.target = undefined;
    this.current = 'writer';
    this.options.log.warn('this process is the shared sandbox\'s writer now');
  }

  private deposed(): void {
    if (this.current !== 'writer') return;
    this.current = 'deposed';
    this.options.log.error(
      'this process lost its database connection and another process took the writer\'s role meanwhile: it forwards every request from now on',
    );
    this.options.onDeposed();
    void this.look();
  }
}

/** Whether a TCP connection to `target` opens (its process lives, whatever its event loop does). */
function listens(target: ForwardTarget): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: target.host, port: target.port });
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(PROBE_MS, () => done(false));
    socket.once('connect', () => done(true));
    socket.once('error', () => done(false));
  });
}

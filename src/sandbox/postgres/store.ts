/**
 * The shared store (`--database-url`): the sandbox's records in PostgreSQL, so that any number of
 * sandbox processes on one database behave as one sandbox and a restart loses nothing.
 *
 * How it works: each process holds every record in memory (a cache read synchronously, as the
 * families expect of a {@link Store}) and PostgreSQL is the truth.
 * - Every change of state runs in a unit of work ({@link Store.unit}). Units run one at a time
 *   per process, several in one database transaction when they queue up (group commit): BEGIN,
 *   the sandbox's advisory lock (so units of all processes run one at a time: a refund race split
 *   over two processes cannot overspend), then the records other processes changed since this one
 *   last looked (`seq > seen`), applied to the cache and told to the families
 *   ({@link Store.observe}), then the units themselves, then the records they changed, written,
 *   with `NOTIFY`, and COMMIT. Only then do the units' promises settle: an answer is sent once
 *   what it says is stored.
 * - A deleted record keeps its row with `data` NULL for {@link TOMBSTONE_MINUTES} minutes, so that
 *   every process learns of it; a process that has not looked for longer reads everything again.
 * - Other processes' changes reach this one at its next unit, and at once through
 *   `LISTEN paylater_sandbox` (a change on another process runs an empty unit here), so the live
 *   stream and the clock follow without a request.
 * - The virtual clock's offset is a record too ({@link CLOCK_COLLECTION}): an advance on any
 *   process moves every process's clock, and each fires its timers; what they do is checked
 *   against the current records, so an expiry happens once.
 * - When the database cannot be reached (down at start, gone while running, a full disk), units
 *   fail with a {@link StoreUnavailableError} (503 with `Retry-After`); what they changed in the
 *   cache is put back, nothing is half written, and the next unit tries again: the sandbox
 *   recovers by itself when the database is back: every connection has an 'error' listener (a
 *   lost one never ends the process), and the LISTEN connection, connected again, reads what the
 *   others wrote meanwhile. What the families derived in memory during the
 *   failed units (a timer, a count of pending transactions) is not put back: timers check the
 *   records when they fire, and a count may stay one too high until the process restarts.
 *
 * - A unit that throws writes nothing: what it changed in the cache is put back (and so never
 *   written), in a batch beside units that succeed and inline inside another unit alike; the units
 *   around it keep what they wrote.
 *
 * Hand-written on `pg` rather than an ORM or query builder: the whole schema is one table of JSON
 * records, and the unit of work (group commit under one lock, the change feed) is the point.
 */
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { StoreUnavailableError, type Collection, type ExternalChange, type Store } from '../store.js';
import { ABSENT, SharedCollection, type Touched } from './collection.js';
import { describeFailure } from './failures.js';
import { describeDatabase } from './database-url.js';
import { migrate } from './schema.js';
import { stringifyJson } from '../../http/raw-json.js';

/** The collection of the shared virtual clock: one record, `clock`, `{ offsetMs }`. */
const CLOCK_COLLECTION = 'sandbox.clock';
/** How long a deleted record's row stays for other processes to learn of it. */
const TOMBSTONE_MINUTES = 10;
/** The advisory lock every unit of work holds (any number, the same in every process). */
const UNIT_LOCK = 7_207_002;
/** Units of work run in one database transaction, at most. */
const MAX_BATCH = 256;
/** Changes read per query when catching up. */
const CATCH_UP_PAGE = 5_000;
/** The SQL text of one INSERT statement, about, at most (characters). */
const STATEMENT_BYTES = 512 * 1024;
/** Seconds a client is asked to wait when the database cannot be reached. */
const RETRY_AFTER_SECONDS = 5;
/** The notification channel. */
const CHANNEL = 'paylater_sandbox';
/** The channel on which a process says it started listening (the others read `sandbox_processes`). */
const PROCESSES_CHANNEL = 'paylater_sandbox_processes';
/** How often a process renews its row of `sandbox_processes` and reads the others'. */
const HEARTBEAT_MS = 2_000;
/** A process's row counts as live this long after its last renewal. */
const PROCESS_TTL_SECONDS = 10;

/** What the shared store needs of the virtual clock. */
export interface SharedClock {
  readonly offsetMs: number;
  /** Moves the clock forward by `ms`, firing the timers due on the way. */
  advance(ms: number): void;
}

export interface PostgresStoreOptions {
  /** The database URL (`postgres://...`), already checked (database-url.ts). */
  url: string;
  /** Warnings and errors (never the URL's password). */
  log?: { warn(message: string): void; error(message: string, error?: unknown): void };
  /** Connections of the pool (units run one at a time; the others serve maintenance). Default 3. */
  poolSize?: number;
}

interface QueuedUnit {
  work: () => unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/** What one unit of work changed first, to put it back when the unit throws. */
interface UnitScope {
  /** The value before the unit first changed each record, by `collection\0id`. */
  first: Map<string, Touched>;
  /** The records no earlier unit of the batch had changed (dropped from the write when put back). */
  added: string[];
}

interface Row {
  seq: string;
  collection: string;
  id: string;
  data: string | null;
}

/** The `application_name` prefix of a sandbox's connections; the process's id follows. */
const APPLICATION = 'paylater-sandbox:';

export class PostgresStore implements Store {
  readonly shared = true;
  /**
   * This process among the sandboxes on the database: its connections carry it in their
   * `application_name`, so the others can tell whether it is still there (delivery/journal.ts).
   */
  readonly processId: string = randomBytes(8).toString('hex');
  private readonly pool: pg.Pool;
  private readonly collections = new Map<string, SharedCollection<unknown>>();
  /** Records changed by the units of the running batch (or outside any unit), by `collection\0id`. */
  private touchedRecords = new Map<string, Touched>();
  /**
   * The unit running now and those it started inline (innermost last): what each changed first,
   * so that a unit that throws is put back (its changes to the cache, and so to the database).
   */
  private scopes: UnitScope[] = [];
  private queue: QueuedUnit[] = [];
  private draining = false;
  private inUnit = false;
  /** Whether a unit of work is running now (a change made now is written with it). */
  get changing(): boolean {
    return this.inUnit;
  }
  /** Settled when the running batch commits: units started while it runs (inline). */
  private inlineWaiters: { resolve(): void; reject(error: unknown): void }[] = [];
  /** The highest `seq` this process has seen (as a decimal string: bigint in the database). */
  private seen = '0';
  private lastLook = 0;
  private clock: SharedClock | undefined;
  private writtenOffset = 0;
  private listener: pg.Client | undefined;
  private closed = false;
  private readonly where: string;
  private readonly log: NonNullable<PostgresStoreOptions['log']>;
  private purgeTimer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  /** Where this process listens, as registered in `sandbox_processes` ({@link announce}). */
  private announced: string | undefined;
  private onOthers: ((others: unknown[]) => void) | undefined;
  private lastFailure: string | undefined;
  /** The clock offset another process wrote, read but not applied yet (it is, under the lock). */
  private othersOffset: number | undefined;
  /** Another process committed since this one last read (its notification came). */
  private othersWrote = false;
  /** LISTEN succeeded once: a later LISTEN is after a lost connection. */
  private listened = false;

  constructor(private readonly options: PostgresStoreOptions) {
    this.where = describeDatabase(options.url);
    this.log = options.log ?? { warn: (message) => console.warn(message), error: (message) => console.error(message) };
    this.pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 3,
      connectionTimeoutMillis: 5000,
      idleTimeoutMillis: 30_000,
      application_name: `${APPLICATION}${this.processId}`,
    });
    // A connection the server drops (stopped, restarted, the connection killed, a full disk) emits
    // 'error' on its client, idle or checked out for a unit, and an 'error' nobody listens to ends
    // the process. Every client of the pool gets a listener when it connects: a unit using it
    // fails with the query it was running (a 503), and the next unit connects again. The pool
    // re-emits an idle client's error, listened to here too.
    this.pool.on('connect', (client) => client.on('error', (error) => this.connectionLost(error)));
    this.pool.on('error', (error) => this.connectionLost(error));
  }

  /** Where the records are: the database URL without its password. */
  get description(): string {
    return this.where;
  }

  collection<T>(name: string): Collection<T> {
    return this.sharedCollection<T>(name);
  }

  private sharedCollection<T>(name: string): SharedCollection<T> {
    let collection = this.collections.get(name);
    if (collection === undefined) {
      collection = new SharedCollection<unknown>(this, name);
      this.collections.set(name, collection);
    }
    return collection as SharedCollection<T>;
  }

  observe<T>(name: string, listener: ExternalChange<T>): void {
    this.sharedCollection<T>(name).listeners.push(listener);
  }

  /** Makes the virtual clock shared: its offset is stored, and other processes' advances move it. */
  attachClock(clock: SharedClock): void {
    this.clock = clock;
    this.writtenOffset = clock.offsetMs;
  }

  clear(): void {
    for (const collection of this.collections.values()) {
      for (const id of [...collection.records.keys()]) collection.delete(id);
    }
  }

  /**
   * Connects, applies the schema's migrations and reads every record (the families rebuild what
   * they derive from them). Throws with the cause when the database cannot be used.
   */
  async open(): Promise<void> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw new StoreUnavailableError(`cannot connect to ${this.where}: ${describeFailure(error)}`);
    }
    try {
      await migrate(client, this.where);
      await this.catchUp(client, true, `BEGIN; SELECT pg_advisory_xact_lock(${UNIT_LOCK})`);
      await client.query('COMMIT');
      client.release();
    } catch (error) {
      client.release(true);
      if (error instanceof Error && error.name === 'SchemaTooNewError') throw error;
      throw new StoreUnavailableError(`cannot read ${this.where}: ${describeFailure(error)}`);
    }
    this.purgeTimer = setInterval(() => void this.purge(), 60_000);
    this.purgeTimer.unref();
    void this.listen();
  }

  unit<T>(work: () => T): Promise<Awaited<T>> {
    if (this.closed) return Promise.reject(new StoreUnavailableError('the sandbox is stopping'));
    if (this.inUnit) {
      // Started while a unit runs (a timer fired by it, a request answered during an await of
      // it): it runs now, inside the running transaction, and settles when that commits.
      return new Promise((resolve, reject) => {
        const outcome = this.runScoped(work);
        if (!outcome.ok) {
          reject(outcome.value);
          return;
        }
        this.inlineWaiters.push({ resolve: () => resolve(outcome.value as Awaited<T>), reject });
      });
    }
    return new Promise((resolve, reject) => {
      this.queue.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.draining) void this.drain();
    });
  }

  /**
   * Runs a unit's work (not awaiting it) in a scope of its own: when it throws, what it changed is
   * put back, so a unit that throws writes nothing; when it succeeds, its changes join the
   * enclosing unit's (an inline unit), which may still be put back.
   */
  private runScoped(work: () => unknown): { ok: boolean; value: unknown } {
    const scope: UnitScope = { first: new Map(), added: [] };
    this.scopes.push(scope);
    try {
      const value = work();
      this.scopes.pop();
      const outer = this.scopes[this.scopes.length - 1];
      if (outer !== undefined) {
        for (const [key, touched] of scope.first) if (!outer.first.has(key)) outer.first.set(key, touched);
        for (const key of scope.added) outer.added.push(key);
      }
      return { ok: true, value };
    } catch (error) {
      this.scopes.pop();
      this.putBack(scope);
      return { ok: false, value: error };
    }
  }

  /** Puts back what a unit that threw changed; the records no earlier unit changed are not written. */
  private putBack(scope: UnitScope): void {
    this.rollbackCache([...scope.first.values()]);
    for (const key of scope.added) this.touchedRecords.delete(key);
  }

  /** Called by a collection before it changes a record. */
  touched(collection: SharedCollection<unknown>, id: string, previous: unknown): void {
    const key = `${collection.name}\0${id}`;
    if (!this.touchedRecords.has(key)) {
      this.touchedRecords.set(key, { collection, id, previous });
      this.scopes[this.scopes.length - 1]?.added.push(key);
    }
    const scope = this.scopes[this.scopes.length - 1];
    if (scope !== undefined && !scope.first.has(key)) scope.first.set(key, { collection, id, previous });
    // Every change of state runs in a unit: one outside any would be written with no request's
    // answer waiting for it, and lost without a trace when that write failed.
    if (!this.inUnit) {
      throw new Error(
        `the record ${collection.name}/${id} was changed outside a unit of work: make the change inside store.unit(...) (store.ts)`,
      );
    }
  }

  /**
   * Registers where this process listens (JSON) in `sandbox_processes`, renewed every
   * {@link HEARTBEAT_MS}, and tells `onOthers` where the other live processes listen: at once, at
   * each renewal, and when another process announces itself (a notification). The webhook targets
   * refuse them all (webhook-targets.ts). While the database is away the last list known stays.
   */
  announce(where: unknown, onOthers: (others: unknown[]) => void): void {
    this.announced = JSON.stringify(where);
    this.onOthers = onOthers;
    void this.heartbeat(true);
    this.heartbeatTimer = setInterval(() => void this.heartbeat(false), HEARTBEAT_MS);
    this.heartbeatTimer.unref();
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

  /** The ids of the sandbox processes connected to the database now (this one's included). */
  async liveProcesses(): Promise<Set<string>> {
    const result = await this.pool.query<{ name: string }>(
      `SELECT DISTINCT application_name AS name FROM pg_stat_activity WHERE application_name LIKE '${APPLICATION}%'`,
    );
    const live = new Set(result.rows.map((row) => row.name.slice(APPLICATION.length)));
    live.add(this.processId);
    return live;
  }

  /** Stops listening and closes the connections; queued units fail. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.purgeTimer !== undefined) clearInterval(this.purgeTimer);
    if (this.heartbeatTimer !== undefined) clearInterval(this.heartbeatTimer);
    while (this.draining) await new Promise((resolve) => setTimeout(resolve, 5));
    for (const unit of this.queue.splice(0)) unit.reject(new StoreUnavailableError('the sandbox is stopping'));
    const listener = this.listener;
    this.listener = undefined;
    await listener?.end().catch(() => undefined);
    if (this.announced !== undefined) {
      await this.pool.query('DELETE FROM sandbox_processes WHERE id = $1', [this.processId]).catch(() => undefined);
    }
    await this.pool.end().catch(() => undefined);
  }

  private async drain(): Promise<void> {
    this.draining = true;
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, MAX_BATCH);
        await this.runBatch(batch);
      }
    } finally {
      this.draining = false;
    }
  }

  private async runBatch(batch: QueuedUnit[]): Promise<void> {
    let client: pg.PoolClient | undefined;
    try {
      client = await this.pool.connect();
      const full = Date.now() - this.lastLook > (TOMBSTONE_MINUTES * 60_000) / 2;
      if (this.othersWrote && !full) {
        // Another process committed: most of what it wrote is read and applied before the lock is
        // taken (committed rows are always a prefix in `seq`: writers hold the lock), so the
        // others do not wait while this one applies it; under the lock only the rest is read.
        this.othersWrote = false;
        await this.catchUp(client, false);
      }
      await this.catchUp(client, full, `BEGIN; SELECT pg_advisory_xact_lock(${UNIT_LOCK})`);
    } catch (error) {
      if (client !== undefined) {
        await client.query('ROLLBACK').catch(() => undefined);
        client.release(true);
      }
      const failure = this.unavailable(error);
      this.rollbackCache(this.takeTouched());
      for (const unit of batch) unit.reject(failure);
      return;
    }
    const outcomes: { ok: boolean; value: unknown }[] = [];
    this.inUnit = true;
    try {
      for (const unit of batch) {
        const scope: UnitScope = { first: new Map(), added: [] };
        this.scopes = [scope];
        try {
          let value = unit.work();
          if (value instanceof Promise) value = await value;
          outcomes.push({ ok: true, value });
        } catch (error) {
          // The unit threw: what it changed is put back, and it writes nothing.
          this.putBack(scope);
          outcomes.push({ ok: false, value: error });
        } finally {
          this.scopes = [];
        }
      }
      // The clock's offset, when the units moved it: written with them.
      if (this.clock !== undefined && this.clock.offsetMs !== this.writtenOffset) {
        this.sharedCollection<{ offsetMs: number }>(CLOCK_COLLECTION).set('clock', { offsetMs: this.clock.offsetMs });
      }
    } finally {
      this.inUnit = false;
    }
    const inline = this.inlineWaiters;
    this.inlineWaiters = [];
    const touched = this.takeTouched();
    if (touched.length === 0) {
      // Nothing written: the answers do not wait for the COMMIT, which only ends the transaction
      // and lets the lock go (on the server, before any later statement of another unit).
      const ending = client;
      ending.query('COMMIT').then(
        () => ending.release(),
        () => ending.release(true),
      );
    } else {
      try {
        await this.commit(client, touched);
        client.release();
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        client.release(true);
        const failure = this.unavailable(error);
        this.rollbackCache(touched);
        for (const unit of batch) unit.reject(failure);
        for (const waiter of inline) waiter.reject(failure);
        return;
      }
    }
    this.lastFailure = undefined;
    batch.forEach((unit, index) => {
      const outcome = outcomes[index]!;
      if (outcome.ok) unit.resolve(outcome.value);
      else unit.reject(outcome.value);
    });
    for (const waiter of inline) waiter.resolve();
  }

  /** Reads what other processes changed (everything when `full`) into the cache. */
  private async catchUp(client: pg.PoolClient, full: boolean, before?: string): Promise<void> {
    // Ordered by the column (`seq` alone would name the text output), so that the index on it is
    // read in order; the changes since `seen` a page at a time, so that the plan is always that
    // index's, whatever the table's statistics say.
    const columns = 'SELECT seq::text AS seq, collection, id, data FROM sandbox_records';
    let prefix = before === undefined ? '' : `${before}; `;
    for (;;) {
      const select = full
        ? `${columns} ORDER BY sandbox_records.seq`
        : `${columns} WHERE sandbox_records.seq > ${this.seen} ORDER BY sandbox_records.seq LIMIT ${CATCH_UP_PAGE}`;
      // With `before` (BEGIN and the lock), one round trip: the last result is the select's.
      const answer = (await client.query<Row>(`${prefix}${select}`)) as pg.QueryResult<Row> | pg.QueryResult<Row>[];
      prefix = '';
      const rows = (Array.isArray(answer) ? answer[answer.length - 1]! : answer).rows;
      if (rows.length > 0) this.applyRows(rows, full);
      if (full || rows.length < CATCH_UP_PAGE) break;
    }
    this.lastLook = Date.now();
    // The clock moves only under the lock: the timers it fires act on current records.
    if (before !== undefined && this.clock !== undefined && this.othersOffset !== undefined) {
      const ahead = this.othersOffset - this.clock.offsetMs;
      this.othersOffset = undefined;
      // Another process advanced the clock: this one's timers due on the way fire now, in this unit.
      if (ahead > 0) this.clock.advance(ahead);
      this.writtenOffset = this.clock.offsetMs;
    }
  }

  private applyRows(rows: Row[], full: boolean): void {
    let clockRow: Row | undefined;
    const present = full ? new Set<string>() : undefined;
    for (const row of rows) {
      if (row.collection === CLOCK_COLLECTION) {
        clockRow = row;
        continue;
      }
      present?.add(`${row.collection}\0${row.id}`);
      this.sharedCollection(row.collection).applyExternal(row.id, row.data === null ? undefined : JSON.parse(row.data));
    }
    if (present !== undefined) {
      // Read again in full: what this process holds and the database no longer has was deleted.
      for (const collection of this.collections.values()) {
        if (collection.name === CLOCK_COLLECTION) continue;
        for (const id of [...collection.records.keys()]) {
          if (!present.has(`${collection.name}\0${id}`)) collection.applyExternal(id, undefined);
        }
      }
    }
    this.seen = rows[rows.length - 1]!.seq;
    if (clockRow?.data != null) this.othersOffset = (JSON.parse(clockRow.data) as { offsetMs: number }).offsetMs;
  }

  /** Writes the records the batch changed, tells the other processes, commits. */
  private async commit(client: pg.PoolClient, touched: Touched[]): Promise<void> {
    // A statement per chunk of rows (of about STATEMENT_BYTES), each sent when made: a unit that
    // wrote 100,000 records (an advance that expires them) never holds all their SQL at once.
    let rows: string[] = [];
    let bytes = 0;
    const insert = () =>
      `INSERT INTO sandbox_records (collection, id, data, seq, deleted_at) VALUES ${rows.join(', ')} ` +
      'ON CONFLICT (collection, id) DO UPDATE SET data = EXCLUDED.data, seq = EXCLUDED.seq, deleted_at = EXCLUDED.deleted_at';
    for (const { collection, id } of touched) {
      const value = collection.records.get(id);
      const data = value === undefined ? 'NULL' : client.escapeLiteral(stringifyJson(value));
      const deletedAt = value === undefined ? 'now()' : 'NULL';
      const row = `(${client.escapeLiteral(collection.name)}, ${client.escapeLiteral(id)}, ${data}, nextval('sandbox_seq'), ${deletedAt})`;
      if (rows.length > 0 && bytes + row.length > STATEMENT_BYTES) {
        await client.query(insert());
        rows = [];
        bytes = 0;
      }
      rows.push(row);
      bytes += row.length;
    }
    const last = [insert(), `SELECT currval('sandbox_seq')::text AS seq`, `NOTIFY ${CHANNEL}, '${this.processId}'`, 'COMMIT'];
    const results = (await client.query(last.join('; '))) as unknown as pg.QueryResult<{ seq: string }>[];
    const seq = results[1]?.rows[0]?.seq;
    if (seq !== undefined) this.seen = seq;
    if (this.clock !== undefined) this.writtenOffset = this.clock.offsetMs;
  }

  /** The records changed since the last commit; later changes start a new list. */
  private takeTouched(): Touched[] {
    const touched = [...this.touchedRecords.values()];
    this.touchedRecords = new Map();
    return touched;
  }

  /** Puts back what the failed units changed in the cache. */
  private rollbackCache(touched: Touched[]): void {
    for (const { collection, id, previous } of touched.reverse()) {
      if (previous === ABSENT) collection.records.delete(id);
      else collection.records.set(id, previous);
    }
  }

  /** A connection was lost: logged once per cause (the unit using it, if any, fails by itself). */
  private connectionLost(error: unknown): void {
    if (!this.closed) this.unavailable(error);
  }

  private unavailable(error: unknown): StoreUnavailableError {
    const cause = describeFailure(error);
    if (this.lastFailure !== cause) {
      this.lastFailure = cause;
      this.log.error(`the database ${this.where} failed: ${cause}; answering 503 until it is back`);
    }
    return new StoreUnavailableError(`the sandbox's database cannot be used (${cause})`, RETRY_AFTER_SECONDS);
  }

  /**
   * Once a minute: looks at what changed (so that an idle process never falls far enough behind to
   * read everything again at its next request, which it does only after the database was away),
   * and drops the rows of records deleted long enough ago for every process to have seen it.
   */
  private async purge(): Promise<void> {
    if (this.closed) return;
    await this.unit(() => undefined).catch(() => undefined);
    await this.pool
      .query(
        `DELETE FROM sandbox_records WHERE data IS NULL AND deleted_at < now() - interval '${TOMBSTONE_MINUTES} minutes'; ` +
          `DELETE FROM sandbox_processes WHERE expires_at < now() - interval '${TOMBSTONE_MINUTES} minutes'`,
      )
      .catch(() => undefined);
  }

  /** Listens for other processes' changes; connects again after a failure. */
  private async listen(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.options.url, application_name: `${APPLICATION}${this.processId}` });
    const retry = () => {
      if (this.listener !== client) return;
      this.listener = undefined;
      void client.end().catch(() => undefined);
      setTimeout(() => void this.listen(), 1000).unref();
    };
    this.listener = client;
    client.on('error', retry);
    client.on('end', retry);
    client.on('notification', (message) => {
      if (message.channel === PROCESSES_CHANNEL) {
        void this.readOthers().catch(() => undefined);
        return;
      }
      if (message.payload === this.processId) return;
      this.othersWrote = true;
      // Another process committed: read its changes now (the live stream, the clock), unless a
      // unit of work will anyway.
      if (!this.draining && this.queue.length === 0) void this.unit(() => undefined).catch(() => undefined);
    });
    try {
      await client.connect();
      await client.query(`LISTEN ${CHANNEL}; LISTEN ${PROCESSES_CHANNEL}`);
    } catch {
      retry();
      return;
    }
    if (this.listened) {
      // Listening again after a lost connection: what the others wrote meanwhile sent no
      // notification here, so it is read now.
      this.othersWrote = true;
      void this.unit(() => undefined).catch(() => undefined);
    }
    this.listened = true;
  }
}

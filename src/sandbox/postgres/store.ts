/**
 * The shared store (`--database-url`): the sandbox's records in PostgreSQL, so that any number of
 * sandbox processes on one database behave as one sandbox and a restart loses nothing.
 *
 * One writer (lease.ts): the process that holds the writer's lock opens this store, holds every
 * record in memory (a cache read synchronously, as the families expect of a {@link Store}) and is
 * the only one that writes; the other processes forward their requests to it (sandbox/shared-role.ts)
 * and hold no records. So a unit of work never waits for another process: no lock per unit, no
 * read of others' changes, nothing to notify.
 * - Every change of state runs in a unit of work ({@link Store.unit}). Units run one at a time, as
 *   in memory, and those that queue up while a transaction is under way share the next one (group
 *   commit): the units run, then the records they changed are written in one transaction on the
 *   lease's connection, and only then do the units' promises settle: an answer is sent once what it
 *   says is stored.
 * - Opening reads every record without any lock (the writer's role is already held: no one else
 *   writes); the families rebuild what they derive from them ({@link Store.observe}).
 * - A deleted record's row goes, and its deletion is kept in `sandbox_deletions` for
 *   {@link DELETIONS_KEPT_MINUTES} minutes, so that a writer that lost its connection and took the role
 *   again reads what changed since (`seq > seen`, catch-up.ts).
 * - The virtual clock's offset is a record too (clock-offset.ts): a writer that takes over goes on
 *   from the offset its predecessor reached.
 * - When the database cannot be reached (down, restarted, the connection killed, a full disk),
 *   units fail with a {@link StoreUnavailableError} (503 with `Retry-After`); what they changed in
 *   the cache is put back (and the families' observers told, so what they derive follows),
 *   nothing is half written, and the next unit tries again: the sandbox recovers by itself when the
 *   database is back (the lease connects again and takes the lock again).
 * - A unit that throws writes nothing: what it changed in the cache is put back (and so never
 *   written), in a batch beside units that succeed and inline inside another unit alike; the units
 *   around it keep what they wrote.
 *
 * Hand-written on `pg` rather than an ORM or query builder: the whole schema is one table of JSON
 * records, and the unit of work (group commit on the writer's connection) is the point.
 */
import { randomBytes } from 'node:crypto';
import { StoreUnavailableError, type Collection, type ExternalChange, type Store } from '../store.js';
import { ABSENT, SharedCollection, type Touched } from './collection.js';
import { describeFailure } from './failures.js';
import { describeDatabase } from './database-url.js';
import { WriterLease, type QueryClient } from './lease.js';
import { migrateDatabase } from './schema.js';
import { writeRecords } from './rows.js';
import { groupsForCommit, newestRows, type CommitGroup } from './commit-groups.js';
import { readChanges } from './catch-up.js';
import { SeqOrder } from './seq-order.js';
import { CLOCK_COLLECTION, ClockOffset, type SharedClock } from './clock-offset.js';
/** How long a deletion is kept, for a writer that lost its connection to learn of it. */
const DELETIONS_KEPT_MINUTES = 10;
/** Units of work run in one batch, at most (the batches waiting for a commit share it). */
const MAX_BATCH = 256;
/** Seconds a client is asked to wait when the database cannot be reached. */
const RETRY_AFTER_SECONDS = 5;

export interface PostgresStoreOptions {
  /** The database URL (`postgres://...`), already checked (database-url.ts). */
  url: string;
  /** Warnings and errors (never the URL's password). */
  log?: { warn(message: string): void; error(message: string, error?: unknown): void };
  /** This process's id among the sandbox's processes; default: a new random one. */
  processId?: string;
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

export class PostgresStore implements Store {
  readonly shared = true;
  /** This process among the sandbox's processes (its connections' `application_name`). */
  readonly processId: string;
  private readonly collections = new Map<string, SharedCollection<unknown>>();
  /** Records changed by the units of the running batch, by `collection\0id`. */
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
  private readonly clockOffset = new ClockOffset();
  private lease: WriterLease | undefined;
  private purgeTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly where: string;
  private readonly log: NonNullable<PostgresStoreOptions['log']>;
  private lastFailure: string | undefined;
  /** The groups of changes that ran and are not committed yet, oldest first. */
  private groups: CommitGroup[] = [];
  private committing = false;

  constructor(private readonly options: PostgresStoreOptions) {
    this.where = describeDatabase(options.url);
    this.processId = options.processId ?? randomBytes(8).toString('hex');
    this.log = options.log ?? { warn: (message) => console.warn(message), error: (message) => console.error(message) };
  }

  /** The database URL (with its password: never to be shown; see {@link description}). */
  get url(): string {
    return this.options.url;
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

  /** Makes the virtual clock shared: its offset is stored, and a writer that takes over goes on from it. */
  attachClock(clock: SharedClock): void {
    this.clockOffset.attach(clock);
  }

  clear(): void {
    for (const collection of this.collections.values()) {
      for (const id of [...collection.records.keys()]) collection.delete(id);
    }
  }

  /**
   * Opens the store as the writer: with the `lease` held (or, without one, the writer's role taken
   * now), reads every record (the families rebuild what they derive from them). Throws with the
   * cause when the database cannot be used or another process is the writer.
   */
  async open(lease?: WriterLease): Promise<void> {
    if (lease === undefined) {
      await migrateDatabase(this.options.url);
      lease = new WriterLease(this.options.url, this.processId, () => undefined);
      let taken: boolean;
      try {
        taken = await lease.tryTake();
      } catch (error) {
        throw new StoreUnavailableError(`cannot connect to ${this.where}: ${describeFailure(error)}`);
      }
      if (!taken) throw new StoreUnavailableError(`another sandbox process is the writer of ${this.where}`);
    }
    this.lease = lease;
    try {
      const { client } = await lease.connection();
      await this.catchUp(client, true);
    } catch (error) {
      throw new StoreUnavailableError(`cannot read ${this.where}: ${describeFailure(error)}`);
    }
    this.applyStoredOffset();
    this.purgeTimer = setInterval(() => void this.purge(), 60_000);
    this.purgeTimer.unref();
  }

  /**
   * Another process took the writer's role while this one's connection was lost (it forwards from
   * now on): the records are dropped, since a forwarding process holds none (the families'
   * observers are told, so what they derive goes too), what waited for a commit fails without
   * being put back, and a later {@link open} reads every record again rather than the changes
   * after a `seq` this process saw as the writer (which would keep a record deleted meanwhile).
   */
  release(): void {
    const groups = this.groups;
    this.groups = [];
    const failure = new StoreUnavailableError('another sandbox process is the writer now; send the request again', 1);
    for (const group of groups) group.fail(failure);
    this.touchedRecords = new Map();
    for (const collection of this.collections.values()) {
      for (const id of [...collection.records.keys()]) collection.applyExternal(id, undefined);
    }
    this.seen = '0';
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

  /** Fails the queued units and stops writing; the lease (the writer's role) is released by its owner. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.purgeTimer !== undefined) clearInterval(this.purgeTimer);
    while (this.draining || this.committing) await new Promise((resolve) => setTimeout(resolve, 5));
    for (const unit of this.queue.splice(0)) unit.reject(new StoreUnavailableError('the sandbox is stopping'));
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

  /**
   * Runs a batch of units at once, as the memory store would, then hands what they changed to the
   * commits (write-behind): the next batch runs while this one's transaction is under way. The
   * units that changed something settle when their transaction commits; a unit that changed
   * nothing settles at once (what it read may include a change whose commit is under way).
   */
  private async runBatch(batch: QueuedUnit[]): Promise<void> {
    try {
      if (this.lease === undefined) throw new StoreUnavailableError('the shared store is not open: this process is not the writer', 1);
      const held = await this.lease.connection();
      // The lock was lost and taken again: what a writer wrote meanwhile (if another took the role
      // and gave it up) is read first.
      if (held.fresh) await this.refresh(held.client);
    } catch (error) {
      const failure = error instanceof StoreUnavailableError ? error : this.unavailable(error);
      for (const unit of batch) unit.reject(failure);
      return;
    }
    const outcomes: { ok: boolean; value: unknown; wrote: boolean }[] = [];
    this.inUnit = true;
    try {
      for (const unit of batch) {
        const scope: UnitScope = { first: new Map(), added: [] };
        this.scopes = [scope];
        try {
          const value = unit.work();
          // An asynchronous unit is its synchronous part, as in memory: what it does after an
          // await runs units of its own (the clock's advance, a slice at a time). Its promise
          // settles the answer once the part written here is committed.
          if (value instanceof Promise) value.catch(() => undefined);
          outcomes.push({ ok: true, value, wrote: scope.first.size > 0 });
        } catch (error) {
          // The unit threw: what it changed is put back, and it writes nothing.
          this.putBack(scope);
          outcomes.push({ ok: false, value: error, wrote: false });
        } finally {
          this.scopes = [];
        }
      }
      // The clock's offset, when the units moved it: written with them.
      const offsetMs = this.clockOffset.takeMoved();
      if (offsetMs !== undefined) this.sharedCollection<{ offsetMs: number }>(CLOCK_COLLECTION).set('clock', { offsetMs });
    } finally {
      this.inUnit = false;
    }
    const inline = this.inlineWaiters;
    this.inlineWaiters = [];
    // A unit that changed nothing (a read, one that threw) settles now; the others with the commit.
    const writers: number[] = [];
    batch.forEach((unit, index) => {
      const outcome = outcomes[index]!;
      if (outcome.wrote) writers.push(index);
      else if (outcome.ok) unit.resolve(outcome.value);
      else unit.reject(outcome.value);
    });
    const settle = () => {
      for (const index of writers) batch[index]!.resolve(outcomes[index]!.value);
      for (const waiter of inline) waiter.resolve();
    };
    const fail = (failure: unknown) => {
      for (const index of writers) batch[index]!.reject(failure);
      for (const waiter of inline) waiter.reject(failure);
    };
    const touched = this.takeTouched();
    if (touched.length === 0) {
      settle();
      return;
    }
    const rows = touched.map(({ collection, id }) => ({ collection: collection.name, id, value: collection.records.get(id) }));
    this.groups.push({ rows, touched, settle, fail });
    if (!this.committing) void this.commitGroups();
  }

  /**
   * Commits the groups of changes that ran, oldest first: the groups waiting when a transaction
   * starts go into it, up to 8,192 rows (commit-groups.ts) (a record several of them changed written
   * once, as the newest left it), so that the units arriving during a commit share the next one
   * (group commit).
   */
  private async commitGroups(): Promise<void> {
    this.committing = true;
    try {
      while (this.groups.length > 0) {
        // A turn of its own: the units that made the group ran in this one (an advance's slice),
        // and a request waiting meanwhile is answered before the group's rows are made into a
        // statement (several ms more for thousands of rows; D512).
        await new Promise<void>((resolve) => setImmediate(resolve));
        // The oldest groups, up to COMMIT_ROWS rows (at least one group): the groups that pile up
        // while a commit is under way (an advance's or a trimming's slices) are taken a bounded
        // number of rows at a time, so that making one statement list is never one long turn.
        const taken = groupsForCommit(this.groups);
        // Emptied during the yield (the store released, or what waited failed): nothing to write.
        if (taken === 0) break;
        const rows = taken === 1 ? this.groups[0]!.rows : newestRows(this.groups, taken);
        let client: QueryClient | undefined;
        try {
          const held = await this.lease!.connection();
          client = held.client;
          if (held.fresh) {
            // The connection was lost and the lock taken again: what ran since is put back.
            this.failPending(new StoreUnavailableError("the sandbox's database connection was lost; send the request again", RETRY_AFTER_SECONDS));
            await this.refresh(client);
            continue;
          }
          const seq = await writeRecords(client, rows);
          if (seq !== undefined) this.seen = seq;
        } catch (error) {
          await client?.query('ROLLBACK').catch(() => undefined);
          this.failPending(error instanceof StoreUnavailableError ? error : this.unavailable(error));
          continue;
        }
        this.lastFailure = undefined;
        for (const group of this.groups.splice(0, taken)) group.settle();
      }
    } finally {
      this.committing = false;
    }
  }

  /**
   * A commit failed: every group that ran and is not committed (it may build on the failed one) is
   * put back, newest first, and its units fail. (Units run synchronously, never during this.)
   */
  private failPending(failure: unknown): void {
    // The clock's offset is written again with the next unit (its record is put back below).
    this.clockOffset.forget();
    const groups = this.groups;
    this.groups = [];
    for (let index = groups.length - 1; index >= 0; index--) this.rollbackCache(groups[index]!.touched);
    for (const group of groups) group.fail(failure);
  }

  /** Reads what changed since `seen` and moves the clock to the stored offset. */
  private async refresh(client: QueryClient): Promise<void> {
    await this.catchUp(client, false);
    this.applyStoredOffset();
  }

  /**
   * Reads what changed since `seen` (everything when `full`) into the cache, told to the families
   * in the order it was written (seq-order.ts).
   */
  private async catchUp(client: QueryClient, full: boolean): Promise<void> {
    const last = (await client.query<{ seq: string }>('SELECT last_value::text AS seq FROM sandbox_seq')).rows[0]?.seq ?? this.seen;
    const order = new SeqOrder<{ seq: number; collection: string; id: string; value: unknown }>(this.seen, last);
    const seen = await readChanges(client, this.seen, full, (rows) => {
      for (const { seq, collection, id, data } of rows) order.add({ seq: Number(seq), collection, id, value: data === null ? undefined : JSON.parse(data) });
    });
    await order.replay(({ collection, id, value }) => {
      if (collection === CLOCK_COLLECTION) this.clockOffset.read(value);
      else this.sharedCollection(collection).applyExternal(id, value);
    });
    this.seen = seen;
  }

  /** The clock's offset read from the database: the clock moves on to it, firing what falls due. */
  private applyStoredOffset(): void {
    const moved = this.clockOffset.apply((move) => {
      this.inUnit = true;
      try {
        move();
      } finally {
        this.inUnit = false;
      }
    });
    // What the timers fired on the way changed is written by the next unit.
    if (moved) void this.unit(() => undefined).catch(() => undefined);
  }

  /** The records changed since the last commit; later changes start a new list. */
  private takeTouched(): Touched[] {
    const touched = [...this.touchedRecords.values()];
    this.touchedRecords = new Map();
    return touched;
  }

  /** Puts back what the failed units changed in the cache, newest first; the observers are told. */
  private rollbackCache(touched: Touched[]): void {
    for (const { collection, id, previous } of touched.reverse()) collection.applyExternal(id, previous === ABSENT ? undefined : previous);
  }

  private unavailable(error: unknown): StoreUnavailableError {
    const cause = describeFailure(error);
    if (this.lastFailure !== cause) {
      this.lastFailure = cause;
      this.log.error(`the database ${this.where} failed: ${cause}; answering 503 until it is back`);
    }
    return new StoreUnavailableError(`the sandbox's database cannot be used (${cause})`, RETRY_AFTER_SECONDS);
  }

  /** Once a minute: drops the deletions kept long enough. */
  private async purge(): Promise<void> {
    if (this.closed || this.lease === undefined || !this.lease.held) return;
    try {
      const { client } = await this.lease.connection();
      await client.query(`DELETE FROM sandbox_deletions WHERE deleted_at < now() - interval '${DELETIONS_KEPT_MINUTES} minutes'`);
    } catch {
      // The database is away: tried again in a minute.
    }
  }
}

/**
 * Where the sandbox keeps its state. Every family reads and writes through a {@link Store}: named
 * collections of records keyed by id. Two implementations: {@link MemoryStore}, the default, and
 * the shared store on PostgreSQL (postgres/store.ts, `--database-url`), which any number of
 * processes use as one sandbox. The families do not know which one they have.
 *
 * Rules for callers, so that another implementation behaves the same:
 * - the interface is synchronous: a handler checks and updates state without an `await` in
 *   between, which is what makes concurrent requests safe (one id created once, refunds never
 *   exceeding the amount);
 * - records are plain JSON data (no class instances, functions or Dates; times are epoch ms or
 *   ISO strings);
 * - a record read with `get` is a snapshot and is frozen: build a changed copy, field by field
 *   (the record's `copy…` function; never by spread syntax, which copies a frozen object on V8's
 *   slow path: test/sandbox/record-spreads.test.ts fails on one), and `set` it back. `set` takes the object given: the in-memory store freezes it, deeply, in
 *   place, and reads share it without copying (a copy per read was a fifth of a request's time; a
 *   structuredClone per set was most of the time of an advance that expires 100,000
 *   transactions). So never change an object after giving it to `set` (it throws: it is frozen),
 *   and never put in a record a frozen object whose contents can still change (`Object.freeze` is
 *   shallow; frozen parts are taken as they are, such as the unchanged `user` of a record read
 *   before).
 */
import { ShardedMap } from './sharded-map.js';

export interface Collection<T> {
  get(id: string): T | undefined;
  set(id: string, value: T): void;
  has(id: string): boolean;
  delete(id: string): boolean;
  /** Every record, in no particular order. */
  values(): T[];
  readonly size: number;
}

/**
 * Told of a change of a record: `value` is the record now (undefined when it was deleted),
 * `previous` what was held before (undefined when there was nothing). Called once the change is
 * made, synchronously, inside the unit that made it.
 */
export type ExternalChange<T> = (id: string, value: T | undefined, previous: T | undefined) => void;

export interface Store {
  /** The collection of this name; the same name always gives the same collection. */
  collection<T>(name: string): Collection<T>;
  /** Empties every collection. */
  clear(): void;
  /**
   * Runs `work` as one unit of work: what it reads is current, and what it writes is kept
   * together or not at all. Every change of state runs in one: a request (router.ts), the timers
   * that fall due (clock.ts), a webhook attempt's outcome.
   * - Shared: queued; runs after every other process's writes were read, inside one database
   *   transaction holding the sandbox's lock, and answers a promise that settles once the writes
   *   are committed (rejected with a {@link StoreUnavailableError} when the database is not there).
   *   A unit that throws writes nothing (its changes are put back); a change outside any unit
   *   throws.
   * - Memory: runs `work` at once; a unit that throws writes nothing either (what it changed is put
   *   back from an undo log of the running unit's first changes), and a change outside any unit
   *   throws, as in the shared store.
   * - Both: an asynchronous unit is its synchronous part; what it does after an await runs units
   *   of its own (the clock's advance runs one per slice).
   */
  unit<T>(work: () => T): T | Promise<Awaited<T>>;
  /**
   * Registers what keeps the state a family derives from the records of a collection (timers,
   * counters, indexes, retention): told of every change of a record ({@link ExternalChange}), the
   * family's own writes included, the records read when a shared sandbox starts, and a change put
   * back when a unit fails (told as the change back). The one place that state is kept, in both
   * stores.
   */
  observe<T>(name: string, listener: ExternalChange<T>): void;
  /** True on the shared store (PostgreSQL): other processes forward to this one, or this one to another. */
  readonly shared: boolean;
}

/** The shared store's database cannot be reached: answered 503 with `Retry-After`. */
export class StoreUnavailableError extends Error {
  constructor(
    message: string,
    /** Seconds after which to try again. */
    readonly retryAfterSeconds: number = 5,
  ) {
    super(message);
    this.name = 'StoreUnavailableError';
  }
}

/** The previous value of a record that did not exist (in the undo log). */
const ABSENT = Symbol('absent');

/** The embedded default: everything in memory, lost when the process ends. */
export class MemoryStore implements Store {
  private readonly collections = new Map<string, MemoryCollection<unknown>>();
  /** Units running now (a unit may start another inline). */
  private depth = 0;
  /**
   * The running units' changes, to put back those of a unit that throws: flat triples of
   * (collection, id, previous value or {@link ABSENT}), no object per change.
   */
  private readonly undo: unknown[] = [];

  collection<T>(name: string): Collection<T> {
    let collection = this.collections.get(name);
    if (collection === undefined) {
      collection = new MemoryCollection<unknown>(this, name);
      this.collections.set(name, collection);
    }
    return collection as Collection<T>;
  }

  clear(): void {
    for (const collection of this.collections.values()) collection.clear();
  }

  unit<T>(work: () => T): T {
    const mark = this.undo.length;
    this.depth++;
    try {
      return work();
    } catch (error) {
      this.putBack(mark);
      throw error;
    } finally {
      this.depth--;
      if (this.depth === 0) this.undo.length = 0;
    }
  }

  observe<T>(name: string, listener: ExternalChange<T>): void {
    (this.collection<T>(name) as MemoryCollection<T>).listeners.push(listener);
  }

  readonly shared = false;

  /** Called by a collection before it changes a record: refused outside a unit, else logged for undo. */
  changing(collection: MemoryCollection<unknown>, id: string, previous: unknown): void {
    if (this.depth === 0) {
      throw new Error(`the record ${collection.name}/${id} was changed outside a unit of work: make the change inside store.unit(...) (store.ts)`);
    }
    this.undo.push(collection, id, previous);
  }

  /** Puts back the changes logged since `mark`, newest first; the observers are told of each. */
  private putBack(mark: number): void {
    for (let index = this.undo.length - 3; index >= mark; index -= 3) {
      const collection = this.undo[index] as MemoryCollection<unknown>;
      const id = this.undo[index + 1] as string;
      const previous = this.undo[index + 2];
      collection.restore(id, previous === ABSENT ? undefined : previous);
    }
    this.undo.length = mark;
  }
}

/** Freezes a plain-data value and everything in it; frozen parts are taken as they are. */
export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    // for...in over a plain object or array: its own keys, without allocating a list of them.
    for (const key in value) {
      const field = (value as Record<string, unknown>)[key];
      if (typeof field === 'object' && field !== null) deepFreeze(field);
    }
  }
  return value;
}

class MemoryCollection<T> implements Collection<T> {
  /** Sharded: one Map took 48 ms to grow past 262,144 records (sharded-map.ts). */
  private readonly records = new ShardedMap<string, T>();
  readonly listeners: ExternalChange<T>[] = [];

  constructor(
    private readonly store: MemoryStore,
    readonly name: string,
  ) {}

  get(id: string): T | undefined {
    return this.records.get(id);
  }

  set(id: string, value: T): void {
    const previous = this.records.get(id);
    this.store.changing(this as MemoryCollection<unknown>, id, previous === undefined && !this.records.has(id) ? ABSENT : previous);
    this.records.set(id, deepFreeze(value));
    for (const listener of this.listeners) listener(id, value, previous);
  }

  has(id: string): boolean {
    return this.records.has(id);
  }

  delete(id: string): boolean {
    if (!this.records.has(id)) return false;
    const previous = this.records.get(id);
    this.store.changing(this as MemoryCollection<unknown>, id, previous);
    this.records.delete(id);
    for (const listener of this.listeners) listener(id, undefined, previous);
    return true;
  }

  /** Puts a record back as it was before a unit that threw (undefined: it did not exist). */
  restore(id: string, value: T | undefined): void {
    const undone = this.records.get(id);
    if (value === undefined) this.records.delete(id);
    else this.records.set(id, value);
    for (const listener of this.listeners) listener(id, value, undone);
  }

  values(): T[] {
    return [...this.records.values()];
  }

  get size(): number {
    return this.records.size;
  }

  clear(): void {
    for (const id of [...this.records.keys()]) this.delete(id);
  }
}

/**
 * Records that belong to a parent record and are added one at a time (the refunds of a
 * transaction, the data pushes of a phone number). Each child is its own record of an ordinary
 * collection, under `<parentKey>#<position>`, and the parent keeps only how many there are: adding
 * one writes one small record, never a copy of the parent's earlier children (which made 8,000
 * refunds of one transaction quadratic). Works over any {@link Store}.
 */
export class ChildRecords<T> {
  constructor(private readonly collection: Collection<T>) {}

  static key(parentKey: string, position: number): string {
    return `${parentKey}#${position}`;
  }

  get(parentKey: string, position: number): T | undefined {
    return this.collection.get(ChildRecords.key(parentKey, position));
  }

  /** Writes the child at `position` (a new one at the parent's count, or a changed one). */
  set(parentKey: string, position: number, value: T): void {
    this.collection.set(ChildRecords.key(parentKey, position), value);
  }

  delete(parentKey: string, position: number): void {
    this.collection.delete(ChildRecords.key(parentKey, position));
  }

  /** The children at positions `from` (inclusive) to `to` (exclusive) that exist, in order. */
  range(parentKey: string, from: number, to: number): T[] {
    const children: T[] = [];
    for (let position = from; position < to; position++) {
      const child = this.get(parentKey, position);
      if (child !== undefined) children.push(child);
    }
    return children;
  }

  /** Deletes the children at positions `from` to `to` (exclusive). */
  deleteRange(parentKey: string, from: number, to: number): void {
    for (let position = from; position < to; position++) this.delete(parentKey, position);
  }
}

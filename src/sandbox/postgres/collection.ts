/**
 * A collection of the shared store (store.ts): the records in memory, read synchronously as the
 * families expect, each change told to the store ({@link ChangeTracker}) so that the running unit
 * of work writes it (or puts it back when the unit fails), and to the families' observers. Changes
 * read from the database, and those put back, go through {@link SharedCollection.applyExternal}.
 */
import { deepFreeze, type Collection, type ExternalChange } from '../store.js';
import { ShardedMap } from '../sharded-map.js';

/** What a collection tells its store before it changes a record. */
export interface ChangeTracker {
  touched(collection: SharedCollection<unknown>, id: string, previous: unknown): void;
}

/** The previous value of a record that did not exist. */
export const ABSENT = Symbol('absent');

export class SharedCollection<T> implements Collection<T> {
  /** Sharded: one Map took 48 ms to grow past 262,144 records (sharded-map.ts). */
  readonly records = new ShardedMap<string, T>();
  readonly listeners: ExternalChange<T>[] = [];

  constructor(
    private readonly store: ChangeTracker,
    readonly name: string,
  ) {}

  get(id: string): T | undefined {
    return this.records.get(id);
  }

  set(id: string, value: T): void {
    const previous = this.records.get(id);
    this.store.touched(this as SharedCollection<unknown>, id, previous === undefined && !this.records.has(id) ? ABSENT : previous);
    this.records.set(id, deepFreeze(value));
    for (const listener of this.listeners) listener(id, value, previous);
  }

  has(id: string): boolean {
    return this.records.has(id);
  }

  delete(id: string): boolean {
    if (!this.records.has(id)) return false;
    const previous = this.records.get(id);
    this.store.touched(this as SharedCollection<unknown>, id, previous);
    this.records.delete(id);
    for (const listener of this.listeners) listener(id, undefined, previous);
    return true;
  }

  values(): T[] {
    return [...this.records.values()];
  }

  get size(): number {
    return this.records.size;
  }

  /**
   * A change from the database (read at start, or after the connection was lost), or one put back
   * (a unit that threw, a commit that failed): the cache follows and the listeners are told.
   */
  applyExternal(id: string, value: T | undefined): void {
    const previous = this.records.get(id);
    if (value === undefined) {
      if (!this.records.delete(id)) return;
    } else {
      this.records.set(id, deepFreeze(value));
    }
    for (const listener of this.listeners) listener(id, value, previous);
  }
}

export interface Touched {
  collection: SharedCollection<unknown>;
  id: string;
  /** The value before the unit changed it ({@link ABSENT}: there was none). */
  previous: unknown;
}

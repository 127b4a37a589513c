/**
 * Bounded history (docs/sandbox.md, "Retention"): the sandbox keeps the newest
 * `retention.transactions` final transactions of all families together (default 100,000) and
 * forgets older ones, oldest first. A record joins the queue when it becomes final (SUCCESS,
 * FAILURE, CANCELLED, FAILED); pending records are never in it, so never forgotten. Each family
 * registers how to forget one of its records (with its refunds, sessions, ...) and may keep one
 * that still has work due (a gateway refund completing): it then goes to the back of the queue.
 *
 * One queue per store, shared by the families that use it: a ring buffer (denque) of kind and key
 * pairs, two references per record, where a linked list would allocate two objects per record.
 * The oldest are forgotten a few at a time as records are added, and not during a sliced clock
 * advance, which leaves them for after it (trimming.ts, D66).
 */
import Denque from 'denque';
import type { VirtualClock } from './clock.js';
import type { Store } from './store.js';
import { Trimming, type Trimmable } from './trimming.js';

/** Forgets the record of `key`; answers `keep` when it cannot go yet. */
export type Evictor = (key: string) => 'evicted' | 'keep';

export class FinalRecords implements Trimmable {
  /** Kind, key, kind, key, ...: oldest first. */
  private readonly queue = new Denque<string>();
  private readonly evictors = new Map<string, Evictor>();
  private evictedCount = 0;
  private readonly trimming: Trimming;

  /** `clock`: whose sliced advances the forgetting waits for (none: never waits). */
  constructor(
    readonly limit: number,
    clock?: VirtualClock,
  ) {
    this.trimming = new Trimming(clock, this);
  }

  /** How to forget a record of this kind (one per kind: `sdk`, `web`, `gateway`, ...). */
  register(kind: string, evictor: Evictor): void {
    this.evictors.set(kind, evictor);
  }

  /** A record became final; the oldest final records beyond the limit are forgotten. */
  add(kind: string, key: string): void {
    this.queue.push(kind);
    this.queue.push(key);
    this.trimming.added();
  }

  excess(): number {
    return this.size - this.limit;
  }

  /** Tries to forget the `tries` oldest records; one that must stay goes to the back. */
  trim(tries: number): void {
    for (let budget = tries; budget > 0 && this.size > this.limit; budget--) {
      const oldestKind = this.queue.shift()!;
      const oldestKey = this.queue.shift()!;
      const evictor = this.evictors.get(oldestKind);
      if (evictor !== undefined && evictor(oldestKey) === 'keep') {
        this.queue.push(oldestKind);
        this.queue.push(oldestKey);
      } else {
        this.evictedCount++;
      }
    }
  }

  /** Final records held. */
  get size(): number {
    return this.queue.length / 2;
  }

  /** Final records forgotten so far. */
  get evicted(): number {
    return this.evictedCount;
  }
}

const shared = new WeakMap<Store, FinalRecords>();

/** The queue of final records of this store (created with `limit` and `clock` on first use). */
export function finalRecords(store: Store, limit: number, clock?: VirtualClock): FinalRecords {
  let records = shared.get(store);
  if (records === undefined) {
    records = new FinalRecords(limit, clock);
    shared.set(store, records);
  }
  return records;
}

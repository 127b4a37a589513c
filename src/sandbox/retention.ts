/**
 * Bounded history (docs/sandbox.md, "Retention"): the sandbox keeps the newest
 * `retention.transactions` final transactions of all families together (default 100,000) and
 * forgets older ones, oldest first. A record joins the queue when it becomes final (SUCCESS,
 * FAILURE, CANCELLED, FAILED); pending records are never in it, so never forgotten. Each family
 * registers how to forget one of its records (with its refunds, sessions, ...) and may keep one
 * that still has work due (a gateway refund completing): it then goes to the back of the queue.
 *
 * The final records also hold the bytes of their `notes`: the notes of every transaction
 * held, pending and final, stay within `limits.notesBytes`; beyond it the oldest final records
 * are forgotten as beyond the count, and an initiate whose notes do not fit beside those of the
 * pending transactions is refused ({@link FinalRecords.admits}).
 *
 * One queue per store, shared by the families that use it: a ring buffer (denque) of kind, key and
 * bytes, three values per record, where a linked list would allocate two objects per record.
 * The oldest are forgotten a few at a time as records are added, and not during a sliced clock
 * advance, which leaves them for after it (trimming.ts).
 */
import Denque from 'denque';
import type { VirtualClock } from './clock.js';
import type { Store } from './store.js';
import { Trimming, type Trimmable } from './trimming.js';

/** Records forgotten at most when an initiate's notes push the bytes over the limit. */
const RESERVE_TRIES = 4096;

/** Forgets the record of `key`; answers `keep` when it cannot go yet. */
export type Evictor = (key: string) => 'evicted' | 'keep';

export class FinalRecords implements Trimmable {
  /** Kind, key, bytes, kind, key, bytes, ...: oldest first. */
  private readonly queue = new Denque<string | number>();
  private readonly evictors = new Map<string, Evictor>();
  private evictedCount = 0;
  private readonly trimming: Trimming;
  /** Bytes held by every record (pending and final), and by the final ones in the queue. */
  private usedBytes = 0;
  private finalBytes = 0;

  /**
   * `clock`: whose sliced advances the forgetting waits for (none: never waits). `byteLimit`: the
   * bytes the records may hold together (none: no limit).
   */
  constructor(
    readonly limit: number,
    clock?: VirtualClock,
    readonly byteLimit: number = Number.POSITIVE_INFINITY,
  ) {
    this.trimming = new Trimming(clock, this);
  }

  /**
   * Whether `bytes` for a new pending record fit beside those of the pending records (final ones
   * are forgotten, oldest first, to make room); takes nothing: the bytes are held when the record
   * is stored ({@link hold}, by the family's observer of its collection).
   */
  admits(bytes: number): boolean {
    if (bytes === 0) return true;
    if (this.usedBytes - this.finalBytes + bytes > this.byteLimit) return false;
    // Room is made at once, a bounded number of records at a time (old final records without
    // notes may come first); what is left is forgotten as records are added.
    this.usedBytes += bytes;
    if (this.overBytes()) this.trim(RESERVE_TRIES);
    this.usedBytes -= bytes;
    return true;
  }

  /** Counts the bytes of a record stored (pending, or final when read at start): held, never refused. */
  hold(bytes: number): void {
    if (bytes === 0) return;
    this.usedBytes += bytes;
    this.trimming.added();
  }

  /** Gives back the bytes of a pending record that was not kept after all. */
  release(bytes: number): void {
    this.usedBytes -= bytes;
  }

  /** Bytes held by the records, pending and final. */
  get bytes(): number {
    return this.usedBytes;
  }

  /** How to forget a record of this kind (one per kind: `sdk`, `web`, `gateway`, ...). */
  register(kind: string, evictor: Evictor): void {
    this.evictors.set(kind, evictor);
  }

  /**
   * A record became final (holding `bytes`, reserved when it was pending); the oldest final records
   * beyond the limits are forgotten.
   */
  add(kind: string, key: string, bytes = 0): void {
    this.queue.push(kind);
    this.queue.push(key);
    this.queue.push(bytes);
    this.finalBytes += bytes;
    this.trimming.added();
  }

  excess(): number {
    // Over the bytes: any of the final records may have to go.
    return this.overBytes() ? this.size : this.size - this.limit;
  }

  private overBytes(): boolean {
    return this.usedBytes > this.byteLimit && this.finalBytes > 0;
  }

  /** Tries to forget the `tries` oldest records; one that must stay goes to the back. */
  trim(tries: number): void {
    for (let budget = tries; budget > 0 && (this.size > this.limit || this.overBytes()); budget--) {
      const oldestKind = this.queue.shift() as string;
      const oldestKey = this.queue.shift() as string;
      const oldestBytes = this.queue.shift() as number;
      const evictor = this.evictors.get(oldestKind);
      if (evictor !== undefined && evictor(oldestKey) === 'keep') {
        this.queue.push(oldestKind);
        this.queue.push(oldestKey);
        this.queue.push(oldestBytes);
      } else {
        this.evictedCount++;
        this.finalBytes -= oldestBytes;
        this.usedBytes -= oldestBytes;
      }
    }
  }

  /** Final records held. */
  get size(): number {
    return this.queue.length / 3;
  }

  /** Final records forgotten so far. */
  get evicted(): number {
    return this.evictedCount;
  }
}

const shared = new WeakMap<Store, FinalRecords>();

/** The queue of final records of this store (created with `limit`, `clock` and `byteLimit` on first use). */
export function finalRecords(store: Store, limit: number, clock?: VirtualClock, byteLimit?: number): FinalRecords {
  let records = shared.get(store);
  if (records === undefined) {
    records = new FinalRecords(limit, clock, byteLimit);
    shared.set(store, records);
  }
  return records;
}

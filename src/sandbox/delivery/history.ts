/**
 * The deliveries held, and their retention: completed deliveries beyond `retention.deliveries`
 * (default 100,000) are forgotten, oldest first, a few per delivery completed and, during a sliced
 * clock advance, after it (trimming.ts); pending ones are always kept.
 *
 * Records are keyed by sequence number, small integers, not the id strings: recording and
 * forgetting an event hashes no string. The creation order is an array of those numbers,
 * ascending (an id follows from its number); forgotten ones stay in it until it is compacted.
 */
import Denque from 'denque';
import type { VirtualClock } from '../clock.js';
import { Trimming } from '../trimming.js';
import type { StoredDelivery } from './stored.js';
import { ShardedMap, ShardedSet } from '../sharded-map.js';

export class DeliveryHistory {
  private readonly deliveries = new ShardedMap<number, StoredDelivery>();
  private nextSeq = 1;
  private seqs: number[] = [];
  private forgotten = 0;
  /**
   * Where the deliveries held begin in {@link order}: every number before it is forgotten. The
   * oldest completed deliveries go first, so most forgotten ones lie there, and a page from the
   * start begins here rather than scanning them (a first page must show a delivery when any is held).
   */
  private start = 0;
  /** Sequence numbers of the completed deliveries held, in the order they completed. */
  private readonly completed = new Denque<number>();
  /** Sequence numbers of the pending deliveries. */
  private readonly pending = new ShardedSet<number>();
  private readonly trimming: Trimming;
  /** Told of each completed delivery forgotten (the shared store's journal deletes its record). */
  onForget: ((delivery: StoredDelivery) => void) | undefined;

  constructor(
    clock: VirtualClock,
    private readonly retain: number,
  ) {
    this.trimming = new Trimming(clock, {
      excess: () => this.completed.length - this.retain,
      trim: (count) => this.forgetOldest(count),
    });
  }

  /** The sequence number of the next delivery. */
  takeSeq(): number {
    return this.nextSeq++;
  }

  get(seq: number): StoredDelivery | undefined {
    return this.deliveries.get(seq);
  }

  /** Replaces the record of a delivery held. */
  set(seq: number, delivery: StoredDelivery): void {
    this.deliveries.set(seq, delivery);
  }

  /** Holds a new delivery, readable by {@link get}; {@link ordered} then places it. */
  add(delivery: StoredDelivery): void {
    this.deliveries.set(delivery.seq, delivery);
  }

  /** After {@link add}: the delivery joins the creation order, and the pending or the completed ones. */
  ordered(delivery: StoredDelivery): void {
    this.seqs.push(delivery.seq);
    if (delivery.status === 'not_sent') this.retire(delivery.seq);
    else this.pending.add(delivery.seq);
  }

  /** A pending delivery completed (delivered or abandoned). */
  complete(seq: number): void {
    if (this.pending.delete(seq)) this.retire(seq);
  }

  /** The sequence numbers held, ascending; forgotten ones among them (see {@link get}). */
  get order(): readonly number[] {
    return this.seqs;
  }

  /** Where the deliveries held begin in {@link order}. */
  get orderStart(): number {
    return this.start;
  }

  /** Deliveries not yet delivered or abandoned. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Deliveries held (the pending ones and the retained completed ones). */
  get size(): number {
    return this.deliveries.size;
  }

  /**
   * A delivery is complete: it joins the retained ones, and the oldest beyond the limit go (a few
   * per delivery completed; during a sliced clock advance, after it: trimming.ts).
   */
  private retire(seq: number): void {
    this.completed.push(seq);
    this.trimming.added();
  }

  /** Forgets up to `count` of the oldest completed deliveries beyond the limit. */
  private forgetOldest(count: number): void {
    for (let left = count; left > 0 && this.completed.length > this.retain; left--) {
      const seq = this.completed.shift()!;
      if (this.onForget !== undefined) {
        const delivery = this.deliveries.get(seq);
        if (delivery !== undefined) this.onForget(delivery);
      }
      this.deliveries.delete(seq);
      this.forgotten++;
    }
    const seqs = this.seqs;
    while (this.start < seqs.length && !this.deliveries.has(seqs[this.start]!)) this.start++;
    if (this.forgotten > 1024 && this.forgotten * 2 > this.seqs.length) this.compact();
  }

  /**
   * Drops forgotten numbers from the creation order: those before {@link start} (all forgotten) by
   * cutting the array's front, a copy of numbers without a look-up each; the others, in the middle,
   * only when they still make up half of it. The oldest completed deliveries go first, so the front
   * holds most of them: a sandbox forgetting 200,000 events filtered all 200,000 in one go, a
   * `Map` look-up each, 30 ms and more of one slice under load (the `first-page` attack's profile).
   */
  private compact(): void {
    if (this.start > 0) {
      this.seqs.splice(0, this.start);
      this.forgotten -= this.start;
      this.start = 0;
    }
    if (this.forgotten > 1024 && this.forgotten * 2 > this.seqs.length) {
      this.seqs = this.seqs.filter((seq) => this.deliveries.has(seq));
      this.forgotten = 0;
    }
  }
}

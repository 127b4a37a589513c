/**
 * Sequence numbers of the deliveries of each transaction id, for the pages filtered by one.
 * Built when such a page is asked for, from the deliveries made since the last one
 * ({@link TransactionIndex.catchUp}), not as each event is recorded: a string-keyed map of 100,000
 * entries costs an event several cache misses to update, a quarter of an advance that expires
 * 100,000 transactions. Forgotten deliveries leave their numbers here (the pages skip them) until
 * the index holds twice as many as there are deliveries, and it is then built again.
 */
import { upperBound } from '../sorted.js';
import type { DeliveryHistory } from './history.js';
import { ShardedMap } from '../sharded-map.js';

/** Sequence numbers of one transaction's deliveries: one number, or several in order. */
type SeqList = number | number[];

export class TransactionIndex {
  private byTransaction = new ShardedMap<string, SeqList>();
  /** The last sequence number in the index, and how many numbers it holds. */
  private indexedUpTo = 0;
  private indexedCount = 0;

  constructor(private readonly history: DeliveryHistory) {}

  /** The last sequence number indexed: the index covers every delivery up to it. */
  get upTo(): number {
    return this.indexedUpTo;
  }

  /** The sequence numbers of a transaction's deliveries indexed, ascending. */
  seqsOf(transactionId: string): readonly number[] {
    const own = this.byTransaction.get(transactionId);
    return own === undefined ? [] : typeof own === 'number' ? [own] : own;
  }

  /**
   * Brings the index up to date by at most `budget` deliveries, the oldest not in it first (a page
   * does a bounded amount of work: one page after a burst of 100,000 events would otherwise hold
   * the event loop for a fifth of a second); starts it again from the deliveries held when
   * forgotten ones make up half of it. Each delivery is added once per build, so the cost over a
   * run is linear in its deliveries. Answers whether it is up to date.
   */
  catchUp(budget: number): boolean {
    if (this.indexedCount > 1024 && this.indexedCount > 2 * this.history.size) {
      this.byTransaction = new ShardedMap();
      this.indexedUpTo = 0;
      this.indexedCount = 0;
    }
    const seqs = this.history.order;
    let index = upperBound(seqs, this.indexedUpTo);
    const end = Math.min(seqs.length, index + budget);
    for (; index < end; index++) {
      const seq = seqs[index]!;
      this.indexedUpTo = seq;
      const transactionId = this.history.get(seq)?.transactionId;
      if (transactionId === undefined) continue;
      const own = this.byTransaction.get(transactionId);
      if (own === undefined) this.byTransaction.set(transactionId, seq);
      else if (typeof own === 'number') this.byTransaction.set(transactionId, [own, seq]);
      else own.push(seq);
      this.indexedCount++;
    }
    return index === seqs.length;
  }
}

/**
 * The deliveries held, a page at a time, in creation order (or newest first) and filtered by
 * transaction id, family and status: at most `limit` deliveries and about
 * `limits.pageBytes` bytes of them, at most 20,000 records looked at per page, and a signed cursor
 * (ids.ts) to go on from.
 */
import { upperBound } from '../sorted.js';
import type { DeliveryHistory } from './history.js';
import type { DeliveryIds } from './ids.js';
import type { StoredDelivery } from './stored.js';
import { TransactionIndex } from './transaction-index.js';
import { DEFAULT_PAGE_LIMIT, DeliveryQueryError, MAX_PAGE_LIMIT, type Delivery, type DeliveryPage, type DeliveryQuery } from './types.js';

/** Records looked at for one page at most; a page may then be short, with a `nextCursor`. */
const MAX_SCAN = 20_000;
/** What a delivery's view takes besides its body (ids, URL, headers, times), and each attempt besides its answer, about. */
const VIEW_OVERHEAD_BYTES = 1024;
const ATTEMPT_VIEW_BYTES = 160;

export class DeliveryPages {
  private readonly index: TransactionIndex;

  /** `pageBytes`: the bytes of one page, about. */
  constructor(
    private readonly history: DeliveryHistory,
    private readonly ids: DeliveryIds,
    private readonly view: (delivery: StoredDelivery) => Delivery,
    private readonly pageBytes: number,
  ) {
    this.index = new TransactionIndex(history);
  }

  /**
   * One page of deliveries in creation order, filtered by transaction id, family and status. A
   * page may hold fewer than `limit` deliveries while `nextCursor` is not null (at most 20,000
   * records are looked at per page, and a page filtered by transaction indexes at most 20,000 more).
   * Throws {@link DeliveryQueryError} for a bad limit or cursor.
   */
  page(query: DeliveryQuery = {}): DeliveryPage {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
      throw new DeliveryQueryError('limit', `limit must be a whole number from 1 to ${MAX_PAGE_LIMIT}.`);
    }
    const newest = query.order === 'newest';
    const scope = `${query.transactionId ?? ''}\u0000${query.family ?? ''}\u0000${query.status ?? ''}${newest ? '\u0000newest' : ''}`;
    const afterSeq = query.after === undefined ? 0 : this.ids.readCursor(query.after, scope);
    const matches = (delivery: StoredDelivery) =>
      (query.family === undefined || delivery.family === query.family) &&
      (query.status === undefined || delivery.status === query.status) &&
      (query.transactionId === undefined || delivery.transactionId === query.transactionId);
    if (newest) return this.newestFirst(limit, afterSeq, matches, scope);

    // The candidates: one transaction's deliveries, or all of them, from just after the cursor. The
    // index of transactions covers the deliveries up to `indexed` (all of them when it caught up).
    const indexed = query.transactionId === undefined || this.index.catchUp(MAX_SCAN) ? Number.POSITIVE_INFINITY : this.index.upTo;
    const seqs = query.transactionId === undefined ? this.history.order : this.index.seqsOf(query.transactionId);
    const page = new PageFill(limit, this.pageBytes);
    let lastSeq = afterSeq;
    let scanned = 0;
    let index = upperBound(seqs, afterSeq);
    if (query.transactionId === undefined) index = Math.max(index, this.history.orderStart);
    for (; index < seqs.length && scanned < MAX_SCAN; index++, scanned++) {
      const seq = seqs[index]!;
      const delivery = this.history.get(seq);
      if (delivery !== undefined && matches(delivery) && !page.take(delivery)) break;
      lastSeq = seq;
    }
    let more = index < seqs.length;
    if (!more && indexed !== Number.POSITIVE_INFINITY) {
      // Not indexed yet beyond `indexed`: the next page goes on from there (never back).
      more = true;
      lastSeq = Math.max(lastSeq, indexed);
    }
    return { deliveries: page.found.map((delivery) => this.view(delivery)), nextCursor: more ? this.ids.writeCursor(lastSeq, scope) : null };
  }

  /**
   * A page newest first, from just before the cursor's sequence number (from the newest without
   * one): the creation order read backwards, filtered as it goes (the index of transactions reads
   * forwards only), at most 20,000 records looked at, as in creation order.
   */
  private newestFirst(limit: number, beforeSeq: number, matches: (delivery: StoredDelivery) => boolean, scope: string): DeliveryPage {
    const seqs = this.history.order;
    const stop = this.history.orderStart;
    let index = beforeSeq === 0 ? seqs.length - 1 : upperBound(seqs, beforeSeq - 1) - 1;
    const page = new PageFill(limit, this.pageBytes);
    let lastSeq = beforeSeq;
    for (let scanned = 0; index >= stop && scanned < MAX_SCAN; index--, scanned++) {
      const seq = seqs[index]!;
      const delivery = this.history.get(seq);
      if (delivery !== undefined && matches(delivery) && !page.take(delivery)) break;
      lastSeq = seq;
    }
    const more = index >= stop;
    return { deliveries: page.found.map((delivery) => this.view(delivery)), nextCursor: more ? this.ids.writeCursor(lastSeq, scope) : null };
  }
}

/** The deliveries of one page as they are offered: at most `limit` and about `pageBytes` bytes of them (at least one). */
class PageFill {
  readonly found: StoredDelivery[] = [];
  private bytes = 0;

  constructor(
    private readonly limit: number,
    private readonly pageBytes: number,
  ) {}

  /** Takes `delivery` into the page; false, without taking it, when the page is full. */
  take(delivery: StoredDelivery): boolean {
    if (this.found.length === this.limit) return false;
    const size = sizeOf(delivery);
    if (this.found.length > 0 && this.bytes + size > this.pageBytes) return false;
    this.bytes += size;
    this.found.push(delivery);
    return true;
  }
}

/** About how many bytes a delivery's view takes in a page: its body, and a bound for the rest. */
function sizeOf(delivery: StoredDelivery): number {
  const body = delivery.body ?? '';
  let bytes = body.length + VIEW_OVERHEAD_BYTES;
  for (const attempt of delivery.attempts) bytes += ATTEMPT_VIEW_BYTES + (attempt.answer?.length ?? 0);
  return bytes;
}

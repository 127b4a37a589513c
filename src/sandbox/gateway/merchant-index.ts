/**
 * Each merchant's transactions in creation order, for the transaction list: newest first,
 * ties by id, from a cursor on, without looking at other merchants' transactions and without
 * sorting. Derived from the store (rebuilt from it at start); forgotten transactions are skipped and
 * dropped when they outnumber the others.
 */
import { upperBound } from '../sorted.js';

interface Entries {
  ids: string[];
  /** `createdAt` of each id: never decreasing (the virtual clock never goes back). */
  createdAt: number[];
  forgotten: number;
}

/** A position in the newest-first order: everything strictly after it comes next. */
export interface ListPosition {
  createdAt: number;
  id: string;
}

export class MerchantIndex {
  private readonly merchants = new Map<string, Entries>();

  constructor(private readonly exists: (merchantId: string, id: string) => boolean) {}

  add(merchantId: string, id: string, createdAt: number): void {
    let entries = this.merchants.get(merchantId);
    if (entries === undefined) {
      entries = { ids: [], createdAt: [], forgotten: 0 };
      this.merchants.set(merchantId, entries);
    }
    const last = entries.createdAt[entries.createdAt.length - 1];
    if (last === undefined || last <= createdAt) {
      entries.ids.push(id);
      entries.createdAt.push(createdAt);
      return;
    }
    // Older than the newest (only for records loaded out of order): keep the order.
    const at = upperBound(entries.createdAt, createdAt);
    entries.ids.splice(at, 0, id);
    entries.createdAt.splice(at, 0, createdAt);
  }

  /** The transaction was forgotten; its entry goes at the next compaction. */
  forget(merchantId: string): void {
    const entries = this.merchants.get(merchantId);
    if (entries === undefined) return;
    entries.forgotten++;
    if (entries.forgotten > 256 && entries.forgotten * 2 > entries.ids.length) {
      // A new object: a walk in progress keeps reading the arrays it started with.
      const compacted: Entries = { ids: [], createdAt: [], forgotten: 0 };
      for (let index = 0; index < entries.ids.length; index++) {
        const id = entries.ids[index]!;
        if (!this.exists(merchantId, id)) continue;
        compacted.ids.push(id);
        compacted.createdAt.push(entries.createdAt[index]!);
      }
      if (compacted.ids.length === 0) this.merchants.delete(merchantId);
      else this.merchants.set(merchantId, compacted);
    }
  }

  /**
   * The merchant's transaction ids, newest first (ties: the greater id first), strictly after
   * `after` in that order when given. Forgotten ids may appear: the caller skips them.
   */
  *newestFirst(merchantId: string, after?: ListPosition): Generator<string> {
    const entries = this.merchants.get(merchantId);
    if (entries === undefined) return;
    const { ids, createdAt } = entries;
    let index = (after === undefined ? ids.length : upperBound(createdAt, after.createdAt)) - 1;
    while (index >= 0) {
      const at = createdAt[index]!;
      let start = index;
      while (start > 0 && createdAt[start - 1] === at) start--;
      const group = ids.slice(start, index + 1).sort((a, b) => (a < b ? 1 : a > b ? -1 : 0));
      for (const id of group) {
        if (after !== undefined && at === after.createdAt && !(id < after.id)) continue;
        yield id;
      }
      index = start - 1;
    }
  }
}


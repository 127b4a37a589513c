/**
 * The changes a writer reads (catch-up.ts) put back in the order they were written, by `seq`, before
 * the families are told of them: what the families derive in order (the retention queues, the
 * deliveries' order) is built as the process that wrote them built it. The records are read in key
 * order (no index holds their `seq`, rows.ts), so the order is made here.
 *
 * A bucket sort over the range of `seq`s a read can hold (from the `seq` seen to the sequence's
 * value, known before the read): each row goes to one of {@link BUCKETS} buckets as it is read, and
 * the buckets are sorted and replayed one after another, yielding to the event loop between them
 * once {@link SLICE_MS} has passed, so that a million records replayed never make one long turn
 * (one sort of a million rows took 470 ms here). Hand-written: the range is known and the rows come
 * a page at a time, so a bucket per range needs no priority queue, and no library sorts in slices.
 */

/** Buckets over the range read. */
const BUCKETS = 4_096;
/** Milliseconds of replay between two yields to the event loop. */
const SLICE_MS = 10;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

/** A row to put in order: its `seq` as a number (the database's bigint stays below 2^53 here). */
export interface Sequenced {
  seq: number;
}

export class SeqOrder<T extends Sequenced> {
  private readonly buckets: T[][] = [];
  private readonly first: number;
  private readonly width: number;

  /** For the `seq`s after `seen` up to `last` (decimal: bigint in the database). */
  constructor(seen: string, last: string) {
    this.first = Number(seen) + 1;
    this.width = Math.max(1, Math.ceil((Number(last) - this.first + 1) / BUCKETS));
  }

  add(row: T): void {
    // A seq past the range (none: the writer's role is held, no one else writes) goes last.
    const index = Math.min(BUCKETS - 1, Math.max(0, Math.floor((row.seq - this.first) / this.width)));
    (this.buckets[index] ??= []).push(row);
  }

  /** Hands every row to `apply` in `seq` order, a slice of time a turn; forgets them on the way. */
  async replay(apply: (row: T) => void): Promise<void> {
    let sliceStart = performance.now();
    for (let index = 0; index < BUCKETS; index++) {
      const bucket = this.buckets[index];
      if (bucket === undefined) continue;
      this.buckets[index] = [];
      bucket.sort((a, b) => a.seq - b.seq);
      for (const row of bucket) apply(row);
      if (performance.now() - sliceStart >= SLICE_MS) {
        await yieldToEventLoop();
        sliceStart = performance.now();
      }
    }
  }
}

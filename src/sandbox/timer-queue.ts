/**
 * The virtual clock's timers (clock.ts), in firing order: a binary heap (heap-js) ordered by time,
 * then by creation, beside an ordered list. Scheduling and firing cost O(log n). A timer is one
 * object, the heap's entry itself (clock-timer.ts).
 *
 * - A cancelled timer is only marked (lazy deletion); its callback is dropped at once, and the heap
 *   is rebuilt without the marked entries when they outnumber the live ones, so memory stays
 *   proportional to the live timers.
 * - Most timers are scheduled in order of time (an expiry is the virtual time, which never goes
 *   back, plus a fixed delay): a timer due at or after the last one of the ordered list is appended
 *   to it instead of entering the heap, and the list, in order by construction, is fired from its
 *   front, merged with the heap by time. So 200,000 pending expiries are never sorted: taking and
 *   sorting them at once held the event loop 100 ms in one step no slice could cut (the attack
 *   suite's `first-page`). The heap holds the timers that came out of order.
 * - Many of them due (an advance over 100,000 such) are not popped one by one: after
 *   {@link BATCH_AFTER} pops in one firing run, every due entry is taken out of the heap in one
 *   pass, sorted into the ordered list, which spares a sift-down over the whole heap per timer.
 *
 * Hand-written around heap-js (the priority queue) for the ordered list and the batch taking,
 * which no priority-queue library offers.
 */
import { Heap } from 'heap-js';
import { byTime, Timer, type TimerCallback } from './clock-timer.js';

/** The heap is rebuilt when more entries than this are cancelled and they outnumber the live ones. */
const COMPACT_MIN = 1024;
/** Timers popped one by one in a firing run before the due ones are taken out of the heap at once. */
const BATCH_AFTER = 256;
/** Fired entries at the front of the ordered list that are dropped at once, when they are half of it. */
const TRIM_AFTER = 1024;

/** The timers not fired, in firing order. */
export class TimerQueue {
  private seq = 0;
  private readonly heap = new Heap<Timer>(byTime);
  /** Entries in the heap that were cancelled (not yet popped). */
  private cancelled = 0;
  /**
   * The ordered list: timers in firing order (those scheduled in order of time, and due timers
   * taken out of the heap at once); `batchNext` is the next to look at, `batchCancelled` how many
   * of those left were cancelled.
   */
  private batch: Timer[] = [];
  private batchNext = 0;
  private batchCancelled = 0;
  /** Timers popped from the heap in the current firing run ({@link beginRun}). */
  private popped = 0;

  /** The number of timers not yet fired or cancelled. */
  get pending(): number {
    return this.heap.size() - this.cancelled + (this.batch.length - this.batchNext) - this.batchCancelled;
  }

  /** Entries held, cancelled ones not yet dropped included (at most about twice the pending ones). */
  get stored(): number {
    return this.heap.size() + this.batch.length - this.batchNext;
  }

  /** A new timer of `owner`, queued unless `stopped` (then it is made done at once). */
  add(owner: { cancelTimer(timer: Timer): void }, at: number, fn: TimerCallback<unknown>, argument: unknown, stopped: boolean): Timer {
    const timer = new Timer(owner, at, this.seq++, fn, argument);
    if (stopped) {
      timer.retire();
      return timer;
    }
    // In order of time (and of creation: `seq` only grows) after the ordered list's last: appended.
    const last = this.batch.length > this.batchNext ? this.batch[this.batch.length - 1]! : undefined;
    if (last === undefined ? this.heap.size() === 0 || at >= this.heap.peek()!.at : at >= last.at) {
      timer.batched = true;
      this.batch.push(timer);
    } else {
      this.heap.add(timer);
    }
    return timer;
  }

  /** The earliest timer not fired or cancelled; drops the cancelled ones before it. */
  next(): Timer | undefined {
    let top = this.heap.peek();
    while (top !== undefined && top.done) {
      this.heap.pop();
      this.cancelled--;
      top = this.heap.peek();
    }
    let listed = this.batch[this.batchNext];
    while (listed !== undefined && listed.done) {
      this.batchCancelled--;
      listed = this.batch[++this.batchNext];
    }
    if (listed === undefined) {
      if (this.batch.length > 0) this.clearBatch();
      return top;
    }
    return top !== undefined && byTime(top, listed) < 0 ? top : listed;
  }

  /** Starts a firing run: {@link take}'s count of heap pops begins again. */
  beginRun(): void {
    this.popped = 0;
  }

  /** Takes `timer`, the one {@link next} answered, out of the queue to fire; `target` is the run's last due time. */
  take(timer: Timer, target: number): void {
    if (timer.batched) {
      this.batchNext++;
      if (this.batchNext === this.batch.length) this.clearBatch();
      else if (this.batchNext >= TRIM_AFTER && this.batchNext * 2 >= this.batch.length) this.trimBatch();
    } else {
      this.heap.pop();
      if (++this.popped === BATCH_AFTER) this.takeDue(target);
    }
  }

  /** Counts `timer`, just marked done by its cancel, and compacts when the cancelled outnumber the live. */
  countCancelled(timer: Timer): void {
    if (timer.batched) {
      this.batchCancelled++;
      // As in the heap: memory stays proportional to the live timers.
      if (this.batchCancelled > COMPACT_MIN && this.batchCancelled * 2 > this.batch.length - this.batchNext) this.trimBatch(true);
      return;
    }
    this.cancelled++;
    if (this.cancelled > COMPACT_MIN && this.cancelled * 2 > this.heap.size()) {
      this.heap.init(this.heap.toArray().filter((candidate) => !candidate.done));
      this.cancelled = 0;
    }
  }

  /** Marks every timer done, its callback dropped, and empties the queue. */
  clear(): void {
    for (const timer of this.heap.toArray().concat(this.batch.slice(this.batchNext))) {
      timer.retire();
    }
    this.heap.clear();
    this.cancelled = 0;
    this.clearBatch();
  }

  /**
   * Takes every timer due by `target` out of the heap into the list of due ones, sorted (one pass
   * over the heap and one heap rebuild, instead of a sift-down per timer); drops cancelled entries.
   */
  private takeDue(target: number): void {
    const due: Timer[] = [];
    for (let index = this.batchNext; index < this.batch.length; index++) {
      if (!this.batch[index]!.done) due.push(this.batch[index]!);
    }
    const rest: Timer[] = [];
    for (const timer of this.heap.heapArray) {
      if (timer.done) continue;
      if (timer.at <= target) {
        timer.batched = true;
        due.push(timer);
      } else {
        rest.push(timer);
      }
    }
    // The ordered list's rest is one sorted run: the sort merges the taken ones into it.
    due.sort(byTime);
    // The rest becomes the heap as it is (heap-js's `init(array)` would copy it first).
    this.heap.heapArray = rest;
    this.heap.init();
    this.cancelled = 0;
    this.batch = due;
    this.batchNext = 0;
    this.batchCancelled = 0;
  }

  private clearBatch(): void {
    this.batch = [];
    this.batchNext = 0;
    this.batchCancelled = 0;
  }

  /** Drops the ordered list's fired (and skipped) front, and its cancelled entries with `dropCancelled`. */
  private trimBatch(dropCancelled = false): void {
    const rest = this.batch.slice(this.batchNext);
    this.batch = dropCancelled ? rest.filter((timer) => !timer.done) : rest;
    this.batchNext = 0;
    if (dropCancelled) this.batchCancelled = 0;
  }
}

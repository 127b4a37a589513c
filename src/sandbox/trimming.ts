/**
 * When the sandbox forgets what lies beyond its retention limits: the oldest final
 * transactions (retention.ts) and the oldest completed webhook deliveries (delivery/history.ts). Forgetting
 * is part of no answer; it only keeps the memory bounded. So:
 * - as a rule it is done at once, a bounded number of records each time one is added
 *   ({@link Trimming.added}), which keeps the history at its limit at a small, steady cost;
 * - while the clock advances in slices (`POST /sandbox/clock/advance`) it waits: an advance that
 *   expires 100,000 transactions at the limits would otherwise spend about a quarter of its time
 *   forgetting 100,000 older ones. The history then holds at most the records the advance made
 *   beyond the limit;
 * - when the advance has finished it catches up, a slice of {@link SLICE_MS} at a time, yielding to
 *   the event loop between slices, so requests keep being answered.
 */
import { performance } from 'node:perf_hooks';
import { SLICE_MS, type VirtualClock } from './clock.js';

/** What a limited history tells and does for its trimming. */
export interface Trimmable {
  /** How many records it holds beyond its limit. */
  excess(): number;
  /**
   * Tries to forget `tries` of its oldest records (a record that must stay longer, such as a
   * transaction with a refund still to complete, counts as a try and stays).
   */
  trim(tries: number): void;
}

/** Tries made per record added, at most. */
export const TRIES_PER_ADD = 16;
/**
 * Tries between two looks at the time while catching up (as many as the clock fires between two):
 * a try forgets a transaction or a delivery with what hangs on it, and 512 of them between two
 * looks ran slices far past their 10 ms under load (busy stretches of 90 to 180 ms of trimming in
 * the `first-page` attack's profile, after its advance, at a load of 5).
 */
const CHUNK = 64;

export class Trimming {
  /** A catch-up is scheduled (after the advances, or for the next turn of the event loop). */
  private scheduled = false;

  constructor(
    private readonly clock: VirtualClock | undefined,
    private readonly history: Trimmable,
  ) {}

  /** A record was added: trims a few now, or, during a sliced advance, after it. */
  added(): void {
    if (this.scheduled) return;
    const excess = this.history.excess();
    if (excess <= 0) return;
    if (this.clock?.advancingInSlices === true) this.afterAdvances();
    else this.history.trim(Math.min(excess, TRIES_PER_ADD));
  }

  private afterAdvances(): void {
    this.scheduled = true;
    // setImmediate: after the advance's answer has been written.
    void this.clock!.whenAdvanced().then(() => setImmediate(() => this.catchUpInUnit(this.history.excess())));
  }

  /** A catch-up outside any request: in a unit of work of its own (the clock's runner). */
  private catchUpInUnit(tries: number): void {
    if (this.clock === undefined) this.catchUp(tries);
    else this.clock.runChange(() => this.catchUp(tries));
  }

  /**
   * Makes up to `tries` tries (what was over the limit when the catch-up began, so records that
   * must stay cannot keep it going), for at most a slice, then yields and goes on.
   */
  private catchUp(tries: number): void {
    this.scheduled = false;
    if (this.clock?.advancingInSlices === true) {
      this.afterAdvances();
      return;
    }
    const started = performance.now();
    while (tries > 0 && this.history.excess() > 0) {
      const chunk = Math.min(tries, CHUNK);
      this.history.trim(chunk);
      tries -= chunk;
      if (tries > 0 && performance.now() - started >= SLICE_MS) {
        this.scheduled = true;
        setImmediate(() => this.catchUpInUnit(tries));
        return;
      }
    }
  }
}

/**
 * The work done in the current turn of the event loop, one count for everything the sandbox slices:
 * the requests taken in turns (fair-turns.ts), the clock's advance and its timers (clock.ts), and
 * the forgetting of old records (trimming.ts). Each bounded its own slice, not their sum: in the
 * `first-page` attack one turn held an advance slice of 10 ms, requests' 8 ms and more, a trimming
 * slice and a collection, 70 to 110 ms. Each now asks {@link TurnClock.room} for what is left of
 * {@link TURN_MS} and takes at most that, at least a little so that none of them waits forever.
 *
 * A turn's count starts with the first ask in it and ends at the loop's check phase (a
 * `setImmediate` made by that first ask). Hand-written: Node measures the loop's delay after the
 * fact (`monitorEventLoopDelay`), not the time spent so far in the turn under way.
 */
import { performance } from 'node:perf_hooks';

/** The work, ms, the sliced parts together aim to do in one turn of the event loop. */
export const TURN_MS = 20;

export class TurnClock {
  /** When the current turn's count started (`undefined` between turns). */
  private started: number | undefined;

  constructor(
    readonly now: () => number = () => performance.now(),
    private readonly later: (run: () => void) => void = setImmediate,
  ) {}

  /** Ms of work done in the current turn so far; the first call of a turn starts its count at 0. */
  spent(): number {
    const now = this.now();
    if (this.started === undefined) {
      this.started = now;
      // The turn ends when the loop reaches its check phase: the next one starts afresh.
      this.later(this.end);
      return 0;
    }
    return now - this.started;
  }

  /** What is left of {@link TURN_MS} in this turn, ms, and never less than `least` nor more than `most`. */
  room(least: number, most: number): number {
    return Math.min(most, Math.max(least, TURN_MS - this.spent()));
  }

  private readonly end = (): void => {
    this.started = undefined;
  };
}

/** The process's event loop, whose turns every sandbox in the process shares. */
export const EVENT_LOOP = new TurnClock();

/**
 * A timer of the virtual clock (clock.ts) and the order of its heap: one small object per timer,
 * the heap's entry itself, holding the callback shared by many timers and its own argument.
 */
export interface ClockTimer {
  /** The virtual time (epoch milliseconds) at which it fires. */
  readonly at: number;
  /** Stops it from firing; harmless after it fired. */
  cancel(): void;
}

/** A timer's callback: called with the argument given to `schedule` and the timer. */
export type TimerCallback<A> = (argument: A, timer: ClockTimer) => unknown;

export interface ClockOptions {
  /** The virtual time at creation, epoch ms (default: the real time). */
  start?: number;
  /** Called with an error thrown (or rejected) by a timer callback. */
  onError?: (error: unknown) => void;
}

/** A timer and the heap's entry for it. */
export class Timer implements ClockTimer {
  /** Fired or cancelled: still in the heap until popped or compacted away. */
  done = false;
  /** Taken out of the heap into the clock's list of due timers. */
  batched = false;

  constructor(
    private readonly clock: { cancelTimer(timer: Timer): void },
    readonly at: number,
    readonly seq: number,
    public fn: TimerCallback<unknown> | undefined,
    public argument: unknown,
  ) {}

  cancel(): void {
    this.clock.cancelTimer(this);
  }

  /** Fired or cancelled: done, its callback and argument let go (a pending timer holds no more). */
  retire(): void {
    this.done = true;
    this.fn = undefined;
    this.argument = undefined;
  }
}

/** The heap's order: by time, then by creation. */
export const byTime = (a: Timer, b: Timer): number => a.at - b.at || a.seq - b.seq;

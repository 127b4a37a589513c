/**
 * The sandbox's virtual clock. `now()` is real time plus an offset that only grows; `advance(ms)`
 * moves the clock forward and fires, in order, every timer it passes. Timers also fire by
 * themselves when real time reaches them. Transaction expiry (D13), OTP expiry, verification delays
 * and webhook retries (D23) all run on it, so a test or an integrator can "wait" an hour at once.
 */
import { performance } from 'node:perf_hooks';

export interface ClockTimer {
  /** The virtual time (epoch milliseconds) at which it fires. */
  readonly at: number;
  /** Stops it from firing; harmless after it fired. */
  cancel(): void;
}

export interface ClockOptions {
  /** The virtual time at creation, epoch ms (default: the real time). */
  start?: number;
  /** Called with an error thrown (or rejected) by a timer callback. */
  onError?: (error: unknown) => void;
}

interface Entry {
  at: number;
  seq: number;
  fn: () => unknown;
  cancelled: boolean;
}

// setTimeout takes at most 2^31 - 1 ms; a later timer is re-armed when this much has passed.
const MAX_DELAY = 2 ** 31 - 1;

export class VirtualClock {
  private readonly base: number;
  private readonly perfBase = performance.now();
  private offset = 0;
  private seq = 0;
  private entries: Entry[] = [];
  private armed: NodeJS.Timeout | undefined;
  private armedFor: number | undefined;
  private firing = false;
  private stopped = false;
  private readonly onError: (error: unknown) => void;

  constructor(options: ClockOptions = {}) {
    this.base = options.start ?? Date.now();
    this.onError = options.onError ?? ((error) => console.error('sandbox clock: a timer failed:', error));
  }

  /** The virtual time, epoch milliseconds (a whole number; never goes backwards). */
  now(): number {
    return Math.floor(this.base + (performance.now() - this.perfBase) + this.offset);
  }

  /** The virtual time as a Date. */
  date(): Date {
    return new Date(this.now());
  }

  /** The virtual time as an RFC 3339 string in UTC. */
  iso(at: number = this.now()): string {
    return new Date(at).toISOString();
  }

  /** How far the virtual clock is ahead of real time, in ms. */
  get offsetMs(): number {
    return this.offset;
  }

  /** The number of timers not yet fired or cancelled. */
  get pendingTimers(): number {
    return this.entries.filter((entry) => !entry.cancelled).length;
  }

  /** Runs `fn` when the virtual time reaches `at` (epoch ms); at once (asynchronously) if it has. */
  schedule(at: number, fn: () => unknown): ClockTimer {
    const entry: Entry = { at, seq: this.seq++, fn, cancelled: false };
    if (!this.stopped) {
      this.insert(entry);
      this.arm();
    }
    return {
      at,
      cancel: () => {
        entry.cancelled = true;
        this.entries = this.entries.filter((candidate) => candidate !== entry);
      },
    };
  }

  /** Runs `fn` after `ms` milliseconds of virtual time. */
  after(ms: number, fn: () => unknown): ClockTimer {
    return this.schedule(this.now() + ms, fn);
  }

  /**
   * Moves the clock `ms` milliseconds forward. Every timer due on the way fires in order of its
   * time, and while it runs `now()` reads that time (later timers, and the final time, follow).
   * Callbacks that return promises are not awaited.
   */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('advance(ms) takes a finite ms >= 0');
    const target = this.now() + Math.floor(ms);
    this.firing = true;
    try {
      for (;;) {
        const next = this.entries[0];
        if (next === undefined || next.at > target) break;
        this.entries.shift();
        this.setNow(next.at);
        this.run(next);
      }
      this.setNow(target);
    } finally {
      this.firing = false;
    }
    this.arm();
  }

  /** Cancels every timer; later `schedule` calls do nothing. */
  stop(): void {
    this.stopped = true;
    for (const entry of this.entries) entry.cancelled = true;
    this.entries = [];
    this.disarm();
  }

  private setNow(at: number): void {
    const delta = at - this.now();
    if (delta > 0) this.offset += delta;
  }

  private insert(entry: Entry): void {
    let index = this.entries.length;
    while (index > 0) {
      const previous = this.entries[index - 1]!;
      if (previous.at < entry.at || (previous.at === entry.at && previous.seq < entry.seq)) break;
      index--;
    }
    this.entries.splice(index, 0, entry);
  }

  private run(entry: Entry): void {
    if (entry.cancelled) return;
    entry.cancelled = true;
    try {
      const result = entry.fn();
      if (result instanceof Promise) result.catch(this.onError);
    } catch (error) {
      this.onError(error);
    }
  }

  /** Fires the timers that are due by real time. */
  private fireDue(): void {
    this.armed = undefined;
    this.armedFor = undefined;
    if (this.firing || this.stopped) return;
    this.firing = true;
    try {
      for (;;) {
        const next = this.entries[0];
        if (next === undefined || next.at > this.now()) break;
        this.entries.shift();
        this.run(next);
      }
    } finally {
      this.firing = false;
    }
    this.arm();
  }

  private arm(): void {
    if (this.stopped || this.firing) return;
    const next = this.entries[0];
    if (next === undefined) {
      this.disarm();
      return;
    }
    if (this.armed !== undefined && this.armedFor === next.at) return;
    this.disarm();
    const delay = Math.min(Math.max(next.at - this.now(), 0), MAX_DELAY);
    this.armedFor = next.at;
    this.armed = setTimeout(() => this.fireDue(), delay);
    // Pending timers never keep the process alive on their own: the server does.
    this.armed.unref();
  }

  private disarm(): void {
    if (this.armed !== undefined) clearTimeout(this.armed);
    this.armed = undefined;
    this.armedFor = undefined;
  }
}

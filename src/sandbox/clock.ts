/**
 * The sandbox's virtual clock. `now()` is real time plus an offset that only grows; `advance(ms)`
 * moves the clock forward and fires, in order, every timer it passes. Timers also fire by
 * themselves when real time reaches them. Transaction expiry, OTP expiry, verification delays
 * and webhook retries all run on it, so a test or an integrator can "wait" an hour at once.
 *
 * The timers wait in a {@link TimerQueue} (timer-queue.ts: a heap beside an ordered list, one small
 * object per timer, with one callback shared by many timers and each its own argument, so that
 * 100,000 pending expiries hold 100,000 small objects and no closure each). Firing many timers at
 * once (an advance over 100,000 expiries, or real time passing them) runs in slices of
 * {@link SLICE_MS} and yields to the event loop between slices when asked to (`advanceInSlices`,
 * and the timers fired by real time), so requests keep being answered.
 */
import { performance } from 'node:perf_hooks';
import type { Timer, ClockOptions, ClockTimer, TimerCallback } from './clock-timer.js';
import { TimerQueue } from './timer-queue.js';
import { isoTime } from './iso-time.js';

export type { ClockOptions, ClockTimer, TimerCallback } from './clock-timer.js';

// setTimeout takes at most 2^31 - 1 ms; a later timer is re-armed when this much has passed.
const MAX_DELAY = 2 ** 31 - 1;
/** The longest run of timer callbacks before the clock yields to the event loop (when it may). */
export const SLICE_MS = 10;
/**
 * A slice of an advance on the shared store's writer, ms: under a third of {@link SLICE_MS}, since
 * the writer's turn also makes a statement that writes what the slices changed, and the database
 * takes part of the machine's CPU meanwhile (D512, D514).
 */
export const WRITER_SLICE_MS = 3;
/**
 * Slices of an advance that may run before the units of the earlier ones settled (the shared
 * store's commits): a few run while the earlier ones are written, so that the database always has
 * the next group to write, and an advance over 20,000 expiries never holds the changes of many
 * slices at once waiting to be written (D512).
 */
const SLICES_AHEAD = 4;
/** How long a runner that failed (the shared store's database away) waits before trying again. */
const RUNNER_RETRY_MS = 1000;

const yieldToEventLoop = () => new Promise<void>((resolve) => setImmediate(resolve));

export class VirtualClock {
  private readonly base: number;
  private readonly perfBase = performance.now();
  private offset = 0;
  private readonly timers = new TimerQueue();
  private armed: NodeJS.Timeout | undefined;
  private armedFor: number | undefined;
  private firing = false;
  /**
   * While an advance runs a timer's callback: the time `now()` reads, the timer's own (or the time
   * the slice began, for a timer already overdue). Read without asking the system clock, which
   * cost 31 ms of an 806 ms advance over 100,000 expiries (a CPU profile).
   */
  private pinned: number | undefined;
  private stopped = false;
  /** Advances run one after the other. */
  private advancing: Promise<void> = Promise.resolve();
  /** Sliced advances asked for and not finished. */
  private slicedAdvances = 0;
  private readonly onError: (error: unknown) => void;
  private runner: (<T>(fire: () => T) => T | Promise<Awaited<T>>) | undefined;
  private runnerQueued = false;
  /** How long a slice of an advance lasts, ms (setRunner). */
  private sliceMs = SLICE_MS;

  constructor(options: ClockOptions = {}) {
    this.base = options.start ?? Date.now();
    this.onError = options.onError ?? ((error) => console.error('sandbox clock: a timer failed:', error));
  }

  /** The virtual time, epoch milliseconds (a whole number; never goes backwards). */
  now(): number {
    if (this.pinned !== undefined) return this.pinned;
    return Math.floor(this.base + (performance.now() - this.perfBase) + this.offset);
  }

  /** The virtual time as a Date. */
  date(): Date {
    return new Date(this.now());
  }

  /** The virtual time as an RFC 3339 string in UTC. */
  iso(at: number = this.now()): string {
    return isoTime(at);
  }

  /** How far the virtual clock is ahead of real time, in ms. */
  get offsetMs(): number {
    return this.offset;
  }

  /** The number of timers not yet fired or cancelled. */
  get pendingTimers(): number {
    return this.timers.pending;
  }

  /** Entries held by the heap, cancelled ones not yet dropped included (at most about twice the pending ones). */
  get storedTimers(): number {
    return this.timers.stored;
  }

  /**
   * Runs `fn(argument, timer)` when the virtual time reaches `at` (epoch ms); at once
   * (asynchronously) if it has. Pass one shared function and the data it needs as `argument`,
   * rather than a new closure per timer.
   */
  schedule(at: number, fn: () => unknown): ClockTimer;
  schedule<A>(at: number, fn: TimerCallback<A>, argument: A): ClockTimer;
  schedule(at: number, fn: TimerCallback<unknown>, argument?: unknown): ClockTimer {
    const timer = this.timers.add(this, at, fn, argument, this.stopped);
    if (!this.stopped) this.arm();
    return timer;
  }

  /** Runs `fn` after `ms` milliseconds of virtual time. */
  after(ms: number, fn: () => unknown): ClockTimer {
    return this.schedule(this.now() + ms, fn);
  }

  /**
   * Moves the clock `ms` milliseconds forward. Every timer due on the way fires in order of its
   * time, and while it runs `now()` reads that time (later timers, and the final time, follow).
   * Callbacks that return promises are not awaited. Runs to the end without yielding: for code
   * that holds the clock in-process (tests); the HTTP endpoint uses {@link advanceInSlices}.
   */
  advance(ms: number): void {
    const target = this.targetOf(ms);
    const offsetBefore = this.offset;
    const wasFiring = this.firing;
    this.firing = true;
    try {
      this.fireUntil(target, Number.POSITIVE_INFINITY);
      this.setNow(target);
      this.offset = Math.max(this.offset, offsetBefore + Math.floor(ms));
    } finally {
      this.firing = wasFiring;
    }
    this.arm();
  }

  /**
   * As {@link advance}, with the same order and the same `now()` in each callback, but yielding to
   * the event loop after each slice of {@link SLICE_MS} ms of callbacks. While it yields, other
   * requests see the clock part of the way there. Concurrent calls run one after the other.
   */
  advanceInSlices(ms: number): Promise<void> {
    this.targetOf(ms); // validates at once
    const run = async () => {
      const target = this.targetOf(ms);
      const offsetBefore = this.offset;
      // A slice; the last one also sets the time reached, so that the clock's new offset is
      // written with what the slice changed (a unit of work of its own, through the runner).
      const slice = (): boolean => {
        const finished = this.stopped || this.fireUntil(target, this.sliceMs);
        if (finished) {
          this.setNow(target);
          // The clock moved at least `ms` ahead of real time, however long the slices took.
          this.offset = Math.max(this.offset, offsetBefore + Math.floor(ms));
        }
        return finished;
      };
      // The slices' units still settling (a shared store's commits), and the first that failed.
      const pending: Promise<void>[] = [];
      let failure: { error: unknown } | undefined;
      this.firing = true;
      try {
        for (let first = true; ; first = false) {
          // At most SLICES_AHEAD slices not yet settled: what they changed is not held without bound.
          if (pending.length >= SLICES_AHEAD) await pending[pending.length - SLICES_AHEAD];
          if (failure !== undefined) break;
          // Each slice in a turn of its own, after the turn's input is read: never in the turn that
          // settled an earlier slice's commit, which ran that turn's other work already.
          if (!first) await yieldToEventLoop();
          const finished = await this.sliceRan(slice, pending, (error) => (failure ??= { error }));
          if (failure !== undefined) break;
          if (finished) break;
        }
        // The advance answers once what every slice changed is stored, or at once with the first
        // failure (the store fails the units after it too, and they are not waited for).
        if (failure === undefined) await Promise.all(pending);
      } finally {
        this.firing = false;
      }
      this.arm();
      if (failure !== undefined) throw failure.error;
    };
    this.slicedAdvances++;
    const next = this.advancing.then(run).finally(() => this.slicedAdvances--);
    this.advancing = next.catch(() => undefined);
    return next;
  }

  /**
   * Runs one slice of an advance through the runner and answers, once the slice ran, whether it
   * finished the advance. It does not wait for the runner's unit to settle (the shared store's
   * commit, write-behind): the next slice runs while the last one is being stored, so that an
   * advance over 20,000 expiries lasts about as long as in memory rather than one commit per
   * slice longer; the unit's outcome goes to `pending`, a failure to `failed`.
   */
  private sliceRan(slice: () => boolean, pending: Promise<void>[], failed: (error: unknown) => void): Promise<boolean> {
    if (this.runner === undefined) return Promise.resolve(slice());
    let ran: (finished: boolean) => void = () => undefined;
    const sliced = new Promise<boolean>((resolve) => (ran = resolve));
    const result = this.runner(() => {
      const finished = slice();
      ran(finished);
      return finished;
    });
    if (!(result instanceof Promise)) return Promise.resolve(result);
    // A unit that failed before its slice ran (the database away) ends the advance: not finished.
    const settled = result.then(
      () => undefined,
      (error: unknown) => {
        failed(error);
        ran(false);
      },
    );
    pending.push(settled);
    return sliced;
  }

  /** True while an {@link advanceInSlices} runs (or waits for an earlier one). */
  get advancingInSlices(): boolean {
    return this.slicedAdvances > 0;
  }

  /** Resolves once every advance asked for so far has finished. */
  whenAdvanced(): Promise<void> {
    return this.advancing;
  }

  /** Fires now every timer that is due by real time (normally the clock's own timeout does). */
  runDue(): void {
    if (this.firing || this.stopped) return;
    this.firing = true;
    try {
      this.fireUntil(this.now(), Number.POSITIVE_INFINITY, false);
    } finally {
      this.firing = false;
    }
    this.arm();
  }

  /** Cancels every timer; later `schedule` calls do nothing. */
  stop(): void {
    this.stopped = true;
    this.timers.clear();
    this.disarm();
  }

  private targetOf(ms: number): number {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError('advance(ms) takes a finite ms >= 0');
    return this.now() + Math.floor(ms);
  }

  /**
   * Fires timers due at or before `target`, in order, for at most `budgetMs` of real time.
   * Returns true when no timer due by `target` is left.
   */
  private fireUntil(target: number, budgetMs: number, moveClock = true): boolean {
    const started = performance.now();
    // The virtual time at the start of the slice: an overdue timer runs at it, not before.
    const floor = moveClock ? this.now() : 0;
    let count = 0;
    this.timers.beginRun();
    try {
      for (;;) {
        if (this.stopped) return true;
        const next = this.timers.next();
        if (next === undefined || next.at > target) return true;
        this.timers.take(next, target);
        if (moveClock) this.pinned = next.at > floor ? next.at : floor;
        this.run(next);
        if (++count % 8 === 0 && performance.now() - started >= budgetMs) return false;
      }
    } finally {
      // The clock keeps at least the last time a callback read.
      const last = this.pinned;
      this.pinned = undefined;
      if (last !== undefined) this.setNow(last);
    }
  }

  /** {@link ClockTimer.cancel}. */
  cancelTimer(timer: Timer): void {
    if (timer.done) return;
    timer.retire();
    if (!this.stopped) this.timers.countCancelled(timer);
  }

  private setNow(at: number): void {
    const delta = at - this.now();
    if (delta > 0) this.offset += delta;
  }

  private run(timer: Timer): void {
    const { fn, argument } = timer;
    timer.retire();
    if (fn === undefined) return;
    try {
      const result = fn(argument, timer);
      if (result instanceof Promise) result.catch(this.onError);
    } catch (error) {
      this.onError(error);
    }
  }

  /**
   * Makes the timers that real time brings due fire through `runner` (the shared store's unit of
   * work, store.ts): `runner(fire)` calls `fire` when it can and answers a promise that rejects
   * when it could not (the database away: tried again a second later). An advance's slices last
   * `sliceMs` ({@link WRITER_SLICE_MS} on the shared store's writer).
   */
  setRunner(runner: <T>(fire: () => T) => T | Promise<Awaited<T>>, sliceMs = SLICE_MS): void {
    this.runner = runner;
    this.sliceMs = sliceMs;
  }

  /**
   * Runs `work`, which changes state outside any request (a catch-up of trimming.ts), through the
   * runner when there is one (the shared store's unit of work, which refuses a change outside a
   * unit), else at once. When the runner fails (the database away) the work is not done; its
   * caller does it again at a later change.
   */
  runChange(work: () => void): void {
    if (this.runner === undefined) {
      work();
      return;
    }
    const result = this.runner(work);
    if (result instanceof Promise) result.catch(() => undefined);
  }

  /** Fires the timers that are due by real time, a slice at a time. */
  private fireDue(): void {
    this.armed = undefined;
    this.armedFor = undefined;
    if (this.runner === undefined) {
      this.fireDueNow();
      return;
    }
    if (this.runnerQueued || this.stopped) return;
    this.runnerQueued = true;
    const result = this.runner(() => {
      this.runnerQueued = false;
      this.fireDueNow();
    });
    if (result instanceof Promise) {
      result.catch(() => {
        if (!this.runnerQueued) return;
        this.runnerQueued = false;
        if (this.stopped) return;
        this.disarm();
        this.armedFor = Number.NEGATIVE_INFINITY;
        this.armed = setTimeout(() => this.fireDue(), RUNNER_RETRY_MS);
        this.armed.unref();
      });
    }
  }

  private fireDueNow(): void {
    if (this.firing || this.stopped) return;
    this.firing = true;
    let finished: boolean;
    try {
      finished = this.fireUntil(this.now(), SLICE_MS, false);
    } finally {
      this.firing = false;
    }
    if (finished) {
      this.arm();
    } else {
      // More are due: go on after other work had its turn.
      this.disarm();
      this.armedFor = Number.NEGATIVE_INFINITY;
      this.armed = setTimeout(() => this.fireDue(), 0);
      this.armed.unref();
    }
  }

  private arm(): void {
    if (this.stopped || this.firing) return;
    const next = this.timers.next();
    if (next === undefined) {
      this.disarm();
      return;
    }
    if (this.armed !== undefined && this.armedFor !== undefined && this.armedFor <= next.at) return;
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

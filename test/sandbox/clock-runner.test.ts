/**
 * The clock's runner (the store's unit of work) under a sliced advance: each slice runs as a unit,
 * the next slice does not wait for the previous unit to settle (the shared store's commit,
 * write-behind; four slices unsettled at most), a slice never runs in the turn that settled an
 * earlier unit, the advance answers only once every slice's unit settled, and a unit that fails
 * ends the advance with its error.
 */
import { performance } from 'node:perf_hooks';
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/sandbox/clock.js';

let clock: VirtualClock | undefined;
afterEach(() => clock?.stop());

/** A unit that settles when the test says (a commit under way). */
interface Held {
  resolve(): void;
  reject(error: Error): void;
}

/** A clock with 640 timers of 0.1 ms of work each: an advance over them takes several slices. */
function busyClock(): VirtualClock {
  const c = new VirtualClock({ start: 0 });
  for (let index = 0; index < 640; index++) {
    c.schedule(1_000 + index, () => {
      const until = performance.now() + 0.1;
      while (performance.now() < until) {
        // work
      }
    });
  }
  return c;
}

/** Runs each unit a microtask later (as a store's queue does) and holds its outcome in `held`. */
function holdingRunner(held: Held[], failFirst?: Error) {
  return <T>(fire: () => T): Promise<Awaited<T>> =>
    new Promise<Awaited<T>>((resolve, reject) => {
      queueMicrotask(() => {
        const value = fire() as Awaited<T>;
        if (failFirst !== undefined && held.length === 0) {
          held.push({ resolve: () => undefined, reject: () => undefined });
          reject(failFirst);
          return;
        }
        held.push({ resolve: () => resolve(value), reject });
      });
    });
}

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('a sliced advance through a runner', () => {
  it('runs the next slices while the earlier units settle (four at most), and answers once every unit settled', async () => {
    clock = busyClock();
    const c = clock;
    const held: Held[] = [];
    c.setRunner(holdingRunner(held));
    let answered = false;
    const advancing = c.advanceInSlices(5_000).then(() => (answered = true));
    // Four slices run though no unit has settled; the fifth waits for the first to settle.
    for (let spins = 0; held.length < 4 && spins < 1_000; spins++) await turn();
    for (let spins = 0; spins < 20; spins++) await turn();
    expect(held.length).toBe(4);
    expect(c.pendingTimers).toBeGreaterThan(0);
    // Settled one at a time, oldest first: the slices go on to the end.
    let settled = 0;
    for (let spins = 0; c.pendingTimers > 0 && spins < 10_000; spins++) {
      if (settled < held.length - 1) held[settled++]!.resolve();
      await turn();
    }
    expect(c.pendingTimers).toBe(0);
    expect(held.length).toBeGreaterThan(4);
    // Not answered while any unit is unsettled.
    for (let spins = 0; !answered && spins < 1_000; spins++) {
      while (settled < held.length) {
        expect(answered).toBe(false);
        held[settled++]!.resolve();
      }
      await turn();
    }
    await advancing;
    expect(answered).toBe(true);
    expect(c.offsetMs).toBeGreaterThanOrEqual(5_000);
  });

  it('runs a slice in a turn of its own, never in the turn that settled an earlier unit', async () => {
    clock = busyClock();
    const c = clock;
    const held: Held[] = [];
    c.setRunner(holdingRunner(held));
    const advancing = c.advanceInSlices(5_000);
    for (let spins = 0; held.length < 4 && spins < 1_000; spins++) await turn();
    for (let spins = 0; spins < 20; spins++) await turn();
    expect(held.length).toBe(4);
    held[0]!.resolve();
    // The settling's promise callbacks (as a commit's answer runs them) run no slice...
    for (let ticks = 0; ticks < 50; ticks++) await Promise.resolve();
    expect(held.length).toBe(4);
    // ...the next turn does.
    for (let spins = 0; held.length === 4 && spins < 20; spins++) await turn();
    expect(held.length).toBe(5);
    // Every unit settled, those of the slices still to come included, until the advance answers.
    let answered = false;
    void advancing.then(() => (answered = true));
    for (let spins = 0; !answered && spins < 10_000; spins++) {
      for (const unit of held) unit.resolve();
      await turn();
    }
    expect(answered).toBe(true);
    expect(c.pendingTimers).toBe(0);
  });

  it('ends the advance with the error of a unit that failed, without running the rest', async () => {
    clock = busyClock();
    const c = clock;
    const held: Held[] = [];
    c.setRunner(holdingRunner(held, new Error('the commit failed')));
    const advancing = c.advanceInSlices(5_000);
    // Answered at once, though the units that ran after the failed one have not settled.
    const outcome = await advancing.then(
      () => 'answered',
      (error: unknown) => (error as Error).message,
    );
    expect(outcome).toBe('the commit failed');
    expect(c.pendingTimers).toBeGreaterThan(0);
    expect(held.length).toBeLessThan(5);
  });
});

import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/sandbox/clock.js';

let clock: VirtualClock | undefined;
afterEach(() => clock?.stop());

describe('VirtualClock', () => {
  it('reads real time plus an offset that advance() adds to', () => {
    clock = new VirtualClock({ start: 1_000_000 });
    const before = clock.now();
    expect(before).toBeGreaterThanOrEqual(1_000_000);
    clock.advance(60_000);
    expect(clock.now() - before).toBeGreaterThanOrEqual(60_000);
    expect(clock.offsetMs).toBeGreaterThanOrEqual(60_000);
  });

  it('fires passed timers in time order, each seeing its own time', () => {
    clock = new VirtualClock({ start: 0 });
    const c = clock;
    const fired: [string, number][] = [];
    const t0 = c.now();
    c.schedule(t0 + 3_000, () => fired.push(['c', c.now() - t0]));
    c.schedule(t0 + 1_000, () => fired.push(['a', c.now() - t0]));
    c.schedule(t0 + 2_000, () => fired.push(['b', c.now() - t0]));
    c.schedule(t0 + 10_000, () => fired.push(['late', c.now() - t0]));
    c.advance(5_000);
    expect(fired.map(([name]) => name)).toEqual(['a', 'b', 'c']);
    expect(fired[0]![1]).toBeGreaterThanOrEqual(1_000);
    expect(fired[0]![1]).toBeLessThan(2_000);
    expect(c.pendingTimers).toBe(1);
  });

  it("during an advance, a callback reads exactly its timer's time, however long it runs", () => {
    clock = new VirtualClock({ start: 0 });
    const c = clock;
    const t0 = c.now();
    const read: number[] = [];
    const busy = () => {
      const until = performance.now() + 5;
      while (performance.now() < until);
    };
    c.schedule(t0 + 1_000, () => {
      read.push(c.now());
      busy();
      read.push(c.now());
    });
    c.schedule(t0 + 2_000, () => read.push(c.now()));
    c.advance(3_000);
    expect(read).toEqual([t0 + 1_000, t0 + 1_000, t0 + 2_000]);
    // Afterwards real time counts again, from the end of the advance on.
    expect(c.now()).toBeGreaterThanOrEqual(t0 + 3_000);
  });

  it('an overdue timer reads the time its slice began, never an earlier one', async () => {
    clock = new VirtualClock({ start: 0 });
    const c = clock;
    const t0 = c.now();
    let read = -1;
    c.schedule(t0 - 60_000, () => (read = c.now()));
    await c.advanceInSlices(1_000);
    expect(read).toBeGreaterThanOrEqual(t0);
    expect(read).toBeLessThan(t0 + 1_000);
    expect(c.now()).toBeGreaterThanOrEqual(t0 + 1_000);
  });

  it('fires timers scheduled by a timer when they fall within the advance', () => {
    clock = new VirtualClock();
    const c = clock;
    const fired: string[] = [];
    c.after(1_000, () => {
      fired.push('first');
      c.after(1_000, () => fired.push('second'));
      c.after(10_000, () => fired.push('third'));
    });
    c.advance(2_500);
    expect(fired).toEqual(['first', 'second']);
  });

  it('keeps the order of timers due at the same time', () => {
    clock = new VirtualClock();
    const fired: number[] = [];
    const at = clock.now() + 100;
    for (let index = 0; index < 5; index++) clock.schedule(at, () => fired.push(index));
    clock.advance(100);
    expect(fired).toEqual([0, 1, 2, 3, 4]);
  });

  it('fires timers when real time reaches them', async () => {
    clock = new VirtualClock();
    const scheduledAt = clock.now();
    const fired = new Promise<number>((resolve) => clock!.after(30, () => resolve(clock!.now())));
    expect(await fired).toBeGreaterThanOrEqual(scheduledAt + 30);
  });

  it('cancel() and stop() prevent firing; errors go to onError', () => {
    const errors: unknown[] = [];
    clock = new VirtualClock({ onError: (error) => errors.push(error) });
    const fired: string[] = [];
    const timer = clock.after(10, () => fired.push('cancelled'));
    timer.cancel();
    clock.after(20, () => {
      throw new Error('boom');
    });
    clock.advance(50);
    expect(fired).toEqual([]);
    expect(errors).toHaveLength(1);
    clock.after(10, () => fired.push('after stop'));
    clock.stop();
    clock.advance(50);
    expect(fired).toEqual([]);
  });

  it('rejects a negative advance', () => {
    clock = new VirtualClock();
    expect(() => clock!.advance(-1)).toThrow(RangeError);
  });
});

/**
 * The clock's timer heap: order over many timers, cancellation that releases memory, advances in
 * slices that let other work run and keep the order, and advances that run one after the other.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/sandbox/clock.js';

let clock: VirtualClock | undefined;
afterEach(() => clock?.stop());

/** A deterministic pseudo-random sequence (no flaky orders). */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2 ** 31;
    return state / 2 ** 31;
  };
}

describe('the timer heap', () => {
  it('fires 20,000 timers scheduled in random order by time, and same-time timers in scheduling order', () => {
    clock = new VirtualClock({ start: 0 });
    const c = clock;
    const base = c.now();
    const next = random(7);
    const fired: [number, number][] = [];
    const expected: [number, number][] = [];
    for (let index = 0; index < 20_000; index++) {
      const at = base + 1 + Math.floor(next() * 5_000);
      expected.push([at, index]);
      c.schedule(at, () => fired.push([at, index]));
    }
    expected.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    c.advance(10_000);
    expect(fired).toEqual(expected);
    expect(c.pendingTimers).toBe(0);
  });

  it('fires 60,000 timers scheduled out of order by time, sparse, dense and same-time, in order', () => {
    clock = new VirtualClock({ start: 0 });
    const c = clock;
    const base = c.now();
    const next = random(5);
    const fired: number[] = [];
    const expected: [number, number][] = [];
    const add = (at: number) => {
      const index = expected.length;
      expected.push([at, index]);
      c.schedule(at, () => fired.push(index));
    };
    // About one a millisecond over 30 s (windows of a few seconds each), then bursts of a hundred
    // timers on the same millisecond (a window then ends inside a run of equal times), then sparse again.
    for (let index = 0; index < 30_000; index++) add(base + 1 + Math.floor(next() * 30_000));
    for (let index = 0; index < 20_000; index++) add(base + 40_000 + Math.floor(next() * 200));
    for (let index = 0; index < 10_000; index++) add(base + 50_000 + Math.floor(next() * 1_000_000));
    expected.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    c.advance(2_000_000);
    expect(fired).toEqual(expected.map(([, index]) => index));
    expect(c.pendingTimers).toBe(0);
  });

  it('keeps the order of timers scheduled in order of time beside others out of order, with cancellations', () => {
    clock = new VirtualClock({ start: 0 });
    const c = clock;
    const next = random(9);
    const fired: number[] = [];
    const expected: [number, number][] = [];
    const cancelled = new Set<number>();
    const timers: { cancel(): void }[] = [];
    for (let index = 0; index < 30_000; index++) {
      // The clock moves on between schedules, as requests come in: an expiry a fixed delay later is
      // in order of time; one in four timers is due at a random time instead (a retry, another kind).
      if (index % 10 === 0) c.advance(Math.floor(next() * 5));
      const at = index % 4 === 3 ? c.now() + Math.floor(next() * 120_000) : c.now() + 60_000;
      expected.push([at, index]);
      timers.push(c.schedule(at, () => fired.push(index)));
      if (index % 13 === 5) {
        const victim = Math.floor(next() * index);
        // A timer that fired already is not cancelled by this (harmless); one pending never fires.
        if (!fired.includes(victim)) cancelled.add(victim);
        timers[victim]!.cancel();
      }
    }
    expect(c.pendingTimers).toBe(30_000 - cancelled.size - fired.length);
    c.advance(300_000);
    expected.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    expect(fired).toEqual(expected.map(([, index]) => index).filter((index) => !cancelled.has(index)));
    expect(c.pendingTimers).toBe(0);
    expect(c.storedTimers).toBe(0);
  });

  it('cancelled timers never fire, stop counting at once, and the heap drops them', () => {
    clock = new VirtualClock();
    const c = clock;
    let fired = 0;
    const timers = Array.from({ length: 50_000 }, (_, index) => c.after(60_000 + index, () => fired++));
    expect(c.pendingTimers).toBe(50_000);
    for (const timer of timers.slice(0, 49_000)) timer.cancel();
    expect(c.pendingTimers).toBe(1_000);
    // Lazy deletion: the cancelled entries are compacted away once they outnumber the live ones.
    expect(c.storedTimers).toBeLessThanOrEqual(2 * 1_000 + 1_025);
    timers[0]!.cancel(); // again: harmless
    c.advance(120_000);
    expect(fired).toBe(1_000);
    expect(c.storedTimers).toBe(0);
  });

  it('advanceInSlices fires 100,000 timers in order, each seeing its own time, and lets other work run in between', async () => {
    clock = new VirtualClock({ start: 0 });
    const c = clock;
    const base = c.now();
    let last = -1;
    let outOfOrder = 0;
    let sawOwnTime = 0;
    for (let index = 0; index < 100_000; index++) {
      const at = base + 1_000 + (index % 1_000);
      c.schedule(at, () => {
        const now = c.now();
        if (now >= at) sawOwnTime++;
        if (at < last) outOfOrder++;
        last = at;
      });
    }
    let otherWork = 0;
    const ticker = setInterval(() => otherWork++, 0);
    try {
      await c.advanceInSlices(5_000);
    } finally {
      clearInterval(ticker);
    }
    expect(outOfOrder).toBe(0);
    expect(sawOwnTime).toBe(100_000);
    expect(c.pendingTimers).toBe(0);
    expect(c.now() - base).toBeGreaterThanOrEqual(5_000);
    // 100,000 callbacks take far longer than one slice: other work ran between slices.
    expect(otherWork).toBeGreaterThan(0);
  });

  it('concurrent advances run one after the other, in the order asked', async () => {
    clock = new VirtualClock({ start: 0 });
    const c = clock;
    const base = c.now();
    const fired: string[] = [];
    c.schedule(base + 1_000, () => fired.push('a'));
    c.schedule(base + 3_000, () => fired.push('b'));
    const first = c.advanceInSlices(2_000).then(() => fired.push('first done'));
    const second = c.advanceInSlices(2_000).then(() => fired.push('second done'));
    await Promise.all([first, second]);
    expect(fired).toEqual(['a', 'first done', 'b', 'second done']);
    expect(c.offsetMs).toBeGreaterThanOrEqual(4_000);
  });

  it('fires timers scheduled by a timer within the same sliced advance', async () => {
    clock = new VirtualClock();
    const c = clock;
    const fired: string[] = [];
    c.after(1_000, () => {
      fired.push('first');
      c.after(1_000, () => fired.push('second'));
    });
    await c.advanceInSlices(2_500);
    expect(fired).toEqual(['first', 'second']);
  });

  it('with many timers due, keeps their order against timers scheduled and cancelled while they fire', () => {
    clock = new VirtualClock({ start: 0 });
    const c = clock;
    const base = c.now();
    const next = random(11);
    const fired: string[] = [];
    const expected: [number, number, string][] = [];
    const timers = new Map<number, { cancel(): void }>();
    const addedAt = new Map<string, number>();
    for (let index = 0; index < 5_000; index++) {
      const at = base + 1 + Math.floor(next() * 4_000);
      const name = `t${index}`;
      timers.set(
        index,
        c.schedule(at, () => {
          fired.push(name);
          // Cancels a later timer (one in 7), and schedules one that falls before later due timers.
          if (index % 7 === 0) timers.get(index + 1)?.cancel();
          if (index % 500 === 0) {
            // now() reads the firing timer's time plus the real time the callbacks took since it
            // began (a loaded machine may take a millisecond): the replay uses the time asked for.
            const at3 = c.now() + 3;
            addedAt.set(`${name}+3`, at3);
            c.schedule(at3, () => fired.push(`${name}+3`));
          }
        }),
      );
      expected.push([at, index, name]);
    }
    // Not due within the advance: must stay pending.
    for (let index = 0; index < 10; index++) c.schedule(base + 100_000 + index, () => fired.push('late'));
    expect(c.pendingTimers).toBe(5_010);
    c.advance(5_000);

    // The same rules replayed without the clock.
    expected.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const cancelled = new Set<number>();
    const queue = expected.map(([at, index, name]) => ({ at, seq: index, name, index }));
    const replay: string[] = [];
    let seq = 10_000;
    while (queue.length > 0) {
      const entry = queue.shift()!;
      if (cancelled.has(entry.index)) continue;
      replay.push(entry.name);
      if (entry.index >= 0) {
        if (entry.index % 7 === 0) cancelled.add(entry.index + 1);
        if (entry.index % 500 === 0) {
          const added = { at: addedAt.get(`${entry.name}+3`)!, seq: seq++, name: `${entry.name}+3`, index: -1 };
          expect(added.at).toBeGreaterThanOrEqual(entry.at + 3);
          const position = queue.findIndex((other) => other.at > added.at || (other.at === added.at && other.seq > added.seq));
          queue.splice(position < 0 ? queue.length : position, 0, added);
        }
      }
    }
    expect(fired).toEqual(replay);
    expect(c.pendingTimers).toBe(10);
    expect(c.storedTimers).toBe(10);
    timers.get(4_999)!.cancel(); // after it fired: harmless
    expect(c.pendingTimers).toBe(10);
  });

  it('rejects a negative or infinite sliced advance at once', () => {
    clock = new VirtualClock();
    expect(() => clock!.advanceInSlices(-1)).toThrow(RangeError);
    expect(() => clock!.advanceInSlices(Number.POSITIVE_INFINITY)).toThrow(RangeError);
  });
});

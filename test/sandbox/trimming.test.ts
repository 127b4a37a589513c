/**
 * Forgetting beyond the retention limits (trimming.ts, D66): a few records per record added, none
 * during a sliced clock advance, and all that is over the limit after it, a slice at a time; a
 * catch-up ends even when every record must stay.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/sandbox/clock.js';
import { FinalRecords } from '../../src/sandbox/retention.js';
import { TRIES_PER_ADD } from '../../src/sandbox/trimming.js';

let clock: VirtualClock | undefined;
afterEach(() => clock?.stop());

const turn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Waits, a turn of the event loop at a time, until `done()`; answers what `look()` read at each turn. */
async function turnsUntil<T>(done: () => boolean, look: () => T, maxTurns = 1_000): Promise<T[]> {
  const seen: T[] = [];
  for (let turns = 0; !done(); turns++) {
    if (turns === maxTurns) throw new Error(`not done after ${maxTurns} turns of the event loop`);
    await turn();
    seen.push(look());
  }
  return seen;
}

/** Lets `records` forget every record of `kind`; answers the keys forgotten, in order. */
function forgetting(records: FinalRecords, kind: string): string[] {
  const forgotten: string[] = [];
  records.register(kind, (key) => {
    forgotten.push(key);
    return 'evicted';
  });
  return forgotten;
}

describe('trimming of final records', () => {
  it('forgets the oldest beyond the limit as records are added, a bounded number each time', () => {
    clock = new VirtualClock();
    const records = new FinalRecords(3, clock);
    const forgotten = forgetting(records, 'sdk');
    for (let index = 0; index < 5; index++) records.add('sdk', `t${index}`);
    expect(forgotten).toEqual(['t0', 't1']);
    expect(records.size).toBe(3);
    expect(records.evicted).toBe(2);
  });

  it('waits during a sliced advance and catches up after it, oldest first', async () => {
    clock = new VirtualClock();
    const c = clock;
    const records = new FinalRecords(5, c);
    const forgotten = forgetting(records, 'web');
    for (let index = 0; index < 5; index++) records.add('web', `old${index}`);
    // 20 timers that each make a record final, as expiries do.
    const start = c.now();
    for (let index = 0; index < 20; index++) c.schedule(start + 1_000 + index, () => records.add('web', `new${index}`));
    let sizeAtEnd = -1;
    c.schedule(start + 2_000, () => (sizeAtEnd = records.size));
    await c.advanceInSlices(5_000);
    expect(sizeAtEnd).toBe(25);
    expect(forgotten).toEqual([]);
    await turnsUntil(() => records.size === 5, () => records.size);
    expect(forgotten).toEqual([...Array.from({ length: 5 }, (_, index) => `old${index}`), ...Array.from({ length: 15 }, (_, index) => `new${index}`)]);
  });

  it('catches up a slice at a time, letting the event loop turn in between', async () => {
    clock = new VirtualClock();
    const c = clock;
    const records = new FinalRecords(0, c);
    // Each forgetting takes 0.03 ms: 2,000 take about 60 ms, several slices of 10 ms.
    records.register('web', () => {
      const until = performance.now() + 0.03;
      while (performance.now() < until);
      return 'evicted';
    });
    c.schedule(c.now() + 10, () => {
      for (let index = 0; index < 2_000; index++) records.add('web', `t${index}`);
    });
    await c.advanceInSlices(100);
    expect(records.size).toBe(2_000);
    const sizes = await turnsUntil(() => records.size === 0, () => records.size);
    // Turns of the event loop came between slices: the sizes seen on the way down.
    const between = sizes.filter((size) => size > 0 && size < 2_000);
    expect(between.length).toBeGreaterThanOrEqual(2);
  });

  it('ends a catch-up when every record must stay, and tries again a few at a time later', async () => {
    clock = new VirtualClock();
    const c = clock;
    const records = new FinalRecords(2, c);
    let tries = 0;
    records.register('gateway', () => {
      tries++;
      return 'keep';
    });
    c.schedule(c.now() + 10, () => {
      for (let index = 0; index < 30; index++) records.add('gateway', `t${index}`);
    });
    await c.advanceInSlices(100);
    expect(tries).toBe(0);
    for (let turns = 0; turns < 20; turns++) await turn();
    // One try for each record over the limit when the catch-up began, then it stopped.
    expect(tries).toBe(28);
    expect(records.size).toBe(30);
    records.add('gateway', 'later');
    expect(tries).toBe(28 + TRIES_PER_ADD);
    expect(records.size).toBe(31);
  });
});

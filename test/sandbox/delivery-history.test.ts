/**
 * The deliveries' creation order as they are forgotten (src/sandbox/delivery/history.ts): the
 * forgotten numbers at its front are cut off, those in the middle filtered out once they are half
 * of it, and what is held stays in ascending order either way.
 */
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/sandbox/clock.js';
import { DeliveryHistory } from '../../src/sandbox/delivery/history.js';
import type { StoredDelivery } from '../../src/sandbox/delivery/stored.js';

function delivery(history: DeliveryHistory, status: 'not_sent' | 'pending'): StoredDelivery {
  const record = { seq: history.takeSeq(), id: undefined, status } as unknown as StoredDelivery;
  history.add(record);
  history.ordered(record);
  return record;
}

const held = (history: DeliveryHistory) => history.order.slice(history.orderStart).filter((seq) => history.get(seq) !== undefined);

describe('DeliveryHistory', () => {
  it('keeps the newest completed deliveries, and its order shrinks to about them', () => {
    const clock = new VirtualClock();
    const history = new DeliveryHistory(clock, 100);
    for (let index = 0; index < 20_000; index++) delivery(history, 'not_sent');
    expect(history.size).toBe(100);
    expect(held(history)).toEqual(Array.from({ length: 100 }, (_, index) => 19_901 + index));
    // The forgotten front is cut off as it grows: the order never holds much more than twice the
    // 1,024 numbers that start a compaction.
    expect(history.order.length).toBeLessThan(100 + 2 * 1025);
    clock.stop();
  });

  it('filters the forgotten numbers out of its middle, and keeps the pending ones there', () => {
    const clock = new VirtualClock();
    const history = new DeliveryHistory(clock, 10);
    // One pending delivery, completed much later, among 10,000 completed at once.
    const early = delivery(history, 'pending');
    for (let index = 0; index < 10_000; index++) delivery(history, 'not_sent');
    const late = delivery(history, 'pending');
    expect(held(history)).toEqual([early.seq, ...Array.from({ length: 10 }, (_, index) => 10_000 - 9 + index + 1), late.seq]);
    expect(history.order[0]).toBe(early.seq);
    expect(history.order.length).toBeLessThan(12 + 2 * 1025);
    history.complete(early.seq);
    history.complete(late.seq);
    for (let index = 0; index < 5_000; index++) delivery(history, 'not_sent');
    expect(history.size).toBe(10);
    expect(held(history)).toEqual(Array.from({ length: 10 }, (_, index) => 15_002 - 9 + index));
    expect([...history.order]).toEqual([...history.order].sort((a, b) => a - b));
    clock.stop();
  });
});

/**
 * The event loop's count of work per turn (src/sandbox/turn-clock.ts), shared by the requests in
 * turns, the clock's advance and the trimming: what is left of the turn, never less than a
 * slice's least nor more than its most, and a fresh count at the next turn. The clock and the
 * turns are the test's own.
 */
import { describe, expect, it } from 'vitest';
import { TURN_MS, TurnClock } from '../../src/sandbox/turn-clock.js';

function harness() {
  let now = 1_000;
  const pending: (() => void)[] = [];
  const turn = new TurnClock(() => now, (run) => pending.push(run));
  return {
    turn,
    spend: (ms: number) => {
      now += ms;
    },
    nextTurn: () => pending.splice(0).forEach((run) => run()),
    pending,
  };
}

describe('TurnClock', () => {
  it('counts from the first ask of a turn, and gives what is left of the turn within the bounds', () => {
    const { turn, spend, pending } = harness();
    expect(turn.spent()).toBe(0);
    expect(pending).toHaveLength(1);
    expect(turn.room(2, 10)).toBe(10);
    spend(TURN_MS - 6);
    expect(turn.spent()).toBe(TURN_MS - 6);
    expect(turn.room(2, 10)).toBe(6);
    spend(10);
    // Past the turn's budget: the least, so that the sliced work still moves on.
    expect(turn.room(2, 10)).toBe(2);
    // One end of turn scheduled per turn, however often it is asked.
    expect(pending).toHaveLength(1);
  });

  it('starts afresh at the next turn', () => {
    const { turn, spend, nextTurn, pending } = harness();
    turn.spent();
    spend(50);
    expect(turn.spent()).toBe(50);
    nextTurn();
    spend(5);
    expect(turn.spent()).toBe(0);
    expect(pending).toHaveLength(1);
    spend(3);
    expect(turn.room(2, 10)).toBe(10);
    expect(turn.spent()).toBe(3);
  });
});

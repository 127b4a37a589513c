/**
 * Requests taken in turns (src/sandbox/fair-turns.ts): started at once while a turn has room and
 * nothing waits; past the turn's slice, served round robin across connections, in order within
 * each, a slice per turn; dropped when their connection is gone. A request under way (a promise)
 * holds its connection's next ones, and its continuation (`resume`) takes a turn like a request.
 * The clock and the turns are the test's own (no timers, nothing timed).
 */
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { FairTurns } from '../../src/sandbox/fair-turns.js';

/** A clock moved by hand, turns run by hand, and sockets that only say whether they are gone. */
function harness(slice = 8) {
  let now = 0;
  const pending: (() => void)[] = [];
  const turns = new FairTurns(() => now, slice, (run) => pending.push(run));
  const ran: string[] = [];
  const socket = () => ({ destroyed: false }) as unknown as Socket & { destroyed: boolean };
  /** A request that takes `ms` of the clock. */
  const request = (name: string, ms: number) => () => {
    ran.push(name);
    now += ms;
  };
  /** Runs what the turn left for the next one (the check phase). */
  const nextTurn = () => pending.splice(0).forEach((run) => run());
  /** Work that takes `ms` of the clock. */
  const spend = (ms: number) => {
    now += ms;
  };
  return { turns, ran, socket, request, nextTurn, spend };
}

describe('FairTurns', () => {
  it('starts requests at once while the turn has room', () => {
    const { turns, ran, socket, request } = harness();
    const a = socket();
    turns.run(a, request('a1', 3));
    turns.run(a, request('a2', 3));
    turns.run(a, request('a3', 3));
    expect(ran).toEqual(['a1', 'a2', 'a3']);
    expect(turns.size).toBe(0);
  });

  it('past the slice, serves the connections round robin, each in its order, a slice per turn', () => {
    const { turns, ran, socket, request, nextTurn } = harness();
    const pipelining = socket();
    const probe = socket();
    // A read of 20 pipelined requests of 2 ms each: 4 fit in the first turn's 8 ms.
    for (let index = 0; index < 20; index++) turns.run(pipelining, request(`p${index}`, 2));
    turns.run(probe, request('probe', 1));
    expect(ran).toEqual(['p0', 'p1', 'p2', 'p3']);
    expect(turns.size).toBe(17);
    nextTurn();
    // The probe's request goes right after the first waiting request of the other connection.
    expect(ran.slice(4, 7)).toEqual(['p4', 'probe', 'p5']);
    expect(ran.length).toBeLessThan(20);
    for (let turn = 0; turn < 20 && turns.size > 0; turn++) nextTurn();
    expect(ran.filter((name) => name.startsWith('p') && name !== 'probe')).toEqual(Array.from({ length: 20 }, (_, index) => `p${index}`));
    expect(turns.size).toBe(0);
  });

  it('queues a request behind its own connection\'s waiting ones even when the turn has room again', () => {
    const { turns, ran, socket, request, nextTurn } = harness();
    const a = socket();
    turns.run(a, request('a1', 9));
    turns.run(a, request('a2', 9));
    turns.run(a, request('a3', 1));
    nextTurn();
    expect(ran).toEqual(['a1', 'a2']);
    // A new turn, with room, but a3 still waits: a4 goes behind it.
    turns.run(a, request('a4', 1));
    expect(ran).toEqual(['a1', 'a2']);
    nextTurn();
    expect(ran).toEqual(['a1', 'a2', 'a3', 'a4']);
  });

  it('bounds a connection\'s waiting requests: at 64 they run at once, in order, and its later ones wait again', () => {
    const { turns, ran, socket, request, nextTurn } = harness();
    const flood = socket();
    const probe = socket();
    turns.run(flood, request('busy', 9));
    for (let index = 0; index < 64; index++) turns.run(flood, request(`f${index}`, 0));
    turns.run(probe, request('probe', 0));
    expect(turns.size).toBe(65);
    // The 65th waiting request of the connection: its 64 run, in order, then it.
    turns.run(flood, request('f64', 0));
    expect(ran).toEqual(['busy', ...Array.from({ length: 65 }, (_, index) => `f${index}`)]);
    expect(turns.size).toBe(1);
    // The flood's next request waits behind the probe; the emptied entry is skipped.
    turns.run(flood, request('f65', 0));
    nextTurn();
    expect(ran.slice(66)).toEqual(['probe', 'f65']);
    expect(turns.size).toBe(0);
  });

  it('drops the waiting requests of a connection that is gone', () => {
    const { turns, ran, socket, request, nextTurn } = harness();
    const gone = socket();
    const other = socket();
    turns.run(other, request('o1', 10));
    turns.run(gone, request('g1', 1));
    turns.run(gone, request('g2', 1));
    turns.run(other, request('o2', 1));
    gone.destroyed = true;
    nextTurn();
    nextTurn();
    expect(ran).toEqual(['o1', 'o2']);
    expect(turns.size).toBe(0);
  });

  it('serves the others when a request throws', () => {
    const { turns, ran, socket, request, nextTurn } = harness();
    const a = socket();
    const b = socket();
    turns.run(a, request('a1', 10));
    turns.run(a, () => {
      throw new Error('broken handler');
    });
    turns.run(b, request('b1', 1));
    nextTurn();
    expect(ran).toEqual(['a1', 'b1']);
  });

  it('holds a connection\'s next request while one is under way, and starts it once that settles', async () => {
    const { turns, ran, socket, request, nextTurn } = harness();
    const a = socket();
    let settle!: () => void;
    turns.run(a, () => {
      ran.push('write');
      return new Promise<void>((resolve) => {
        settle = resolve;
      });
    });
    // The turn has room, but the write is under way: the read waits for it.
    turns.run(a, request('read', 1));
    nextTurn();
    expect(ran).toEqual(['write']);
    expect(turns.size).toBe(1);
    settle();
    await Promise.resolve();
    await Promise.resolve();
    nextTurn();
    expect(ran).toEqual(['write', 'read']);
    expect(turns.size).toBe(0);
  });

  it('runs a continuation at once while the turn has room, and in its round past the slice', async () => {
    const { turns, ran, socket, request, nextTurn } = harness();
    const a = socket();
    const b = socket();
    expect(turns.resume(a, () => 'now')).toBe('now');
    // Past the slice, with another connection waiting: the continuation waits for its round.
    turns.run(b, request('b1', 9));
    turns.run(b, request('b2', 1));
    const later = turns.resume(a, () => {
      ran.push('a-rest');
      return 'later';
    });
    expect(later).toBeInstanceOf(Promise);
    expect(ran).toEqual(['b1']);
    nextTurn();
    expect(ran).toEqual(['b1', 'b2', 'a-rest']);
    await expect(later).resolves.toBe('later');
  });

  it('bounds the work of many continuations in one turn by the slice', async () => {
    const { turns, ran, socket, spend, nextTurn } = harness();
    // 20 connections whose bodies all came in the same read: each continuation takes 2 ms.
    const rests = Array.from({ length: 20 }, (_, index) =>
      turns.resume(socket(), () => {
        ran.push(`rest${index}`);
        spend(2);
        return index;
      }),
    );
    // 4 fit in the turn's 8 ms; the others wait for the next turns, in order.
    expect(ran).toEqual(['rest0', 'rest1', 'rest2', 'rest3']);
    expect(rests.slice(0, 4)).toEqual([0, 1, 2, 3]);
    nextTurn();
    expect(ran.length).toBe(8);
    for (let turn = 0; turn < 10 && ran.length < 20; turn++) nextTurn();
    expect(ran).toEqual(Array.from({ length: 20 }, (_, index) => `rest${index}`));
    await expect(Promise.all(rests)).resolves.toEqual(Array.from({ length: 20 }, (_, index) => index));
  });

  it('rejects a continuation that throws, and still serves the others', async () => {
    const { turns, ran, socket, request, nextTurn } = harness();
    const a = socket();
    const b = socket();
    turns.run(b, request('b1', 9));
    turns.run(b, request('b2', 0));
    const failing = turns.resume(a, () => {
      throw new Error('broken handler');
    });
    nextTurn();
    await expect(failing).rejects.toThrow('broken handler');
    expect(ran).toEqual(['b1', 'b2']);
  });
});

/**
 * The sharded Map and Set (src/sandbox/sharded-map.ts): the same answers as a Map and a Set over
 * random operations, and keys of the shapes the sandbox stores spread so that no shard holds much
 * more than its share and the shards' tables grow at different moments (a shard that took most keys,
 * or shards that all grew at once, would pause as long as one Map).
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ShardedMap, ShardedSet, shardOf } from '../../src/sandbox/sharded-map.js';

/** A small deterministic generator (mulberry32), so that a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('ShardedMap and ShardedSet', () => {
  it('answer as a Map and a Set do over 50,000 random sets, deletes, reads and clears', () => {
    const next = random(7);
    const map = new ShardedMap<string, number>();
    const reference = new Map<string, number>();
    const set = new ShardedSet<number>();
    const referenceSet = new Set<number>();
    const differences: string[] = [];
    const differ = (step: number, what: string, got: unknown, wanted: unknown) => {
      if (got !== wanted && differences.length < 5) differences.push(`step ${step}, ${what}: ${String(got)}, a Map ${String(wanted)}`);
    };
    for (let step = 0; step < 50_000; step++) {
      const key = `txn_${Math.floor(next() * 5_000)}`;
      const seq = Math.floor(next() * 5_000);
      const roll = next();
      if (roll < 0.5) {
        differ(step, 'set returns the map', map.set(key, step), map);
        reference.set(key, step);
        set.add(seq);
        referenceSet.add(seq);
      } else if (roll < 0.8) {
        differ(step, `delete ${key}`, map.delete(key), reference.delete(key));
        differ(step, `delete ${seq}`, set.delete(seq), referenceSet.delete(seq));
      } else if (roll < 0.99995) {
        differ(step, `get ${key}`, map.get(key), reference.get(key));
        differ(step, `has ${key}`, map.has(key), reference.has(key));
        differ(step, `has ${seq}`, set.has(seq), referenceSet.has(seq));
      } else {
        map.clear();
        reference.clear();
        set.clear();
        referenceSet.clear();
      }
      differ(step, 'the map\'s size', map.size, reference.size);
      differ(step, 'the set\'s size', set.size, referenceSet.size);
    }
    expect(differences).toEqual([]);
    expect(reference.size).toBeGreaterThan(1_000);
    const byKey = (a: [string, number], b: [string, number]) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);
    expect([...map].sort(byKey)).toEqual([...reference].sort(byKey));
    expect([...map.entries()].sort(byKey)).toEqual([...reference.entries()].sort(byKey));
    expect([...map.keys()].sort()).toEqual([...reference.keys()].sort());
    expect([...map.values()].sort((a, b) => a - b)).toEqual([...reference.values()].sort((a, b) => a - b));
    expect([...set].sort((a, b) => a - b)).toEqual([...referenceSet].sort((a, b) => a - b));
  });

  it('setting a key again replaces its value and keeps the count', () => {
    const map = new ShardedMap<number, string>();
    map.set(3, 'a').set(3, 'b').set(67, 'c');
    expect(map.size).toBe(2);
    expect(map.get(3)).toBe('b');
    expect(map.delete(3)).toBe(true);
    expect(map.delete(3)).toBe(false);
    expect(map.size).toBe(1);
  });

  it.each([
    ['a counter with a fixed suffix', (i: number) => `txn_${i.toString(36)}_abcdef`],
    ['a counter with a fixed prefix', (i: number) => `order-2026-11-29-${i}`],
    ['a counter in the middle of a long id', (i: number) => `merchant_0000000000000000000000\u0000${i}\u0000webhook`],
    ['random UUIDs', () => randomUUID()],
    ['a child key (parent#position)', (i: number) => `parent_${i % 97}#${Math.floor(i / 97)}`],
    ['sequence numbers', (i: number) => i + 1],
  ])('spread %s so that the shards grow one after the other, none with more than a tenth', (_shape, key) => {
    const total = 200_000;
    const counts = new Array<number>(16).fill(0);
    // Each growth of a shard's table (its size reaching a power of two): when, and what it moves.
    const growths: { at: number; moved: number }[] = [];
    for (let i = 0; i < total; i++) {
      const shard = shardOf(key(i));
      const count = ++counts[shard]!;
      if (count >= 1024 && (count & (count - 1)) === 0) growths.push({ at: i + 1, moved: count });
    }
    expect(Math.max(...counts) / total).toBeLessThan(0.1);
    expect(Math.min(...counts) / total).toBeGreaterThan(0.03);
    // What the growths within 1 % more entries move, as a share of the map (from 20,000 entries):
    // shards of equal shares all grow within such a step, moving the whole map.
    let worst = 0;
    for (let last = 0; last < growths.length; last++) {
      const size = growths[last]!.at;
      if (size < 20_000) continue;
      let moved = 0;
      for (let first = last; first >= 0 && size - growths[first]!.at <= size / 100; first--) moved += growths[first]!.moved;
      worst = Math.max(worst, moved / size);
    }
    expect(worst).toBeLessThan(0.25);
  });
});

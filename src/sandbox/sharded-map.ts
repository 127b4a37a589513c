/**
 * Maps and sets that grow without a long pause: the entries are spread over {@link SHARDS} Maps (or
 * Sets) by a hash of the key.
 *
 * Why: V8 keeps a Map's or a Set's entries in one hash table and, when it is full, builds one twice
 * its size and moves every entry there, in the one call of `set` or `add` that found it full. At
 * 131,072 entries that call takes 23 ms on the development machine, at 262,144 entries 48 ms, at
 * 524,288 entries 101 ms (Node 20, string keys), and the sandbox keeps that many records within its
 * documented limits (200,000 pending transactions a partner, 100,000 final ones and 100,000
 * deliveries retained): an SDK initiate that made the records' Map and the expiry timers' Map grow
 * held every other request for 80 ms (the attack suite's `first-page`, 200,000 initiates). Split 16
 * ways, a table holds at most an eleventh of the entries, so its growth moves at most that; the
 * shards take unequal shares ({@link SHARD_OF_BUCKET}), so they grow at different moments, one at
 * a time. Keys over 32 characters that differ only in their middle all fall in one shard: they grow
 * as one Map did, no worse.
 *
 * Iteration goes shard after shard: entries come in insertion order within a shard, not across
 * the whole map. Every user here reads them as a set (or sorts them).
 *
 * Hand-written: no package keeps JavaScript's Map interface over shards, and a hash table written
 * in JavaScript instead would cost every look-up what V8's Map does in native code.
 */

/** How many Maps a sharded map holds. */
const SHARDS = 16;
/** Characters of a long key hashed: its first and its last this many (ids rarely differ only in the middle). */
const ENDS = 16;
/** A hash's top {@link BUCKET_BITS} bits pick a bucket of {@link SHARD_OF_BUCKET}. */
const BUCKET_BITS = 10;

/**
 * Each shard's share of the keys, as buckets of 1,024: shard i takes a share proportional to
 * 2^(i/16), from 45 to 87 buckets. Equal shares would grow together: the shards would reach each
 * power of two within a few hundred entries of each other, and a clock advance that adds thousands
 * of entries in one slice would pay every shard's growth in it, as much as one Map's. With these
 * shares the sixteen growths of a doubling come at even steps, one every 4.4 % more entries (every
 * 8,800 entries at 200,000), and the largest moves an eleventh of the entries.
 */
const SHARD_OF_BUCKET: Uint8Array = (() => {
  const weights = Array.from({ length: SHARDS }, (_, shard) => 2 ** (shard / SHARDS));
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  const buckets = new Uint8Array(1 << BUCKET_BITS);
  let bucket = 0;
  let cumulative = 0;
  for (let shard = 0; shard < SHARDS; shard++) {
    cumulative += weights[shard]!;
    const end = shard === SHARDS - 1 ? buckets.length : Math.round((cumulative / total) * buckets.length);
    for (; bucket < end; bucket++) buckets[bucket] = shard;
  }
  return buckets;
})();

/**
 * The shard of a key. A string's FNV-1a hash (over its ends when it is long) or a number's bits,
 * mixed by MurmurHash3's finaliser so that the top bits depend on every character hashed, pick a
 * bucket of {@link SHARD_OF_BUCKET}. A look-up pays this besides the Map's own hash, about 50 to
 * 150 ns here.
 */
export function shardOf(key: string | number): number {
  let hash: number;
  if (typeof key === 'number') {
    hash = key | 0;
  } else {
    const length = key.length;
    hash = 0x811c9dc5 ^ length;
    if (length <= 2 * ENDS) {
      for (let index = 0; index < length; index++) hash = Math.imul(hash ^ key.charCodeAt(index), 0x01000193);
    } else {
      for (let index = 0; index < ENDS; index++) hash = Math.imul(hash ^ key.charCodeAt(index), 0x01000193);
      for (let index = length - ENDS; index < length; index++) hash = Math.imul(hash ^ key.charCodeAt(index), 0x01000193);
    }
  }
  hash ^= hash >>> 16;
  hash = Math.imul(hash, 0x85ebca6b);
  hash ^= hash >>> 13;
  hash = Math.imul(hash, 0xc2b2ae35);
  hash ^= hash >>> 16;
  return SHARD_OF_BUCKET[hash >>> (32 - BUCKET_BITS)]!;
}

/** What a Map and a Set have in common, which {@link Shards} forwards to. */
interface Table<K> {
  has(key: K): boolean;
  delete(key: K): boolean;
  clear(): void;
  readonly size: number;
}

/** {@link SHARDS} tables (Maps or Sets) and the count of what they hold. */
abstract class Shards<K extends string | number, T extends Table<K>> {
  protected readonly shards: T[];
  protected count = 0;

  constructor(make: () => T) {
    this.shards = Array.from({ length: SHARDS }, make);
  }

  get size(): number {
    return this.count;
  }

  has(key: K): boolean {
    return this.shards[shardOf(key)]!.has(key);
  }

  delete(key: K): boolean {
    const deleted = this.shards[shardOf(key)]!.delete(key);
    if (deleted) this.count--;
    return deleted;
  }

  clear(): void {
    for (const shard of this.shards) shard.clear();
    this.count = 0;
  }
}

/** A Map whose entries are spread over {@link SHARDS} Maps (see the module's header). */
export class ShardedMap<K extends string | number, V> extends Shards<K, Map<K, V>> implements Iterable<[K, V]> {
  constructor() {
    super(() => new Map<K, V>());
  }

  get(key: K): V | undefined {
    return this.shards[shardOf(key)]!.get(key);
  }

  set(key: K, value: V): this {
    const table = this.shards[shardOf(key)]!;
    const before = table.size;
    table.set(key, value);
    this.count += table.size - before;
    return this;
  }

  *keys(): IterableIterator<K> {
    for (const shard of this.shards) yield* shard.keys();
  }

  *values(): IterableIterator<V> {
    for (const shard of this.shards) yield* shard.values();
  }

  *entries(): IterableIterator<[K, V]> {
    for (const shard of this.shards) yield* shard.entries();
  }

  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries();
  }
}

/** A Set whose members are spread over {@link SHARDS} Sets (see the module's header). */
export class ShardedSet<K extends string | number> extends Shards<K, Set<K>> implements Iterable<K> {
  constructor() {
    super(() => new Set<K>());
  }

  add(key: K): this {
    const table = this.shards[shardOf(key)]!;
    const before = table.size;
    table.add(key);
    this.count += table.size - before;
    return this;
  }

  *values(): IterableIterator<K> {
    for (const shard of this.shards) yield* shard.values();
  }

  [Symbol.iterator](): IterableIterator<K> {
    return this.values();
  }
}

/**
 * A bounded cache of the values requests present again and again (a Basic header, a partner id
 * header), each with what was made of it once (parsed credentials, a digest): the latest `limit`
 * distinct values, the least recently used dropped first. A Map's order of insertion is the order
 * of use (a value found is moved to the end); the newest entry is also kept beside the map and
 * answered from there, the map left as it is, since a client repeats its value on every request and
 * a `delete` and `set` per request made V8 rebuild the map every few requests.
 *
 * Hand-written: a Map does the caching; an LRU package would be a dependency for these few lines.
 * Never logged or shown: the keys may be credentials.
 */
export class RecentValues<V> {
  private readonly values = new Map<string, V>();
  private newest: { key: string; value: V } | undefined;

  constructor(private readonly limit: number) {}

  /** The value kept for `key` (now the most recently used), or undefined. */
  get(key: string): V | undefined {
    if (this.newest !== undefined && this.newest.key === key) return this.newest.value;
    const value = this.values.get(key);
    if (value === undefined) return undefined;
    this.values.delete(key);
    this.values.set(key, value);
    this.newest = { key, value };
    return value;
  }

  /** Keeps `value` for `key`, a key not kept (see {@link get}), dropping the least recently used at the limit. */
  add(key: string, value: V): void {
    if (this.values.size >= this.limit) this.values.delete(this.values.keys().next().value!);
    this.values.set(key, value);
    this.newest = { key, value };
  }
}

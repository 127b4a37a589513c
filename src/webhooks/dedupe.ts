/**
 * {@link createDeduplicator}: an in-memory record of the webhook events already handled, for
 * ignoring the service's retries and replays (see ./verify.ts on what to key it on).
 */

export interface DeduplicatorOptions {
  /** How long a key is remembered, in ms. Default 24 h, which covers the service's retries (about 7.5 h). */
  ttlMs?: number;
  /** At most this many keys are remembered; the oldest are forgotten first. Default 10,000. */
  max?: number;
  /** The clock, in ms (tests). Default `Date.now`. */
  now?: () => number;
}

export interface Deduplicator {
  /** True when `key` was seen within the TTL; otherwise records it and returns false. */
  seen(key: string): boolean;
  /** Forgets `key`, e.g. when processing its event failed and a retry must be processed. */
  forget(key: string): void;
  /** How many keys are remembered now. */
  readonly size: number;
}

/**
 * An in-memory, per-process record of the events already handled. It does not survive a restart
 * and is not shared between processes or machines: with more than one, use a unique key in the
 * database instead. Key it on the signed pair (see the module's comment); forget the key when
 * processing fails, so that the service's retry is processed.
 */
export function createDeduplicator(options: DeduplicatorOptions = {}): Deduplicator {
  const ttlMs = options.ttlMs ?? 24 * 60 * 60 * 1000;
  const max = options.max ?? 10_000;
  const now = options.now ?? Date.now;
  if (!(ttlMs > 0)) throw new RangeError(`ttlMs must be positive (got ${String(ttlMs)})`);
  if (!Number.isSafeInteger(max) || max < 1) throw new RangeError(`max must be a positive integer (got ${String(max)})`);
  // Insertion order is expiry order: every key lives ttlMs from when it was recorded.
  const expiries = new Map<string, number>();
  const purge = (time: number): void => {
    for (const [key, expiry] of expiries) {
      if (expiry > time) break;
      expiries.delete(key);
    }
  };
  return {
    seen(key) {
      const time = now();
      purge(time);
      if (expiries.has(key)) return true;
      expiries.set(key, time + ttlMs);
      if (expiries.size > max) {
        const oldest = expiries.keys().next();
        if (oldest.done !== true) expiries.delete(oldest.value);
      }
      return false;
    },
    forget(key) {
      expiries.delete(key);
    },
    get size() {
      purge(now());
      return expiries.size;
    },
  };
}


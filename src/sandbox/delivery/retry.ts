/**
 * When a delivery is attempted again: at most 6 attempts, at once and then 30 s, 2 min,
 * 10 min, 1 h and 6 h after the previous failure (virtual time, clock.ts); 10 s timeout per attempt
 * (real time).
 *
 * A failure of the sandbox's own machine before anything reached the receiver
 * ({@link LOCAL_ERROR_CODES}: out of file descriptors, buffers or ports, the resolver unavailable)
 * is not the receiver's failure: it is retried after a short real-time back-off (0.1 s doubling to
 * 5 s) without using up an attempt; after {@link MAX_LOCAL_RETRIES} such retries in a row it counts
 * as a failed attempt, so nothing loops forever.
 */
import type { ClockTimer, VirtualClock } from '../clock.js';
import { ShardedMap } from '../sharded-map.js';

/** Delays after the 1st..5th failed attempt, in ms. */
const RETRY_DELAYS_MS: readonly number[] = Object.freeze([
  30_000,
  2 * 60_000,
  10 * 60_000,
  60 * 60_000,
  6 * 60 * 60_000,
]);
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
export const ATTEMPT_TIMEOUT_MS = 10_000;
/**
 * Errors of the sandbox's own machine, raised before a request reaches the receiver: they say
 * nothing about the receiver. ECONNREFUSED, ENOTFOUND, timeouts and resets are the receiver's (it is
 * down, its name does not exist, it is slow) and count as attempts.
 */
const LOCAL_ERROR_CODES: ReadonlySet<string> = new Set([
  'EMFILE',
  'ENFILE',
  'ENOBUFS',
  'ENOMEM',
  'EADDRNOTAVAIL',
  'EAI_AGAIN',
]);
/** Local failures in a row retried without counting an attempt. */
export const MAX_LOCAL_RETRIES = 8;
const LOCAL_RETRY_BASE_MS = 100;
const LOCAL_RETRY_MAX_MS = 5_000;

/** The timers of the deliveries waiting to be attempted again, in virtual and in real time. */
export class RetrySchedule {
  private readonly timers = new ShardedMap<number, ClockTimer>();
  private readonly localTimers = new ShardedMap<number, NodeJS.Timeout>();
  private readonly localTries = new ShardedMap<number, number>();
  private readonly localDelay: { base: number; max: number };
  private lastLocalWarning = 0;

  /** `start` attempts the delivery of a sequence number when its retry is due. */
  constructor(
    private readonly clock: VirtualClock,
    private readonly start: (seq: number) => void,
    private readonly log: (level: 'info' | 'warn', message: string) => void,
    localDelay: { base: number; max: number } | undefined,
  ) {
    this.localDelay = localDelay ?? { base: LOCAL_RETRY_BASE_MS, max: LOCAL_RETRY_MAX_MS };
  }

  /** When the attempt after failed attempt number `attempt` is due (virtual ms). */
  nextAttemptAt(attempt: number): number {
    return this.clock.now() + (RETRY_DELAYS_MS[attempt - 1] ?? 0);
  }

  /** Attempts the delivery `seq` again at virtual time `at`. */
  schedule(seq: number, at: number): void {
    this.timers.set(seq, this.clock.schedule(at, this.retryDue, seq));
  }

  /** An attempt of `seq` starts: its retry timer, if any, is spent. */
  started(seq: number): void {
    this.timers.delete(seq);
  }

  /**
   * An attempt of `seq` failed with the system error `code`. An error of the sandbox's machine is
   * tried again after a real-time back-off without counting an attempt (`retrying`), up to
   * {@link MAX_LOCAL_RETRIES} times in a row, and then counts (`counted`); any other is the
   * receiver's (undefined).
   */
  localFailure(seq: number, code: string | undefined): 'retrying' | 'counted' | undefined {
    if (code === undefined || !LOCAL_ERROR_CODES.has(code)) return undefined;
    const tries = (this.localTries.get(seq) ?? 0) + 1;
    if (tries > MAX_LOCAL_RETRIES) return 'counted';
    this.localTries.set(seq, tries);
    const delay = Math.min(this.localDelay.max, this.localDelay.base * 2 ** (tries - 1));
    const timer = setTimeout(() => {
      this.localTimers.delete(seq);
      this.start(seq);
    }, delay * (0.5 + Math.random() / 2));
    timer.unref();
    this.localTimers.set(seq, timer);
    const now = Date.now();
    if (now - this.lastLocalWarning > 10_000) {
      this.lastLocalWarning = now;
      this.log('warn', `webhook attempts fail on this machine (${code}); retrying them without counting an attempt`);
    }
    return 'retrying';
  }

  /** An attempt of `seq` counted: its run of local failures, if any, ends. */
  counted(seq: number): void {
    this.localTries.delete(seq);
  }

  /** Cancels every retry. */
  stop(): void {
    for (const timer of this.timers.values()) timer.cancel();
    this.timers.clear();
    for (const timer of this.localTimers.values()) clearTimeout(timer);
    this.localTimers.clear();
  }

  /** The timer of every retry: one function, called with the delivery's sequence number. */
  private readonly retryDue = (seq: number): void => this.start(seq);
}

/** The system error code behind a failed fetch (`EMFILE`, `ECONNREFUSED`, ...), if any. */
export function errorCode(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  let current: unknown = error;
  while (typeof current === 'object' && current !== null && !seen.has(current)) {
    seen.add(current);
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
    const errors = (current as { errors?: unknown }).errors;
    if (Array.isArray(errors) && errors.length > 0) {
      const inner = errorCode(errors[0]);
      if (inner !== undefined) return inner;
    }
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Why an attempt got no HTTP status, in words. */
export function describeFetchError(error: unknown, shuttingDown: boolean): string {
  if (shuttingDown) return 'the sandbox stopped';
  if (error instanceof Error) {
    if (error.name === 'TimeoutError') return `no answer within ${ATTEMPT_TIMEOUT_MS} ms`;
    // fetch: TypeError('fetch failed') caused by the system error; node:http: the system error.
    const cause = (error as { cause?: unknown }).cause;
    const source = cause instanceof Error ? cause : error;
    const code = (source as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${source.message}` : source.message;
  }
  return String(error);
}

/**
 * Webhook delivery (D23), shared by every family: at most 6 attempts, at once and then 30 s,
 * 2 min, 10 min, 1 h and 6 h after the previous failure (virtual time, see clock.ts); 10 s
 * timeout per attempt (real time); in order per ordering key (a later event waits until the
 * earlier one was delivered or abandoned). Success is HTTP 200 for the SDK flow and any 2xx or
 * 3xx for the web and gateway webhooks (a redirect is not followed; {@link isReceived}). Every
 * attempt is recorded.
 *
 * Deliveries only ever go to the URL given to `enqueue`: the partner's or merchant's own receiver.
 */
import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import type { ClockTimer, VirtualClock } from './clock.js';
import type { Collection, Store } from './store.js';

/** Delays after the 1st..5th failed attempt, in ms (D23). */
export const RETRY_DELAYS_MS: readonly number[] = Object.freeze([
  30_000,
  2 * 60_000,
  10 * 60_000,
  60 * 60_000,
  6 * 60 * 60_000,
]);
export const MAX_ATTEMPTS = RETRY_DELAYS_MS.length + 1;
export const ATTEMPT_TIMEOUT_MS = 10_000;

export type DeliveryStatus = 'pending' | 'delivered' | 'abandoned' | 'not_sent';

/**
 * Which answers of the receiver count as received: exactly 200 (the SDK webhook, as described),
 * any 2xx, or any 2xx or 3xx (the web and gateway webhooks: receivers in the field answer a
 * redirect, which is not followed).
 */
export type SuccessStatus = 200 | '2xx' | '2xx-3xx';

/** Whether a receiver's HTTP status counts as received under `successStatus`. */
export function isReceived(successStatus: SuccessStatus, statusCode: number): boolean {
  if (successStatus === 200) return statusCode === 200;
  if (successStatus === '2xx') return statusCode >= 200 && statusCode < 300;
  return statusCode >= 200 && statusCode < 400;
}

export interface DeliveryAttempt {
  /** 1 for the first attempt. */
  attempt: number;
  /** When it started (virtual time, RFC 3339). */
  at: string;
  /** How long it took, real milliseconds. */
  durationMs: number;
  /** The receiver's HTTP status, when it answered. */
  statusCode?: number;
  /** Why no HTTP status was received (timeout, connection refused, ...). */
  error?: string;
}

export interface Delivery {
  id: string;
  /** Sent as `X-Event-Id`; the same on every attempt. */
  eventId: string;
  /** `sdk`, `web`, `gateway`. */
  family: string;
  /** The webhook's name in the family's document, e.g. `transactionStatus`. */
  event: string;
  /** The transaction the event is about, for filtering. */
  transactionId: string | undefined;
  /** `null` when no webhook URL is configured (status `not_sent`). */
  url: string | null;
  /** The exact body sent. */
  body: string;
  /** The headers sent (Content-Type, X-Event-Id, X-Signature, ...). */
  headers: Record<string, string>;
  orderingKey: string;
  successStatus: SuccessStatus;
  status: DeliveryStatus;
  /** Why it was not sent (status `not_sent`). */
  reason?: string;
  attempts: DeliveryAttempt[];
  createdAt: string;
  /** When the next attempt is due (virtual time), while pending and waiting. */
  nextAttemptAt: string | null;
  /** When it was delivered or abandoned. */
  completedAt: string | null;
}

export interface EnqueueInput {
  /** The receiver; `undefined`/`null` records the event as `not_sent`. */
  url: string | null | undefined;
  /** The exact body to send (sign exactly this string). */
  body: string;
  /** Extra headers, typically `X-Signature`. `Content-Type` and `X-Event-Id` are set here. */
  headers: Record<string, string>;
  /** Events with the same key are delivered one after the other, in enqueue order. */
  orderingKey: string;
  successStatus: SuccessStatus;
  /** Default: a new unique id. */
  eventId?: string;
  family: string;
  event: string;
  transactionId?: string;
}

export interface DispatcherOptions {
  store: Store;
  clock: VirtualClock;
  log?: (level: 'info' | 'warn', message: string) => void;
  /** The fetch used for attempts (tests may replace it). */
  fetch?: typeof fetch;
}

export class DeliveryDispatcher {
  private readonly deliveries: Collection<Delivery>;
  private readonly clock: VirtualClock;
  private readonly fetchImpl: typeof fetch;
  private readonly log: (level: 'info' | 'warn', message: string) => void;
  /** Pending delivery ids per ordering key; the head is the one being attempted. */
  private readonly queues = new Map<string, string[]>();
  private readonly timers = new Map<string, ClockTimer>();
  private readonly inFlight = new Set<Promise<void>>();
  private readonly shutdown = new AbortController();
  private stopped = false;

  constructor(options: DispatcherOptions) {
    this.deliveries = options.store.collection<Delivery>('deliveries');
    this.clock = options.clock;
    this.fetchImpl = options.fetch ?? fetch;
    this.log = options.log ?? (() => undefined);
  }

  /** Records an event and starts (or queues) its delivery. Returns the record as created. */
  enqueue(input: EnqueueInput): Delivery {
    const url = input.url ?? null;
    const eventId = input.eventId ?? `evt_${randomUUID().replaceAll('-', '')}`;
    const delivery: Delivery = {
      id: `dlv_${randomUUID().replaceAll('-', '')}`,
      eventId,
      family: input.family,
      event: input.event,
      transactionId: input.transactionId,
      url,
      body: input.body,
      headers: { ...input.headers, 'Content-Type': 'application/json', 'X-Event-Id': eventId },
      orderingKey: input.orderingKey,
      successStatus: input.successStatus,
      status: url === null ? 'not_sent' : 'pending',
      attempts: [],
      createdAt: this.clock.iso(),
      nextAttemptAt: null,
      completedAt: null,
    };
    if (url === null) delivery.reason = 'No webhook URL is configured.';
    this.deliveries.set(delivery.id, delivery);
    if (url === null || this.stopped) return delivery;

    const queue = this.queues.get(input.orderingKey) ?? [];
    queue.push(delivery.id);
    this.queues.set(input.orderingKey, queue);
    if (queue.length === 1) this.startAttempt(delivery.id);
    return delivery;
  }

  /** Every delivery in creation order, optionally only those of one transaction. */
  list(filter: { transactionId?: string } = {}): Delivery[] {
    const all = this.deliveries.values();
    return filter.transactionId === undefined
      ? all
      : all.filter((delivery) => delivery.transactionId === filter.transactionId);
  }

  get(id: string): Delivery | undefined {
    return this.deliveries.get(id);
  }

  /** Resolves when no attempt is running (attempts scheduled for later do not count). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Cancels scheduled attempts and aborts running ones. Records stay readable. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers.values()) timer.cancel();
    this.timers.clear();
    this.shutdown.abort();
    await this.idle();
  }

  private startAttempt(id: string): void {
    if (this.stopped) return;
    const promise = this.attempt(id).finally(() => this.inFlight.delete(promise));
    this.inFlight.add(promise);
  }

  private async attempt(id: string): Promise<void> {
    this.timers.delete(id);
    const delivery = this.deliveries.get(id);
    if (delivery === undefined || delivery.status !== 'pending' || delivery.url === null) return;

    const number = delivery.attempts.length + 1;
    const at = this.clock.iso();
    const started = performance.now();
    let statusCode: number | undefined;
    let error: string | undefined;
    try {
      const response = await this.fetchImpl(delivery.url, {
        method: 'POST',
        headers: delivery.headers,
        body: delivery.body,
        redirect: 'manual',
        signal: AbortSignal.any([AbortSignal.timeout(ATTEMPT_TIMEOUT_MS), this.shutdown.signal]),
      });
      statusCode = response.status;
      await response.body?.cancel().catch(() => undefined);
    } catch (caught) {
      error = describeFetchError(caught, this.shutdown.signal.aborted);
    }
    const attempt: DeliveryAttempt = {
      attempt: number,
      at,
      durationMs: Math.round(performance.now() - started),
      ...(statusCode === undefined ? {} : { statusCode }),
      ...(error === undefined ? {} : { error }),
    };

    // Re-read: the record is a snapshot and the store is the source of truth.
    const current = { ...(this.deliveries.get(id) ?? delivery) };
    current.attempts = [...current.attempts, attempt];
    const succeeded = statusCode !== undefined && isReceived(current.successStatus, statusCode);

    if (succeeded) {
      current.status = 'delivered';
      current.nextAttemptAt = null;
      current.completedAt = this.clock.iso();
      this.deliveries.set(id, current);
      this.finish(current);
      return;
    }
    if (this.stopped) {
      this.deliveries.set(id, current);
      return;
    }
    if (number >= MAX_ATTEMPTS) {
      current.status = 'abandoned';
      current.nextAttemptAt = null;
      current.completedAt = this.clock.iso();
      this.deliveries.set(id, current);
      this.log('warn', `webhook ${current.eventId} to ${safeUrl(current.url)} abandoned after ${number} attempts`);
      this.finish(current);
      return;
    }
    const nextAt = this.clock.now() + (RETRY_DELAYS_MS[number - 1] ?? 0);
    current.nextAttemptAt = this.clock.iso(nextAt);
    this.deliveries.set(id, current);
    this.timers.set(id, this.clock.schedule(nextAt, () => this.startAttempt(id)));
  }

  /** Removes a completed delivery from its queue and starts the next one of the same key. */
  private finish(delivery: Delivery): void {
    const queue = this.queues.get(delivery.orderingKey);
    if (queue === undefined) return;
    const index = queue.indexOf(delivery.id);
    if (index >= 0) queue.splice(index, 1);
    const next = queue[0];
    if (next === undefined) {
      this.queues.delete(delivery.orderingKey);
    } else if (index === 0) {
      this.startAttempt(next);
    }
  }
}

function describeFetchError(error: unknown, shuttingDown: boolean): string {
  if (shuttingDown) return 'the sandbox stopped';
  if (error instanceof Error) {
    if (error.name === 'TimeoutError') return `no answer within ${ATTEMPT_TIMEOUT_MS} ms`;
    const cause = (error as { cause?: unknown }).cause;
    if (cause instanceof Error) {
      const code = (cause as { code?: unknown }).code;
      return typeof code === 'string' ? `${code}: ${cause.message}` : cause.message;
    }
    return error.message;
  }
  return String(error);
}

/** The URL without its query and credentials, for logs. */
function safeUrl(url: string | null): string {
  if (url === null) return '(none)';
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

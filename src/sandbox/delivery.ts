/**
 * Webhook delivery (D23), shared by every family: at most 6 attempts, at once and then 30 s,
 * 2 min, 10 min, 1 h and 6 h after the previous failure (virtual time, see clock.ts); 10 s
 * timeout per attempt (real time); in order per ordering key (a later event waits until the
 * earlier one was delivered or abandoned). Success is HTTP 200 for the SDK flow and any 2xx or
 * 3xx for the web and gateway webhooks (a redirect is not followed; {@link isReceived}). Every
 * attempt is recorded.
 *
 * Deliveries only ever go to the URL given to `enqueue`: the partner's or merchant's own receiver,
 * and only to targets webhook-targets.ts allows (checked again, with the name resolved, before each
 * attempt). Under load:
 * - at most `webhooks.concurrency` attempts (default 8) run at once per receiver (scheme, host and
 *   port), over at most that many sockets (webhook-client.ts); the others wait in the receiver's
 *   queue, so 1,000 events never open 1,000 sockets. The queue holds delivery ids (a yocto-queue
 *   of strings), not a closure and a promise per waiting event as a general-purpose limiter would:
 *   a receiver slower than the load keeps up to 20,000 events waiting;
 * - a receiver has at most {@link MAX_PENDING_PER_RECEIVER} undelivered events; beyond that a new
 *   event is recorded `not_sent` with the reason, so a dead receiver cannot fill the memory;
 * - a failure of the sandbox's own machine before anything reached the receiver
 *   ({@link LOCAL_ERROR_CODES}: out of file descriptors, buffers or ports, the resolver unavailable)
 *   is not the receiver's failure: it is retried after a short real-time back-off (0.1 s doubling
 *   to 5 s) without using up an attempt; after {@link MAX_LOCAL_RETRIES} such retries in a row it
 *   counts as a failed attempt, so nothing loops forever;
 * - completed deliveries beyond `retention.deliveries` (default 100,000) are forgotten, oldest
 *   first; pending ones are always kept. {@link DeliveryDispatcher.page} serves them in pages.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import Queue from 'yocto-queue';
import type { ClockTimer, VirtualClock } from './clock.js';
import { DEFAULT_RETAIN_DELIVERIES, DEFAULT_WEBHOOK_CONCURRENCY, type RetentionSettings, type WebhookSettings } from './config.js';
import type { Collection, Store } from './store.js';
import { fetchSender, httpSender, type WebhookSender } from './webhook-client.js';
import { safeUrl, WebhookTargets, type ListeningAddress, type TargetProblem } from './webhook-targets.js';
import { upperBound } from './sorted.js';

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
/** Undelivered events one receiver may have; later ones are recorded `not_sent`. */
export const MAX_PENDING_PER_RECEIVER = 20_000;
/**
 * Errors of the sandbox's own machine, raised before a request reaches the receiver: they say
 * nothing about the receiver. ECONNREFUSED, ENOTFOUND, timeouts and resets are the receiver's (it is
 * down, its name does not exist, it is slow) and count as attempts.
 */
export const LOCAL_ERROR_CODES: ReadonlySet<string> = new Set([
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
/** The default and the largest page of {@link DeliveryDispatcher.page}. */
export const DEFAULT_PAGE_LIMIT = 100;
export const MAX_PAGE_LIMIT = 1000;
/** Records looked at for one page at most; a page may then be short, with a `nextCursor`. */
const MAX_SCAN = 20_000;

export type DeliveryStatus = 'pending' | 'delivered' | 'abandoned' | 'not_sent';
export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ['pending', 'delivered', 'abandoned', 'not_sent'];

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
  /** Webhook settings and retention (config.ts); default: the documented defaults. */
  config?: { webhooks?: Partial<WebhookSettings>; retention?: Partial<RetentionSettings> };
  /** The target policy (default: one from `config.webhooks.allowAnyTarget`); tests give their own. */
  targets?: WebhookTargets;
  /** Undelivered events per receiver, at most (default {@link MAX_PENDING_PER_RECEIVER}). */
  maxPendingPerReceiver?: number;
  /** The back-off of local failures, real ms (default 100 doubling to 5,000). */
  localRetryDelayMs?: { base: number; max: number };
}

/** A page of deliveries, in creation order. */
export interface DeliveryQuery {
  transactionId?: string | undefined;
  family?: string | undefined;
  status?: DeliveryStatus | undefined;
  /** 1 to {@link MAX_PAGE_LIMIT}; default {@link DEFAULT_PAGE_LIMIT}. */
  limit?: number | undefined;
  /** `nextCursor` of the previous page, with the same filters. */
  after?: string | undefined;
}

export interface DeliveryPage {
  deliveries: Delivery[];
  /** Pass as `after` for the next page; null when there is none. */
  nextCursor: string | null;
}

/** A query {@link DeliveryDispatcher.page} cannot answer; `field` names the parameter. */
export class DeliveryQueryError extends Error {
  override readonly name = 'DeliveryQueryError';
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

interface Completed {
  id: string;
  seq: number;
  transactionId: string | undefined;
}

export class DeliveryDispatcher {
  private readonly deliveries: Collection<Delivery>;
  private readonly clock: VirtualClock;
  private readonly send: WebhookSender;
  /** Closes the connection pools of the default sender. */
  private readonly closeSender: () => void;
  private readonly log: (level: 'info' | 'warn', message: string) => void;
  /** Which receivers are allowed (also used by the families to check URLs they accept). */
  readonly targets: WebhookTargets;
  private readonly concurrency: number;
  private readonly retain: number;
  /** Pending delivery ids per ordering key; the head is the one being attempted. */
  private readonly queues = new Map<string, string[]>();
  private readonly timers = new Map<string, ClockTimer>();
  private readonly localTimers = new Map<string, NodeJS.Timeout>();
  private readonly localTries = new Map<string, number>();
  private readonly inFlight = new Set<Promise<void>>();
  /** Per receiver: attempts running, and the ids of the deliveries waiting for a turn. */
  private readonly receivers = new Map<string, { active: number; waiting: Queue<string> }>();
  private readonly pendingPerReceiver = new Map<string, number>();
  private readonly shutdown = new AbortController();
  private stopped = false;
  // Creation order: parallel arrays of sequence numbers (ascending) and ids; forgotten deliveries
  // stay until the arrays are compacted.
  private nextSeq = 1;
  private orderSeqs: number[] = [];
  private orderIds: string[] = [];
  private forgotten = 0;
  /** Sequence numbers of the deliveries of each transaction id. */
  private readonly byTransaction = new Map<string, number[]>();
  private readonly completed = new Queue<Completed>();
  private newId(): string {
    return `${this.idPrefix}${(this.idCounter++).toString(16).padStart(12, '0')}`;
  }

  /** Attempts asked for during a sliced advance, started when it ends. */
  private deferred: string[] = [];

  /** Sequence numbers of pending deliveries (for {@link retire}). */
  private readonly seqOfPending = new Map<string, number>();
  private readonly cursorKey = randomBytes(32);
  private lastLocalWarning = 0;
  /** Ids: 20 random hex digits of this process, then a counter (12 hex digits): unique across restarts. */
  private readonly idPrefix = randomBytes(10).toString('hex');
  private idCounter = 0;
  private readonly localDelay: { base: number; max: number };
  private readonly maxPending: number;

  constructor(options: DispatcherOptions) {
    this.deliveries = options.store.collection<Delivery>('deliveries');
    this.clock = options.clock;
    this.log = options.log ?? (() => undefined);
    this.concurrency = options.config?.webhooks?.concurrency ?? DEFAULT_WEBHOOK_CONCURRENCY;
    if (options.fetch !== undefined) {
      this.send = fetchSender(options.fetch);
      this.closeSender = () => undefined;
    } else {
      const sender = httpSender(this.concurrency);
      this.send = sender;
      this.closeSender = () => sender.close();
    }
    this.retain = options.config?.retention?.deliveries ?? DEFAULT_RETAIN_DELIVERIES;
    // Every running attempt listens to it (at most `concurrency` per receiver).
    setMaxListeners(0, this.shutdown.signal);
    this.targets = options.targets ?? new WebhookTargets({ allowAny: options.config?.webhooks?.allowAnyTarget ?? false });
    this.localDelay = options.localRetryDelayMs ?? { base: LOCAL_RETRY_BASE_MS, max: LOCAL_RETRY_MAX_MS };
    this.maxPending = options.maxPendingPerReceiver ?? MAX_PENDING_PER_RECEIVER;
  }

  /** Tells the dispatcher where the sandbox listens, so that webhooks to itself are refused. */
  listeningAt(address: ListeningAddress): void {
    this.targets.listeningAt(address);
  }

  /** What is wrong with a webhook URL a request gives, or undefined when it may be used. */
  targetProblem(url: string): TargetProblem | undefined {
    return this.targets.problem(url);
  }

  /** Records an event and starts (or queues) its delivery. Returns the record as created. */
  enqueue(input: EnqueueInput): Delivery {
    const url = input.url ?? null;
    const number = this.newId();
    const eventId = input.eventId ?? `evt_${number}`;
    const receiver = url === null ? undefined : receiverOf(url);
    const waiting = receiver === undefined ? 0 : (this.pendingPerReceiver.get(receiver) ?? 0);
    const full = waiting >= this.maxPending;
    const delivery: Delivery = {
      id: `dlv_${number}`,
      eventId,
      family: input.family,
      event: input.event,
      transactionId: input.transactionId,
      url,
      body: input.body,
      headers: { ...input.headers, 'Content-Type': 'application/json', 'X-Event-Id': eventId },
      orderingKey: input.orderingKey,
      successStatus: input.successStatus,
      status: url === null || full ? 'not_sent' : 'pending',
      attempts: [],
      createdAt: this.clock.iso(),
      nextAttemptAt: null,
      completedAt: null,
    };
    if (url === null) delivery.reason = 'No webhook URL is configured.';
    else if (full) {
      delivery.reason = `The receiver has ${this.maxPending} undelivered events waiting; later events are not sent until it catches up.`;
    }
    this.deliveries.set(delivery.id, delivery);
    this.notifyEnqueued(delivery);
    const seq = this.nextSeq++;
    this.orderSeqs.push(seq);
    this.orderIds.push(delivery.id);
    if (input.transactionId !== undefined) {
      const seqs = this.byTransaction.get(input.transactionId);
      if (seqs === undefined) this.byTransaction.set(input.transactionId, [seq]);
      else seqs.push(seq);
    }
    if (delivery.status === 'not_sent') {
      this.retire({ id: delivery.id, seq, transactionId: input.transactionId });
    } else {
      this.pendingPerReceiver.set(receiver!, waiting + 1);
      this.seqOfPending.set(delivery.id, seq);
      if (!this.stopped) {
        const queue = this.queues.get(input.orderingKey) ?? [];
        queue.push(delivery.id);
        this.queues.set(input.orderingKey, queue);
        if (queue.length === 1) this.startAttempt(delivery.id);
      }
    }
    return delivery;
  }

  // -------------------------------------------------------------------------------------------
  // Subscribers: the live event stream (webhook-stream.ts, GET /sandbox/webhooks/stream).

  private readonly enqueueListeners = new Set<(delivery: Delivery) => void>();

  /**
   * Calls `listener` with every delivery as it is recorded, sent or `not_sent`; returns the function
   * that removes it. The listener must not change the record; what it throws is logged and ignored.
   */
  onEnqueue(listener: (delivery: Delivery) => void): () => void {
    this.enqueueListeners.add(listener);
    return () => void this.enqueueListeners.delete(listener);
  }

  private notifyEnqueued(delivery: Delivery): void {
    for (const listener of this.enqueueListeners) {
      try {
        listener(delivery);
      } catch (error) {
        this.log('warn', `a webhook stream listener failed: ${error instanceof Error ? error.message : String(error)}`);
      }
    }
  }

  // -------------------------------------------------------------------------------------------


  /**
   * One page of deliveries in creation order, filtered by transaction id, family and status. A
   * page may hold fewer than `limit` deliveries while `nextCursor` is not null (at most 20,000
   * records are looked at per page). Throws {@link DeliveryQueryError} for a bad limit or cursor.
   */
  page(query: DeliveryQuery = {}): DeliveryPage {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
      throw new DeliveryQueryError('limit', `limit must be a whole number from 1 to ${MAX_PAGE_LIMIT}.`);
    }
    const scope = `${query.transactionId ?? ''}\u0000${query.family ?? ''}\u0000${query.status ?? ''}`;
    const afterSeq = query.after === undefined ? 0 : this.readCursor(query.after, scope);
    const matches = (delivery: Delivery) =>
      (query.family === undefined || delivery.family === query.family) &&
      (query.status === undefined || delivery.status === query.status) &&
      (query.transactionId === undefined || delivery.transactionId === query.transactionId);

    // The candidates: one transaction's deliveries, or all of them, from just after the cursor.
    const seqs = query.transactionId === undefined ? this.orderSeqs : (this.byTransaction.get(query.transactionId) ?? []);
    const found: Delivery[] = [];
    let lastSeq = afterSeq;
    let scanned = 0;
    let index = upperBound(seqs, afterSeq);
    for (; index < seqs.length && found.length <= limit && scanned < MAX_SCAN; index++, scanned++) {
      const seq = seqs[index]!;
      const id = query.transactionId === undefined ? this.orderIds[index]! : this.idOf(seq);
      const delivery = id === undefined ? undefined : this.deliveries.get(id);
      if (delivery !== undefined && matches(delivery)) {
        if (found.length === limit) break;
        found.push(delivery);
      }
      lastSeq = seq;
    }
    const more = index < seqs.length;
    return { deliveries: found, nextCursor: more ? this.writeCursor(lastSeq, scope) : null };
  }

  /**
   * Every retained delivery in creation order, optionally only those of one transaction (for code
   * that holds the sandbox in-process; at most the retention limit plus the pending ones).
   */
  list(filter: { transactionId?: string } = {}): Delivery[] {
    const all: Delivery[] = [];
    let after: string | undefined;
    do {
      const page = this.page({ transactionId: filter.transactionId, limit: MAX_PAGE_LIMIT, after });
      all.push(...page.deliveries);
      after = page.nextCursor ?? undefined;
    } while (after !== undefined);
    return all;
  }

  get(id: string): Delivery | undefined {
    return this.deliveries.get(id);
  }

  /** Deliveries not yet delivered or abandoned. */
  get pendingCount(): number {
    return this.seqOfPending.size;
  }

  /** Deliveries held (the pending ones and the retained completed ones). */
  get size(): number {
    return this.deliveries.size;
  }

  /** Resolves when no attempt is running or queued (attempts scheduled for later do not count). */
  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Cancels scheduled attempts and aborts running ones. Records stay readable. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers.values()) timer.cancel();
    this.timers.clear();
    for (const timer of this.localTimers.values()) clearTimeout(timer);
    this.localTimers.clear();
    for (const receiver of this.receivers.values()) receiver.waiting.clear();
    this.shutdown.abort();
    await this.idle();
    this.closeSender();
  }

  /**
   * Runs the attempt now if its receiver has a free turn, else queues it. During a sliced clock
   * advance attempts wait until it finished: an advance that expires 100,000 transactions then
   * spends its time on them, not on sending their webhooks in between.
   */
  private startAttempt(id: string): void {
    if (this.stopped) return;
    if (this.clock.advancingInSlices) {
      if (this.deferred.length === 0) {
        void this.clock.whenAdvanced().then(() => {
          const ids = this.deferred;
          this.deferred = [];
          for (const deferredId of ids) this.startAttempt(deferredId);
        });
      }
      this.deferred.push(id);
      return;
    }
    const url = this.deliveries.get(id)?.url;
    if (url === null || url === undefined) return;
    const key = receiverOf(url);
    let receiver = this.receivers.get(key);
    if (receiver === undefined) {
      receiver = { active: 0, waiting: new Queue<string>() };
      this.receivers.set(key, receiver);
    }
    if (receiver.active < this.concurrency) this.run(key, receiver, id);
    else receiver.waiting.enqueue(id);
  }

  private run(key: string, receiver: { active: number; waiting: Queue<string> }, id: string): void {
    receiver.active++;
    const running: Promise<void> = this.attempt(id).finally(() => {
      this.inFlight.delete(running);
      receiver.active--;
      // The next one starts before this promise settles, so idle() sees it running.
      const next = this.stopped ? undefined : receiver.waiting.dequeue();
      if (next !== undefined) this.run(key, receiver, next);
      else if (receiver.active === 0 && receiver.waiting.size === 0) this.receivers.delete(key);
    });
    this.inFlight.add(running);
  }

  private async attempt(id: string): Promise<void> {
    this.timers.delete(id);
    const delivery = this.deliveries.get(id);
    if (this.stopped || delivery === undefined || delivery.status !== 'pending' || delivery.url === null) return;

    const number = delivery.attempts.length + 1;
    const at = this.clock.iso();
    const started = performance.now();
    let statusCode: number | undefined;
    let error: string | undefined;
    let refused = false;
    const problem = await this.targets.resolvedProblem(delivery.url);
    if (problem !== undefined) {
      refused = true;
      error = `refused by the sandbox: the webhook URL ${problem.message}`;
    } else {
      try {
        statusCode = await this.send({
          url: delivery.url,
          headers: delivery.headers,
          body: delivery.body,
          timeoutMs: ATTEMPT_TIMEOUT_MS,
          signal: this.shutdown.signal,
        });
      } catch (caught) {
        const code = errorCode(caught);
        if (code !== undefined && LOCAL_ERROR_CODES.has(code) && !this.stopped) {
          const tries = (this.localTries.get(id) ?? 0) + 1;
          if (tries <= MAX_LOCAL_RETRIES) {
            this.retryLocally(id, tries, code);
            return;
          }
          error = `${describeFetchError(caught, false)} (an error of the sandbox's machine, counted after ${MAX_LOCAL_RETRIES} retries)`;
        } else {
          error = describeFetchError(caught, this.shutdown.signal.aborted);
        }
      }
    }
    this.localTries.delete(id);
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
    if (refused || number >= MAX_ATTEMPTS) {
      current.status = 'abandoned';
      current.nextAttemptAt = null;
      current.completedAt = this.clock.iso();
      this.deliveries.set(id, current);
      this.log(
        'warn',
        refused
          ? `webhook ${current.eventId} to ${safeUrl(current.url)} refused: the URL ${problem!.message}`
          : `webhook ${current.eventId} to ${safeUrl(current.url)} abandoned after ${number} attempts`,
      );
      this.finish(current);
      return;
    }
    const nextAt = this.clock.now() + (RETRY_DELAYS_MS[number - 1] ?? 0);
    current.nextAttemptAt = this.clock.iso(nextAt);
    this.deliveries.set(id, current);
    this.timers.set(id, this.clock.schedule(nextAt, () => this.startAttempt(id)));
  }

  /** A local failure: tries again after a real-time back-off, without counting an attempt. */
  private retryLocally(id: string, tries: number, code: string): void {
    this.localTries.set(id, tries);
    const delay = Math.min(this.localDelay.max, this.localDelay.base * 2 ** (tries - 1));
    const timer = setTimeout(() => {
      this.localTimers.delete(id);
      this.startAttempt(id);
    }, delay * (0.5 + Math.random() / 2));
    timer.unref();
    this.localTimers.set(id, timer);
    const now = Date.now();
    if (now - this.lastLocalWarning > 10_000) {
      this.lastLocalWarning = now;
      this.log('warn', `webhook attempts fail on this machine (${code}); retrying them without counting an attempt`);
    }
  }

  /** Removes a completed delivery from its queue and starts the next one of the same key. */
  private finish(delivery: Delivery): void {
    const receiver = delivery.url === null ? undefined : receiverOf(delivery.url);
    if (receiver !== undefined) {
      const left = (this.pendingPerReceiver.get(receiver) ?? 1) - 1;
      if (left <= 0) this.pendingPerReceiver.delete(receiver);
      else this.pendingPerReceiver.set(receiver, left);
    }
    const seq = this.seqOfPending.get(delivery.id);
    this.seqOfPending.delete(delivery.id);
    if (seq !== undefined) this.retire({ id: delivery.id, seq, transactionId: delivery.transactionId });

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

  /** A delivery is complete: it joins the retained ones, and the oldest beyond the limit go. */
  private retire(entry: Completed): void {
    this.completed.enqueue(entry);
    while (this.completed.size > this.retain) {
      const oldest = this.completed.dequeue()!;
      this.deliveries.delete(oldest.id);
      this.forgotten++;
      if (oldest.transactionId !== undefined) {
        const seqs = this.byTransaction.get(oldest.transactionId);
        if (seqs !== undefined) {
          const at = seqs.indexOf(oldest.seq);
          if (at >= 0) seqs.splice(at, 1);
          if (seqs.length === 0) this.byTransaction.delete(oldest.transactionId);
        }
      }
    }
    if (this.forgotten > 1024 && this.forgotten * 2 > this.orderIds.length) this.compact();
  }

  private compact(): void {
    const seqs: number[] = [];
    const ids: string[] = [];
    for (let index = 0; index < this.orderIds.length; index++) {
      const id = this.orderIds[index]!;
      if (!this.deliveries.has(id)) continue;
      seqs.push(this.orderSeqs[index]!);
      ids.push(id);
    }
    this.orderSeqs = seqs;
    this.orderIds = ids;
    this.forgotten = 0;
  }

  private idOf(seq: number): string | undefined {
    const index = upperBound(this.orderSeqs, seq) - 1;
    return index >= 0 && this.orderSeqs[index] === seq ? this.orderIds[index] : undefined;
  }

  private mac(seq: number, scope: string): Buffer {
    return createHmac('sha256', this.cursorKey).update(`${seq}\u0000${scope}`).digest().subarray(0, 12);
  }

  private writeCursor(seq: number, scope: string): string {
    return Buffer.from(`${seq}.${this.mac(seq, scope).toString('base64url')}`, 'utf8').toString('base64url');
  }

  private readCursor(cursor: string, scope: string): number {
    const invalid = () =>
      new DeliveryQueryError(
        'after',
        'after is not a cursor this sandbox issued for these filters; pass nextCursor of the previous page unchanged, with the same filters.',
      );
    const text = Buffer.from(cursor, 'base64url').toString('utf8');
    const match = /^([0-9]{1,15})\.([A-Za-z0-9_-]{16})$/.exec(text);
    if (match === null || Buffer.from(text, 'utf8').toString('base64url') !== cursor) throw invalid();
    const seq = Number(match[1]);
    const expected = this.mac(seq, scope);
    const given = Buffer.from(match[2]!, 'base64url');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw invalid();
    return seq;
  }
}


const receiverCache = new Map<string, string>();

/** The receiver a URL names: scheme, host and port (the few URLs in use are remembered). */
function receiverOf(url: string): string {
  let receiver = receiverCache.get(url);
  if (receiver === undefined) {
    try {
      receiver = new URL(url).origin;
    } catch {
      receiver = url;
    }
    if (receiverCache.size >= 1000) receiverCache.clear();
    receiverCache.set(url, receiver);
  }
  return receiver;
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

function describeFetchError(error: unknown, shuttingDown: boolean): string {
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

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
 *   queue, so 1,000 events never open 1,000 sockets. The queue holds sequence numbers (a
 *   yocto-queue of numbers), not a closure and a promise per waiting event as a general-purpose limiter would:
 *   a receiver slower than the load keeps up to 20,000 events waiting;
 * - a receiver has at most {@link MAX_PENDING_PER_RECEIVER} undelivered events; beyond that a new
 *   event is recorded `not_sent` with the reason, so a dead receiver cannot fill the memory;
 * - a failure of the sandbox's own machine before anything reached the receiver
 *   ({@link LOCAL_ERROR_CODES}: out of file descriptors, buffers or ports, the resolver unavailable)
 *   is not the receiver's failure: it is retried after a short real-time back-off (0.1 s doubling
 *   to 5 s) without using up an attempt; after {@link MAX_LOCAL_RETRIES} such retries in a row it
 *   counts as a failed attempt, so nothing loops forever;
 * - completed deliveries beyond `retention.deliveries` (default 100,000) are forgotten, oldest
 *   first (after a sliced clock advance for those it completed, trimming.ts); pending ones are
 *   always kept. {@link DeliveryDispatcher.page} serves them in pages.
 *
 * What the dispatcher keeps of a delivery is what it takes to make the request again, not the request
 * ({@link StoredDelivery}): the body of an event whose body follows from its transaction and status
 * is made from a registered template, and `X-Signature` is computed from the body and the signing
 * key (a reference to the partner's key or the merchant's password, not a copy) when the request is
 * sent or the delivery is read. Times are milliseconds, records are keyed by a sequence number and
 * the ids follow from it. The views ({@link Delivery}) are built when read, a page at a time.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import Denque from 'denque';
import Queue from 'yocto-queue';
import type { ClockTimer, VirtualClock } from './clock.js';
import { DEFAULT_PAGE_BYTES, DEFAULT_RETAIN_DELIVERIES, DEFAULT_WEBHOOK_CONCURRENCY, DEFAULT_WEBHOOK_MAX_SOCKETS, type LimitSettings, type RetentionSettings, type WebhookSettings } from './config.js';
import { sdkSignature } from '../signature.js';
import { fetchSender, httpSender, type WebhookSender } from './webhook-client.js';
import { safeUrl, WebhookTargets, type ListeningAddress, type TargetProblem } from './webhook-targets.js';
import { upperBound } from './sorted.js';
import { Trimming } from './trimming.js';

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
/** What a delivery's view takes besides its body (ids, URL, headers, times), and each attempt, about. */
const VIEW_OVERHEAD_BYTES = 1024;
const ATTEMPT_VIEW_BYTES = 160;

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
  /**
   * The exact body to send, or the template that makes it ({@link DeliveryDispatcher.template}):
   * for an event whose body follows from a little data, so that the record does not keep the text.
   */
  body: string | TemplatedBody;
  /**
   * The key of `X-Signature: base64(SHA-256(body + key))` (D23), computed when the request is sent
   * or read: pass the partner's key or the merchant's password itself (the record keeps a
   * reference, not a copy). Without it no `X-Signature` is sent, unless `headers` has one.
   */
  signingKey?: string | undefined;
  /**
   * Extra headers, sent as given. `X-Event-Id` is set here, and `Content-Type` to
   * `application/json` unless given.
   */
  headers?: Record<string, string>;
  /**
   * Events with the same key are delivered one after the other, in enqueue order. Give the key, or
   * the scope of a key that ends with the transaction id: `orderingScope + transactionId`.
   */
  orderingKey?: string;
  orderingScope?: string;
  successStatus: SuccessStatus;
  /** Default: a new unique id. */
  eventId?: string;
  family: string;
  event: string;
  transactionId?: string;
}

/** A body made by a registered template from `data` (and the delivery's transaction id). */
export interface TemplatedBody {
  template: string;
  data: string;
}

/** Makes the exact body of an event from its transaction id and data; the same every time. */
export type BodyTemplate = (transactionId: string | undefined, data: string) => string;

/** One attempt as the store keeps it. */
interface StoredAttempt {
  /** When it started: virtual milliseconds after the delivery was created. */
  after: number;
  durationMs: number;
  statusCode: number | undefined;
  error: string | undefined;
}

/**
 * What the dispatcher keeps of a delivery, keyed by its sequence number: the view
 * ({@link Delivery}) is made from it when read. The id is `dlv_<20 hex digits of the process><the
 * sequence number - 1, 12 hex digits>`, made only for a view; the event id the same with `evt_`
 * unless one was given.
 */
interface StoredDelivery {
  readonly seq: number;
  /** Only when given to `enqueue`. */
  readonly eventId: string | undefined;
  readonly family: string;
  readonly event: string;
  readonly transactionId: string | undefined;
  readonly url: string | null;
  /** The body, or the template that makes it from `data`. */
  readonly body: string | undefined;
  readonly template: string | undefined;
  readonly data: string | undefined;
  readonly signingKey: string | undefined;
  readonly headers: Record<string, string> | undefined;
  /**
   * The ordering key is `orderingScope + transactionId` when it ends with the transaction id (one
   * string per scope, such as `sdk:partner_test:`, shared by every record), else `orderingKey`.
   */
  readonly orderingScope: string | undefined;
  readonly orderingKey: string | undefined;
  readonly successStatus: SuccessStatus;
  readonly status: DeliveryStatus;
  readonly reason: string | undefined;
  readonly attempts: StoredAttempt[];
  /**
   * Virtual milliseconds after the dispatcher's start (`epoch`): small whole numbers, which V8 keeps
   * in the object itself, where epoch milliseconds take a separate 16-byte number each. (Delivery
   * records do not outlive their dispatcher: its indexes are in memory.)
   */
  readonly createdAt: number;
  readonly nextAttemptAt: number | null;
  readonly completedAt: number | null;
}

export interface DispatcherOptions {
  clock: VirtualClock;
  log?: (level: 'info' | 'warn', message: string) => void;
  /** The fetch used for attempts (tests may replace it). */
  fetch?: typeof fetch;
  /** Webhook settings and retention (config.ts); default: the documented defaults. */
  config?: { webhooks?: Partial<WebhookSettings>; retention?: Partial<RetentionSettings>; limits?: Partial<Pick<LimitSettings, 'pageBytes'>> };
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

/** The attempts of a delivery not attempted yet: one frozen empty list shared by all. */
const NO_ATTEMPTS: StoredAttempt[] = Object.freeze([]) as unknown as StoredAttempt[];

/** Sequence numbers of one transaction's deliveries: one number, or several in order. */
type SeqList = number | number[];

export class DeliveryDispatcher {
  /**
   * The deliveries held, by sequence number. Small-integer keys, not the id strings: the id is made
   * only for a view, so recording and forgetting an event hashes no string (D62).
   */
  private readonly deliveries = new Map<number, StoredDelivery>();
  private readonly clock: VirtualClock;
  private readonly send: WebhookSender;
  /** Closes the connection pools of the default sender. */
  private readonly closeSender: () => void;
  private readonly log: (level: 'info' | 'warn', message: string) => void;
  /** Which receivers are allowed (also used by the families to check URLs they accept). */
  readonly targets: WebhookTargets;
  private readonly concurrency: number;
  private readonly retain: number;
  /** The bytes of one page of {@link page}, about (D67). */
  private readonly pageBytes: number;
  private readonly templates = new Map<string, BodyTemplate>();
  /** Pending deliveries (sequence numbers) per ordering key; the head is the one being attempted. */
  private readonly queues = new Map<string, number[]>();
  private readonly timers = new Map<number, ClockTimer>();
  private readonly localTimers = new Map<number, NodeJS.Timeout>();
  private readonly localTries = new Map<number, number>();
  private readonly inFlight = new Set<Promise<void>>();
  /** Per receiver: attempts running, and the sequence numbers of the deliveries waiting for a turn. */
  private readonly receivers = new Map<string, { active: number; waiting: Queue<number> }>();
  private readonly pendingPerReceiver = new Map<string, number>();
  private readonly shutdown = new AbortController();
  private stopped = false;
  /**
   * Creation order: the sequence numbers of the deliveries held, ascending (an id follows from its
   * number); forgotten deliveries stay until the array is compacted.
   */
  private nextSeq = 1;
  private orderSeqs: number[] = [];
  private forgotten = 0;
  /**
   * Where the deliveries held begin in {@link orderSeqs}: every number before it is forgotten. The
   * oldest completed deliveries go first, so most forgotten ones lie there, and a page from the
   * start begins here rather than scanning them (a first page must show a delivery when any is held).
   */
  private orderStart = 0;
  /**
   * Sequence numbers of the deliveries of each transaction id, for the pages filtered by one
   * (D64). Built when such a page is asked for, from the deliveries made since the last one
   * ({@link indexTransactions}), not as each event is recorded: a string-keyed map of 100,000
   * entries costs an event several cache misses to update, a quarter of an advance that expires
   * 100,000 transactions. Forgotten deliveries leave their numbers here (the pages skip them) until
   * the index holds twice as many as there are deliveries, and it is then built again.
   */
  private byTransaction = new Map<string, SeqList>();
  /** The last sequence number in {@link byTransaction}, and how many numbers it holds. */
  private indexedUpTo = 0;
  private indexedCount = 0;
  /** Sequence numbers of the completed deliveries held, in the order they completed. */
  private readonly completed = new Denque<number>();
  private readonly trimming: Trimming;

  /** Attempts asked for during a sliced advance, started when it ends. */
  private deferred: number[] = [];

  /** Sequence numbers of the pending deliveries. */
  private readonly pending = new Set<number>();
  private readonly cursorKey = randomBytes(32);
  private lastLocalWarning = 0;
  /** Ids: 20 random hex digits of this process, then a counter (12 hex digits): unique across restarts. */
  private readonly idStart = `dlv_${randomBytes(10).toString('hex')}`;
  /** The virtual time the record times count from. */
  private readonly epoch: number;
  private readonly localDelay: { base: number; max: number };
  private readonly maxPending: number;
  /** The reason of an event beyond a receiver's backlog (one string for all of them). */
  private readonly backlogReason: string;

  constructor(options: DispatcherOptions) {
    this.clock = options.clock;
    this.epoch = options.clock.now();
    this.log = options.log ?? (() => undefined);
    this.concurrency = options.config?.webhooks?.concurrency ?? DEFAULT_WEBHOOK_CONCURRENCY;
    if (options.fetch !== undefined) {
      this.send = fetchSender(options.fetch);
      this.closeSender = () => undefined;
    } else {
      const sender = httpSender({ concurrency: this.concurrency, maxSockets: options.config?.webhooks?.maxSockets ?? DEFAULT_WEBHOOK_MAX_SOCKETS });
      this.send = sender;
      this.closeSender = () => sender.close();
    }
    this.retain = options.config?.retention?.deliveries ?? DEFAULT_RETAIN_DELIVERIES;
    this.pageBytes = options.config?.limits?.pageBytes ?? DEFAULT_PAGE_BYTES;
    // Every running attempt listens to it (at most `concurrency` per receiver).
    setMaxListeners(0, this.shutdown.signal);
    this.targets = options.targets ?? new WebhookTargets({ allowAny: options.config?.webhooks?.allowAnyTarget ?? false });
    this.localDelay = options.localRetryDelayMs ?? { base: LOCAL_RETRY_BASE_MS, max: LOCAL_RETRY_MAX_MS };
    this.maxPending = options.maxPendingPerReceiver ?? MAX_PENDING_PER_RECEIVER;
    this.backlogReason = `The receiver has ${this.maxPending} undelivered events waiting; later events are not sent until it catches up.`;
    this.trimming = new Trimming(this.clock, {
      excess: () => this.completed.length - this.retain,
      trim: (count) => this.forgetOldest(count),
    });
  }

  /** Tells the dispatcher where the sandbox listens, so that webhooks to itself are refused. */
  listeningAt(address: ListeningAddress): void {
    this.targets.listeningAt(address);
  }

  /** What is wrong with a webhook URL a request gives, or undefined when it may be used. */
  targetProblem(url: string): TargetProblem | undefined {
    return this.targets.problem(url);
  }

  /**
   * Registers the template `name` for {@link TemplatedBody} bodies. It must always make the same
   * body of the same transaction id and data: the body is made again when the event is sent and
   * each time it is read.
   */
  template(name: string, make: BodyTemplate): void {
    this.templates.set(name, make);
  }

  /** Records an event and starts (or queues) its delivery. Returns the record as created. */
  enqueue(input: EnqueueInput): Delivery {
    return this.view(this.deliveries.get(this.record(input))!);
  }

  /** As {@link enqueue}, without making the view: answers the delivery's sequence number. */
  record(input: EnqueueInput): number {
    const url = input.url ?? null;
    const seq = this.nextSeq++;
    const receiver = url === null ? undefined : receiverOf(url);
    const waiting = receiver === undefined ? 0 : (this.pendingPerReceiver.get(receiver) ?? 0);
    const full = waiting >= this.maxPending;
    const templated = typeof input.body !== 'string';
    if (templated && !this.templates.has((input.body as TemplatedBody).template)) {
      throw new Error(`no webhook body template '${(input.body as TemplatedBody).template}' is registered`);
    }
    const headers = input.headers === undefined || Object.keys(input.headers).length === 0 ? undefined : Object.freeze({ ...input.headers });
    const orderingScope =
      input.orderingKey !== undefined
        ? scopeOf(input.orderingKey, input.transactionId)
        : input.orderingScope !== undefined && input.transactionId !== undefined
          ? shared(input.orderingScope)
          : undefined;
    if (input.orderingKey === undefined && orderingScope === undefined) throw new Error('a webhook event needs an orderingKey, or an orderingScope and a transactionId');
    const delivery: StoredDelivery = {
      seq,
      eventId: input.eventId,
      family: input.family,
      event: input.event,
      transactionId: input.transactionId,
      url,
      body: templated ? undefined : (input.body as string),
      template: templated ? (input.body as TemplatedBody).template : undefined,
      data: templated ? (input.body as TemplatedBody).data : undefined,
      signingKey: input.signingKey,
      headers,
      orderingScope,
      orderingKey: orderingScope === undefined ? input.orderingKey : undefined,
      successStatus: input.successStatus,
      status: url === null || full ? 'not_sent' : 'pending',
      reason: url === null ? 'No webhook URL is configured.' : full ? this.backlogReason : undefined,
      attempts: NO_ATTEMPTS,
      createdAt: this.clock.now() - this.epoch,
      nextAttemptAt: null,
      completedAt: null,
    };
    // Never changed once made (a change writes a new record, see `changed`); not frozen, which would
    // cost a call into V8's runtime per event, since nothing outside the dispatcher sees it.
    this.deliveries.set(seq, delivery);
    if (this.enqueueListeners.size > 0) this.notifyEnqueued(this.view(delivery));
    this.orderSeqs.push(seq);
    if (delivery.status === 'not_sent') {
      this.retire(seq);
    } else {
      this.pendingPerReceiver.set(receiver!, waiting + 1);
      this.pending.add(seq);
      if (!this.stopped) {
        // Made only here: most events of a mass expiry beyond the receiver's backlog are not sent.
        const orderingKey = input.orderingKey ?? orderingScope + input.transactionId!;
        const queue = this.queues.get(orderingKey);
        if (queue === undefined) {
          this.queues.set(orderingKey, [seq]);
          this.startAttempt(seq);
        } else {
          queue.push(seq);
        }
      }
    }
    return seq;
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
  // Views

  /** The exact body of a delivery. */
  private bodyOf(delivery: StoredDelivery): string {
    if (delivery.body !== undefined) return delivery.body;
    return this.templates.get(delivery.template!)!(delivery.transactionId, delivery.data!);
  }

  private eventIdOf(delivery: StoredDelivery): string {
    return delivery.eventId ?? `evt_${this.idOf(delivery.seq).slice(4)}`;
  }

  /** The headers sent with `body`: the extra ones, `X-Signature`, `Content-Type`, `X-Event-Id`. */
  private headersOf(delivery: StoredDelivery, body: string): Record<string, string> {
    const headers: Record<string, string> = { ...delivery.headers };
    if (delivery.signingKey !== undefined) headers['X-Signature'] = sdkSignature(body, delivery.signingKey);
    // JSON unless the event gives its own (the web flow's form call to notes.webhook_url, D73).
    headers['Content-Type'] ??= 'application/json';
    headers['X-Event-Id'] = this.eventIdOf(delivery);
    return headers;
  }

  private view(delivery: StoredDelivery): Delivery {
    const body = this.bodyOf(delivery);
    const iso = (at: number | null) => (at === null ? null : this.clock.iso(this.epoch + at));
    const view: Delivery = {
      id: this.idOf(delivery.seq),
      eventId: this.eventIdOf(delivery),
      family: delivery.family,
      event: delivery.event,
      transactionId: delivery.transactionId,
      url: delivery.url,
      body,
      headers: this.headersOf(delivery, body),
      orderingKey: orderingKeyOf(delivery),
      successStatus: delivery.successStatus,
      status: delivery.status,
      attempts: delivery.attempts.map((attempt, index) => ({
        attempt: index + 1,
        at: this.clock.iso(this.epoch + delivery.createdAt + attempt.after),
        durationMs: attempt.durationMs,
        ...(attempt.statusCode === undefined ? {} : { statusCode: attempt.statusCode }),
        ...(attempt.error === undefined ? {} : { error: attempt.error }),
      })),
      createdAt: this.clock.iso(this.epoch + delivery.createdAt),
      nextAttemptAt: iso(delivery.nextAttemptAt),
      completedAt: iso(delivery.completedAt),
    };
    if (delivery.reason !== undefined) view.reason = delivery.reason;
    return view;
  }

  // -------------------------------------------------------------------------------------------

  /**
   * One page of deliveries in creation order, filtered by transaction id, family and status. A
   * page may hold fewer than `limit` deliveries while `nextCursor` is not null (at most 20,000
   * records are looked at per page, and a page filtered by transaction indexes at most 20,000 more,
   * D64). Throws {@link DeliveryQueryError} for a bad limit or cursor.
   */
  page(query: DeliveryQuery = {}): DeliveryPage {
    const limit = query.limit ?? DEFAULT_PAGE_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
      throw new DeliveryQueryError('limit', `limit must be a whole number from 1 to ${MAX_PAGE_LIMIT}.`);
    }
    const scope = `${query.transactionId ?? ''}\u0000${query.family ?? ''}\u0000${query.status ?? ''}`;
    const afterSeq = query.after === undefined ? 0 : this.readCursor(query.after, scope);
    const matches = (delivery: StoredDelivery) =>
      (query.family === undefined || delivery.family === query.family) &&
      (query.status === undefined || delivery.status === query.status) &&
      (query.transactionId === undefined || delivery.transactionId === query.transactionId);

    // The candidates: one transaction's deliveries, or all of them, from just after the cursor. The
    // index of transactions covers the deliveries up to `indexed` (all of them when it caught up).
    const indexed = query.transactionId === undefined || this.indexTransactions(MAX_SCAN) ? Number.POSITIVE_INFINITY : this.indexedUpTo;
    const own = query.transactionId === undefined ? undefined : this.byTransaction.get(query.transactionId);
    const seqs = query.transactionId === undefined ? this.orderSeqs : own === undefined ? [] : typeof own === 'number' ? [own] : own;
    const found: StoredDelivery[] = [];
    let lastSeq = afterSeq;
    let scanned = 0;
    let index = upperBound(seqs, afterSeq);
    if (seqs === this.orderSeqs) index = Math.max(index, this.orderStart);
    // At most `limit` deliveries and about `pageBytes` bytes of them (at least one).
    let bytes = 0;
    for (; index < seqs.length && found.length <= limit && scanned < MAX_SCAN; index++, scanned++) {
      const seq = seqs[index]!;
      const delivery = this.deliveries.get(seq);
      if (delivery !== undefined && matches(delivery)) {
        if (found.length === limit) break;
        const size = this.sizeOf(delivery);
        if (found.length > 0 && bytes + size > this.pageBytes) break;
        bytes += size;
        found.push(delivery);
      }
      lastSeq = seq;
    }
    let more = index < seqs.length;
    if (!more && indexed !== Number.POSITIVE_INFINITY) {
      // Not indexed yet beyond `indexed`: the next page goes on from there (never back).
      more = true;
      lastSeq = Math.max(lastSeq, indexed);
    }
    return { deliveries: found.map((delivery) => this.view(delivery)), nextCursor: more ? this.writeCursor(lastSeq, scope) : null };
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
    const seq = this.seqOf(id);
    const delivery = seq === undefined ? undefined : this.deliveries.get(seq);
    return delivery === undefined ? undefined : this.view(delivery);
  }

  /** Deliveries not yet delivered or abandoned. */
  get pendingCount(): number {
    return this.pending.size;
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
  private startAttempt(seq: number): void {
    if (this.stopped) return;
    if (this.clock.advancingInSlices) {
      if (this.deferred.length === 0) {
        void this.clock.whenAdvanced().then(() => {
          const seqs = this.deferred;
          this.deferred = [];
          for (const deferred of seqs) this.startAttempt(deferred);
        });
      }
      this.deferred.push(seq);
      return;
    }
    const url = this.deliveries.get(seq)?.url;
    if (url === null || url === undefined) return;
    const key = receiverOf(url);
    let receiver = this.receivers.get(key);
    if (receiver === undefined) {
      receiver = { active: 0, waiting: new Queue<number>() };
      this.receivers.set(key, receiver);
    }
    if (receiver.active < this.concurrency) this.run(key, receiver, seq);
    else receiver.waiting.enqueue(seq);
  }

  private run(key: string, receiver: { active: number; waiting: Queue<number> }, seq: number): void {
    receiver.active++;
    const running: Promise<void> = this.attempt(seq).finally(() => {
      this.inFlight.delete(running);
      receiver.active--;
      // The next one starts before this promise settles, so idle() sees it running.
      const next = this.stopped ? undefined : receiver.waiting.dequeue();
      if (next !== undefined) this.run(key, receiver, next);
      else if (receiver.active === 0 && receiver.waiting.size === 0) this.receivers.delete(key);
    });
    this.inFlight.add(running);
  }

  private async attempt(seq: number): Promise<void> {
    this.timers.delete(seq);
    const delivery = this.deliveries.get(seq);
    if (this.stopped || delivery === undefined || delivery.status !== 'pending' || delivery.url === null) return;

    const number = delivery.attempts.length + 1;
    const at = this.clock.now();
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
        const body = this.bodyOf(delivery);
        statusCode = await this.send({
          url: delivery.url,
          headers: this.headersOf(delivery, body),
          body,
          timeoutMs: ATTEMPT_TIMEOUT_MS,
          signal: this.shutdown.signal,
        });
      } catch (caught) {
        const code = errorCode(caught);
        if (code !== undefined && LOCAL_ERROR_CODES.has(code) && !this.stopped) {
          const tries = (this.localTries.get(seq) ?? 0) + 1;
          if (tries <= MAX_LOCAL_RETRIES) {
            this.retryLocally(seq, tries, code);
            return;
          }
          error = `${describeFetchError(caught, false)} (an error of the sandbox's machine, counted after ${MAX_LOCAL_RETRIES} retries)`;
        } else {
          error = describeFetchError(caught, this.shutdown.signal.aborted);
        }
      }
    }
    this.localTries.delete(seq);
    // Re-read: the record is a snapshot and the map is the source of truth.
    const current = this.deliveries.get(seq) ?? delivery;
    const attempt: StoredAttempt = {
      after: at - this.epoch - current.createdAt,
      durationMs: Math.round(performance.now() - started),
      statusCode,
      error,
    };
    const attempts = current.attempts.length === 0 ? [attempt] : current.attempts.concat([attempt]);
    const succeeded = statusCode !== undefined && isReceived(current.successStatus, statusCode);

    if (succeeded) {
      const delivered = changed(current, attempts, 'delivered', null, this.clock.now() - this.epoch);
      this.deliveries.set(seq, delivered);
      this.finish(delivered);
      return;
    }
    if (this.stopped) {
      this.deliveries.set(seq, changed(current, attempts, current.status, current.nextAttemptAt, current.completedAt));
      return;
    }
    if (refused || number >= MAX_ATTEMPTS) {
      const abandoned = changed(current, attempts, 'abandoned', null, this.clock.now() - this.epoch);
      this.deliveries.set(seq, abandoned);
      const eventId = this.eventIdOf(abandoned);
      this.log(
        'warn',
        refused
          ? `webhook ${eventId} to ${safeUrl(abandoned.url)} refused: the URL ${problem!.message}`
          : `webhook ${eventId} to ${safeUrl(abandoned.url)} abandoned after ${number} attempts`,
      );
      this.finish(abandoned);
      return;
    }
    const nextAt = this.clock.now() + (RETRY_DELAYS_MS[number - 1] ?? 0);
    this.deliveries.set(seq, changed(current, attempts, 'pending', nextAt - this.epoch, null));
    this.timers.set(seq, this.clock.schedule(nextAt, this.retryDue, seq));
  }

  /** The timer of every retry: one function, called with the delivery's sequence number. */
  private readonly retryDue = (seq: number): void => this.startAttempt(seq);

  /** A local failure: tries again after a real-time back-off, without counting an attempt. */
  private retryLocally(seq: number, tries: number, code: string): void {
    this.localTries.set(seq, tries);
    const delay = Math.min(this.localDelay.max, this.localDelay.base * 2 ** (tries - 1));
    const timer = setTimeout(() => {
      this.localTimers.delete(seq);
      this.startAttempt(seq);
    }, delay * (0.5 + Math.random() / 2));
    timer.unref();
    this.localTimers.set(seq, timer);
    const now = Date.now();
    if (now - this.lastLocalWarning > 10_000) {
      this.lastLocalWarning = now;
      this.log('warn', `webhook attempts fail on this machine (${code}); retrying them without counting an attempt`);
    }
  }

  /** Removes a completed delivery from its queue and starts the next one of the same key. */
  private finish(delivery: StoredDelivery): void {
    const receiver = delivery.url === null ? undefined : receiverOf(delivery.url);
    if (receiver !== undefined) {
      const left = (this.pendingPerReceiver.get(receiver) ?? 1) - 1;
      if (left <= 0) this.pendingPerReceiver.delete(receiver);
      else this.pendingPerReceiver.set(receiver, left);
    }
    if (this.pending.delete(delivery.seq)) this.retire(delivery.seq);

    const orderingKey = orderingKeyOf(delivery);
    const queue = this.queues.get(orderingKey);
    if (queue === undefined) return;
    const index = queue.indexOf(delivery.seq);
    if (index >= 0) queue.splice(index, 1);
    const next = queue[0];
    if (next === undefined) {
      this.queues.delete(orderingKey);
    } else if (index === 0) {
      this.startAttempt(next);
    }
  }

  /**
   * A delivery is complete: it joins the retained ones, and the oldest beyond the limit go (a few
   * per delivery completed; during a sliced clock advance, after it: trimming.ts, D66).
   */
  private retire(seq: number): void {
    this.completed.push(seq);
    this.trimming.added();
  }

  /** Forgets up to `count` of the oldest completed deliveries beyond the limit. */
  private forgetOldest(count: number): void {
    for (let left = count; left > 0 && this.completed.length > this.retain; left--) {
      this.deliveries.delete(this.completed.shift()!);
      this.forgotten++;
    }
    const seqs = this.orderSeqs;
    while (this.orderStart < seqs.length && !this.deliveries.has(seqs[this.orderStart]!)) this.orderStart++;
    if (this.forgotten > 1024 && this.forgotten * 2 > this.orderSeqs.length) this.compact();
  }

  /** About how many bytes a delivery's view takes in a page: its body, and a bound for the rest. */
  private sizeOf(delivery: StoredDelivery): number {
    const body = delivery.body ?? '';
    return body.length + VIEW_OVERHEAD_BYTES + delivery.attempts.length * ATTEMPT_VIEW_BYTES;
  }

  /**
   * Brings {@link byTransaction} up to date by at most `budget` deliveries, the oldest not in it
   * first (a page does a bounded amount of work: one page after a burst of 100,000 events would
   * otherwise hold the event loop for a fifth of a second); starts it again from the deliveries held
   * when forgotten ones make up half of it. Each delivery is added once per build, so the cost over
   * a run is linear in its deliveries. Answers whether it is up to date.
   */
  private indexTransactions(budget: number): boolean {
    if (this.indexedCount > 1024 && this.indexedCount > 2 * this.deliveries.size) {
      this.byTransaction = new Map();
      this.indexedUpTo = 0;
      this.indexedCount = 0;
    }
    const seqs = this.orderSeqs;
    let index = upperBound(seqs, this.indexedUpTo);
    const end = Math.min(seqs.length, index + budget);
    for (; index < end; index++) {
      const seq = seqs[index]!;
      this.indexedUpTo = seq;
      const transactionId = this.deliveries.get(seq)?.transactionId;
      if (transactionId === undefined) continue;
      const own = this.byTransaction.get(transactionId);
      if (own === undefined) this.byTransaction.set(transactionId, seq);
      else if (typeof own === 'number') this.byTransaction.set(transactionId, [own, seq]);
      else own.push(seq);
      this.indexedCount++;
    }
    return index === seqs.length;
  }

  private compact(): void {
    this.orderSeqs = this.orderSeqs.filter((seq) => this.deliveries.has(seq));
    this.forgotten = 0;
    this.orderStart = 0;
  }

  /** The id of the delivery with this sequence number. */
  private idOf(seq: number): string {
    return this.idStart + (seq - 1).toString(16).padStart(12, '0');
  }

  /** The sequence number of an id this dispatcher made, else undefined. */
  private seqOf(id: string): number | undefined {
    if (id.length !== this.idStart.length + 12 || !id.startsWith(this.idStart)) return undefined;
    const hex = id.slice(this.idStart.length);
    return /^[0-9a-f]{12}$/.test(hex) ? Number.parseInt(hex, 16) + 1 : undefined;
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


/**
 * A delivery with its attempts and state changed. Written out field by field: a copy made with
 * spread syntax from a frozen record keeps most fields outside the object, in a second allocation.
 */
function changed(
  current: StoredDelivery,
  attempts: StoredAttempt[],
  status: DeliveryStatus,
  nextAttemptAt: number | null,
  completedAt: number | null,
): StoredDelivery {
  return {
    seq: current.seq,
    eventId: current.eventId,
    family: current.family,
    event: current.event,
    transactionId: current.transactionId,
    url: current.url,
    body: current.body,
    template: current.template,
    data: current.data,
    signingKey: current.signingKey,
    headers: current.headers,
    orderingScope: current.orderingScope,
    orderingKey: current.orderingKey,
    successStatus: current.successStatus,
    status,
    reason: current.reason,
    attempts,
    createdAt: current.createdAt,
    nextAttemptAt,
    completedAt,
  };
}

const scopeCache = new Map<string, string>();

/** The scope of an ordering key `<scope><transactionId>` (one shared string per scope), if it is one. */
function scopeOf(orderingKey: string, transactionId: string | undefined): string | undefined {
  if (transactionId === undefined || orderingKey.length <= transactionId.length || !orderingKey.endsWith(transactionId)) return undefined;
  return shared(orderingKey.slice(0, orderingKey.length - transactionId.length));
}

/** One string object for every equal scope. */
function shared(scope: string): string {
  let found = scopeCache.get(scope);
  if (found === undefined) {
    if (scopeCache.size >= 10_000) scopeCache.clear();
    found = scope;
    scopeCache.set(scope, found);
  }
  return found;
}

function orderingKeyOf(delivery: StoredDelivery): string {
  return delivery.orderingScope === undefined ? delivery.orderingKey! : delivery.orderingScope + delivery.transactionId!;
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

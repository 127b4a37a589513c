/**
 * Webhook delivery, shared by every family: records each event and attempts it, in order per
 * ordering key and at a bounded pace per receiver (queue.ts), again on a schedule after a failure
 * (retry.ts), and keeps the completed ones within the retention limit (history.ts), readable a page
 * at a time (paging.ts). Success is HTTP 200 for the SDK flow and any 2xx or 3xx for the web and
 * gateway webhooks (a redirect is not followed; `isReceived`). Every attempt is recorded.
 *
 * Deliveries only ever go to the URL given to `enqueue`: the partner's or merchant's own receiver,
 * and only to targets webhook-targets.ts allows (checked again, with the name resolved, before each
 * attempt).
 *
 * What the dispatcher keeps of a delivery is what it takes to make the request again, not the
 * request (stored.ts): the body of an event whose body follows from its transaction and status is
 * made from a registered template, and `X-Signature` is computed from the body and the signing key
 * (a reference to the partner's key or the merchant's password, not a copy) when the request is sent
 * or the delivery is read (views.ts). Times are milliseconds, records are keyed by a sequence number
 * and the ids follow from it (ids.ts). The views ({@link Delivery}) are built when read, a page at a
 * time.
 */
import { setMaxListeners } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { VirtualClock } from '../clock.js';
import type { Store } from '../store.js';
import { DEFAULT_PAGE_BYTES, DEFAULT_RETAIN_DELIVERIES, DEFAULT_WEBHOOK_CONCURRENCY, DEFAULT_WEBHOOK_MAX_SOCKETS, type LimitSettings, type RetentionSettings, type WebhookSettings } from '../config.js';
import { fetchSender, httpSender, type WebhookSender } from '../webhook-client.js';
import { safeUrl, WebhookTargets, type ListeningAddress, type TargetProblem } from '../webhook-targets.js';
import { DeliveryHistory } from './history.js';
import { DeliveryIds } from './ids.js';
import { DeliveryJournal, type JournalHost, type JournalStore } from './journal.js';
import { DeliveryPages } from './paging.js';
import { MAX_PENDING_PER_RECEIVER, OrderingQueues, receiverOf, Receivers } from './queue.js';
import { ATTEMPT_TIMEOUT_MS, describeFetchError, errorCode, MAX_ATTEMPTS, MAX_LOCAL_RETRIES, RetrySchedule } from './retry.js';
import { changed, NO_ATTEMPTS, NO_URL_REASON, orderingKeyOf, scopeOf, shared, storedDelivery, type StoredAttempt, type StoredDelivery } from './stored.js';
import { isReceived, MAX_PAGE_LIMIT, type BodyTemplate, type Delivery, type DeliveryPage, type DeliveryQuery, type EnqueueInput, type SigningKeys, type TemplatedBody } from './types.js';
import { DeliveryViews } from './views.js';

interface DispatcherOptions {
  clock: VirtualClock;
  log?: (level: 'info' | 'warn', message: string) => void;
  /** The fetch used for attempts (tests may replace it). */
  fetch?: typeof fetch;
  /** Webhook settings and retention (config.ts); default: the documented defaults. */
  config?: { webhooks?: Partial<WebhookSettings>; retention?: Partial<RetentionSettings>; limits?: Partial<Pick<LimitSettings, 'pageBytes'>> };
  /** The target policy (default: one from `config.webhooks.allowAnyTarget`); tests give their own. */
  targets?: WebhookTargets;
  /** Undelivered events per receiver, at most (default 20,000). */
  maxPendingPerReceiver?: number;
  /** The back-off of local failures, real ms (default 100 doubling to 5,000). */
  localRetryDelayMs?: { base: number; max: number };
}

export class DeliveryDispatcher {
  private readonly clock: VirtualClock;
  private readonly send: WebhookSender;
  /** Closes the connection pools of the default sender. */
  private readonly closeSender: () => void;
  private readonly log: (level: 'info' | 'warn', message: string) => void;
  /** Which receivers are allowed (also used by the families to check URLs they accept). */
  readonly targets: WebhookTargets;
  private readonly history: DeliveryHistory;
  private readonly views: DeliveryViews;
  private readonly pages: DeliveryPages;
  private readonly ordering = new OrderingQueues();
  private readonly receivers: Receivers;
  private readonly retries: RetrySchedule;
  private readonly shutdown = new AbortController();
  private stopped = false;
  /** Attempts asked for during a sliced advance, started when it ends. */
  private deferred: number[] = [];
  /** The virtual time the record times count from. */
  private readonly epoch: number;
  /** The reason of an event beyond a receiver's backlog (one string for all of them). */
  private readonly backlogReason: string;
  /** Shared store only: the durable queue (journal.ts). */
  private journal: DeliveryJournal | undefined;

  constructor(options: DispatcherOptions) {
    this.clock = options.clock;
    this.epoch = options.clock.now();
    this.log = options.log ?? (() => undefined);
    const concurrency = options.config?.webhooks?.concurrency ?? DEFAULT_WEBHOOK_CONCURRENCY;
    if (options.fetch !== undefined) {
      this.send = fetchSender(options.fetch);
      this.closeSender = () => undefined;
    } else {
      const sender = httpSender({ concurrency, maxSockets: options.config?.webhooks?.maxSockets ?? DEFAULT_WEBHOOK_MAX_SOCKETS });
      this.send = sender;
      this.closeSender = () => sender.close();
    }
    // Every running attempt listens to it (at most `concurrency` per receiver).
    setMaxListeners(0, this.shutdown.signal);
    this.targets = options.targets ?? new WebhookTargets({ allowAny: options.config?.webhooks?.allowAnyTarget ?? false });
    const maxPending = options.maxPendingPerReceiver ?? MAX_PENDING_PER_RECEIVER;
    this.backlogReason = `The receiver has ${maxPending} undelivered events waiting; later events are not sent until it catches up.`;
    this.history = new DeliveryHistory(this.clock, options.config?.retention?.deliveries ?? DEFAULT_RETAIN_DELIVERIES);
    const ids = new DeliveryIds();
    this.views = new DeliveryViews(this.clock, this.epoch, ids);
    this.pages = new DeliveryPages(this.history, ids, (delivery) => this.views.view(delivery), options.config?.limits?.pageBytes ?? DEFAULT_PAGE_BYTES);
    this.receivers = new Receivers(concurrency, maxPending, (seq) => this.attempt(seq), () => this.stopped);
    this.retries = new RetrySchedule(this.clock, (seq) => this.startAttempt(seq), this.log, options.localRetryDelayMs);
  }

  /**
   * Keeps the deliveries in the shared store (journal.ts): each one is written with the state
   * change that causes it, this process delivers those it records, every process reads all of
   * them, and the deliveries of a process that died are taken over. `owner` names this process;
   * `liveOwners` answers the owners whose processes are connected now.
   */
  share(store: JournalStore, owner: string, liveOwners: () => Promise<Set<string>>): void {
    const host: JournalHost = {
      epoch: this.epoch,
      get: (seq) => this.history.get(seq),
      idOf: (delivery) => delivery.id ?? this.views.ids.idOf(delivery.seq),
      eventIdOf: (delivery) => this.views.eventIdOf(delivery),
      localSeqOf: (id) => this.views.ids.seqOf(id),
      adopt: (delivery) => this.adopt(delivery),
      replace: (seq, delivery) => this.replace(seq, delivery),
      takeOver: (seq) => this.takeOver(seq),
    };
    this.journal = new DeliveryJournal(host, store, owner, liveOwners);
    this.history.onForget = (delivery) => this.journal?.forgotten(delivery);
  }

  /**
   * The one place a delivery this process delivers is written: the history (and, when `added`, its
   * indexes), then the shared store (journal.ts) in the running unit of work.
   */
  private write(delivery: StoredDelivery, added = false): void {
    if (added) this.history.add(delivery);
    else this.history.set(delivery.seq, delivery);
    this.journal?.write(delivery);
  }

  /** Holds a delivery another process recorded; it delivers it, this one shows it. */
  private adopt(read: (seq: number) => StoredDelivery): number {
    const seq = this.history.takeSeq();
    const delivery = read(seq);
    this.history.add(delivery);
    if (this.enqueueListeners.size > 0) this.notifyEnqueued(this.views.view(delivery));
    this.history.ordered(delivery);
    return seq;
  }

  /** Another process changed a delivery held here (an attempt made, a delivery taken over). */
  private replace(seq: number, delivery: StoredDelivery): void {
    const before = this.history.get(seq);
    this.history.set(seq, delivery);
    if (before?.status !== 'pending' || delivery.status === 'pending') return;
    // Completed by the process that took it over: one queued here frees its turn and its successor.
    if (this.ordering.includes(orderingKeyOf(delivery), seq)) this.finish(delivery);
    else this.history.complete(seq);
  }

  /** Starts delivering a pending delivery of a process that died, from where it was. */
  private takeOver(seq: number): void {
    const delivery = this.history.get(seq);
    if (this.stopped || delivery === undefined || delivery.status !== 'pending' || delivery.url === null) return;
    const receiver = receiverOf(delivery.url);
    this.receivers.added(receiver, this.receivers.backlog(receiver));
    if (!this.ordering.add(orderingKeyOf(delivery), seq)) return;
    const due = delivery.nextAttemptAt === null ? undefined : this.epoch + delivery.nextAttemptAt;
    if (due !== undefined && due > this.clock.now()) this.retries.schedule(seq, due);
    else this.startAttempt(seq);
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
    this.views.template(name, make);
  }

  /**
   * Registers the keys of `family`'s signers (`EnqueueInput.signer`): the partner's private key or
   * the merchant's Transactional API password of an id, read each time a request is sent or shown.
   */
  signWith(family: string, keys: SigningKeys): void {
    this.views.signWith(family, keys);
  }

  /** Records an event and starts (or queues) its delivery. Returns the record as created. */
  enqueue(input: EnqueueInput): Delivery {
    return this.views.view(this.history.get(this.record(input))!);
  }

  /** As {@link enqueue}, without making the view: answers the delivery's sequence number. */
  record(input: EnqueueInput): number {
    const url = input.url ?? null;
    const seq = this.history.takeSeq();
    const receiver = url === null ? undefined : receiverOf(url);
    const waiting = receiver === undefined ? 0 : this.receivers.backlog(receiver);
    const full = waiting >= this.receivers.maxPending;
    const templated = typeof input.body !== 'string';
    if (templated && !this.views.hasTemplate((input.body as TemplatedBody).template)) {
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
    const delivery = storedDelivery({
      seq,
      id: undefined,
      eventId: input.eventId,
      family: input.family,
      event: input.event,
      transactionId: input.transactionId,
      url,
      body: templated ? undefined : (input.body as string),
      template: templated ? (input.body as TemplatedBody).template : undefined,
      data: templated ? (input.body as TemplatedBody).data : undefined,
      signer: input.signer,
      headers,
      orderingScope,
      orderingKey: orderingScope === undefined ? input.orderingKey : undefined,
      successStatus: input.successStatus,
      status: url === null || full ? 'not_sent' : 'pending',
      reason: url === null ? NO_URL_REASON : full ? this.backlogReason : undefined,
      attempts: NO_ATTEMPTS,
      createdAt: this.clock.now() - this.epoch,
      nextAttemptAt: null,
      completedAt: null,
    });
    // Never changed once made (a change writes a new record, see `changed`); not frozen, which would
    // cost a call into V8's runtime per event, since nothing outside the dispatcher sees it.
    this.write(delivery, true);
    if (this.enqueueListeners.size > 0) this.notifyEnqueued(this.views.view(delivery));
    if (delivery.status !== 'not_sent') this.receivers.added(receiver!, waiting);
    this.history.ordered(delivery);
    // Made only here: most events of a mass expiry beyond the receiver's backlog are not sent.
    if (delivery.status !== 'not_sent' && !this.stopped && this.ordering.add(input.orderingKey ?? orderingScope + input.transactionId!, seq)) {
      this.startAttempt(seq);
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
  // Reading

  /** One page of deliveries in creation order (paging.ts); throws `DeliveryQueryError` for a bad limit or cursor. */
  page(query: DeliveryQuery = {}): DeliveryPage {
    return this.pages.page(query);
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
    const seq = this.views.ids.seqOf(id) ?? this.journal?.seqOf(id);
    const delivery = seq === undefined ? undefined : this.history.get(seq);
    return delivery === undefined ? undefined : this.views.view(delivery);
  }

  /** Deliveries not yet delivered or abandoned. */
  get pendingCount(): number {
    return this.history.pendingCount;
  }

  /** Deliveries held (the pending ones and the retained completed ones). */
  get size(): number {
    return this.history.size;
  }

  /** Resolves when no attempt is running or queued (attempts scheduled for later do not count). */
  async idle(): Promise<void> {
    await this.receivers.idle();
  }

  /** Cancels scheduled attempts and aborts running ones. Records stay readable. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.journal?.stop();
    this.retries.stop();
    this.receivers.stop();
    this.shutdown.abort();
    await this.idle();
    this.closeSender();
  }

  // -------------------------------------------------------------------------------------------
  // Attempts

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
    const url = this.history.get(seq)?.url;
    if (url === null || url === undefined) return;
    this.receivers.take(seq, url);
  }

  private async attempt(seq: number): Promise<void> {
    this.retries.started(seq);
    const delivery = this.history.get(seq);
    if (this.stopped || delivery === undefined || delivery.status !== 'pending' || delivery.url === null) return;
    // Taken over by another process that thought this one gone: it delivers it now.
    if (this.journal !== undefined && !this.journal.owns(seq)) return;

    const number = delivery.attempts.length + 1;
    const at = this.clock.now();
    const started = performance.now();
    let statusCode: number | undefined;
    let answer: string | undefined;
    let answerTruncated: true | undefined;
    let error: string | undefined;
    let refused = false;
    const problem = await this.targets.resolvedProblem(delivery.url);
    if (problem !== undefined) {
      refused = true;
      error = `refused by the sandbox: the webhook URL ${problem.message}`;
    } else {
      try {
        const body = this.views.bodyOf(delivery);
        const answered = await this.send({
          url: delivery.url,
          headers: this.views.headersOf(delivery, body),
          body,
          timeoutMs: ATTEMPT_TIMEOUT_MS,
          signal: this.shutdown.signal,
        });
        statusCode = answered.statusCode;
        answer = answered.answer === '' ? undefined : shared(answered.answer);
        if (answered.answerTruncated) answerTruncated = true;
      } catch (caught) {
        const local = this.stopped ? undefined : this.retries.localFailure(seq, errorCode(caught));
        if (local === 'retrying') return;
        error =
          local === 'counted'
            ? `${describeFetchError(caught, false)} (an error of the sandbox's machine, counted after ${MAX_LOCAL_RETRIES} retries)`
            : describeFetchError(caught, this.shutdown.signal.aborted);
      }
    }
    this.retries.counted(seq);
    // Re-read: the record is a snapshot and the history is the source of truth.
    const current = this.history.get(seq) ?? delivery;
    const attempt: StoredAttempt = {
      after: at - this.epoch - current.createdAt,
      durationMs: Math.round(performance.now() - started),
      statusCode,
      error,
      answer,
      answerTruncated,
    };
    const attempts = current.attempts.length === 0 ? [attempt] : current.attempts.concat([attempt]);
    const succeeded = statusCode !== undefined && isReceived(current.successStatus, statusCode);

    if (succeeded) {
      const delivered = changed(current, attempts, 'delivered', null, this.clock.now() - this.epoch);
      this.history.set(seq, delivered);
      this.journal?.attempted(seq);
      this.finish(delivered);
      return;
    }
    if (this.stopped) {
      this.history.set(seq, changed(current, attempts, current.status, current.nextAttemptAt, current.completedAt));
      return;
    }
    if (refused || number >= MAX_ATTEMPTS) {
      const abandoned = changed(current, attempts, 'abandoned', null, this.clock.now() - this.epoch);
      this.history.set(seq, abandoned);
      this.journal?.attempted(seq);
      const eventId = this.views.eventIdOf(abandoned);
      this.log(
        'warn',
        refused
          ? `webhook ${eventId} to ${safeUrl(abandoned.url)} refused: the URL ${problem!.message}`
          : `webhook ${eventId} to ${safeUrl(abandoned.url)} abandoned after ${number} attempts`,
      );
      this.finish(abandoned);
      return;
    }
    const nextAt = this.retries.nextAttemptAt(number);
    this.history.set(seq, changed(current, attempts, 'pending', nextAt - this.epoch, null));
    this.journal?.attempted(seq);
    this.retries.schedule(seq, nextAt);
  }

  /** Removes a completed delivery from its queue and starts the next one of the same key. */
  private finish(delivery: StoredDelivery): void {
    this.receivers.completed(delivery.url);
    this.history.complete(delivery.seq);
    const next = this.ordering.remove(orderingKeyOf(delivery), delivery.seq);
    if (next !== undefined) this.startAttempt(next);
  }
}

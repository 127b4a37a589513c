/**
 * The transaction step machine and everything that happens on the virtual clock: expiry,
 * confirmation of a registered down payment, completion of refunds, and the rule that only
 * one attempt on a pre-eligibility check can succeed.
 *
 * The record is the source of truth: it stores when each pending event is due (`expiresAt`,
 * `confirmsAt`, a refund's `completesAt`). {@link TransactionEngine.find} applies every event that
 * is due, in time order, over the whole group of attempts of one check, before a handler looks at a
 * transaction; clock timers call the same function. So a read never shows a stale state, and the
 * attempt whose confirmation is due first is the one that succeeds.
 *
 * Each transaction has at most one clock timer, at its next due event; it is moved when that
 * changes and cancelled when nothing is due (a final transaction without pending refunds). A
 * transaction that becomes final joins the retention queue (retention.ts), and the settlement sums
 * of its day are updated then (settlement.ts reads them).
 */
import { randomUUID } from 'node:crypto';
import type { ClockTimer } from '../clock.js';
import type { FamilyContext } from '../context.js';
import type { ErrorReply } from '../errors.js';
import { finalRecords, FinalRecords } from '../retention.js';
import { findTestUser } from '../fixtures.js';
import { preEligibility } from '../test-users.js';
import { COLLECTIONS, transactionKey, copyCheck, copyRefund, copyTransaction, type CheckRecord, type FailureReason, type GatewayState, type IneligibilityReason, type OtpState, type RefundRecord, type TransactionRecord } from './records.js';
import { GATEWAY } from './values.js';
import { isFinal, refundView, transactionView } from './views.js';
import { gatewayWebhooks, transactionWebhookUrl } from './webhooks.js';
import { addDays, istDate } from './ist-dates.js';
import { ShardedMap } from '../sharded-map.js';

export type Eligibility = { eligible: true } | { eligible: false; reason: IneligibilityReason };

/**
 * Eligibility against the documented test users (test-users.ts): blocked `USER_BLOCKED`, risk-declined
 * `RISK_DECLINED`, above the available credit `CREDIT_LIMIT_EXCEEDED`. A phone number that is not a
 * test user has the default credit of ₹50,000.
 */
export function gatewayEligibility(phoneNumber: string, amount: number): Eligibility {
  if (findTestUser(phoneNumber) === undefined) {
    return amount > GATEWAY.defaultCreditLimit ? { eligible: false, reason: 'CREDIT_LIMIT_EXCEEDED' } : { eligible: true };
  }
  return preEligibility(phoneNumber, amount);
}

/** A fresh OTP option (new referenceId, valid 5 minutes), keeping the count of wrong attempts. */
export function newOtp(now: number, previous?: OtpState): OtpState {
  return {
    referenceId: randomUUID(),
    issuedAt: now,
    expiresAt: now + GATEWAY.otpValidityMs,
    wrongAttempts: previous?.wrongAttempts ?? 0,
    // The last 20 expired reference ids still answer OTP_EXPIRED; older ones answer 404.
    previousReferenceIds: previous === undefined ? [] : [...previous.previousReferenceIds, previous.referenceId].slice(-20),
  };
}

interface Due {
  at: number;
  /** Same time: expiry first, then confirmation, then refunds. */
  order: number;
  kind: 'expire' | 'confirm' | 'refund';
  refundId?: string;
}

export interface TransactionEngine {
  /** The merchant's transaction with every due event applied, or undefined. */
  find(merchantId: string, transactionId: string): TransactionRecord | undefined;
  /**
   * Whether a new transaction of this merchant, keeping `bytes` of notes, fits the memory budget:
   * undefined when it does (call {@link create} next, without an await in between: the bytes are
   * held when the record is stored), else the 429 `TOO_MANY_REQUESTS` to answer.
   */
  admit(merchantId: string, bytes: number): ErrorReply | undefined;
  /** Stores a new transaction (indexed, its timer armed, by the observer); announces it when created final. */
  create(transaction: TransactionRecord): void;
  /** Stores a new pre-eligibility check (kept up to the retention limit, see below). */
  createCheck(check: CheckRecord): void;
  /** Saves a record (the caller changed a copy) and moves its timer to its next due event. */
  save(transaction: TransactionRecord): void;
  /** Moves a non-final transaction to `failure` and sends the transaction webhook. */
  fail(transaction: TransactionRecord, reason: FailureReason, at: number): TransactionRecord;
  /** Adds a PENDING refund (the caller checked it may be made). */
  /** Stores a new refund, at the transaction's next position (`refund.position` is `transaction.refundCount`). */
  addRefund(transaction: TransactionRecord, refund: RefundRecord): { transaction: TransactionRecord; refund: RefundRecord };
  /** Moves a PENDING refund to SUCCESS or FAILED and sends the refund webhook. */
  completeRefund(transaction: TransactionRecord, refundId: string, status: 'SUCCESS' | 'FAILED', at: number): TransactionRecord;
  /** Timers armed (one per transaction with something due). */
  readonly timers: number;
}

export function createEngine(ctx: FamilyContext, state: GatewayState): TransactionEngine {
  const { clock } = ctx;
  const { transactions, checks, merchants, refunds, refundIds, settlementDays } = state;
  const send = gatewayWebhooks(ctx, merchants);
  const timers = new ShardedMap<string, ClockTimer>();
  const retention = finalRecords(ctx.store, ctx.config.retention.transactions, clock, ctx.config.limits.notesBytes);
  // Transactions not final yet, per merchant (limits.pendingPerMerchant).
  const pendingCount = new Map<string, number>();

  /** The earliest PENDING refund (refunds complete in the order they were made). */
  const firstPendingRefund = (transaction: TransactionRecord, from = transaction.nextPendingRefund): RefundRecord | undefined => {
    const key = transactionKey(transaction.merchantId, transaction.id);
    for (let position = from; position < transaction.refundCount; position++) {
      const refund = refunds.get(key, position);
      if (refund?.status === 'PENDING') return refund;
    }
    return undefined;
  };

  const nextDue = (transaction: TransactionRecord): Due | undefined => {
    const candidates: Due[] = [];
    if (!isFinal(transaction.step)) candidates.push({ at: transaction.expiresAt, order: 0, kind: 'expire' });
    if (transaction.step === 'wait' && transaction.confirmsAt !== undefined) {
      candidates.push({ at: transaction.confirmsAt, order: 1, kind: 'confirm' });
    }
    const refund = firstPendingRefund(transaction);
    if (refund !== undefined) candidates.push({ at: refund.completesAt, order: 2, kind: 'refund', refundId: refund.id });
    return candidates.reduce<Due | undefined>(
      (best, due) => (best === undefined || due.at < best.at || (due.at === best.at && due.order < best.order) ? due : best),
      undefined,
    );
  };

  /** One timer per transaction, at its next due event; none when nothing is due. */
  const reschedule = (transaction: TransactionRecord): void => {
    const key = transactionKey(transaction.merchantId, transaction.id);
    const due = nextDue(transaction);
    const existing = timers.get(key);
    if (due === undefined) {
      existing?.cancel();
      timers.delete(key);
      return;
    }
    if (existing !== undefined && existing.at === due.at) return;
    existing?.cancel();
    timers.set(key, clock.schedule(due.at, dueEvent, key));
  };

  /** The timer of every transaction: one function, called with the transaction's key. */
  const dueEvent = (key: string, timer: ClockTimer): void => {
    if (timers.get(key) === timer) timers.delete(key);
    const transaction = transactions.get(key);
    if (transaction !== undefined) find(transaction.merchantId, transaction.id);
  };

  /** Saves a changed copy; the observer moves its timer. */
  const save = (transaction: TransactionRecord) => {
    transactions.set(transactionKey(transaction.merchantId, transaction.id), transaction);
  };

  /** Forgets a final transaction with its refunds; keeps one whose refund is still pending. */
  retention.register('gateway', (key) => {
    const transaction = transactions.get(key);
    if (transaction === undefined) return 'evicted';
    if (firstPendingRefund(transaction) !== undefined) return 'keep';
    for (let position = 0; position < transaction.refundCount; position++) {
      const refund = refunds.get(key, position);
      if (refund !== undefined) refundIds.delete(`${key}#${refund.id}`);
      refunds.delete(key, position);
    }
    // Its timer and its place in the merchant's list go with it (the observer below).
    transactions.delete(key);
    return 'evicted';
  });

  // What the gateway derives from its transactions, kept here only (store.ts `observe`): told of
  // every change, its own writes, the records a shared sandbox reads at start, and a change put
  // back. The merchant's list, the count of open ones, the notes' bytes, the retention queue and
  // the timer of what falls due next.
  ctx.store.observe<TransactionRecord>(COLLECTIONS.transactions, (key, value, previous) => {
    const wasOpen = previous !== undefined && !isFinal(previous.step);
    const isOpen = value !== undefined && !isFinal(value.step);
    if (wasOpen && !isOpen) {
      const left = (pendingCount.get(previous.merchantId) ?? 1) - 1;
      if (left > 0) pendingCount.set(previous.merchantId, left);
      else pendingCount.delete(previous.merchantId);
    }
    if (value === undefined) {
      timers.get(key)?.cancel();
      timers.delete(key);
      if (previous !== undefined) {
        if (wasOpen) retention.release(previous.notesBytes);
        state.index.forget(previous.merchantId);
      }
      return;
    }
    if (previous === undefined) {
      state.index.add(value.merchantId, value.id, value.createdAt);
      retention.hold(value.notesBytes);
    }
    if (isOpen && !wasOpen) pendingCount.set(value.merchantId, (pendingCount.get(value.merchantId) ?? 0) + 1);
    if (!isOpen && (previous === undefined || wasOpen)) retention.add('gateway', key, value.notesBytes);
    reschedule(value);
  });

  // Pre-eligibility checks are kept up to the same number; one with an attempt still running stays.
  // A check lists only its open attempts (a final one leaves the list), so appending one copies
  // the attempts running at once, never every attempt ever made on the check.
  const checkRetention = new FinalRecords(ctx.config.retention.transactions, clock);
  checkRetention.register('check', (id) => {
    const check = checks.get(id);
    if (check === undefined) return 'evicted';
    const running = check.attempts.some((attempt) => {
      const transaction = transactions.get(transactionKey(check.merchantId, attempt));
      return transaction !== undefined && !isFinal(transaction.step);
    });
    if (running) return 'keep';
    checks.delete(id);
    return 'evicted';
  });

  // A new check joins the checks' retention order (its own, the ones read at start).
  ctx.store.observe<CheckRecord>(COLLECTIONS.checks, (id, value, previous) => {
    if (value !== undefined && previous === undefined) checkRetention.add('check', id);
  });

  const addToSettlement = (merchantId: string, at: number, change: { gross?: number; refunded?: number; count?: number }) => {
    const key = `${merchantId}/${addDays(istDate(at), 1)}`;
    const day = settlementDays.get(key) ?? { gross: 0, refunded: 0, count: 0 };
    settlementDays.set(key, {
      gross: day.gross + (change.gross ?? 0),
      refunded: day.refunded + (change.refunded ?? 0),
      count: day.count + (change.count ?? 0),
    });
  };

  /** A transaction became final (its count and retention follow in the observer): its check, its webhook. */
  const announceFinal = (transaction: TransactionRecord) => {
    // A final attempt leaves its check's list of open attempts.
    const check = transaction.preEligibilityCheckId === undefined ? undefined : checks.get(transaction.preEligibilityCheckId);
    if (check !== undefined && check.attempts.includes(transaction.id)) {
      const updated = copyCheck(check);
      updated.attempts = check.attempts.filter((id) => id !== transaction.id);
      checks.set(check.id, updated);
    }
    const merchant = merchants.get(transaction.merchantId);
    if (merchant === undefined) return;
    send(
      'transactionUpdated',
      { transaction: transactionView(transaction, state.refundsOf(transaction)) },
      { transactionId: transaction.id, owner: merchant.id, url: transactionWebhookUrl(merchant, transaction) },
    );
  };

  const finish = (transaction: TransactionRecord, outcome: 'success' | FailureReason, at: number): TransactionRecord => {
    const updated = copyTransaction(transaction);
    updated.updatedAt = at;
    updated.finishedAt = at;
    updated.confirmsAt = undefined;
    if (outcome === 'success') {
      updated.step = 'success';
      updated.failureReason = undefined;
      addToSettlement(updated.merchantId, at, { gross: updated.amount, count: 1 });
    } else {
      updated.step = 'failure';
      updated.failureReason = outcome;
    }
    save(updated);
    announceFinal(updated);
    return updated;
  };

  const fail = (transaction: TransactionRecord, reason: FailureReason, at: number) => finish(transaction, reason, at);

  /** The registered down payment is confirmed, or not; only one attempt per check succeeds. */
  const confirm = (transaction: TransactionRecord, at: number): void => {
    if (findTestUser(transaction.user.phoneNumber)?.downPaymentConfirmed === false) {
      fail(transaction, 'PAYMENT_NOT_CONFIRMED', at);
      return;
    }
    const check = transaction.preEligibilityCheckId === undefined ? undefined : checks.get(transaction.preEligibilityCheckId);
    if (check === undefined) {
      finish(transaction, 'success', at);
      return;
    }
    // The guard, at the moment of success: the check records its one successful attempt.
    if (check.succeededTransactionId !== undefined && check.succeededTransactionId !== transaction.id) {
      fail(transaction, 'OTHER_ATTEMPT_SUCCEEDED', at);
      return;
    }
    const succeeded = copyCheck(check);
    succeeded.succeededTransactionId = transaction.id;
    checks.set(check.id, succeeded);
    finish(transaction, 'success', at);
    for (const otherId of check.attempts) {
      if (otherId === transaction.id) continue;
      const other = transactions.get(transactionKey(transaction.merchantId, otherId));
      if (other !== undefined && !isFinal(other.step)) fail(other, 'OTHER_ATTEMPT_SUCCEEDED', at);
    }
  };

  const admit = (merchantId: string, bytes: number): ErrorReply | undefined => {
    const retryAfter = String(Math.ceil(GATEWAY.defaultExpiryMs / 1000));
    const refuse = (text: string): ErrorReply => ({ ...ctx.errors.error(429, 'TOO_MANY_REQUESTS', text), headers: { 'Retry-After': retryAfter } });
    const cap = ctx.config.limits.pendingPerMerchant;
    if ((pendingCount.get(merchantId) ?? 0) >= cap) {
      return refuse(
        `The sandbox holds ${cap} PENDING transactions of this merchant, its limit (--max-pending-per-merchant, ` +
          'PAYLATER_MAX_PENDING_PER_MERCHANT). Finish or cancel some (GET /api/merchant/transaction/{transactionId}/cancel), or let them expire ' +
          '(advance the clock), then try again.',
      );
    }
    if (!retention.admits(bytes)) {
      return refuse(
        `The notes of the PENDING transactions and this one would pass the sandbox's notes budget of ${ctx.config.limits.notesBytes} ` +
          'bytes (their JSON text; --max-notes-bytes, PAYLATER_MAX_NOTES_BYTES). Send smaller notes, or finish pending transactions first.',
      );
    }
    return undefined;
  };

  const create = (transaction: TransactionRecord): void => {
    const key = transactionKey(transaction.merchantId, transaction.id);
    transactions.set(key, transaction);
    if (transaction.preEligibilityCheckId !== undefined && !isFinal(transaction.step)) {
      const check = checks.get(transaction.preEligibilityCheckId);
      if (check !== undefined) {
        const updated = copyCheck(check);
        updated.attempts = [...check.attempts, transaction.id];
        checks.set(check.id, updated);
      }
    }
    if (isFinal(transaction.step)) announceFinal(transaction);
  };

  const createCheck = (check: CheckRecord): void => {
    checks.set(check.id, check);
  };

  const addRefund = (transaction: TransactionRecord, refund: RefundRecord) => {
    if (refund.position !== transaction.refundCount) throw new Error(`a new refund goes at position ${transaction.refundCount}, not ${refund.position}`);
    const key = transactionKey(transaction.merchantId, transaction.id);
    // One new record: the transaction's earlier refunds are not copied.
    refunds.set(key, refund.position, refund);
    refundIds.set(`${key}#${refund.id}`, refund.position);
    const updated = copyTransaction(transaction);
    updated.refundCount = transaction.refundCount + 1;
    updated.refundedAmount = transaction.refundedAmount + refund.amount;
    updated.updatedAt = refund.createdAt;
    save(updated);
    return { transaction: updated, refund };
  };

  const completeRefund = (
    transaction: TransactionRecord,
    refundId: string,
    status: 'SUCCESS' | 'FAILED',
    at: number,
  ): TransactionRecord => {
    const refund = state.findRefund(transaction, refundId);
    if (refund === undefined || refund.status !== 'PENDING') return transaction;
    const key = transactionKey(transaction.merchantId, transaction.id);
    const completed = copyRefund(refund);
    completed.status = status;
    completed.updatedAt = at;
    refunds.set(key, refund.position, completed);
    const updated = copyTransaction(transaction);
    if (status === 'FAILED') updated.refundedAmount = transaction.refundedAmount - refund.amount;
    updated.updatedAt = at;
    if (refund.position === transaction.nextPendingRefund) {
      updated.nextPendingRefund = firstPendingRefund(updated, refund.position + 1)?.position ?? updated.refundCount;
    }
    save(updated);
    if (status === 'SUCCESS') addToSettlement(transaction.merchantId, at, { refunded: refund.amount });
    const merchant = merchants.get(transaction.merchantId);
    if (merchant !== undefined) {
      // The refund's own URL, else the transaction's (its override, else the merchant's default).
      const url = completed.webhookUrl ?? transactionWebhookUrl(merchant, updated);
      send('refundUpdated', { refund: refundView(updated, completed) }, { transactionId: transaction.id, owner: merchant.id, url });
    }
    return updated;
  };

  /** The keys of the transactions that must be caught up together with this one. */
  const groupOf = (transaction: TransactionRecord): string[] => {
    const own = transactionKey(transaction.merchantId, transaction.id);
    if (transaction.preEligibilityCheckId === undefined) return [own];
    const check = checks.get(transaction.preEligibilityCheckId);
    if (check === undefined) return [own];
    const keys = check.attempts.map((id) => transactionKey(transaction.merchantId, id));
    return keys.includes(own) ? keys : [...keys, own];
  };

  const catchUp = (keys: readonly string[]): void => {
    const now = clock.now();
    for (;;) {
      let best: { due: Due; transaction: TransactionRecord } | undefined;
      for (const key of keys) {
        const transaction = transactions.get(key);
        if (transaction === undefined) continue;
        const due = nextDue(transaction);
        if (due === undefined || due.at > now) continue;
        if (best === undefined || due.at < best.due.at || (due.at === best.due.at && due.order < best.due.order)) {
          best = { due, transaction };
        }
      }
      if (best === undefined) return;
      const { due, transaction } = best;
      if (due.kind === 'expire') fail(transaction, 'EXPIRED', due.at);
      else if (due.kind === 'confirm') confirm(transaction, due.at);
      else completeRefund(transaction, due.refundId ?? '', 'SUCCESS', due.at);
    }
  };

  const find = (merchantId: string, transactionId: string): TransactionRecord | undefined => {
    const key = transactionKey(merchantId, transactionId);
    const transaction = transactions.get(key);
    if (transaction === undefined) return undefined;
    catchUp(groupOf(transaction));
    return transactions.get(key);
  };

  return {
    find,
    admit,
    create,
    createCheck,
    save,
    fail,
    addRefund,
    completeRefund,
    get timers() {
      return timers.size;
    },
  };
}

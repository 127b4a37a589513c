/**
 * The transaction step machine (D15) and everything that happens on the virtual clock: expiry
 * (D13), confirmation of a registered down payment, completion of refunds, and the rule that only
 * one attempt on a pre-eligibility check can succeed.
 *
 * The record is the source of truth: it stores when each pending event is due (`expiresAt`,
 * `confirmsAt`, a refund's `completesAt`). {@link TransactionEngine.find} applies every event that
 * is due, in time order, over the whole group of attempts of one check, before a handler looks at a
 * transaction; clock timers call the same function. So a read never shows a stale state, and the
 * attempt whose confirmation is due first is the one that succeeds.
 */
import { randomUUID } from 'node:crypto';
import type { FamilyContext } from '../context.js';
import { findTestUser, preEligibility } from '../test-users.js';
import {
  GATEWAY,
  isFinal,
  refundView,
  sendWebhook,
  transactionKey,
  transactionView,
  transactionWebhookUrl,
  type FailureReason,
  type GatewayState,
  type IneligibilityReason,
  type OtpState,
  type RefundRecord,
  type TransactionRecord,
} from './state.js';

export type Eligibility = { eligible: true } | { eligible: false; reason: IneligibilityReason };

/**
 * D12 against the documented test users (test-users.ts): blocked `USER_BLOCKED`, risk-declined
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

function nextDue(transaction: TransactionRecord): Due | undefined {
  const candidates: Due[] = [];
  if (!isFinal(transaction.step)) candidates.push({ at: transaction.expiresAt, order: 0, kind: 'expire' });
  if (transaction.step === 'wait' && transaction.confirmsAt !== undefined) {
    candidates.push({ at: transaction.confirmsAt, order: 1, kind: 'confirm' });
  }
  for (const refund of transaction.refunds) {
    if (refund.status === 'PENDING') candidates.push({ at: refund.completesAt, order: 2, kind: 'refund', refundId: refund.id });
  }
  return candidates.reduce<Due | undefined>(
    (best, due) => (best === undefined || due.at < best.at || (due.at === best.at && due.order < best.order) ? due : best),
    undefined,
  );
}

export interface TransactionEngine {
  /** The merchant's transaction with every due event applied, or undefined. */
  find(merchantId: string, transactionId: string): TransactionRecord | undefined;
  /** Applies the due events of every transaction of the merchant (before a list or settlement). */
  catchUpMerchant(merchantId: string): void;
  /** Makes the clock apply due events of this transaction at `at`. */
  wakeAt(merchantId: string, transactionId: string, at: number): void;
  /** Saves a record (the caller changed a copy). */
  save(transaction: TransactionRecord): void;
  /** Moves a non-final transaction to `failure` and sends the transaction webhook. */
  fail(transaction: TransactionRecord, reason: FailureReason, at: number): TransactionRecord;
  /** A transaction just created in `failure`: sends its webhook. */
  announceFinal(transaction: TransactionRecord): void;
  /** Moves a PENDING refund to SUCCESS or FAILED and sends the refund webhook. */
  completeRefund(transaction: TransactionRecord, refundId: string, status: 'SUCCESS' | 'FAILED', at: number): TransactionRecord;
}

export function createEngine(ctx: FamilyContext, state: GatewayState): TransactionEngine {
  const { clock } = ctx;
  const { transactions, checks, merchants } = state;

  const save = (transaction: TransactionRecord) =>
    transactions.set(transactionKey(transaction.merchantId, transaction.id), transaction);

  const announceFinal = (transaction: TransactionRecord) => {
    const merchant = merchants.get(transaction.merchantId);
    if (merchant === undefined) return;
    sendWebhook(ctx, merchant, 'transactionUpdated', transactionWebhookUrl(merchant, transaction), transaction.id, {
      transaction: transactionView(transaction),
    });
  };

  const finish = (transaction: TransactionRecord, outcome: 'success' | FailureReason, at: number): TransactionRecord => {
    const updated: TransactionRecord = { ...transaction, updatedAt: at, finishedAt: at };
    delete updated.confirmsAt;
    if (outcome === 'success') {
      updated.step = 'success';
      delete updated.failureReason;
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
    checks.set(check.id, { ...check, succeededTransactionId: transaction.id });
    finish(transaction, 'success', at);
    for (const otherId of check.attempts) {
      if (otherId === transaction.id) continue;
      const other = transactions.get(transactionKey(transaction.merchantId, otherId));
      if (other !== undefined && !isFinal(other.step)) fail(other, 'OTHER_ATTEMPT_SUCCEEDED', at);
    }
  };

  const completeRefund = (
    transaction: TransactionRecord,
    refundId: string,
    status: 'SUCCESS' | 'FAILED',
    at: number,
  ): TransactionRecord => {
    const refund = transaction.refunds.find((candidate) => candidate.id === refundId);
    if (refund === undefined || refund.status !== 'PENDING') return transaction;
    const completed: RefundRecord = { ...refund, status, updatedAt: at };
    const updated: TransactionRecord = {
      ...transaction,
      refunds: transaction.refunds.map((candidate) => (candidate.id === refundId ? completed : candidate)),
      updatedAt: at,
    };
    save(updated);
    const merchant = merchants.get(transaction.merchantId);
    if (merchant !== undefined) {
      // D23: the refund's own URL, else the transaction's (its override, else the merchant's default).
      const url = completed.webhookUrl ?? transactionWebhookUrl(merchant, updated);
      sendWebhook(ctx, merchant, 'refundUpdated', url, transaction.id, { refund: refundView(updated, completed) });
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

  const catchUpMerchant = (merchantId: string): void => {
    for (const transaction of transactions.values()) {
      if (transaction.merchantId !== merchantId) continue;
      const due = nextDue(transaction);
      if (due !== undefined && due.at <= clock.now()) find(merchantId, transaction.id);
    }
  };

  const wakeAt = (merchantId: string, transactionId: string, at: number) => {
    clock.schedule(at, () => find(merchantId, transactionId));
  };

  return { find, catchUpMerchant, wakeAt, save, fail, announceFinal, completeRefund };
}

/**
 * The gateway family's public views of its records: exactly the contract's shapes, built field by
 * field (nothing internal leaks; a transaction's request fields kept as sent are spread as they
 * are, records.ts), and the rules that read a record's state (status, final, next step).
 */
import type { components } from '../../../generated/types/gateway.js';
import { readJson } from '../stored-json.js';
import type { CheckRecord, FailureReason, MerchantRecord, RefundRecord, Step, TransactionRecord } from './records.js';
import { GATEWAY, time } from './values.js';

type Schemas = components['schemas'];
type MerchantView = Schemas['GatewayMerchant'];
type TransactionView = Schemas['GatewayTransaction'];
type TransactionStatus = Schemas['GatewayTransactionStatus'];
type RefundView = Schemas['GatewayRefund'];
type NextStep = Schemas['GatewayNextStep'];
type StageResponse = Schemas['GatewayTransactionStageResponse'];
type PreEligibilityView = Schemas['GatewayPreEligibilityCheck'];

const iso = time.iso;

export function merchantView(merchant: MerchantRecord): MerchantView {
  const enabled = merchant.stage === 'enabled' && merchant.credentials !== undefined;
  return {
    id: merchant.id,
    brandName: merchant.brandName,
    entityName: merchant.entityName,
    brandHomePageUrl: merchant.brandHomePageUrl,
    mccCode: merchant.mccCode,
    ...(merchant.defaultWebhookUrl === undefined ? {} : { defaultWebhookUrl: merchant.defaultWebhookUrl }),
    ...(merchant.defaultColor === undefined ? {} : { defaultColor: merchant.defaultColor }),
    stage: merchant.stage,
    documents: merchant.documents.map((document) => ({
      documentType: document.documentType,
      status: document.status,
      ...(document.status === 'rejected' && document.rejectionReason !== undefined
        ? { rejectionReason: document.rejectionReason }
        : {}),
    })),
    requiredDocumentTypes: [...GATEWAY.requiredDocumentTypes],
    ...(enabled
      ? { basicAuthDetails: { username: merchant.credentials!.username, password: merchant.credentials!.password } }
      : {}),
    createdAt: iso(merchant.createdAt),
    updatedAt: iso(merchant.updatedAt),
  };
}

export function checkView(check: CheckRecord): PreEligibilityView {
  return {
    id: check.id,
    eligible: check.eligible,
    ...(check.eligible || check.ineligibilityReason === undefined ? {} : { ineligibilityReason: check.ineligibilityReason }),
    amount: check.amount,
    expiresAt: iso(check.expiresAt),
  };
}

/**
 * The reasons that end a transaction as `CANCELLED` rather than `FAILED`: nobody completed it
 * (the payment gateway cancelled it, the shopper cancelled it on the hosted page, or its expiry
 * passed). Every other reason is a failure.
 */
const CANCEL_REASONS: ReadonlySet<FailureReason> = new Set<FailureReason>(['CANCELLED_BY_MERCHANT', 'CANCELLED_BY_USER', 'EXPIRED']);

export function statusOf(transaction: {
  step: Step;
  failureReason?: FailureReason | undefined;
  failedStatus?: 'FAILURE' | undefined;
}): TransactionStatus {
  const { step } = transaction;
  if (step === 'success') return 'SUCCESS';
  if (step !== 'failure') return 'PENDING';
  if (transaction.failureReason !== undefined && CANCEL_REASONS.has(transaction.failureReason)) return 'CANCELLED';
  // `FAILURE` is the alias of `FAILED` for a merchant set to it.
  return transaction.failedStatus ?? 'FAILED';
}

export function isFinal(step: Step): boolean {
  return step === 'success' || step === 'failure';
}

export function refundView(transaction: TransactionRecord, refund: RefundRecord): RefundView {
  return {
    id: refund.id,
    transactionId: transaction.id,
    amount: refund.amount,
    status: refund.status,
    createdAt: iso(refund.createdAt),
    updatedAt: iso(refund.updatedAt),
  };
}

/** `refundedAmount` counts PENDING and SUCCESS refunds. */
export function refundedAmount(transaction: TransactionRecord): number {
  return transaction.refundedAmount;
}

/** The contract's transaction, with its refunds (`state.refundsOf(transaction)`). */
export function transactionView(transaction: TransactionRecord, refunds: readonly RefundRecord[]): TransactionView {
  const status = statusOf(transaction);
  return {
    id: transaction.id,
    amount: transaction.amount,
    // The request's fields kept as sent (records.ts, `EchoedFields`); nothing when it had none.
    ...transaction.echoed,
    status,
    ...(status !== 'PENDING' && status !== 'SUCCESS' && transaction.failureReason !== undefined ? { failureReason: transaction.failureReason } : {}),
    notes: transaction.notesJson === undefined ? {} : readJson<Record<string, unknown>>(transaction.notesJson),
    user: { ...transaction.user },
    url: transaction.url,
    ...(transaction.preEligibilityCheckId === undefined ? {} : { preEligibilityCheckId: transaction.preEligibilityCheckId }),
    ...(transaction.downPayment === undefined
      ? {}
      : {
          downPayment: {
            amount: transaction.downPayment.amount,
            metaData: transaction.downPayment.metaData,
            registeredAt: iso(transaction.downPayment.registeredAt),
          },
        }),
    refundedAmount: refundedAmount(transaction),
    refunds: refunds.map((refund) => refundView(transaction, refund)),
    createdAt: iso(transaction.createdAt),
    updatedAt: iso(transaction.updatedAt),
    expiresAt: iso(transaction.expiresAt),
  };
}

/** `+919000000001` as `+91 90000 00001`, for the OTP's description. */
function spacedPhone(phoneNumber: string): string {
  const digits = phoneNumber.slice(3);
  return `+91 ${digits.slice(0, 5)} ${digits.slice(5)}`;
}

/** The next step and its options. */
export function nextStepOf(transaction: TransactionRecord): NextStep {
  switch (transaction.step) {
    case 'authenticate':
      return {
        step: 'authenticate',
        options: {
          userInputOptions: [
            {
              inputType: 'otp',
              referenceId: transaction.otp?.referenceId ?? '',
              label: 'OTP',
              description: `Enter the ${GATEWAY.otpLength}-digit OTP sent to ${spacedPhone(transaction.user.phoneNumber)}.`,
              length: GATEWAY.otpLength,
              type: 'numeric',
            },
          ],
        },
      };
    case 'payment':
      return {
        step: 'payment',
        options: { paymentOptions: { amount: transaction.downPaymentAmount, shouldEnforceAutopay: false } },
      };
    case 'wait':
      return { step: 'wait', options: { waitOptions: { pollIntervalSeconds: GATEWAY.pollIntervalSeconds } } };
    case 'success':
      return { step: 'success', options: {} };
    case 'failure':
      return { step: 'failure', options: { failureOptions: { failureReason: transaction.failureReason ?? 'EXPIRED' } } };
  }
}

export function stageView(transaction: TransactionRecord, refunds: readonly RefundRecord[]): StageResponse {
  return { transaction: transactionView(transaction, refunds), transactionStage: { nextStep: nextStepOf(transaction) } };
}

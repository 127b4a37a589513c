/**
 * The gateway family's state: the records it keeps in the store, the documented sandbox values,
 * the public views of the records (exactly the contract's shapes) and the signed webhooks (D23).
 *
 * Records are plain JSON (store.ts): times are epoch milliseconds and become RFC 3339 strings in the
 * views. Every rule that changes a record reads, checks and writes it without an `await` in
 * between, so concurrent requests cannot both pass a check.
 */
import type { components } from '../../../generated/types/gateway.js';
import type { FamilyContext } from '../context.js';
import { DOWN_PAYMENT, TEST_OTP } from '../fixtures.js';
import { ChildRecords, type Collection } from '../store.js';
import { readJson } from '../stored-json.js';
import { MerchantIndex } from './merchant-index.js';

type Schemas = components['schemas'];

export type MerchantView = Schemas['GatewayMerchant'];
export type MerchantStage = Schemas['GatewayMerchantStage'];
export type DocumentType = Schemas['GatewayDocumentType'];
export type DocumentStatus = Schemas['GatewayMerchantDocument']['status'];
export type TransactionView = Schemas['GatewayTransaction'];
export type TransactionStatus = Schemas['GatewayTransactionStatus'];
export type FailureReason = Schemas['GatewayFailureReason'];
export type RefundView = Schemas['GatewayRefund'];
export type RefundStatus = Schemas['GatewayRefundStatus'];
export type NextStep = Schemas['GatewayNextStep'];
export type Step = NextStep['step'];
export type StageResponse = Schemas['GatewayTransactionStageResponse'];
export type PreEligibilityView = Schemas['GatewayPreEligibilityCheck'];
export type IneligibilityReason = Schemas['GatewayIneligibilityReason'];
export type PaymentMetaData = Schemas['GatewayPaymentMetaData'];
export type SettlementView = Schemas['GatewaySettlement'];
export type MerchantConfigurationView = Schemas['GatewayMerchantConfiguration'];

// ---------------------------------------------------------------------------------------------
// The documented sandbox values (docs/sandbox.md, section Gateway)

const SECOND = 1000;
const MINUTE = 60 * SECOND;
const HOUR = 60 * MINUTE;
const DAY = 24 * HOUR;

export const GATEWAY = Object.freeze({
  /** D08: verification needs these two documents. */
  requiredDocumentTypes: Object.freeze(['PAN', 'CANCELLED_CHEQUE'] as const satisfies readonly DocumentType[]),
  /** D08: a document file is at most 700 KiB before encoding. */
  maxDocumentBytes: 700 * 1024,
  /** Automated verification completes this long (virtual time) after the last required upload. */
  verificationDelayMs: 5 * SECOND,
  /** An entityName containing this (any case) fails the merchant's first verification (PAN rejected). */
  rejectTrigger: 'reject',
  /** D11: an invitation to the dashboard is valid for 7 days. */
  invitationValidityMs: 7 * DAY,
  /** The sandbox holds at most this many merchants; another create answers 409 INVALID_STATE. */
  maxMerchants: 10_000,
  /** Dashboard users of one merchant, at most; another answers 409 INVALID_STATE. */
  maxDashboardUsers: 50,
  /** Invitations kept (the newest); an older one's login URL answers 404 like an unknown one. */
  keptInvitations: 10_000,
  /** D12: a pre-eligibility check is reusable for 15 minutes. */
  checkValidityMs: 15 * MINUTE,
  /** The available credit of a phone number that is not one of the documented test users (₹50,000). */
  defaultCreditLimit: 5_000_000,
  /** D35: the API generation of every gateway merchant (`GET /api/merchant/configuration`). */
  apiVersion: 2,
  /** D35: the largest order amount a merchant may create, paise: the contract's amount maximum (D24). */
  maxOrderAmount: 10_000_000,
  /** D13: an expiryTimestamp at or above this is read as epoch milliseconds, below as seconds. */
  millisecondTimestampFrom: 1_000_000_000_000,
  /** D13: without expiryTimestamp a transaction expires 15 minutes after creation. */
  defaultExpiryMs: 15 * MINUTE,
  /** D13: expiryTimestamp lies between 1 minute and 24 hours after creation. */
  minExpiryMs: MINUTE,
  maxExpiryMs: 24 * HOUR,
  /** The OTP every user "receives" (the sandbox fixtures). */
  correctOtp: TEST_OTP.correct,
  /** An OTP that always answers OTP_EXPIRED (and issues a new referenceId). */
  expiredOtp: TEST_OTP.expired,
  otpLength: TEST_OTP.length,
  /** An OTP (its referenceId) expires this long after it was issued. */
  otpValidityMs: 5 * MINUTE,
  /** D15: the third wrong OTP fails the transaction. */
  maxOtpAttempts: TEST_OTP.maxWrong,
  /** The down payment is this share of the amount (percent), rounded half up to whole paise. */
  downPaymentPercent: DOWN_PAYMENT.percent,
  /** A down payment is at least ₹1 (the contract's minimum amount) and at most the whole amount. */
  minDownPayment: DOWN_PAYMENT.min,
  /** D16: `waitOptions.pollIntervalSeconds`. */
  pollIntervalSeconds: 2,
  /** A registered down payment is confirmed (or not) this long after register-external. */
  confirmationDelayMs: 2 * SECOND,
  /** A refund becomes SUCCESS this long after it was requested. */
  refundDelayMs: 1 * SECOND,
  /** D19: the fee (per cent of the day's gross) when `mdrChargedOnMerchant` is true. */
  mdrPercent: 2,
  /** D19: the default and the longest settlement range. */
  defaultSettlementDays: 7,
  maxSettlementRangeDays: 31,
  /** D19: list page size. */
  defaultListLimit: 20,
});

/** The down payment of an amount (the sandbox fixtures' rule, shared with the web checkout). */
export { downPaymentFor } from '../fixtures.js';

// ---------------------------------------------------------------------------------------------
// Records

export interface StoredDocument {
  documentType: DocumentType;
  status: DocumentStatus;
  rejectionReason?: string;
  /** What the first bytes showed (the file itself is not kept). */
  format: 'PDF' | 'PNG' | 'JPEG';
  bytes: number;
  uploadedAt: number;
}

export interface DashboardUser {
  email: string;
  name: string;
  token: string;
  invitedAt: number;
  expiresAt: number;
}

/** Collection `gateway.merchants`, keyed by merchant id. */
export interface MerchantRecord {
  id: string;
  brandName: string;
  entityName: string;
  brandHomePageUrl: string;
  mccCode: number;
  defaultWebhookUrl?: string;
  defaultColor?: string;
  settlementDetails?: Schemas['GatewaySettlementDetails'];
  hasLogo: boolean;
  hasFavicon: boolean;
  stage: MerchantStage;
  documents: StoredDocument[];
  /** When automated verification completes (virtual time), while `verificationInProgress`. */
  verificationDueAt?: number;
  /** How many verifications ran (the reject trigger fails only the first). */
  verifications: number;
  /**
   * The Transactional API credentials, issued on enable. They stop working on disable (their
   * index entry is deleted) but are kept here to sign the webhooks of transactions still running.
   */
  credentials?: { username: string; password: string };
  disabledReason?: string;
  dashboardUsers: DashboardUser[];
  createdAt: number;
  updatedAt: number;
}

/** Collection `gateway.credentials`, keyed by Basic username: which merchant they identify. */
export interface CredentialRecord {
  username: string;
  password: string;
  merchantId: string;
}

/** Collection `gateway.invitations`, keyed by token: the dashboard invitations (D11). */
export interface InvitationRecord {
  token: string;
  merchantId: string;
  email: string;
  name: string;
  createdAt: number;
  expiresAt: number;
}

/** Collection `gateway.checks`, keyed by check id (a UUID): pre-eligibility checks (D12). */
export interface CheckRecord {
  id: string;
  merchantId: string;
  phoneNumber: string;
  amount: number;
  eligible: boolean;
  ineligibilityReason?: IneligibilityReason;
  createdAt: number;
  expiresAt: number;
  /**
   * The ids of the merchant's transactions that reference the check and are not final yet, in
   * creation order: a final attempt leaves the list (only open attempts take part in the group's
   * rules), so the list is as long as the attempts running at once, not every attempt ever made.
   */
  attempts: string[];
  /** The one attempt that succeeded; set at the moment of success, never changed afterwards. */
  succeededTransactionId?: string;
}

export interface OtpState {
  referenceId: string;
  issuedAt: number;
  expiresAt: number;
  /** Wrong OTPs submitted so far (over every referenceId of the transaction). */
  wrongAttempts: number;
  /** referenceIds issued before the current one (they answer OTP_EXPIRED). */
  previousReferenceIds: string[];
}

/**
 * Collection `gateway.refunds`: each refund is its own record, under `<transactionKey>#<position>`
 * ({@link ChildRecords}); `gateway.refundIds` maps `<transactionKey>#<refund id>` to the position.
 */
export interface RefundRecord {
  id: string;
  /** 0 for the transaction's first refund. */
  position: number;
  amount: number;
  /** `refund.amount` as requested (0 when absent): a repeat with the same id compares it too. */
  requestedAmount: number;
  status: RefundStatus;
  webhookUrl?: string;
  createdAt: number;
  updatedAt: number;
  /** When the refund completes (virtual time) while PENDING. */
  completesAt: number;
}

/** Collection `gateway.transactions`, keyed by {@link transactionKey}. */
export interface TransactionRecord {
  merchantId: string;
  id: string;
  amount: number;
  /**
   * D30: the merchant's free JSON object, echoed unchanged; kept as its JSON text, parsed when
   * read (D67). Undefined: none was sent (or `{}`), and the record carries `{}`.
   */
  notesJson?: string;
  /** The bytes of `notesJson`, counted against `limits.notesBytes`. */
  notesBytes: number;
  user: Schemas['User'];
  /** D14: optional; recommended for the PG-driven flow. */
  deviceInformation?: Schemas['DeviceInformation'];
  /** D36: `LIVE` or `TEST` as sent, recorded and not echoed; the sandbox treats both as test. */
  mode?: 'LIVE' | 'TEST';
  /** D14: the hosted page (`transaction.url`). */
  url: string;
  preEligibilityCheckId?: string;
  /** createConfiguration without expiryTimestamp and without empty overrides (webhook URL, hosted-page options). */
  configuration: Omit<Schemas['GatewayTransactionCreateConfiguration'], 'expiryTimestamp'>;
  step: Step;
  failureReason?: FailureReason;
  otp?: OtpState;
  downPaymentAmount: number;
  downPayment?: { amount: number; metaData: PaymentMetaData; registeredAt: number };
  /** When the registered down payment is confirmed or not, while in `wait`. */
  confirmsAt?: number;
  /** How many refunds there are (records of `gateway.refunds`, never copied with the transaction). */
  refundCount: number;
  /** D14: the sum of the PENDING and SUCCESS refunds. */
  refundedAmount: number;
  /** No refund before this position is PENDING (refunds complete in the order they were made). */
  nextPendingRefund: number;
  createdAt: number;
  updatedAt: number;
  expiresAt: number;
  /** When it reached `success` or `failure`. */
  finishedAt?: number;
}

export const COLLECTIONS = Object.freeze({
  merchants: 'gateway.merchants',
  credentials: 'gateway.credentials',
  invitations: 'gateway.invitations',
  checks: 'gateway.checks',
  transactions: 'gateway.transactions',
  refunds: 'gateway.refunds',
  refundIds: 'gateway.refundIds',
  settlementDays: 'gateway.settlementDays',
});

/**
 * Collection `gateway.settlementDays`, keyed by `<merchantId>/<settlementDate>`: what each day's
 * settlement entry adds up, kept as transactions and refunds succeed (D19), so a settlement reads
 * at most 32 records, and transactions forgotten by retention still count.
 */
export interface SettlementDayRecord {
  gross: number;
  refunded: number;
  count: number;
}

/** Transactions are per merchant: the same id may exist at two merchants. */
export function transactionKey(merchantId: string, transactionId: string): string {
  return `${merchantId}/${transactionId}`;
}

export interface GatewayState {
  merchants: Collection<MerchantRecord>;
  credentials: Collection<CredentialRecord>;
  invitations: Collection<InvitationRecord>;
  checks: Collection<CheckRecord>;
  transactions: Collection<TransactionRecord>;
  refunds: ChildRecords<RefundRecord>;
  refundIds: Collection<number>;
  settlementDays: Collection<SettlementDayRecord>;
  /** Each merchant's transactions in creation order (for the list). */
  index: MerchantIndex;
  /** The refunds of a transaction, in the order they were made. */
  refundsOf(transaction: TransactionRecord): RefundRecord[];
  /** A refund of a transaction by its id. */
  findRefund(transaction: TransactionRecord, refundId: string): RefundRecord | undefined;
}

export function gatewayState(ctx: FamilyContext): GatewayState {
  const transactions = ctx.store.collection<TransactionRecord>(COLLECTIONS.transactions);
  const refunds = new ChildRecords(ctx.store.collection<RefundRecord>(COLLECTIONS.refunds));
  const refundIds = ctx.store.collection<number>(COLLECTIONS.refundIds);
  const index = new MerchantIndex((merchantId, id) => transactions.has(transactionKey(merchantId, id)));
  // Records already in the store (a store that outlives the process) join the index.
  for (const transaction of transactions.values()) index.add(transaction.merchantId, transaction.id, transaction.createdAt);
  return {
    merchants: ctx.store.collection<MerchantRecord>(COLLECTIONS.merchants),
    credentials: ctx.store.collection<CredentialRecord>(COLLECTIONS.credentials),
    invitations: ctx.store.collection<InvitationRecord>(COLLECTIONS.invitations),
    checks: ctx.store.collection<CheckRecord>(COLLECTIONS.checks),
    transactions,
    refunds,
    refundIds,
    settlementDays: ctx.store.collection<SettlementDayRecord>(COLLECTIONS.settlementDays),
    index,
    refundsOf: (transaction) =>
      refunds.range(transactionKey(transaction.merchantId, transaction.id), 0, transaction.refundCount),
    findRefund(transaction, refundId) {
      const key = transactionKey(transaction.merchantId, transaction.id);
      const position = refundIds.get(`${key}#${refundId}`);
      return position === undefined ? undefined : refunds.get(key, position);
    },
  };
}

/** The authenticated merchant of a Transactional API call. */
export interface MerchantPrincipal {
  merchantId: string;
}

// ---------------------------------------------------------------------------------------------
// Views: the contract's shapes, built field by field (nothing internal leaks)

const iso = (at: number) => new Date(at).toISOString();

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
 * D15: the reasons that end a transaction as `CANCELLED` rather than `FAILED`: nobody completed it
 * (the payment gateway cancelled it, the shopper cancelled it on the hosted page, or its expiry
 * passed). Every other reason is a failure.
 */
const CANCEL_REASONS: ReadonlySet<FailureReason> = new Set<FailureReason>(['CANCELLED_BY_MERCHANT', 'CANCELLED_BY_USER', 'EXPIRED']);

export function statusOf(transaction: { step: Step; failureReason?: FailureReason | undefined }): TransactionStatus {
  const { step } = transaction;
  if (step === 'success') return 'SUCCESS';
  if (step !== 'failure') return 'PENDING';
  return transaction.failureReason !== undefined && CANCEL_REASONS.has(transaction.failureReason) ? 'CANCELLED' : 'FAILED';
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

/** D14: `refundedAmount` counts PENDING and SUCCESS refunds. */
export function refundedAmount(transaction: TransactionRecord): number {
  return transaction.refundedAmount;
}

/** The contract's transaction, with its refunds (`state.refundsOf(transaction)`). */
export function transactionView(transaction: TransactionRecord, refunds: readonly RefundRecord[]): TransactionView {
  const status = statusOf(transaction);
  return {
    id: transaction.id,
    amount: transaction.amount,
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

/** D15/D16: the next step and its options. */
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

// ---------------------------------------------------------------------------------------------
// Webhooks (D23)

/**
 * Sends a gateway webhook: the exact body signed with the merchant's Transactional API password
 * (`base64(SHA-256(body + password))`), in order per transaction, success on any 2xx or 3xx. Without a
 * URL the event is recorded as `not_sent`.
 */
export function sendWebhook(
  ctx: FamilyContext,
  merchant: MerchantRecord,
  event: 'transactionUpdated' | 'refundUpdated',
  url: string | undefined,
  transactionId: string,
  payload: unknown,
): void {
  ctx.deliveries.record({
    url: url ?? null,
    body: JSON.stringify(payload),
    // Signed when sent (or read) with this password: the record keeps a reference, not a copy.
    signingKey: merchant.credentials?.password,
    orderingScope: `gateway:${merchant.id}:`,
    successStatus: '2xx-3xx',
    family: 'gateway',
    event,
    transactionId,
  });
}

/**
 * A webhook URL a request gives, checked (webhook-targets.ts): a 400 naming `field` when it
 * carries credentials or points at a refused target, else undefined.
 */
export function webhookUrlProblem(ctx: FamilyContext, url: string | undefined, field: string) {
  if (url === undefined) return undefined;
  const problem = ctx.deliveries.targetProblem(url);
  if (problem === undefined) return undefined;
  return ctx.errors.badRequest(`${field.slice(1).replaceAll('/', '.')} ${problem.message}`, [{ field, issue: problem.issue }]);
}

/** The transaction webhook's URL: the transaction's override, else the merchant's default. */
export function transactionWebhookUrl(merchant: MerchantRecord | undefined, transaction: TransactionRecord): string | undefined {
  return transaction.configuration.webhookUrl ?? merchant?.defaultWebhookUrl;
}

export const time = { SECOND, MINUTE, HOUR, DAY, iso };

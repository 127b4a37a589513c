/**
 * The gateway family's records in the store (store.ts): plain JSON, times in epoch milliseconds
 * (the views, views.ts, turn them into RFC 3339 strings); their collections, and the state a
 * handler works on ({@link gatewayState}). Every rule that changes a record reads, checks and
 * writes it without an `await` in between, so concurrent requests cannot both pass a check.
 */
import type { components } from '../../../generated/types/gateway.js';
import type { FamilyContext } from '../context.js';
import { ChildRecords, type Collection } from '../store.js';
import { MerchantIndex } from './merchant-index.js';

type Schemas = components['schemas'];

export type DocumentType = Schemas['GatewayDocumentType'];
type DocumentStatus = Schemas['GatewayMerchantDocument']['status'];
type MerchantStage = Schemas['GatewayMerchantStage'];
type RefundStatus = Schemas['GatewayRefundStatus'];
export type FailureReason = Schemas['GatewayFailureReason'];
export type Step = Schemas['GatewayNextStep']['step'];
export type IneligibilityReason = Schemas['GatewayIneligibilityReason'];
type PaymentMetaData = Schemas['GatewayPaymentMetaData'];

export interface StoredDocument {
  documentType: DocumentType;
  status: DocumentStatus;
  rejectionReason?: string;
  /** What the first bytes showed (the file itself is not kept). */
  format: 'PDF' | 'PNG' | 'JPEG';
  bytes: number;
  uploadedAt: number;
}

interface DashboardUser {
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
  /**
   * D120: the status its failed transactions answer, `FAILURE` (the alias) for a merchant set to
   * it (the ready-made test merchant, D123; `POST /sandbox/gateway/merchants/{id}/failed-status`);
   * absent: `FAILED`, the description's word.
   */
  failedStatus?: 'FAILURE';
  dashboardUsers: DashboardUser[];
  createdAt: number;
  updatedAt: number;
}

/** Collection `gateway.credentials`, keyed by Basic username: which merchant they identify. */
interface CredentialRecord {
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
  /** D120: the merchant's `failedStatus` when the transaction was created; absent: `FAILED`. */
  failedStatus?: 'FAILURE';
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
interface SettlementDayRecord {
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

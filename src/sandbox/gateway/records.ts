/**
 * The gateway family's records in the store (store.ts): plain JSON, times in epoch milliseconds
 * (the views, views.ts, turn them into RFC 3339 strings); their collections, and the state a
 * handler works on ({@link gatewayState}). Every rule that changes a record reads, checks and
 * writes it without an `await` in between, so concurrent requests cannot both pass a check.
 *
 * A record is never spread: it is created as a literal typed {@link EveryField} and changed on a
 * copy made by its `copy…` function below (one per record, field by field, src/sandbox/records.ts),
 * so a field added to an interface is a type error until its creation and its copy name it, and
 * test/sandbox/records.test.ts checks each copy against the interface's own list of keys.
 *
 * A transaction's request fields that are kept and returned as they were sent need none of that:
 * the record holds them together in {@link TransactionRecord.echoed}, the view spreads them, and
 * their type is computed from the request and view schemas ({@link EchoedFields}), so such a field
 * is added in the documents alone.
 */
import type { components } from '../../../generated/types/gateway.js';
import type { FamilyContext } from '../context.js';
import type { EveryField } from '../records.js';
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
type CreateRequest = Schemas['GatewayTransactionCreateRequest'];

/**
 * The create request's fields the record keeps under a name or in a form of its own, or keeps
 * without returning them (`mode`, `deviceInformation`): in the request's `transaction`, and at
 * the top of the body. Every other field is kept as sent ({@link EchoedFields}).
 */
export const NAMED_IN_TRANSACTION = ['id', 'amount', 'notes', 'mode'] as const satisfies readonly (keyof CreateRequest['transaction'])[];
export const NAMED_IN_BODY = ['transaction', 'user', 'deviceInformation', 'preEligibilityCheckId', 'createConfiguration'] as const satisfies readonly (keyof CreateRequest)[];

/**
 * The create request's fields not named above, of `transaction` and of the body, kept as sent and
 * returned at the top of the transaction's view under the same names. Computed from the two
 * schemas: a request field that the view's schema (`GatewayTransaction`) does not declare, or
 * declares with another type, is a type error here until it is added to the view's schema, or
 * named above and kept in a field of its own. (Empty while the contract has no such field.)
 */
type EchoedFields = Pick<
  Schemas['GatewayTransaction'],
  Exclude<keyof CreateRequest['transaction'], (typeof NAMED_IN_TRANSACTION)[number]> | Exclude<keyof CreateRequest, (typeof NAMED_IN_BODY)[number]>
>;

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
   * The status its failed transactions answer: `FAILURE` (the alias) for a merchant set to it
   * (the ready-made test merchant; `POST /sandbox/gateway/merchants/{id}/failed-status`); absent:
   * `FAILED`, the description's word (why: D120).
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

/** Collection `gateway.invitations`, keyed by token: the dashboard invitations. */
export interface InvitationRecord {
  token: string;
  merchantId: string;
  email: string;
  name: string;
  createdAt: number;
  expiresAt: number;
}

/** Collection `gateway.checks`, keyed by check id (a UUID): pre-eligibility checks. */
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
   * The merchant's free JSON object, echoed unchanged; kept as its JSON text, parsed when
   * read (why: D67). Undefined: none was sent (or `{}`), and the record carries `{}`.
   */
  notesJson?: string;
  /** The bytes of `notesJson`, counted against `limits.notesBytes`. */
  notesBytes: number;
  user: Schemas['User'];
  /** Optional; recommended for the PG-driven flow. */
  deviceInformation?: Schemas['DeviceInformation'];
  /** `LIVE` or `TEST` as sent, recorded and not echoed; the sandbox treats both as test. */
  mode?: 'LIVE' | 'TEST';
  /** The hosted page (`transaction.url`). */
  url: string;
  preEligibilityCheckId?: string;
  /** createConfiguration without expiryTimestamp and without empty overrides (webhook URL, hosted-page options). */
  configuration: Omit<Schemas['GatewayTransactionCreateConfiguration'], 'expiryTimestamp'>;
  step: Step;
  failureReason?: FailureReason;
  /** The merchant's `failedStatus` when the transaction was created; absent: `FAILED`. */
  failedStatus?: 'FAILURE';
  otp?: OtpState;
  downPaymentAmount: number;
  downPayment?: { amount: number; metaData: PaymentMetaData; registeredAt: number };
  /** When the registered down payment is confirmed or not, while in `wait`. */
  confirmsAt?: number;
  /** How many refunds there are (records of `gateway.refunds`, never copied with the transaction). */
  refundCount: number;
  /** The sum of the PENDING and SUCCESS refunds. */
  refundedAmount: number;
  /** No refund before this position is PENDING (refunds complete in the order they were made). */
  nextPendingRefund: number;
  createdAt: number;
  updatedAt: number;
  expiresAt: number;
  /** When it reached `success` or `failure`. */
  finishedAt?: number;
  /**
   * The request's fields kept as sent and returned as they are ({@link EchoedFields}); undefined
   * when the request had none. Never changed after creation (a copy shares it).
   */
  echoed?: EchoedFields;
}

/** A changeable copy of a merchant, field by field, of every field (src/sandbox/records.ts). */
export function copyMerchant(merchant: MerchantRecord): MerchantRecord {
  const copy: EveryField<MerchantRecord> = {
    id: merchant.id,
    brandName: merchant.brandName,
    entityName: merchant.entityName,
    brandHomePageUrl: merchant.brandHomePageUrl,
    mccCode: merchant.mccCode,
    defaultWebhookUrl: merchant.defaultWebhookUrl,
    defaultColor: merchant.defaultColor,
    settlementDetails: merchant.settlementDetails,
    hasLogo: merchant.hasLogo,
    hasFavicon: merchant.hasFavicon,
    stage: merchant.stage,
    documents: merchant.documents,
    verificationDueAt: merchant.verificationDueAt,
    verifications: merchant.verifications,
    credentials: merchant.credentials,
    disabledReason: merchant.disabledReason,
    failedStatus: merchant.failedStatus,
    dashboardUsers: merchant.dashboardUsers,
    createdAt: merchant.createdAt,
    updatedAt: merchant.updatedAt,
  };
  return copy;
}

/** A changeable copy of a merchant's document, of every field (src/sandbox/records.ts). */
export function copyDocument(document: StoredDocument): StoredDocument {
  const copy: EveryField<StoredDocument> = {
    documentType: document.documentType,
    status: document.status,
    rejectionReason: document.rejectionReason,
    format: document.format,
    bytes: document.bytes,
    uploadedAt: document.uploadedAt,
  };
  return copy;
}

/** A changeable copy of a pre-eligibility check, of every field (src/sandbox/records.ts). */
export function copyCheck(check: CheckRecord): CheckRecord {
  const copy: EveryField<CheckRecord> = {
    id: check.id,
    merchantId: check.merchantId,
    phoneNumber: check.phoneNumber,
    amount: check.amount,
    eligible: check.eligible,
    ineligibilityReason: check.ineligibilityReason,
    createdAt: check.createdAt,
    expiresAt: check.expiresAt,
    attempts: check.attempts,
    succeededTransactionId: check.succeededTransactionId,
  };
  return copy;
}

/** A changeable copy of a refund, of every field (src/sandbox/records.ts). */
export function copyRefund(refund: RefundRecord): RefundRecord {
  const copy: EveryField<RefundRecord> = {
    id: refund.id,
    position: refund.position,
    amount: refund.amount,
    requestedAmount: refund.requestedAmount,
    status: refund.status,
    webhookUrl: refund.webhookUrl,
    createdAt: refund.createdAt,
    updatedAt: refund.updatedAt,
    completesAt: refund.completesAt,
  };
  return copy;
}

/** A changeable copy of a transaction's OTP state, of every field (src/sandbox/records.ts). */
export function copyOtp(otp: OtpState): OtpState {
  const copy: EveryField<OtpState> = {
    referenceId: otp.referenceId,
    issuedAt: otp.issuedAt,
    expiresAt: otp.expiresAt,
    wrongAttempts: otp.wrongAttempts,
    previousReferenceIds: otp.previousReferenceIds,
  };
  return copy;
}

/**
 * A changeable copy of a transaction, of every field (src/sandbox/records.ts); its refunds are
 * records of their own and are not copied with it.
 */
export function copyTransaction(transaction: TransactionRecord): TransactionRecord {
  const copy: EveryField<TransactionRecord> = {
    merchantId: transaction.merchantId,
    id: transaction.id,
    amount: transaction.amount,
    notesJson: transaction.notesJson,
    notesBytes: transaction.notesBytes,
    user: transaction.user,
    deviceInformation: transaction.deviceInformation,
    mode: transaction.mode,
    url: transaction.url,
    preEligibilityCheckId: transaction.preEligibilityCheckId,
    configuration: transaction.configuration,
    step: transaction.step,
    failureReason: transaction.failureReason,
    failedStatus: transaction.failedStatus,
    otp: transaction.otp,
    downPaymentAmount: transaction.downPaymentAmount,
    downPayment: transaction.downPayment,
    confirmsAt: transaction.confirmsAt,
    refundCount: transaction.refundCount,
    refundedAmount: transaction.refundedAmount,
    nextPendingRefund: transaction.nextPendingRefund,
    createdAt: transaction.createdAt,
    updatedAt: transaction.updatedAt,
    expiresAt: transaction.expiresAt,
    finishedAt: transaction.finishedAt,
    echoed: transaction.echoed,
  };
  return copy;
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
 * settlement entry adds up, kept as transactions and refunds succeed, so a settlement reads
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

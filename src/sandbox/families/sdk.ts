/**
 * The SDK flow (openapi/sdk.yaml): initiate, status check and refund, signed with X-Partnerid and
 * X-Signature; the user's confirmation in the app is played by the sandbox endpoints
 * `POST /sandbox/sdk/transactions/{merchantTransactionId}/confirm|cancel|fail`.
 *
 * Errors are `{ message: <CODE>, detail? }`; a transaction not confirmed within 60 s fails; a status
 * check of an unknown id answers NO_SUCH_TRANSACTION, a refund of a transaction not SUCCESS
 * TRANSACTION_NOT_REFUNDABLE.
 */
import type { operations } from '../../../generated/types/sdk.js';
import type { FamilyContext } from '../context.js';
import type { EveryField } from '../records.js';
import { ChildRecords } from '../store.js';
import { sdkAuth, type Partner } from './partner.js';
import { directLifecycle, refundDirect, type DirectRefund, type DirectStatus } from './direct.js';

/** An SDK transaction not confirmed within 60 seconds fails. */
export const SDK_EXPIRY_MS = 60_000;

type SdkRefund = DirectRefund;

/** The record of an SDK-flow transaction (collection `sdk.transactions`, keyed by its id). */
export interface SdkTransaction {
  merchantTransactionId: string;
  partnerId: string;
  userPhoneNumber: string;
  userId: string;
  amount: number;
  status: DirectStatus;
  /** How a FAILURE came about. */
  failureReason?: 'USER_FAILED' | 'EXPIRED';
  refundedAmount: number;
  /** How many refunds there are; each is its own record of `sdk.refunds` (see {@link ChildRecords}). */
  refundCount: number;
  createdAt: number;
  updatedAt: number;
  expiresAt: number;
}

export const SDK_TRANSACTIONS = 'sdk.transactions';
export const SDK_REFUNDS = 'sdk.refunds';
/** `GET /sandbox/sdk/transactions/{id}` shows at most this many refunds: the newest. */
const SHOWN_REFUNDS = 100;
/** The initiate's answer, the same for every transaction: made once, frozen (send reads a reply, never changes it). */
const INITIATED = Object.freeze({ status: 201, body: Object.freeze({ message: 'TRANSACTION_INITIATED' }) } as const);

export function registerSdk(ctx: FamilyContext): void {
  const { errors, clock, config } = ctx;
  const transactions = ctx.store.collection<SdkTransaction>(SDK_TRANSACTIONS);
  const refunds = new ChildRecords(ctx.store.collection<SdkRefund>(SDK_REFUNDS));
  const authenticate = sdkAuth(config, errors);

  const noSuchTransaction = (id: string) =>
    errors.error(400, 'NO_SUCH_TRANSACTION', `No transaction with merchantTransactionId '${id}'.`);

  const lifecycle = directLifecycle(ctx, 'sdk', {
    collection: transactions,
    collectionName: SDK_TRANSACTIONS,
    idOf: (transaction) => transaction.merchantTransactionId,
    webhookPayload: (merchantTransactionId, status) => ({ merchantTransactionId, status }),
    pathParam: 'merchantTransactionId',
    label: 'SDK transaction',
    copy: copySdkTransaction,
    expiryMs: SDK_EXPIRY_MS,
    onEvict: (id) => {
      const transaction = transactions.get(id);
      if (transaction !== undefined) refunds.deleteRange(id, 0, transaction.refundCount);
    },
  });
  const { find } = lifecycle;

  ctx.route<operations['initiateSdkTransaction'], Partner>('initiateSdkTransaction', {
    authenticate,
    handle({ body, principal }) {
      const id = body.merchantTransactionId;
      if (transactions.has(id)) {
        return errors.error(400, 'DUPLICATE_TRANSACTION_ID', `merchantTransactionId '${id}' was already initiated.`);
      }
      const refused = lifecycle.admit(principal.id, 0);
      if (refused !== undefined) return refused;
      const now = clock.now();
      const transaction: EveryField<SdkTransaction> = {
        merchantTransactionId: id,
        partnerId: principal.id,
        userPhoneNumber: body.userPhoneNumber,
        userId: body.userId,
        amount: body.amount,
        status: 'PENDING',
        failureReason: undefined,
        refundedAmount: 0,
        refundCount: 0,
        createdAt: now,
        updatedAt: now,
        expiresAt: now + SDK_EXPIRY_MS,
      };
      lifecycle.start(transaction);
      return INITIATED;
    },
  });

  ctx.route<operations['checkSdkTransactionStatus'], Partner>('checkSdkTransactionStatus', {
    authenticate,
    handle({ body, principal }) {
      const transaction = find(body.merchantTransactionId, principal);
      if (transaction === undefined) return noSuchTransaction(body.merchantTransactionId);
      return { status: 200, body: { message: transaction.status } };
    },
  });

  ctx.route<operations['refundSdkTransaction'], Partner>('refundSdkTransaction', {
    authenticate,
    handle({ body, principal }) {
      // Check and update without an await in between: concurrent refunds cannot overspend.
      const transaction = find(body.merchantTransactionId, principal);
      if (transaction === undefined) return noSuchTransaction(body.merchantTransactionId);
      const refund = refundDirect(copySdkTransaction, errors, refunds, transaction.merchantTransactionId, transaction, body.amount, {
        now: clock.now(),
        iso: clock.iso(),
      });
      if (!refund.ok) return refund.reply;
      transactions.set(transaction.merchantTransactionId, refund.updated);
      return { status: 200, body: { message: 'ok' } };
    },
  });

  // The user's action in the app.
  lifecycle.registerUserActions((updated) => ({ merchantTransactionId: updated.merchantTransactionId, status: updated.status }));

  ctx.sandboxRoute('GET', '/sandbox/sdk/transactions/{merchantTransactionId}', (request) => {
    const id = request.params.merchantTransactionId ?? '';
    const transaction = find(id);
    if (transaction === undefined || !ctx.access.allows(request, { partner: transaction.partnerId })) return lifecycle.notFound(id);
    const shown = refunds.range(id, Math.max(0, transaction.refundCount - SHOWN_REFUNDS), transaction.refundCount);
    return { status: 200, body: describeSdkTransaction(transaction, shown) };
  });
}

/** A changeable copy, field by field (see `copy` in direct.ts), of every field (src/sandbox/records.ts). */
export function copySdkTransaction(transaction: SdkTransaction): SdkTransaction {
  const copy: EveryField<SdkTransaction> = {
    merchantTransactionId: transaction.merchantTransactionId,
    partnerId: transaction.partnerId,
    userPhoneNumber: transaction.userPhoneNumber,
    userId: transaction.userId,
    amount: transaction.amount,
    status: transaction.status,
    failureReason: transaction.failureReason,
    refundedAmount: transaction.refundedAmount,
    refundCount: transaction.refundCount,
    createdAt: transaction.createdAt,
    updatedAt: transaction.updatedAt,
    expiresAt: transaction.expiresAt,
  };
  return copy;
}

/**
 * The public view of an SDK transaction for the sandbox endpoints (times as RFC 3339), with the
 * refunds given (the newest {@link SHOWN_REFUNDS}) and how many there are.
 */
function describeSdkTransaction(transaction: SdkTransaction, refunds: readonly SdkRefund[]) {
  return {
    merchantTransactionId: transaction.merchantTransactionId,
    status: transaction.status,
    ...(transaction.failureReason === undefined ? {} : { failureReason: transaction.failureReason }),
    amount: transaction.amount,
    refundedAmount: transaction.refundedAmount,
    refundCount: transaction.refundCount,
    refunds,
    userPhoneNumber: transaction.userPhoneNumber,
    userId: transaction.userId,
    createdAt: new Date(transaction.createdAt).toISOString(),
    updatedAt: new Date(transaction.updatedAt).toISOString(),
    expiresAt: new Date(transaction.expiresAt).toISOString(),
  };
}

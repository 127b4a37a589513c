/**
 * Refunds: full or partial, repeatable, of a SUCCESS transaction; `refund.id` makes a retry
 * safe. A new refund and a repeat both answer 200; an amount over what is left and a fully
 * refunded transaction answer 400. A refund is PENDING and becomes SUCCESS one second later (virtual time), when the refund
 * webhook is sent. The sandbox endpoint
 * `POST /sandbox/gateway/transactions/{merchantId}/{transactionId}/refunds/{refundId}/fail`
 * fails a PENDING refund instead, to rehearse a FAILED refund.
 *
 * The check of the remaining amount and the update happen without an `await` in between, so
 * parallel refunds never exceed the transaction's amount.
 */
import { randomBytes } from 'node:crypto';
import type { operations } from '../../../generated/types/gateway.js';
import { paiseAndRupees } from '../amounts.js';
import type { FamilyContext } from '../context.js';
import { transactionalApiAuth } from './auth.js';
import type { TransactionEngine } from './engine.js';
import type { EveryField } from '../records.js';
import type { GatewayState, MerchantPrincipal, RefundRecord } from './records.js';
import { GATEWAY } from './values.js';
import { refundedAmount, refundView, statusOf } from './views.js';
import { webhookUrlProblem } from './webhooks.js';

/** The most refunds one transaction takes, failed ones included (its record lists them all). */
const MAX_REFUNDS_PER_TRANSACTION = 10_000;

export function registerRefunds(ctx: FamilyContext, state: GatewayState, engine: TransactionEngine): void {
  const { errors, clock } = ctx;
  const authenticate = transactionalApiAuth(ctx, state);

  ctx.route<operations['refundTransaction'], MerchantPrincipal>('refundTransaction', {
    authenticate,
    handle({ params, body, principal }) {
      const transaction = engine.find(principal.merchantId, params.transactionId);
      if (transaction === undefined) {
        return errors.notFound(`No transaction with id '${params.transactionId}' exists for this merchant.`, 'NO_SUCH_TRANSACTION');
      }
      const badUrl = webhookUrlProblem(ctx, body.createConfiguration?.webhookUrl, '/createConfiguration/webhookUrl');
      if (badUrl !== undefined) return badUrl;
      const requestedAmount = body.refund?.amount ?? 0;
      const refundId = body.refund?.id;

      // A repeated request (same id and amount) answers the existing refund, 200 as a new one (why: D18).
      if (refundId !== undefined) {
        const existing = state.findRefund(transaction, refundId);
        if (existing !== undefined) {
          if (requestedAmount === existing.requestedAmount || requestedAmount === existing.amount) {
            return { status: 200, body: { refund: refundView(transaction, existing) } };
          }
          // D250: an id used before answers 400, as the description's duplicate does.
          return errors.error(
            400,
            'DUPLICATE_ID',
            `Refund '${refundId}' exists already with amount ${paiseAndRupees(existing.amount)}; a refund id cannot be reused for another amount.`,
          );
        }
      }

      const status = statusOf(transaction);
      if (status !== 'SUCCESS') {
        // The web and SDK refunds' code for the same condition, with their 400.
        return errors.error(400, 'TRANSACTION_NOT_REFUNDABLE', `Only a SUCCESS transaction can be refunded; this one is ${status}.`);
      }
      // The record lists every refund, so a transaction takes a bounded number of them; a refund
      // that cannot be made has one code, whatever the reason (why: D250).
      if (transaction.refundCount >= MAX_REFUNDS_PER_TRANSACTION) {
        return errors.error(
          400,
          'TRANSACTION_NOT_REFUNDABLE',
          `Transaction '${transaction.id}' has ${MAX_REFUNDS_PER_TRANSACTION.toLocaleString('en-US')} refunds, the most one transaction takes; it takes no more.`,
        );
      }
      // 400, as in the SDK and web refunds.
      const remaining = transaction.amount - refundedAmount(transaction);
      if (remaining <= 0) {
        return errors.error(400, 'ALREADY_REFUNDED', `The whole amount of ${paiseAndRupees(transaction.amount)} was already refunded.`);
      }
      const amount = requestedAmount === 0 ? remaining : requestedAmount;
      if (amount > remaining) {
        return errors.error(
          400,
          'REFUND_AMOUNT_TOO_LARGE',
          `A refund of ${paiseAndRupees(amount)} exceeds the remaining unrefunded amount of ${paiseAndRupees(remaining)}.`,
        );
      }

      const now = clock.now();
      const refund: EveryField<RefundRecord> = {
        id: refundId ?? `rfnd_${randomBytes(12).toString('hex')}`,
        position: transaction.refundCount,
        amount,
        requestedAmount,
        status: 'PENDING',
        webhookUrl: body.createConfiguration?.webhookUrl,
        createdAt: now,
        updatedAt: now,
        completesAt: now + GATEWAY.refundDelayMs,
      };
      const added = engine.addRefund(transaction, refund);
      return { status: 200, body: { refund: refundView(added.transaction, added.refund) } };
    },
  });

  // Rehearse a refund that fails: a PENDING refund becomes FAILED (and no longer counts).
  ctx.sandboxRoute(
    'POST',
    '/sandbox/gateway/transactions/{merchantId}/{transactionId}/refunds/{refundId}/fail',
    (request) => {
      const { merchantId = '', transactionId = '', refundId = '' } = request.params;
      const transaction = ctx.access.allows(request, { merchant: merchantId }) ? engine.find(merchantId, transactionId) : undefined;
      const refund = transaction === undefined ? undefined : state.findRefund(transaction, refundId);
      if (transaction === undefined || refund === undefined) {
        return ctx.sandboxErrors.notFound(`No refund '${refundId}' of transaction '${transactionId}' of merchant '${merchantId}'.`);
      }
      if (refund.status !== 'PENDING') {
        return ctx.sandboxErrors.error(409, 'INVALID_STATE', `The refund is already ${refund.status}.`);
      }
      const updated = engine.completeRefund(transaction, refundId, 'FAILED', clock.now());
      const failed = state.findRefund(updated, refundId)!;
      return { status: 200, body: { refund: refundView(updated, failed) } };
    },
  );
}

/**
 * The gateway family's webhooks: its row of ../webhook-events.ts (a merchant's events go to
 * its default URL unless the event has its own, signed with its Transactional API password),
 * checking the webhook URLs a request gives, and which URL a transaction's webhook goes to.
 */
import type { FamilyContext } from '../context.js';
import { familyWebhooks, type SendWebhook } from '../webhook-events.js';
import type { GatewayState, MerchantRecord, TransactionRecord } from './records.js';

/**
 * The gateway's `send`: `X-Signature` = base64(SHA-256(body + the merchant's Transactional API
 * password)), the password read from the merchant's record when the request is sent or shown (a
 * disabled merchant keeps it for this). Without a URL the event is recorded as `not_sent`.
 */
export function gatewayWebhooks(ctx: FamilyContext, merchants: GatewayState['merchants']): SendWebhook<'gateway'> {
  return familyWebhooks(ctx, 'gateway', {
    url: (merchantId) => merchants.get(merchantId)?.defaultWebhookUrl,
    key: (merchantId) => merchants.get(merchantId)?.credentials?.password,
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

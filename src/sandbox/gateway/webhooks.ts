/**
 * The gateway family's webhooks (D23): sending one through the dispatcher (delivery/index.ts),
 * checking the webhook URLs a request gives, and which URL a transaction's webhook goes to.
 */
import type { WebhookName } from '../../contract/webhooks.js';
import type { FamilyContext } from '../context.js';
import type { MerchantRecord, TransactionRecord } from './records.js';

/**
 * Sends a gateway webhook: the exact body signed with the merchant's Transactional API password
 * (`base64(SHA-256(body + password))`), in order per transaction, success on any 2xx or 3xx. Without a
 * URL the event is recorded as `not_sent`.
 */
export function sendWebhook(
  ctx: FamilyContext,
  merchant: MerchantRecord,
  /** One of the gateway document's webhooks (the generated list, contract/webhooks.ts). */
  event: WebhookName<'gateway'>,
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

/**
 * The web flow's call to `notes.webhook_url`: the URL a shop puts in the initiate's notes
 * (the WooCommerce plugin puts `<site>/?wc-api=Bharatx_Pay_In_3_Feature_Gateway_Webhook&key=<order
 * key>` there), called once the transaction is final, the way the plugin's handlers read it:
 *
 *   POST <webhook_url with txnId=<id>&txnStatus=<status> appended to its query>
 *   Content-Type: application/x-www-form-urlencoded
 *   body: the same query (the URL's own pairs, then txnId and txnStatus)
 *
 * Plugin 1.5.x reads `key`, `txnId` and `txnStatus` from the query (`$_GET`), 1.6.x `key` from the
 * query and then checks the status, 1.3.0 reads them from a form POST (`$_POST`); each finds what
 * it reads. The URL's own query is kept byte for byte (appendQuery). Any 2xx or 3xx answer counts
 * as received (the plugin answers with a redirect). `X-Signature` is the SDK recipe over the
 * form body and the partner's key.
 */
import type { FamilyContext } from '../context.js';
import { appendQuery } from './web-checkout.js';
import type { WebTransaction } from './web-records.js';

/** The longest URL taken (the bound of every URL). */
const MAX_NOTES_WEBHOOK_URL = 2048;

/**
 * `notes.webhook_url` of an initiate body: the string when there is one, else undefined (absent
 * notes, or no such key). Whether it can be used is {@link notesWebhookUrlProblem}'s question.
 */
export function notesWebhookUrl(notes: unknown): unknown {
  if (typeof notes !== 'object' || notes === null || Array.isArray(notes)) return undefined;
  return Object.hasOwn(notes, 'webhook_url') ? (notes as Record<string, unknown>).webhook_url : undefined;
}

/** Why `notes.webhook_url` cannot be called (for a 400 naming it), or undefined when it can. */
export function notesWebhookUrlProblem(ctx: FamilyContext, value: unknown): { issue: string } | undefined {
  if (typeof value !== 'string') return { issue: 'must be a string: the absolute http(s) URL to call when the transaction is final' };
  if (value.length > MAX_NOTES_WEBHOOK_URL) return { issue: `must be at most ${MAX_NOTES_WEBHOOK_URL} characters` };
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { issue: 'must be an absolute http(s) URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { issue: 'must be an absolute http(s) URL' };
  const problem = ctx.deliveries.targetProblem(value);
  return problem === undefined ? undefined : { issue: problem.message };
}

/** The URL called and the form body sent for a final status. */
export function notesWebhookRequest(webhookUrl: string, id: string, status: string): { url: string; body: string } {
  const url = appendQuery(webhookUrl, { txnId: id, txnStatus: status });
  const hash = url.indexOf('#');
  const beforeHash = hash < 0 ? url : url.slice(0, hash);
  return { url: beforeHash, body: beforeHash.slice(beforeHash.indexOf('?') + 1) };
}

/** Records the call for a transaction that just became final (nothing when it has no webhook_url). */
export function sendNotesWebhook(ctx: FamilyContext, transaction: WebTransaction): void {
  if (transaction.webhookUrl === undefined) return;
  const { url, body } = notesWebhookRequest(transaction.webhookUrl, transaction.id, transaction.status);
  ctx.deliveries.record({
    url,
    body,
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    // Signed with the partner's key, as the web family's webhooks are (direct.ts registers it).
    signer: transaction.partnerId,
    orderingKey: `web.notes:${transaction.partnerId}:${transaction.id}`,
    successStatus: '2xx-3xx',
    family: 'web',
    event: 'transactionResult',
    transactionId: transaction.id,
  });
}

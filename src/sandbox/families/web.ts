/**
 * The web flow (openapi/web.yaml): initiate, status check and refund, signed with X-Partner-Id and
 * X-Signature over body + path and query as received + key (the status check may leave the
 * signature out; `--require-status-signature` makes it required). The user's confirmation on
 * the hosted page is played by `POST /sandbox/web/transactions/{id}/confirm|cancel|fail`; the
 * hosted page reads `GET /sandbox/web/transactions/{id}`. The browser side (`GET /sdk.js`, the
 * hosted page at `/checkout/{id}` and its OTP, payment and popup-closed endpoints) is at the end,
 * and in web-checkout.ts.
 *
 * Errors are `{ message: <CODE>, detail? }`; a transaction not confirmed within 15 minutes fails;
 * `notes` are kept as JSON text within the notes budget; a refund with `amount` absent or 0
 * refunds what remains; the call to `notes.webhook_url` is in web-notes-webhook.ts.
 */
import type { components, operations } from '../../../generated/types/web.js';
import { statusSignature } from '../../signature.js';
import type { FamilyContext } from '../context.js';
import { loadBrowserAsset } from '../browser-assets.js';
import { ChildRecords } from '../store.js';
import type { EveryField } from '../records.js';
import { keepMeasured, readJson, type KeptJson } from '../stored-json.js';
import { directLifecycle, refundDirect, type DirectRefund } from './direct.js';
import { appendQuery, registerWebCheckout, WEB_CHECKOUT_SESSIONS } from './web-checkout.js';
import { partnerKey, webAuth, type Partner } from './partner.js';
import { notesWebhookUrl, notesWebhookUrlProblem, sendNotesWebhook } from './web-notes-webhook.js';
import { WEB_REFUNDS, WEB_TRANSACTIONS, type WebTransaction } from './web-records.js';
import { shopUser } from '../shop-user.js';

export { WEB_REFUNDS, WEB_TRANSACTIONS, type WebTransaction } from './web-records.js';

/** A web transaction not confirmed within 15 minutes fails. */
const WEB_EXPIRY_MS = 15 * 60_000;

/** `GET /sandbox/web/transactions/{id}` shows at most this many refunds: the newest. */
const SHOWN_WEB_REFUNDS = 100;

export function registerWeb(ctx: FamilyContext): void {
  const { errors, clock, config } = ctx;
  const transactions = ctx.store.collection<WebTransaction>(WEB_TRANSACTIONS);
  // The hosted page's OTP state (web-checkout.ts), forgotten with its transaction.
  const checkoutSessions = ctx.store.collection<unknown>(WEB_CHECKOUT_SESSIONS);
  const refunds = new ChildRecords(ctx.store.collection<DirectRefund>(WEB_REFUNDS));
  const authenticate = webAuth(config, errors);
  // The status check verifies X-Signature when present; the hardening flag makes it required.
  const authenticateStatusCheck = webAuth(config, errors, config.requireStatusSignature ? 'required' : 'optional');

  const lifecycle = directLifecycle(ctx, 'web', {
    collection: transactions,
    collectionName: WEB_TRANSACTIONS,
    idOf: (transaction) => transaction.id,
    webhookPayload: (transactionId, status, privateKey) => ({
      transactionId,
      status,
      signature: statusSignature(transactionId, status, privateKey),
    }),
    pathParam: 'id',
    label: 'web transaction',
    copy: copyWebTransaction,
    expiryMs: WEB_EXPIRY_MS,
    bytesOf: (transaction) => transaction.notesBytes,
    onEvict: (id) => {
      // Most transactions never had their hosted page opened: no lookup in that case.
      if (checkoutSessions.size > 0) checkoutSessions.delete(id);
      const transaction = transactions.get(id);
      if (transaction !== undefined) refunds.deleteRange(id, 0, transaction.refundCount);
    },
    onFinal: (updated) => sendNotesWebhook(ctx, updated),
  });
  const { find, finish, notFound } = lifecycle;

  ctx.route<operations['initiateWebTransaction'], Partner>('initiateWebTransaction', {
    authenticate,
    // A large body is parsed off the event loop and its notes kept as text there (json-offload.ts).
    freeJson: ['/notes'],
    handle({ body, principal, kept: measured }) {
      if (transactions.has(body.id)) {
        return errors.error(400, 'DUPLICATE_TRANSACTION_ID', `id '${body.id}' was already initiated.`);
      }
      // notes.webhook_url is called on the final status; one that cannot be called is a 400.
      const webhookUrl = notesWebhookUrl(body.notes);
      const urlProblem = webhookUrl === undefined ? undefined : notesWebhookUrlProblem(ctx, webhookUrl);
      if (urlProblem !== undefined) {
        return errors.badRequest(`notes.webhook_url ${urlProblem.issue}.`, [{ field: '/notes/webhook_url', issue: urlProblem.issue }]);
      }
      // Notes are kept as JSON text within the limits of members and depth.
      let notes: KeptJson | undefined;
      if (body.notes !== undefined) {
        const kept = keepMeasured(measured?.get('/notes'), body.notes, 'notes', config.limits);
        if (!kept.ok) return errors.badRequest(kept.problem);
        notes = kept.kept;
      }
      const refused = lifecycle.admit(principal.id, notes?.bytes ?? 0);
      if (refused !== undefined) return refused;
      const now = clock.now();
      const redirect = body.redirect === undefined ? undefined : withoutEmptyOverrides(body.redirect);
      const transaction: EveryField<WebTransaction> = {
        id: body.id,
        partnerId: principal.id,
        amount: body.amount,
        // The number as +91 and ten digits, an empty email left out.
        user: shopUser(body.user),
        notesJson: notes?.text,
        notesBytes: notes?.bytes ?? 0,
        webhookUrl: webhookUrl as string | undefined,
        redirect,
        status: 'PENDING',
        failureReason: undefined,
        refundedAmount: 0,
        refundCount: 0,
        createdAt: now,
        updatedAt: now,
        expiresAt: now + WEB_EXPIRY_MS,
      };
      lifecycle.start(transaction);
      return {
        status: 200,
        // Hosted, the link carries the transaction's checkout token (access.ts).
        body: { message: 'TRANSACTION_INITIATED', redirectUrl: ctx.access.checkoutLink(checkoutUrl(ctx.publicUrl(), transaction.id), { partner: principal.id }, transaction.id) },
      };
    },
  });

  ctx.route<operations['getWebTransactionStatus'], Partner>('getWebTransactionStatus', {
    authenticate: authenticateStatusCheck,
    handle({ query, principal }) {
      // An unknown id, or another partner's, is 404 NO_SUCH_TRANSACTION.
      const transaction = find(query.id, principal);
      if (transaction === undefined) {
        return errors.error(404, 'NO_SUCH_TRANSACTION', `No transaction with id '${query.id}'.`);
      }
      return {
        status: 200,
        body: {
          transactionId: transaction.id,
          status: transaction.status,
          signature: statusSignature(transaction.id, transaction.status, principal.privateKey),
        },
      };
    },
  });

  // Signed like every web call, over the body + "/api/refund" + key.
  ctx.route<operations['refundWebTransaction'], Partner>('refundWebTransaction', {
    authenticate,
    handle({ body, principal }) {
      // Check and update without an await in between: concurrent refunds cannot overspend.
      const transaction = find(body.transactionId, principal);
      if (transaction === undefined) {
        return errors.error(400, 'NO_SUCH_TRANSACTION', `No transaction with id '${body.transactionId}'.`);
      }
      const refund = refundDirect(copyWebTransaction, errors, refunds, transaction.id, transaction, body.amount, { now: clock.now(), iso: clock.iso() });
      if (!refund.ok) return refund.reply;
      transactions.set(transaction.id, refund.updated);
      return { status: 200, body: { message: 'ok' } };
    },
  });

  // The user's action on the hosted page.
  lifecycle.registerUserActions((updated) => ({
    transactionId: updated.id,
    status: updated.status,
    signature: statusSignature(updated.id, updated.status, partnerKey(config, updated.partnerId)),
    redirectTo: redirectTarget(updated, config.partner.homePageUrl),
  }), ['cancel', 'fail']);

  // What the hosted page shows.
  ctx.sandboxRoute('GET', '/sandbox/web/transactions/{id}', (request) => {
    const id = request.params.id ?? '';
    const transaction = find(id);
    // Hosted, only with the page's checkout token or an owner's credential (access.ts).
    if (transaction === undefined || !ctx.access.shopperAllows(request, { partner: transaction.partnerId }, id)) return notFound(id);
    return {
      status: 200,
      body: {
        transactionId: transaction.id,
        status: transaction.status,
        ...(transaction.failureReason === undefined ? {} : { failureReason: transaction.failureReason }),
        signature: statusSignature(transaction.id, transaction.status, partnerKey(config, transaction.partnerId)),
        amount: transaction.amount,
        merchant: { name: config.partner.merchantName, homePageUrl: config.partner.homePageUrl },
        user: transaction.user,
        notes: transaction.notesJson === undefined ? null : readJson(transaction.notesJson),
        refundedAmount: transaction.refundedAmount,
        refundCount: transaction.refundCount,
        refunds: refunds.range(id, Math.max(0, transaction.refundCount - SHOWN_WEB_REFUNDS), transaction.refundCount),
        redirect: {
          url: transaction.redirect?.url ?? config.partner.homePageUrl,
          failureUrl: transaction.redirect?.failureUrl ?? null,
          logoOverride: transaction.redirect?.logoOverride ?? null,
          colorOverride: transaction.redirect?.colorOverride ?? null,
        },
        redirectTo: transaction.status === 'PENDING' ? null : redirectTarget(transaction, config.partner.homePageUrl),
        createdAt: new Date(transaction.createdAt).toISOString(),
        updatedAt: new Date(transaction.updatedAt).toISOString(),
        expiresAt: new Date(transaction.expiresAt).toISOString(),
      },
    };
  }, { shopper: true });

  // ---------------------------------------------------------------------------------------------
  // The browser side: GET /sdk.js (src/browser/sdk.ts, built to dist/browser/sdk.js) and the hosted
  // page at redirectUrl with its endpoints (web-checkout.ts).

  ctx.route<operations['downloadBrowserScript']>('downloadBrowserScript', {
    async handle() {
      const script = await loadBrowserAsset('sdk');
      if (!script.ok) {
        ctx.log.error(`GET /sdk.js: ${script.problem}`);
        return errors.error(500, 'INTERNAL_SERVER_ERROR', script.problem);
      }
      return {
        status: 200,
        body: script.code,
        headers: {
          'Content-Type': 'application/javascript; charset=utf-8',
          'Cache-Control': 'no-cache',
          'X-Content-Type-Options': 'nosniff',
          'Access-Control-Allow-Origin': '*',
        },
      };
    },
  });

  registerWebCheckout(ctx, {
    find: (id) => find(id),
    finish: (transaction, status, failureReason) => finish(transaction, status, failureReason),
    redirectTo: (transaction) => redirectTarget(transaction, config.partner.homePageUrl),
  });
}

/** A changeable copy, field by field (see `copy` in direct.ts), of every field (src/sandbox/records.ts). */
export function copyWebTransaction(transaction: WebTransaction): WebTransaction {
  const copy: EveryField<WebTransaction> = {
    id: transaction.id,
    partnerId: transaction.partnerId,
    amount: transaction.amount,
    user: transaction.user,
    notesJson: transaction.notesJson,
    notesBytes: transaction.notesBytes,
    webhookUrl: transaction.webhookUrl,
    redirect: transaction.redirect,
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

/** `redirect` without the overrides that are the empty string, which means "no override". */
function withoutEmptyOverrides(redirect: components['schemas']['WebRedirect']): components['schemas']['WebRedirect'] {
  const kept = { ...redirect };
  if (kept.colorOverride === '') delete kept.colorOverride;
  if (kept.logoOverride === '') delete kept.logoOverride;
  return kept;
}

/** The hosted page of a transaction: `<origin>/checkout/<id>`. */
function checkoutUrl(origin: string, id: string): string {
  return `${origin}/checkout/${encodeURIComponent(id)}`;
}

/**
 * Where the hosted page sends the user after a final status: `redirect.failureUrl` after a
 * failure or cancellation when it is set, otherwise `redirect.url`, whose default is the merchant's
 * homepage; with `txnId=<id>&txnStatus=<status>` appended to its query, which is otherwise kept
 * byte for byte (integrations read the outcome from these two parameters).
 */
function redirectTarget(transaction: WebTransaction, homePageUrl: string): string {
  const failureUrl = transaction.status === 'SUCCESS' ? undefined : transaction.redirect?.failureUrl;
  const url = failureUrl ?? transaction.redirect?.url ?? homePageUrl;
  return appendQuery(url, { txnId: transaction.id, txnStatus: transaction.status });
}

/**
 * The hosted confirmation page of the web flow and the sandbox endpoints it calls (docs/sandbox.md,
 * "The hosted checkout page"). Registered by registerWeb (families/web.ts), which owns the
 * transactions; this module keeps only the page's own state (OTP attempts) in `web.checkout`.
 *
 *   GET  /checkout/{id}                             the page (HTML); query from sdk.js: flow,
 *                                                   partnerId, amount, phoneNumber, and origin
 *                                                   (popup) or returnUrl (redirect)
 *   POST /sandbox/web/transactions/{id}/otp         {"otp"}: 123456 right, 000000 expired, else
 *                                                   wrong; the third wrong one fails (FAILURE)
 *   POST /sandbox/web/transactions/{id}/pay         {"method"?}: the simulated down payment after
 *                                                   the OTP: SUCCESS
 *   POST /sandbox/web/transactions/{id}/abandon     the popup was closed: CANCELLED if still
 *                                                   PENDING; answers the recorded status (CORS *,
 *                                                   called by sdk.js from the merchant's page,
 *                                                   with the page's query of flow, partnerId,
 *                                                   amount and phoneNumber)
 * The page also uses the existing `.../cancel`, `.../fail` and `GET /sandbox/web/transactions/{id}`.
 */
import type { FamilyContext } from '../context.js';
import type { EveryField } from '../records.js';
import { renderCheckoutMessage, renderCheckoutPage, type CheckoutFlow, type CheckoutPageConfig } from '../pages/checkout.js';
import { httpOrigin } from '../pages/html.js';
import { loadBrowserAsset } from '../browser-assets.js';
import { RequestError, type Reply } from '../router.js';
import { statusSignature } from '../../signature.js';
import { downPaymentFor, TEST_OTP } from '../fixtures.js';
import type { DirectStatus } from './direct.js';
import type { WebTransaction } from './web-records.js';
import { partnerKey } from './partner.js';

/** The down payment: 25 % of the amount, rounded half up, at least ₹1, at most the amount (as the gateway's). */
export const webDownPayment = downPaymentFor;

/** The OTP state of one transaction's hosted page. */
interface CheckoutSession {
  wrongAttempts: number;
  verified: boolean;
  /** How many codes were "sent" (one more after each expired code). */
  codesSent: number;
}

/** What registerWeb shares with this module. */
export interface WebCheckoutAccess {
  /** The transaction (expired first if due), any partner. */
  find(id: string): WebTransaction | undefined;
  /** Records a final status and sends the webhook. */
  finish(transaction: WebTransaction, status: Exclude<DirectStatus, 'PENDING'>, failureReason?: WebTransaction['failureReason']): WebTransaction;
  /** Where the page sends the user after a final status when opened by the merchant itself. */
  redirectTo(transaction: WebTransaction): string;
}

const FLOW_PARAMS = { flow: 'flow', origin: 'origin', returnUrl: 'returnUrl', partnerId: 'partnerId', amount: 'amount', phoneNumber: 'phoneNumber' } as const;

/**
 * `url` with `parameters` appended to its query, joined with `&`: the existing query (byte for
 * byte) and fragment are kept, except earlier pairs of the same names, which are replaced.
 */
export function appendQuery(url: string, parameters: Readonly<Record<string, string>>): string {
  const hashAt = url.indexOf('#');
  const beforeHash = hashAt < 0 ? url : url.slice(0, hashAt);
  const hash = hashAt < 0 ? '' : url.slice(hashAt);
  const queryAt = beforeHash.indexOf('?');
  const path = queryAt < 0 ? beforeHash : beforeHash.slice(0, queryAt);
  const kept = (queryAt < 0 ? '' : beforeHash.slice(queryAt + 1))
    .split('&')
    .filter((pair) => pair !== '' && !Object.hasOwn(parameters, decodeName(pair.split('=', 1)[0] ?? '')));
  for (const [name, value] of Object.entries(parameters)) kept.push(`${encodeURIComponent(name)}=${encodeURIComponent(value)}`);
  return `${path}?${kept.join('&')}${hash}`;
}

/** sdk.js's `redirectUrl` with `tid=<id>` appended ({@link appendQuery}). */
export function appendTid(url: string, id: string): string {
  return appendQuery(url, { tid: id });
}

function decodeName(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}

function isReturnUrl(value: string | null): value is string {
  return value !== null && value.length <= 2048 && httpOrigin(value) !== undefined;
}

/** The collection of the hosted pages' OTP state, keyed by transaction id. */
export const WEB_CHECKOUT_SESSIONS = 'web.checkout';

export function registerWebCheckout(ctx: FamilyContext, access: WebCheckoutAccess): void {
  const { config } = ctx;
  const sessions = ctx.store.collection<CheckoutSession>(WEB_CHECKOUT_SESSIONS);
  // A changeable copy, field by field: records read from the store are frozen snapshots.
  const sessionOf = (id: string): CheckoutSession => {
    const stored = sessions.get(id);
    const copy: EveryField<CheckoutSession> = {
      wrongAttempts: stored?.wrongAttempts ?? 0,
      verified: stored?.verified ?? false,
      codesSent: stored?.codesSent ?? 1,
    };
    return copy;
  };
  const base = (id: string) => `/sandbox/web/transactions/${encodeURIComponent(id)}`;
  const signatureOf = (transaction: WebTransaction) => statusSignature(transaction.id, transaction.status, partnerKey(config, transaction.partnerId));
  // An unknown transaction has one code, on the contract's paths and on the sandbox's own.
  const notFound = (id: string) => ctx.sandboxErrors.notFound(`No web transaction with id '${id}'.`, 'NO_SUCH_TRANSACTION');
  const notPending = (transaction: WebTransaction) =>
    ctx.sandboxErrors.error(
      409,
      'INVALID_STATE',
      `The transaction is already ${transaction.status}${transaction.failureReason === 'EXPIRED' ? ' (expired)' : ''}.`,
    );
  /** The answer of an action that ended the transaction: what the page reports. */
  const finalAnswer = (transaction: WebTransaction) => ({
    transactionId: transaction.id,
    status: transaction.status,
    signature: signatureOf(transaction),
    redirectTo: access.redirectTo(transaction),
    ...(transaction.failureReason === undefined ? {} : { failureReason: transaction.failureReason }),
  });

  // Hosted, a shopper's request acts only on the transaction its page was opened for: its link
  // carries the transaction's checkout token (access.ts); anything else is answered as unknown.
  const findFor = (request: Parameters<typeof ctx.access.shopperAllows>[0], id: string): WebTransaction | undefined => {
    const transaction = access.find(id);
    return transaction !== undefined && ctx.access.shopperAllows(request, { partner: transaction.partnerId }, id) ? transaction : undefined;
  };
  /** Whether sdk.js opened the page (popup or redirect) with the transaction's own partner, amount and phone number. */
  const openedByScript = (query: URLSearchParams, transaction: WebTransaction): boolean => {
    const flow = query.get(FLOW_PARAMS.flow);
    return (
      (flow === 'popup' || flow === 'redirect') &&
      query.get(FLOW_PARAMS.partnerId) === transaction.partnerId &&
      query.get(FLOW_PARAMS.amount) === String(transaction.amount) &&
      query.get(FLOW_PARAMS.phoneNumber) === transaction.user.phoneNumber
    );
  };

  /** {@link findFor}, or sdk.js's request with the transaction's own details ({@link openedByScript}). */
  const findForScript = (request: Parameters<typeof ctx.access.shopperAllows>[0] & { query: URLSearchParams }, id: string): WebTransaction | undefined => {
    const found = access.find(id);
    return found !== undefined && (ctx.access.shopperAllows(request, { partner: found.partnerId }, id) || openedByScript(request.query, found)) ? found : undefined;
  };

  // The page. Hosted, opened by its link (with the checkout token) or by sdk.js with the
  // transaction's own details (sdk.js knows the id, not the link); its endpoints get the token.
  ctx.pageRoute('/checkout/{id}', async (request) => {
    const id = request.params.id ?? '';
    const transaction = findForScript(request, id);
    if (transaction === undefined) {
      return renderCheckoutMessage(404, 'Payment link not found', 'This pay-later link does not name a payment. Go back to the shop and try again.');
    }
    const script = await loadBrowserAsset('checkout');
    if (!script.ok) {
      ctx.log.error(`the hosted checkout page cannot be served: ${script.problem}`);
      return renderCheckoutMessage(500, 'Checkout unavailable', script.problem);
    }
    const query = request.query;
    const requested = query.get(FLOW_PARAMS.flow);
    const flow: CheckoutFlow = requested === 'popup' || requested === 'redirect' ? requested : 'direct';
    const openerOrigin = query.get(FLOW_PARAMS.origin);
    const returnUrl = query.get(FLOW_PARAMS.returnUrl);

    let problem: CheckoutPageConfig['problem'] = null;
    let deliverable = true;
    if (flow === 'popup' && (openerOrigin === null || httpOrigin(openerOrigin) !== openerOrigin)) {
      problem = { message: 'This checkout was opened with a malformed link (no valid origin of the shop). Close this window and start again from the shop.', canReturn: false };
      deliverable = false;
    }
    if (flow === 'redirect' && !isReturnUrl(returnUrl)) {
      problem = { message: 'This checkout was opened with a malformed link (no valid address to return to). Go back to the shop and start again.', canReturn: false };
      deliverable = false;
    }
    if (deliverable && flow !== 'direct') {
      const mismatched = [
        query.get(FLOW_PARAMS.partnerId) === transaction.partnerId ? undefined : 'partner id',
        query.get(FLOW_PARAMS.amount) === String(transaction.amount) ? undefined : 'amount',
        query.get(FLOW_PARAMS.phoneNumber) === transaction.user.phoneNumber ? undefined : 'phone number',
      ].filter((field): field is string => field !== undefined);
      if (mismatched.length > 0) {
        problem = {
          message: `The ${mismatched.join(', ')} given by the shop's page ${mismatched.length > 1 ? 'do' : 'does'} not match this order, so it cannot be paid here. You were not charged.`,
          canReturn: true,
        };
      }
    }
    const final =
      transaction.status === 'PENDING'
        ? null
        : {
            status: transaction.status,
            signature: signatureOf(transaction),
            redirectTo: access.redirectTo(transaction),
            failureReason: transaction.failureReason ?? null,
          };
    const link = (path: string) => ctx.access.checkoutLink(path, { partner: transaction.partnerId }, id);
    const pageConfig: CheckoutPageConfig = {
      transactionId: transaction.id,
      merchantName: config.partner.merchantName,
      flow,
      openerOrigin: flow === 'popup' && deliverable ? openerOrigin : null,
      returnTo: flow === 'redirect' && deliverable ? appendTid(returnUrl as string, transaction.id) : null,
      endpoints: {
        otp: link(`${base(id)}/otp`),
        pay: link(`${base(id)}/pay`),
        cancel: link(`${base(id)}/cancel`),
        fail: link(`${base(id)}/fail`),
        state: link(base(id)),
      },
      otpLength: TEST_OTP.length,
      final,
      problem: final === null ? problem : null,
    };
    return renderCheckoutPage({
      config: pageConfig,
      amount: transaction.amount,
      downPayment: webDownPayment(transaction.amount),
      phoneNumber: transaction.user.phoneNumber,
      logoOverride: transaction.redirect?.logoOverride ?? null,
      colorOverride: transaction.redirect?.colorOverride ?? null,
      step: sessionOf(id).verified ? 'pay' : 'otp',
      script: script.code,
    });
  });

  // The OTP step.
  ctx.sandboxRoute('POST', '/sandbox/web/transactions/{id}/otp', (request) => {
    const id = request.params.id ?? '';
    const body = request.json() as { otp?: unknown } | undefined;
    const otp = body?.otp;
    if (typeof otp !== 'string' || otp.length === 0 || otp.length > 16) {
      throw new RequestError(
        ctx.sandboxErrors.badRequest('The body must be {"otp": "<code>"} with a code of 1 to 16 characters.', [
          { field: '/otp', issue: 'must be a string of 1 to 16 characters' },
        ]),
      );
    }
    const transaction = findFor(request, id);
    if (transaction === undefined) return notFound(id);
    if (transaction.status !== 'PENDING') return notPending(transaction);
    const session = sessionOf(id);
    const reply = (result: 'VERIFIED' | 'INVALID' | 'EXPIRED', extra: object = {}): Reply => ({
      status: 200,
      body: {
        transactionId: id,
        result,
        attemptsLeft: TEST_OTP.maxWrong - session.wrongAttempts,
        status: 'PENDING',
        ...extra,
      },
    });
    if (session.verified || otp === TEST_OTP.correct) {
      session.verified = true;
      sessions.set(id, session);
      const downPayment = webDownPayment(transaction.amount);
      return reply('VERIFIED', { downPayment: { amount: downPayment, remaining: transaction.amount - downPayment } });
    }
    if (otp === TEST_OTP.expired) {
      // An expired code does not count as an attempt; a new one is "sent".
      session.codesSent += 1;
      sessions.set(id, session);
      return reply('EXPIRED');
    }
    session.wrongAttempts += 1;
    sessions.set(id, session);
    if (session.wrongAttempts < TEST_OTP.maxWrong) return reply('INVALID');
    const failed = access.finish(transaction, 'FAILURE', 'OTP_ATTEMPTS_EXCEEDED');
    return reply('INVALID', finalAnswer(failed));
  }, { shopper: true });

  // The simulated down payment, after the OTP.
  ctx.sandboxRoute('POST', '/sandbox/web/transactions/{id}/pay', (request) => {
    const id = request.params.id ?? '';
    const body = request.json() as { method?: unknown } | undefined;
    const method = body?.method ?? 'UPI';
    if (method !== 'UPI' && method !== 'CARD') {
      throw new RequestError(
        ctx.sandboxErrors.badRequest('method must be UPI or CARD.', [{ field: '/method', issue: 'must be UPI or CARD' }]),
      );
    }
    const transaction = findFor(request, id);
    if (transaction === undefined) return notFound(id);
    if (transaction.status !== 'PENDING') return notPending(transaction);
    if (!sessionOf(id).verified) {
      return ctx.sandboxErrors.error(409, 'INVALID_STATE', `Verify the OTP first (POST ${base(id)}/otp).`);
    }
    return { status: 200, body: finalAnswer(access.finish(transaction, 'SUCCESS')) };
  }, { shopper: true });

  // The user closed the popup: sdk.js asks from the merchant's page (cross-origin). Hosted, with
  // the token the page posted as it opened, or (a popup closed before its page could post it)
  // with the order's own details, as sdk.js opens the page: what opens the page may close it.
  ctx.sandboxRoute('POST', '/sandbox/web/transactions/{id}/abandon', (request) => {
    const id = request.params.id ?? '';
    const cors = { 'Access-Control-Allow-Origin': '*' };
    const found = findForScript(request, id);
    if (found === undefined) return { ...notFound(id), headers: cors };
    const transaction = found.status === 'PENDING' ? access.finish(found, 'CANCELLED') : found;
    return {
      status: 200,
      headers: cors,
      body: { transactionId: transaction.id, status: transaction.status, signature: signatureOf(transaction) },
    };
  }, { shopper: true });
}

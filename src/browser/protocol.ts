/**
 * What sdk.js and the hosted checkout page agree on (both are bundled from src/browser/). The
 * sandbox side of the same agreement is src/sandbox/families/web-checkout.ts.
 */
import type { CheckoutOpenedMessage, CheckoutResultMessage, FinalStatus } from './types.js';

/** `type` of the message the hosted page posts to the opener in the popup flow. */
export const RESULT_MESSAGE_TYPE = 'paylater:result';

/** `type` of the message the hosted page posts to the opener as it opens (its checkout token). */
export const OPENED_MESSAGE_TYPE = 'paylater:opened';

/** The query parameter of the sandbox's links that carries a transaction's checkout token (hosted mode). */
export const CHECKOUT_TOKEN = 'checkout';

/** The form of a transaction id (D24). */
export const TRANSACTION_ID = /^[A-Za-z0-9_-]{1,64}$/;

/** The query parameters sdk.js passes to the hosted page `/checkout/{id}`. */
export const QUERY = {
  /** `popup` or `redirect` (absent when a merchant opens `redirectUrl` itself). */
  flow: 'flow',
  /** Popup: the origin of the merchant's page, the target of the result message. */
  origin: 'origin',
  /** Redirect: the script's `redirectUrl`, to which the page returns with `tid`. */
  returnUrl: 'returnUrl',
  partnerId: 'partnerId',
  amount: 'amount',
  phoneNumber: 'phoneNumber',
} as const;

const FINAL_STATUSES: readonly FinalStatus[] = ['SUCCESS', 'FAILURE', 'CANCELLED'];

/** The path of the hosted page of a transaction. */
export function checkoutPath(transactionId: string): string {
  return `/checkout/${encodeURIComponent(transactionId)}`;
}

/**
 * The sandbox endpoint that records a closed popup (CANCELLED if still pending) and answers the
 * status. `details` are the order's, as sdk.js gives them to the page (flow, partner id, amount,
 * phone number), and `checkout` the page's token when it gave one: a hosted sandbox takes either,
 * as it opens the page for either (a popup closed before its page loaded has no token).
 */
export function abandonPath(transactionId: string, details: Record<string, string>, checkout?: string): string {
  const query = new URLSearchParams(details);
  if (checkout !== undefined) query.set(CHECKOUT_TOKEN, checkout);
  return `/sandbox/web/transactions/${encodeURIComponent(transactionId)}/abandon?${query.toString()}`;
}

export function isFinalStatus(value: unknown): value is FinalStatus {
  return typeof value === 'string' && (FINAL_STATUSES as readonly string[]).includes(value);
}

/** True for a well-formed opened message (its origin and source are checked by the receiver). */
export function isOpenedMessage(value: unknown): value is CheckoutOpenedMessage {
  if (typeof value !== 'object' || value === null) return false;
  const message = value as Record<string, unknown>;
  return message.type === OPENED_MESSAGE_TYPE && typeof message.transactionId === 'string' && typeof message.checkout === 'string' && message.checkout.length > 0;
}

/** True for a well-formed result message (its origin and source are checked by the receiver). */
export function isResultMessage(value: unknown): value is CheckoutResultMessage {
  if (typeof value !== 'object' || value === null) return false;
  const message = value as Record<string, unknown>;
  return (
    message.type === RESULT_MESSAGE_TYPE &&
    typeof message.transactionId === 'string' &&
    isFinalStatus(message.status) &&
    typeof message.signature === 'string' &&
    message.signature.length > 0
  );
}

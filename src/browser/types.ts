/**
 * Public types of the browser script `sdk.js` of the web flow (openapi/paths/web/sdk.js.yaml).
 * They ship as dist/browser/types.d.ts and dist/browser/sdk.d.ts (which also declares the globals
 * `initiateServiceTransactionOnElementClick` and `initiateBharatXTransaction`).
 */

/** The status a callback receives (the client-side statuses of the description). */
export type ClientStatus = 'SUCCESS' | 'FAILURE' | 'CANCELLED' | 'GET_TXN_ID_FAILED';

/** A final status of a web transaction, as the service records it (D27). */

/**
 * The status signature a callback receives (D22): base64(SHA-256(transactionId + status +
 * privateKey)), the id, the status and the key joined without a separator, UTF-8, standard base64
 * of the 32 digest bytes. Only the merchant server holds the key: send it there and check it with
 * `verifyStatusSignature` (paylater-api/signature), or better, read the status with the status check.
 */
export type StatusSignature = string;
export type FinalStatus = 'SUCCESS' | 'FAILURE' | 'CANCELLED';

/**
 * The arguments of `failureCallback`: `FAILURE` and `CANCELLED` come with the status signature
 * (D22); `GET_TXN_ID_FAILED` (no transaction id was obtained, so no transaction started) without.
 * One exception: when the user closed the popup and the service could not be reached to record
 * it, `CANCELLED` comes without a signature (treat it as unconfirmed and check the status).
 */
export type FailureCallbackArguments =
  | [status: 'FAILURE', signature: StatusSignature]
  | [status: 'CANCELLED', signature: StatusSignature | undefined]
  | [status: 'GET_TXN_ID_FAILED', signature?: undefined];

interface CommonOptions {
  /** Selector of the element(s) to bind the click to; an element added later also works. */
  btnSelector: string;
  /**
   * Must return (resolve to) the `id` the merchant server used in its `POST /api/transaction`. If it
   * rejects or resolves to `null` (or an empty value), the status is `GET_TXN_ID_FAILED`.
   */
  getTransactionId: () => Promise<string | null | undefined> | string | null | undefined;
  /** The merchant's partner id (the value of `X-Partner-Id`; not a secret). */
  partnerId: string;
  /** Paise: the amount of the initiate call (an integer from 100 to 10,000,000, D24). */
  amount: number;
  /** The user's phone number of the initiate call: `+91` and ten digits (D25). */
  phoneNumber: string;
}

/** The popup flow: the user confirms in a popup; the result comes to the callbacks. */
export interface PopupOptions extends CommonOptions {
  type: 'popup';
  /** Called on `SUCCESS` with the status signature ({@link StatusSignature}); check it on the merchant server. */
  successCallback: (signature: StatusSignature) => void;
  /** Called on `FAILURE` or `CANCELLED` (with a signature) and on `GET_TXN_ID_FAILED` (without). */
  failureCallback: (...args: FailureCallbackArguments) => void;
}

/** The redirect flow: the page goes to the service's page, which returns to `redirectUrl?tid=<id>`. */
export interface RedirectOptions extends CommonOptions {
  type: 'redirect';
  /**
   * Where the user comes back after the service's page, absolute or relative to the current page;
   * `tid=<transaction id>` is appended to its query (an existing query and fragment are kept).
   */
  redirectUrl: string;
  /**
   * Fires only for a failure before the redirect: `GET_TXN_ID_FAILED` when no transaction id is
   * obtained. A failure after the redirect is learnt at `redirectUrl` from the status check.
   */
  redirectFailureCallback: (status: 'GET_TXN_ID_FAILED') => void;
}

export type InitiateServiceTransactionOptions = PopupOptions | RedirectOptions;

/**
 * The options of `initiateBharatXTransaction`: those of `initiateServiceTransactionOnElementClick`
 * without `btnSelector`, since the flow starts at once (D72).
 */
export type InitiateBharatXTransactionOptions = Omit<PopupOptions, 'btnSelector'> | Omit<RedirectOptions, 'btnSelector'>;

/**
 * Binds the click on `btnSelector` to the pay-later flow. Invalid options are reported on the
 * console (nothing is bound); it never throws.
 */
export type InitiateServiceTransactionOnElementClick = (options: InitiateServiceTransactionOptions) => void;

/**
 * Starts the pay-later flow at once, as the service's own web samples call it from their click
 * handler (`bharatx-in/BharatX-Sample-Web-SDK-Integration-PHP` `popup.html`, `redirect.html`; D72).
 * Call it in the handler of a user's click, so that the browser allows the popup. Invalid options
 * are reported on the console (nothing starts); it never throws.
 */
export type InitiateBharatXTransaction = (options: InitiateBharatXTransactionOptions) => void;

/**
 * The message the hosted page posts to the opener as it opens in the popup flow: the checkout token
 * of its links (hosted mode), which sdk.js passes on when the user closes the popup.
 */
export interface CheckoutOpenedMessage {
  type: 'paylater:opened';
  transactionId: string;
  checkout: string;
}

/** The message the hosted page posts to the opener in the popup flow. */
export interface CheckoutResultMessage {
  type: 'paylater:result';
  transactionId: string;
  status: FinalStatus;
  signature: string;
}

/**
 * sdk.js, the browser script of the web flow (openapi/paths/web/sdk.js.yaml), served by the
 * sandbox at `GET /sdk.js`. Bundled by scripts/build-browser.ts into dist/browser/sdk.js.
 *
 * It defines `window.initiateServiceTransactionOnElementClick(options)`:
 * - the options are checked at once; every problem is reported with `console.error` and nothing is
 *   bound (the function never throws);
 * - a click on an element matching `btnSelector` (also one added later) calls
 *   `getTransactionId()`; a rejection, or a null, empty or malformed id, is `GET_TXN_ID_FAILED`
 *   without a signature (`failureCallback` in the popup flow, `redirectFailureCallback` in the
 *   redirect flow);
 * - popup: a window is opened at once in the click (so that popup blockers allow it), shows a
 *   loading line, and goes to the hosted page once the id is known. The page posts
 *   `{ type: 'paylater:result', transactionId, status, signature }` to this window; only a message
 *   from the popup itself and from the script's own origin counts. `SUCCESS` calls
 *   `successCallback(signature)`, `FAILURE` and `CANCELLED` call `failureCallback(status, signature)`;
 * - popup closed by the user before a result: the script tells the service, which records
 *   `CANCELLED` if the transaction is still pending, and reports the status the service recorded
 *   with its signature (normally `failureCallback('CANCELLED', signature)`; `SUCCESS` if the user
 *   had in fact finished); on a hosted sandbox the call carries the checkout token the hosted page
 *   posted as it opened, and the order's details with which the script opens the page (which the
 *   sandbox takes when the window was closed before the page could give its token). Only if the
 *   service cannot be reached is `CANCELLED` reported without a signature. A blocked popup calls no callback: the error is logged and the user can click again;
 * - redirect: the page goes to the hosted page, which sends the user back to `redirectUrl` with
 *   `tid=<id>` appended.
 *
 * It also defines `window.initiateBharatXTransaction(options)` (D72): the same options without
 * `btnSelector`, and the flow starts at once. The service's own web samples call it from their
 * click handler (`bharatx-in/BharatX-Sample-Web-SDK-Integration-PHP` `popup.html` and
 * `redirect.html`); called outside a user's click, the browser may block the popup.
 *
 * The script learns the service's origin from its own `src` (`document.currentScript`).
 */
import { QUERY, TRANSACTION_ID, abandonPath, checkoutPath, isFinalStatus, isOpenedMessage, isResultMessage } from './protocol.js';
import type {
  FinalStatus,
  InitiateBharatXTransaction,
  InitiateBharatXTransactionOptions,
  InitiateServiceTransactionOnElementClick,
  InitiateServiceTransactionOptions,
  PopupOptions,
  RedirectOptions,
} from './types.js';

export type * from './types.js';

declare global {
  interface Window {
    /** Binds the click on `btnSelector` to the pay-later flow (sdk.js). */
    initiateServiceTransactionOnElementClick: InitiateServiceTransactionOnElementClick;
    /** Starts the pay-later flow at once, from the page's own click handler (sdk.js, D72). */
    initiateBharatXTransaction: InitiateBharatXTransaction;
  }
}

const PREFIX = '[paylater sdk.js]';
const PHONE = /^\+91[0-9]{10}$/;
const MIN_AMOUNT = 100;
const MAX_AMOUNT = 10_000_000;
const POPUP_NAME = 'paylater_checkout';
const POPUP_WIDTH = 460;
const POPUP_HEIGHT = 760;
const KNOWN_OPTIONS = [
  'btnSelector',
  'type',
  'getTransactionId',
  'partnerId',
  'amount',
  'phoneNumber',
  'successCallback',
  'failureCallback',
  'redirectUrl',
  'redirectFailureCallback',
];

const serviceOrigin = findServiceOrigin();

/** The origin this script was loaded from: the service's, where the hosted page lives. */
function findServiceOrigin(): string | undefined {
  const current = document.currentScript;
  let src = current instanceof HTMLScriptElement ? current.src : '';
  if (src === '') {
    // Loaded in a way that leaves no currentScript (an injected module, say): look for the tag.
    const scripts = document.querySelectorAll<HTMLScriptElement>('script[src]');
    for (let i = 0; i < scripts.length && src === ''; i++) {
      const candidate = scripts[i]?.src ?? '';
      if (/\/sdk\.js(?:[?#]|$)/.test(candidate)) src = candidate;
    }
  }
  try {
    const url = new URL(src);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return value === '' ? 'an empty string' : `the string ${JSON.stringify(value.slice(0, 80))}`;
  return typeof value;
}

/** Every problem of the options, in words; empty when they can be used. */
function check(options: unknown, withSelector = true): string[] {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    return [`the options must be an object (got ${describe(options)})`];
  }
  const o = options as Record<string, unknown>;
  const problems: string[] = [];
  const need = (ok: boolean, name: string, what: string) => {
    if (!ok) problems.push(`${name} must be ${what} (got ${describe(o[name])})`);
  };
  if (withSelector) need(typeof o.btnSelector === 'string' && o.btnSelector.trim() !== '', 'btnSelector', 'a non-empty CSS selector');
  if (withSelector && typeof o.btnSelector === 'string' && o.btnSelector.trim() !== '') {
    try {
      document.querySelector(o.btnSelector);
    } catch {
      problems.push(`btnSelector ${JSON.stringify(o.btnSelector)} is not a valid CSS selector`);
    }
  }
  need(o.type === 'popup' || o.type === 'redirect', 'type', "'popup' or 'redirect'");
  need(typeof o.getTransactionId === 'function', 'getTransactionId', 'an async function returning the transaction id');
  need(typeof o.partnerId === 'string' && o.partnerId.trim() !== '', 'partnerId', 'your partner id (a non-empty string)');
  need(
    typeof o.amount === 'number' && Number.isInteger(o.amount) && o.amount >= MIN_AMOUNT && o.amount <= MAX_AMOUNT,
    'amount',
    `an integer number of paise from ${MIN_AMOUNT} to ${MAX_AMOUNT}`,
  );
  need(typeof o.phoneNumber === 'string' && PHONE.test(o.phoneNumber), 'phoneNumber', 'a phone number of the form +91 and ten digits');
  if (o.type === 'popup') {
    need(typeof o.successCallback === 'function', 'successCallback', 'a function(signature) (popup flow)');
    need(typeof o.failureCallback === 'function', 'failureCallback', 'a function(status, signature) (popup flow)');
  }
  if (o.type === 'redirect') {
    need(resolveRedirectUrl(o.redirectUrl) !== undefined, 'redirectUrl', 'an http(s) URL, absolute or relative to this page (redirect flow)');
    need(typeof o.redirectFailureCallback === 'function', 'redirectFailureCallback', 'a function(status) (redirect flow)');
  }
  return problems;
}

function resolveRedirectUrl(value: unknown): string | undefined {
  if (typeof value !== 'string' || value.trim() === '') return undefined;
  try {
    const url = new URL(value, window.location.href);
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href : undefined;
  } catch {
    return undefined;
  }
}

/** Calls a merchant callback; an exception in it is logged, never thrown into the page. */
function call<A extends unknown[]>(callback: (...args: A) => void, ...args: A): void {
  try {
    callback(...args);
  } catch (error) {
    console.error(`${PREFIX} a callback threw:`, error);
  }
}

/** The transaction id from getTransactionId, or undefined for GET_TXN_ID_FAILED. */
async function obtainTransactionId(getTransactionId: () => unknown): Promise<string | undefined> {
  let value: unknown;
  try {
    value = await getTransactionId();
  } catch (error) {
    console.warn(`${PREFIX} getTransactionId failed, so no transaction was started (GET_TXN_ID_FAILED):`, error);
    return undefined;
  }
  if (value === null || value === undefined || value === '') {
    console.warn(`${PREFIX} getTransactionId resolved to ${describe(value)}, so no transaction was started (GET_TXN_ID_FAILED).`);
    return undefined;
  }
  if (typeof value !== 'string' || !TRANSACTION_ID.test(value)) {
    console.error(
      `${PREFIX} getTransactionId resolved to ${describe(value)}, which is not a transaction id (1 to 64 letters, digits, _ or -): GET_TXN_ID_FAILED.`,
    );
    return undefined;
  }
  return value;
}

/** What the hosted page (and, hosted, the popup-closed call) is told of the order and the flow. */
function orderDetails(options: InitiateBharatXTransactionOptions): Record<string, string> {
  return {
    [QUERY.flow]: options.type,
    [QUERY.partnerId]: options.partnerId,
    [QUERY.amount]: String(options.amount),
    [QUERY.phoneNumber]: options.phoneNumber,
  };
}

/** The hosted page of a transaction, with what the page needs to know about this flow. */
function hostedPageUrl(origin: string, id: string, options: InitiateBharatXTransactionOptions, extra: Record<string, string>): string {
  const query = new URLSearchParams({ ...orderDetails(options), ...extra });
  return `${origin}${checkoutPath(id)}?${query.toString()}`;
}

function openPopup(): Window | null {
  const left = Math.max(0, Math.round(window.screenX + (window.outerWidth - POPUP_WIDTH) / 2));
  const top = Math.max(0, Math.round(window.screenY + (window.outerHeight - POPUP_HEIGHT) / 2));
  const popup = window.open('', POPUP_NAME, `popup=yes,width=${POPUP_WIDTH},height=${POPUP_HEIGHT},left=${left},top=${top}`);
  if (popup === null) return null;
  try {
    // The blank window is still ours (same origin): say what is happening while the id comes.
    const doc = popup.document;
    doc.title = 'Pay later';
    const line = doc.createElement('p');
    line.textContent = 'Opening the secure pay-later checkout…';
    line.setAttribute('role', 'status');
    line.style.font = '16px system-ui, sans-serif';
    line.style.color = '#374151';
    line.style.textAlign = 'center';
    line.style.marginTop = '40vh';
    doc.body?.replaceChildren(line);
  } catch {
    // A window of that name from another origin was reused; it is navigated all the same.
  }
  return popup;
}

function closeQuietly(popup: Window): void {
  try {
    popup.close();
  } catch {
    // already gone
  }
}

/** The status the service recorded for a popup the user closed (it records CANCELLED if still pending). */
async function reportClosedPopup(origin: string, id: string, details: Record<string, string>, checkout: string | undefined): Promise<PopupResult> {
  try {
    const response = await fetch(`${origin}${abandonPath(id, details, checkout)}`, { method: 'POST', mode: 'cors', credentials: 'omit', cache: 'no-store' });
    const body = (await response.json()) as { status?: unknown; signature?: unknown };
    if (response.ok && isFinalStatus(body.status) && typeof body.signature === 'string') {
      return { status: body.status, signature: body.signature };
    }
    console.error(`${PREFIX} the service did not confirm the closed popup (HTTP ${response.status}); reporting CANCELLED without a signature.`);
  } catch (error) {
    console.error(`${PREFIX} the service could not be reached about the closed popup; reporting CANCELLED without a signature:`, error);
  }
  return { status: 'CANCELLED', signature: undefined };
}

type PopupResult = { status: FinalStatus; signature: string } | { status: 'CANCELLED'; signature: undefined };

function runPopup(origin: string, options: Omit<PopupOptions, 'btnSelector'>, state: FlowState): void {
  const popup = openPopup();
  if (popup === null) {
    console.error(`${PREFIX} the browser blocked the popup; allow popups for this site and click again. No transaction id was requested.`);
    state.running = false;
    return;
  }
  state.popup = popup;
  let settled = false;
  let timer = 0;
  const finish = (result: PopupResult) => {
    if (settled) return;
    settled = true;
    window.removeEventListener('message', onMessage);
    window.clearInterval(timer);
    state.running = false;
    state.popup = undefined;
    if (result.signature === undefined) call(options.failureCallback, 'CANCELLED', undefined);
    else if (result.status === 'SUCCESS') call(options.successCallback, result.signature);
    else if (result.status === 'FAILURE') call(options.failureCallback, 'FAILURE', result.signature);
    else call(options.failureCallback, 'CANCELLED', result.signature);
  };
  let transactionId: string | undefined;
  // The checkout token the hosted page gave as it opened (a hosted sandbox), for the popup-closed call.
  let checkout: string | undefined;
  const onMessage = (event: MessageEvent) => {
    if (event.origin !== origin || event.source !== popup) return;
    if (isOpenedMessage(event.data) && event.data.transactionId === transactionId) {
      checkout = event.data.checkout;
      return;
    }
    if (!isResultMessage(event.data) || event.data.transactionId !== transactionId) return;
    finish({ status: event.data.status, signature: event.data.signature });
  };

  void obtainTransactionId(options.getTransactionId).then((id) => {
    if (id === undefined) {
      closeQuietly(popup);
      state.running = false;
      state.popup = undefined;
      call(options.failureCallback, 'GET_TXN_ID_FAILED');
      return;
    }
    transactionId = id;
    window.addEventListener('message', onMessage);
    // Closed by the user (also while the id was coming): ask the service what it recorded. A result
    // message posted just before the window closed is given a moment to arrive first.
    timer = window.setInterval(() => {
      if (!popup.closed || settled) return;
      window.clearInterval(timer);
      window.setTimeout(() => {
        if (settled) return;
        void reportClosedPopup(origin, id, orderDetails(options), checkout).then(finish);
      }, 300);
    }, 250);
    if (!popup.closed) popup.location.replace(hostedPageUrl(origin, id, options, { [QUERY.origin]: window.location.origin }));
  });
}

function runRedirect(origin: string, options: Omit<RedirectOptions, 'btnSelector'>, state: FlowState): void {
  const returnUrl = resolveRedirectUrl(options.redirectUrl) as string;
  void obtainTransactionId(options.getTransactionId).then((id) => {
    if (id === undefined) {
      state.running = false;
      call(options.redirectFailureCallback, 'GET_TXN_ID_FAILED');
      return;
    }
    window.location.assign(hostedPageUrl(origin, id, options, { [QUERY.returnUrl]: returnUrl }));
  });
}

/** The click handler bound for each selector (a later call for the same selector replaces it). */
const bindings = new Map<string, (event: MouseEvent) => void>();

interface FlowState {
  running: boolean;
  popup: Window | undefined;
}

/**
 * What both entry points check before a flow: the options (`failed` words the refusal), unknown
 * options, where sdk.js was loaded from, and http(s) for a popup. The service's origin, or
 * undefined when the flow cannot run (the reason is on the console).
 */
function serviceOriginFor(
  options: InitiateBharatXTransactionOptions,
  failed: string,
  isUnknown: (key: string) => boolean,
  withSelector: boolean,
): string | undefined {
  const problems = check(options, withSelector);
  if (problems.length > 0) {
    console.error(`${PREFIX} ${failed}:\n- ${problems.join('\n- ')}`);
    return undefined;
  }
  const unknown = Object.keys(options).filter(isUnknown);
  if (unknown.length > 0) console.warn(`${PREFIX} unknown option(s) ignored: ${unknown.join(', ')}`);
  const origin = serviceOrigin;
  if (origin === undefined) {
    console.error(`${PREFIX} cannot tell where sdk.js was loaded from; load it with <script src="<service>/sdk.js">.`);
    return undefined;
  }
  if (options.type === 'popup' && !/^https?:$/.test(window.location.protocol)) {
    console.error(`${PREFIX} the popup flow needs a page served over http(s) (this page is ${window.location.protocol}).`);
    return undefined;
  }
  return origin;
}

function initiateServiceTransactionOnElementClick(options: InitiateServiceTransactionOptions): void {
  const origin = serviceOriginFor(options, 'initiateServiceTransactionOnElementClick was not set up', (key) => !KNOWN_OPTIONS.includes(key), true);
  if (origin === undefined) return;
  if (document.querySelector(options.btnSelector) === null) {
    console.warn(`${PREFIX} no element matches ${JSON.stringify(options.btnSelector)} yet; a matching element added later is bound too.`);
  }

  const state: FlowState = { running: false, popup: undefined };
  const onClick = (event: MouseEvent) => {
    const target = event.target;
    if (!(target instanceof Element) || target.closest(options.btnSelector) === null) return;
    event.preventDefault();
    if (state.running) {
      // One flow at a time: bring its popup forward.
      state.popup?.focus();
      return;
    }
    state.running = true;
    if (options.type === 'popup') runPopup(origin, options, state);
    else runRedirect(origin, options, state);
  };
  // Calling it again for the same selector (a re-rendered page, a new amount) replaces the binding.
  const previous = bindings.get(options.btnSelector);
  if (previous !== undefined) document.removeEventListener('click', previous, true);
  bindings.set(options.btnSelector, onClick);
  // Capture phase: the page's own handlers cannot stop it by stopping propagation.
  document.addEventListener('click', onClick, true);
}

/** The flow started by initiateBharatXTransaction: one at a time. */
const immediateState: FlowState = { running: false, popup: undefined };

function initiateBharatXTransaction(options: InitiateBharatXTransactionOptions): void {
  const origin = serviceOriginFor(options, 'initiateBharatXTransaction did not start', (key) => key === 'btnSelector' || !KNOWN_OPTIONS.includes(key), false);
  if (origin === undefined) return;
  if (immediateState.running) {
    // One flow at a time: bring its popup forward.
    immediateState.popup?.focus();
    return;
  }
  immediateState.running = true;
  if (options.type === 'popup') runPopup(origin, options, immediateState);
  else runRedirect(origin, options, immediateState);
}

window.initiateBharatXTransaction = (options) => {
  try {
    initiateBharatXTransaction(options);
  } catch (error) {
    immediateState.running = false;
    console.error(`${PREFIX} initiateBharatXTransaction failed:`, error);
  }
};

window.initiateServiceTransactionOnElementClick = (options) => {
  try {
    initiateServiceTransactionOnElementClick(options);
  } catch (error) {
    console.error(`${PREFIX} initiateServiceTransactionOnElementClick failed:`, error);
  }
};

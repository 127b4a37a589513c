/**
 * The script of the hosted checkout page (`/checkout/{id}`, rendered by
 * src/sandbox/pages/checkout.ts, which inlines this bundle). It drives the steps with the sandbox
 * endpoints of the transaction and reports the result:
 * - popup (opened by sdk.js): posts `{ type: 'paylater:result', transactionId, status, signature }`
 *   to the opener, for the shop's origin only, then closes the window; as it opens, on a hosted
 *   sandbox, it posts `{ type: 'paylater:opened', transactionId, checkout }` with the checkout token
 *   its links carry, which sdk.js passes on if the user closes the window;
 * - redirect (sdk.js): goes back to the script's `redirectUrl` with `tid` appended;
 * - direct (the merchant sent the user to `redirectUrl`): goes to `redirect.url`, or after a failure
 *   or cancellation to `redirect.failureUrl` when set (D21), with `txnId` and `txnStatus` appended to
 *   its query (D33), as the sandbox answers in `redirectTo`.
 */
import { CHECKOUT_TOKEN, OPENED_MESSAGE_TYPE, RESULT_MESSAGE_TYPE, isFinalStatus } from './protocol.js';
import type { CheckoutOpenedMessage, CheckoutResultMessage, FinalStatus } from './types.js';

/** The JSON island `#paylater-checkout-config` (CheckoutPageConfig in src/sandbox/pages/checkout.ts). */
interface PageConfig {
  transactionId: string;
  merchantName: string;
  flow: 'popup' | 'redirect' | 'direct';
  openerOrigin: string | null;
  returnTo: string | null;
  endpoints: { otp: string; pay: string; cancel: string; fail: string; state: string };
  otpLength: number;
  final: Outcome | null;
  problem: { message: string; canReturn: boolean } | null;
}

interface Outcome {
  status: FinalStatus;
  signature: string;
  redirectTo: string;
  failureReason?: string | null;
}

interface Answer {
  status: number;
  body: Record<string, unknown> | null;
}

/** How long the result stays on screen before the window closes or the page moves on. */
const LINGER_MS = 1500;

function element<T extends HTMLElement>(id: string): T {
  const found = document.getElementById(id);
  if (found === null) throw new Error(`the checkout page has no #${id}`);
  return found as T;
}

const config = JSON.parse(element('paylater-checkout-config').textContent ?? '{}') as PageConfig;
const otpForm = element<HTMLFormElement>('otp-form');
const otpInput = element<HTMLInputElement>('otp');
const otpError = element('otp-error');
const otpSubmit = element<HTMLButtonElement>('otp-submit');
const payForm = element<HTMLFormElement>('pay-form');
const payError = element('pay-error');
const paySubmit = element<HTMLButtonElement>('pay-submit');
const cancelButton = element<HTMLButtonElement>('cancel');
const statusLine = element('status');
const pageError = element('page-error');
let busy = false;
let finished = false;

type Section = 'otp' | 'pay' | 'result' | 'problem';

function show(section: Section): void {
  const steps: Record<Section, string> = { otp: 'step-otp', pay: 'step-pay', result: 'step-result', problem: 'step-problem' };
  for (const [name, id] of Object.entries(steps)) element(id).hidden = name !== section;
  const inProgress = section === 'otp' || section === 'pay';
  element('footer').hidden = !inProgress;
  const progress = document.querySelector<HTMLElement>('.progress');
  if (progress !== null) progress.hidden = !inProgress;
  if (section === 'pay') {
    element('progress-otp').removeAttribute('aria-current');
    element('progress-otp').classList.add('done');
    element('progress-pay').setAttribute('aria-current', 'step');
  }
  const heading = document.querySelector<HTMLElement>(`#${steps[section]} h2`);
  heading?.focus();
}

function announce(text: string): void {
  statusLine.textContent = text;
}

function setBusy(button: HTMLButtonElement, on: boolean, label?: string): void {
  busy = on;
  button.disabled = on;
  cancelButton.disabled = on;
  if (on) {
    button.dataset.label = button.textContent ?? '';
    if (label !== undefined) button.textContent = label;
  } else if (button.dataset.label !== undefined) {
    button.textContent = button.dataset.label;
  }
}

async function post(path: string, body?: unknown): Promise<Answer> {
  const init: RequestInit = { method: 'POST', credentials: 'same-origin', cache: 'no-store' };
  if (body !== undefined) {
    init.headers = { 'Content-Type': 'application/json' };
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  let json: Record<string, unknown> | null = null;
  try {
    json = (await response.json()) as Record<string, unknown>;
  } catch {
    json = null;
  }
  return { status: response.status, body: json };
}

function outcomeOf(body: Record<string, unknown> | null): Outcome | undefined {
  if (body === null || !isFinalStatus(body.status) || typeof body.signature !== 'string') return undefined;
  return {
    status: body.status,
    signature: body.signature,
    redirectTo: typeof body.redirectTo === 'string' ? body.redirectTo : '',
    failureReason: typeof body.failureReason === 'string' ? body.failureReason : null,
  };
}

/** The transaction ended elsewhere (expired, another tab): read what was recorded and report it. */
async function refresh(): Promise<void> {
  try {
    const response = await fetch(config.endpoints.state, { credentials: 'same-origin', cache: 'no-store' });
    const outcome = outcomeOf((await response.json()) as Record<string, unknown>);
    if (outcome !== undefined) {
      finish(outcome);
      return;
    }
  } catch {
    // fall through
  }
  pageError.textContent = 'Something went wrong. Reload the page to try again.';
}

/** Runs an action against the sandbox; a final status in the answer finishes the page. */
async function act(button: HTMLButtonElement, label: string, run: () => Promise<Answer>, onOk: (body: Record<string, unknown>) => void): Promise<void> {
  if (busy || finished) return;
  pageError.textContent = '';
  setBusy(button, true, label);
  let answer: Answer;
  try {
    answer = await run();
  } catch {
    setBusy(button, false);
    pageError.textContent = 'We could not reach the pay-later service. Check your connection and try again.';
    return;
  }
  setBusy(button, false);
  if (answer.status === 409) {
    await refresh();
    return;
  }
  if (answer.status !== 200 || answer.body === null) {
    pageError.textContent = 'Something went wrong. Try again.';
    return;
  }
  const outcome = outcomeOf(answer.body);
  if (outcome !== undefined) finish(outcome);
  else onOk(answer.body);
}

function setOtpError(text: string): void {
  otpError.textContent = text;
  otpInput.setAttribute('aria-invalid', text === '' ? 'false' : 'true');
}

const RESULT_TEXT: Record<FinalStatus, { icon: string; title: string; tone: string }> = {
  SUCCESS: { icon: '✓', title: 'Payment confirmed', tone: 'result-ok' },
  CANCELLED: { icon: '✕', title: 'Payment cancelled', tone: 'result-bad' },
  FAILURE: { icon: '!', title: 'Payment failed', tone: 'result-bad' },
};

function resultMessage(outcome: Outcome): string {
  const merchant = config.merchantName;
  if (outcome.status === 'SUCCESS') return `Your pay-later purchase at ${merchant} is confirmed.`;
  if (outcome.status === 'CANCELLED') return 'You cancelled this payment. You were not charged.';
  if (outcome.failureReason === 'OTP_ATTEMPTS_EXCEEDED') return 'Too many wrong codes were entered. You were not charged.';
  if (outcome.failureReason === 'EXPIRED') return 'This payment link has expired. You were not charged.';
  return 'The payment could not be completed. You were not charged.';
}

/** Shows the result and hands it back: to the opener, to the script's redirectUrl, or to redirectTo. */
function finish(outcome: Outcome): void {
  if (finished) return;
  finished = true;
  const text = RESULT_TEXT[outcome.status];
  const icon = element('result-icon');
  icon.textContent = text.icon;
  icon.className = `result-icon ${text.tone}`;
  element('result-title').textContent = text.title;
  element('result-message').textContent = resultMessage(outcome);
  const next = element('result-next');
  show('result');
  announce(`${text.title}.`);

  if (config.flow === 'popup') {
    const opener = window.opener as Window | null;
    const closeButton = element<HTMLButtonElement>('result-close');
    closeButton.hidden = false;
    closeButton.addEventListener('click', () => window.close());
    if (opener !== null && !opener.closed && config.openerOrigin !== null) {
      const message: CheckoutResultMessage = {
        type: RESULT_MESSAGE_TYPE,
        transactionId: config.transactionId,
        status: outcome.status,
        signature: outcome.signature,
      };
      opener.postMessage(message, config.openerOrigin);
      next.textContent = `${config.merchantName} has been told. This window closes by itself.`;
      window.setTimeout(() => window.close(), LINGER_MS);
    } else {
      next.textContent = `You can close this window and go back to ${config.merchantName}.`;
    }
    return;
  }
  const target = config.flow === 'redirect' ? config.returnTo : outcome.redirectTo;
  if (target === null || target === '') return;
  const link = element<HTMLAnchorElement>('result-link');
  link.href = target;
  link.hidden = false;
  next.textContent = `Taking you back to ${config.merchantName}…`;
  window.setTimeout(() => window.location.replace(target), LINGER_MS);
}

otpInput.addEventListener('input', () => {
  const digits = otpInput.value.replace(/[^0-9]/g, '').slice(0, config.otpLength);
  if (digits !== otpInput.value) otpInput.value = digits;
  if (otpError.textContent !== '') setOtpError('');
});

otpForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const otp = otpInput.value.trim();
  if (!new RegExp(`^[0-9]{${config.otpLength}}$`).test(otp)) {
    setOtpError(`Enter the ${config.otpLength}-digit code.`);
    otpInput.focus();
    return;
  }
  void act(otpSubmit, 'Verifying…', () => post(config.endpoints.otp, { otp }), (body) => {
    const left = typeof body.attemptsLeft === 'number' ? body.attemptsLeft : 0;
    if (body.result === 'VERIFIED') {
      setOtpError('');
      announce('Phone number verified.');
      show('pay');
      return;
    }
    otpInput.value = '';
    otpInput.focus();
    if (body.result === 'EXPIRED') setOtpError('That code has expired. We sent you a new one.');
    else setOtpError(`That code is not right. ${left} ${left === 1 ? 'attempt' : 'attempts'} left.`);
  });
});

payForm.addEventListener('submit', (event) => {
  event.preventDefault();
  const method = payForm.querySelector<HTMLInputElement>('input[name="method"]:checked')?.value ?? 'UPI';
  void act(paySubmit, 'Paying…', () => post(config.endpoints.pay, { method }), () => {
    payError.textContent = 'The payment did not go through. Try again.';
  });
});

cancelButton.addEventListener('click', () => {
  void act(cancelButton, 'Cancelling…', () => post(config.endpoints.cancel), () => undefined);
});

element<HTMLButtonElement>('problem-return').addEventListener('click', (event) => {
  void act(event.currentTarget as HTMLButtonElement, 'Returning…', () => post(config.endpoints.fail), () => undefined);
});

/**
 * Popup flow on a hosted sandbox: the opener (sdk.js) gets the checkout token of this page's links,
 * so that its popup-closed call acts on this transaction as the page's own calls do.
 */
function tellOpenerTheToken(): void {
  const opener = window.opener as Window | null;
  if (config.flow !== 'popup' || config.openerOrigin === null || opener === null || opener.closed) return;
  const checkout = new URL(config.endpoints.state, window.location.href).searchParams.get(CHECKOUT_TOKEN);
  if (checkout === null || checkout === '') return;
  const message: CheckoutOpenedMessage = { type: OPENED_MESSAGE_TYPE, transactionId: config.transactionId, checkout };
  opener.postMessage(message, config.openerOrigin);
}

if (config.final === null) tellOpenerTheToken();
else finish(config.final);

/**
 * The hosted confirmation page of the web flow (`/checkout/{id}`, the `redirectUrl` of the
 * initiate): the merchant, the amount in rupees, an OTP step, a simulated down payment, and a
 * Cancel button. Rendered here with every value escaped; its behaviour is the page script
 * src/browser/checkout.ts, inlined with a nonce. Routes and state: ../families/web-checkout.ts.
 */
import { escapeHtml, htmlReply, httpOrigin, inlineScript, jsonForScript, newNonce } from './html.js';
import type { Reply } from '../router.js';

/** The service's own colour, used when no override is given (the sandbox partner has none). */
const DEFAULT_ACCENT = '#0F766E';
const HEX_COLOUR = /^#[0-9a-fA-F]{6}$/;

export type CheckoutFlow = 'popup' | 'redirect' | 'direct';

/** What the page script reads from the page (the JSON island `#paylater-checkout-config`). */
export interface CheckoutPageConfig {
  transactionId: string;
  merchantName: string;
  flow: CheckoutFlow;
  /** Popup: the target origin of the result message. */
  openerOrigin: string | null;
  /** Redirect: the script's `redirectUrl` with `tid` appended. */
  returnTo: string | null;
  /** Paths of the sandbox endpoints the page calls. */
  endpoints: { otp: string; pay: string; cancel: string; fail: string; state: string };
  otpLength: number;
  /** Set when the page is opened on a transaction that is already final. */
  final: { status: 'SUCCESS' | 'FAILURE' | 'CANCELLED'; signature: string; redirectTo: string; failureReason: string | null } | null;
  /** Set when the page cannot go on (details that do not match, a malformed link). */
  problem: { message: string; canReturn: boolean } | null;
}

export interface CheckoutPageView {
  config: CheckoutPageConfig;
  amount: number;
  downPayment: number;
  phoneNumber: string;
  logoOverride: string | null;
  colorOverride: string | null;
  /** The step shown first while pending. */
  step: 'otp' | 'pay';
  /** The page script (the `checkout` browser bundle). */
  script: string;
}

const INR = new Intl.NumberFormat('en-IN', { style: 'currency', currency: 'INR' });

/** Paise as rupees, Indian grouping: 150000 → ₹1,500.00. */
export function formatPaise(paise: number): string {
  return INR.format(paise / 100);
}

/** `+919000000001` → `+91 ••••••0001`. */
export function maskPhone(phone: string): string {
  return phone.length > 7 ? `${phone.slice(0, 3)} ••••••${phone.slice(-4)}` : phone;
}

/** The colour to use: the override when it is a `#rrggbb` colour, else the default. */
export function accentColour(override: string | null | undefined): string {
  return typeof override === 'string' && HEX_COLOUR.test(override) ? override.toLowerCase() : DEFAULT_ACCENT.toLowerCase();
}

/** White or near-black, whichever reads better on the accent colour (WCAG contrast). */
export function textOn(hex: string): string {
  const channel = (offset: number) => {
    const value = parseInt(hex.slice(offset, offset + 2), 16) / 255;
    return value <= 0.03928 ? value / 12.92 : ((value + 0.055) / 1.055) ** 2.4;
  };
  const luminance = 0.2126 * channel(1) + 0.7152 * channel(3) + 0.0722 * channel(5);
  const withWhite = 1.05 / (luminance + 0.05);
  const withDark = (luminance + 0.05) / (0.0141 + 0.05); // #111827
  return withWhite >= withDark ? '#ffffff' : '#111827';
}

/** The logo URL when it is an absolute http(s) URL of at most 2048 characters; else none. */
export function safeLogoUrl(value: string | null | undefined): string | null {
  if (typeof value !== 'string' || value.length > 2048) return null;
  return httpOrigin(value) === undefined ? null : value;
}

function initialOf(name: string): string {
  const first = [...name.trim()][0] ?? '?';
  return first.toUpperCase();
}

export function renderCheckoutPage(view: CheckoutPageView): Reply {
  const { config } = view;
  const nonce = newNonce();
  const accent = accentColour(view.colorOverride);
  const onAccent = textOn(accent);
  const logo = safeLogoUrl(view.logoOverride);
  const logoOrigin = logo === null ? undefined : httpOrigin(logo);
  const merchant = escapeHtml(config.merchantName);
  const amount = escapeHtml(formatPaise(view.amount));
  const later = escapeHtml(formatPaise(view.amount - view.downPayment));
  const now = escapeHtml(formatPaise(view.downPayment));
  const pending = config.final === null && config.problem === null;
  const hidden = (shown: boolean) => (shown ? '' : ' hidden');
  const length = config.otpLength;

  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>Pay ${amount} to ${merchant} · Pay later</title>
<link rel="icon" href="data:,">
<style nonce="${nonce}">
${styles(accent, onAccent)}
</style>
</head>
<body>
<main class="page" aria-labelledby="checkout-title">
<div class="card">
  <div class="accent-bar"></div>
  <header class="merchant">
    <span class="logo">${
      logo === null
        ? `<span aria-hidden="true">${escapeHtml(initialOf(config.merchantName))}</span>`
        : `<img src="${escapeHtml(logo)}" alt="" referrerpolicy="no-referrer">`
    }</span>
    <div>
      <p class="merchant-name">${merchant}</p>
      <p class="merchant-sub">Pay later checkout</p>
    </div>
    <span class="badge">Sandbox</span>
  </header>
  <div class="summary">
    <h1 id="checkout-title">Confirm your payment</h1>
    <p class="amount"><span class="visually-hidden">Amount: </span>${amount}</p>
    <p class="order">Order <span class="mono">${escapeHtml(config.transactionId)}</span></p>
  </div>

  <ol class="progress" aria-label="Progress"${hidden(pending)}>
    <li id="progress-otp"${view.step === 'otp' ? ' aria-current="step"' : ' class="done"'}>Verify</li>
    <li id="progress-pay"${view.step === 'pay' ? ' aria-current="step"' : ''}>Down payment</li>
    <li id="progress-done">Done</li>
  </ol>

  <section class="step" id="step-otp" aria-labelledby="otp-title"${hidden(pending && view.step === 'otp')}>
    <h2 id="otp-title" tabindex="-1">Verify your phone number</h2>
    <p class="lead">Enter the ${length}-digit code we sent to <span class="nowrap">${escapeHtml(maskPhone(view.phoneNumber))}</span>.</p>
    <form id="otp-form" novalidate>
      <label for="otp">One-time password</label>
      <input id="otp" name="otp" type="text" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]*"
        maxlength="${length}" required aria-describedby="otp-error otp-hint"${pending && view.step === 'otp' ? ' autofocus' : ''}>
      <p class="error" id="otp-error" aria-live="assertive"></p>
      <button class="primary" type="submit" id="otp-submit">Verify code</button>
    </form>
    <p class="hint" id="otp-hint">Sandbox: <strong>123456</strong> is the correct code, <strong>000000</strong> an expired one;
      any other code is wrong, and the third wrong code fails the payment.</p>
  </section>

  <section class="step" id="step-pay" aria-labelledby="pay-title"${hidden(pending && view.step === 'pay')}>
    <h2 id="pay-title" tabindex="-1">Pay the down payment</h2>
    <p class="lead">Pay a part now and the rest later, interest free.</p>
    <dl class="split">
      <dt>Pay now</dt><dd>${now}</dd>
      <dt>Pay later</dt><dd>${later}</dd>
    </dl>
    <form id="pay-form" novalidate>
      <fieldset>
        <legend>Pay the down payment with</legend>
        <label class="option"><input type="radio" name="method" value="UPI" checked> UPI</label>
        <label class="option"><input type="radio" name="method" value="CARD"> Debit card</label>
      </fieldset>
      <p class="error" id="pay-error" aria-live="assertive"></p>
      <button class="primary" type="submit" id="pay-submit">Pay ${now}</button>
    </form>
    <p class="hint">Sandbox: no money moves; the down payment is simulated.</p>
  </section>

  <section class="step result" id="step-result" aria-labelledby="result-title"${hidden(config.final !== null)}>
    <div class="result-icon" id="result-icon" aria-hidden="true"></div>
    <h2 id="result-title" tabindex="-1"></h2>
    <p id="result-message"></p>
    <p class="muted" id="result-next"></p>
    <a class="primary link-button" id="result-link" href="#" hidden>Return to ${merchant}</a>
    <button class="primary" type="button" id="result-close" hidden>Close this window</button>
  </section>

  <section class="step result" id="step-problem" aria-labelledby="problem-title"${hidden(config.problem !== null)}>
    <div class="result-icon result-bad" aria-hidden="true">!</div>
    <h2 id="problem-title" tabindex="-1">This payment cannot continue</h2>
    <p id="problem-message">${escapeHtml(config.problem?.message ?? '')}</p>
    <button class="primary" type="button" id="problem-return"${hidden(config.problem?.canReturn === true)}>Return to ${merchant}</button>
  </section>

  <footer class="footer" id="footer"${hidden(pending)}>
    <span class="secure"><svg class="lock" viewBox="0 0 16 16" aria-hidden="true" focusable="false"><path d="M4 7V5a4 4 0 0 1 8 0v2h.5A1.5 1.5 0 0 1 14 8.5v5a1.5 1.5 0 0 1-1.5 1.5h-9A1.5 1.5 0 0 1 2 13.5v-5A1.5 1.5 0 0 1 3.5 7H4Zm2 0h4V5a2 2 0 0 0-4 0v2Z"/></svg> Secured by the pay-later service</span>
    <button class="secondary" type="button" id="cancel">Cancel payment</button>
  </footer>
  <p class="visually-hidden" id="status" role="status" aria-live="polite"></p>
  <p class="page-error" id="page-error" role="alert"></p>
</div>
<noscript><p class="noscript">This checkout needs JavaScript. Turn it on and reload the page.</p></noscript>
</main>
<script type="application/json" id="paylater-checkout-config">${jsonForScript(config)}</script>
<script nonce="${nonce}">${inlineScript(view.script)}</script>
</body>
</html>
`;
  return htmlReply(html, { nonce, connect: true, ...(logoOrigin === undefined ? {} : { imageSources: [logoOrigin] }) });
}

/** A page for a link that names no transaction (status 404) or another dead end. */
export function renderCheckoutMessage(status: number, title: string, message: string): Reply {
  const nonce = newNonce();
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · Pay later</title>
<link rel="icon" href="data:,">
<style nonce="${nonce}">
${styles(DEFAULT_ACCENT.toLowerCase(), '#ffffff')}
</style>
</head>
<body>
<main class="page" aria-labelledby="message-title">
<div class="card">
  <div class="accent-bar"></div>
  <section class="step result">
    <div class="result-icon result-bad" aria-hidden="true">!</div>
    <h1 id="message-title">${escapeHtml(title)}</h1>
    <p>${escapeHtml(message)}</p>
  </section>
</div>
</main>
</body>
</html>
`;
  return htmlReply(html, { nonce, status });
}

function styles(accent: string, onAccent: string): string {
  return `:root { --accent: ${accent}; --on-accent: ${onAccent}; --ink: #111827; --muted: #4b5563; --line: #e5e7eb;
  --bg: #eef0f3; --danger: #b91c1c; --ok: #047857; --focus: #1d4ed8; }
* { box-sizing: border-box; }
[hidden] { display: none !important; }
body { margin: 0; min-height: 100vh; background: var(--bg); color: var(--ink);
  font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
.page { display: block; max-width: 440px; margin: 0 auto; padding: 24px 12px; }
.card { background: #fff; border-radius: 16px; overflow: hidden;
  box-shadow: 0 12px 32px rgba(17, 24, 39, .10), 0 1px 3px rgba(17, 24, 39, .08); }
.accent-bar { height: 6px; background: var(--accent); }
.merchant { display: flex; align-items: center; gap: 12px; padding: 20px 24px 0; }
.logo { flex: none; width: 44px; height: 44px; border-radius: 12px; overflow: hidden; display: grid; place-items: center;
  background: var(--accent); color: var(--on-accent); font-weight: 700; font-size: 20px; }
.logo img { width: 100%; height: 100%; object-fit: contain; background: #fff; }
.merchant-name { margin: 0; font-weight: 650; overflow-wrap: anywhere; }
.merchant-sub { margin: 0; color: var(--muted); font-size: 14px; }
.badge { margin-left: auto; flex: none; font-size: 12px; font-weight: 700; letter-spacing: .05em; text-transform: uppercase;
  color: #92400e; background: #fef3c7; border-radius: 999px; padding: 2px 10px; }
.summary { padding: 16px 24px 20px; border-bottom: 1px solid var(--line); }
h1 { margin: 0; font-size: 15px; font-weight: 500; color: var(--muted); }
.amount { margin: 2px 0 0; font-size: 34px; font-weight: 700; letter-spacing: -.01em; font-variant-numeric: tabular-nums; }
.order { margin: 4px 0 0; font-size: 13px; color: var(--muted); }
.mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; overflow-wrap: anywhere; }
.progress { display: flex; gap: 8px; list-style: none; margin: 0; padding: 16px 24px 0; font-size: 13px; color: var(--muted); }
.progress li { flex: 1; border-top: 3px solid var(--line); padding-top: 6px; }
.progress li.done, .progress li[aria-current] { border-top-color: var(--accent); color: var(--ink); }
.progress li[aria-current] { font-weight: 650; }
.step { padding: 20px 24px 24px; }
h2 { margin: 0 0 6px; font-size: 19px; }
h2:focus { outline: none; }
.lead { margin: 0; color: var(--muted); }
.nowrap { white-space: nowrap; color: var(--ink); font-weight: 600; }
label { display: block; margin: 18px 0 6px; font-size: 14px; font-weight: 650; }
#otp { width: 100%; padding: 10px 14px; font-size: 24px; letter-spacing: .45em; font-variant-numeric: tabular-nums;
  border: 1px solid #9ca3af; border-radius: 10px; color: var(--ink); background: #fff; }
#otp[aria-invalid="true"] { border-color: var(--danger); }
input:focus-visible, button:focus-visible, a:focus-visible { outline: 3px solid var(--focus); outline-offset: 2px; }
.primary { display: block; width: 100%; margin-top: 16px; padding: 12px 16px; border: 0; border-radius: 10px; cursor: pointer;
  font: inherit; font-weight: 650; text-align: center; text-decoration: none; color: var(--on-accent); background: var(--accent); }
.primary:hover { filter: brightness(.95); }
.primary[disabled] { opacity: .65; cursor: progress; }
.secondary { padding: 8px 4px; border: 0; background: none; cursor: pointer; font: inherit; font-size: 14px;
  color: var(--muted); text-decoration: underline; }
.secondary:hover { color: var(--ink); }
.error { min-height: 1.5em; margin: 8px 0 0; font-size: 14px; color: var(--danger); }
.hint { margin: 16px 0 0; padding: 8px 10px; font-size: 13px; color: var(--muted); background: #f9fafb;
  border: 1px dashed #d1d5db; border-radius: 8px; }
fieldset { margin: 16px 0 0; padding: 0; border: 0; }
legend { padding: 0; font-size: 14px; font-weight: 650; }
.option { display: flex; align-items: center; gap: 10px; margin: 8px 0 0; padding: 10px 12px; font-weight: 500;
  border: 1px solid #d1d5db; border-radius: 10px; cursor: pointer; }
.option:has(input:checked) { border-color: var(--accent); box-shadow: 0 0 0 1px var(--accent); }
.option input { accent-color: var(--accent); width: 18px; height: 18px; margin: 0; }
.split { display: grid; grid-template-columns: 1fr auto; gap: 6px 12px; margin: 14px 0 0; padding: 12px 14px;
  background: #f9fafb; border-radius: 10px; }
.split dt { color: var(--muted); } .split dd { margin: 0; font-weight: 650; text-align: right; font-variant-numeric: tabular-nums; }
.footer { display: flex; align-items: center; justify-content: space-between; gap: 12px; padding: 10px 24px 14px;
  border-top: 1px solid var(--line); }
.secure { display: inline-flex; align-items: center; gap: 6px; font-size: 12px; color: var(--muted); }
.lock { width: 12px; height: 12px; fill: currentColor; }
.result { text-align: center; }
.result-icon { width: 56px; height: 56px; margin: 4px auto 12px; border-radius: 50%; display: grid; place-items: center;
  font-size: 28px; font-weight: 700; }
.result-ok { color: var(--ok); background: #d1fae5; }
.result-bad { color: var(--danger); background: #fee2e2; }
.result p { margin: 6px 0 0; }
.muted { color: var(--muted); font-size: 14px; }
.page-error { margin: 0; padding: 0 24px; color: var(--danger); font-size: 14px; }
.page-error:not(:empty) { padding: 0 24px 16px; }
.noscript { padding: 16px; text-align: center; }
.visually-hidden { position: absolute; width: 1px; height: 1px; margin: -1px; padding: 0; overflow: hidden;
  clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
@media (max-width: 380px) { .amount { font-size: 28px; } .step, .summary, .merchant { padding-left: 16px; padding-right: 16px; } }`;
}

/**
 * The browser side of the web flow without a browser (the browser tests are
 * test/e2e/checkout.test.ts): sdk.js builds and stays small, `GET /sdk.js` answers per the
 * contract, the hosted checkout page escapes what it shows and refuses malformed links, and the
 * sandbox endpoints behind the page (OTP, down payment, closed popup) keep the transaction's status,
 * its signature and the web webhook right.
 */
import { Script } from 'node:vm';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadBrowserAsset } from '../src/sandbox/browser-assets.js';
import { appendQuery, appendTid, webDownPayment } from '../src/sandbox/families/web-checkout.js';
import { accentColour, formatPaise, maskPhone, renderCheckoutPage, safeLogoUrl, textOn, type CheckoutPageConfig } from '../src/sandbox/pages/checkout.js';
import { statusSignature, verifyStatusSignature } from '../src/signature.js';
import { verifyWebWebhook } from '../src/webhooks/index.js';
import { PRIVATE_KEY, startReceiver, startSandbox, waitFor, type Receiver, type TestSandbox } from './sandbox/helpers.js';

/** The size budget of the minified sdk.js (it is about 7.5 KB, 3 KB gzipped). */
const SDK_BUDGET_BYTES = 10_000;
const EVIL = `<script>alert("x")</script> & 'Co' \`tick\``;

let t: TestSandbox;
let receiver: Receiver;
let counter = 0;
const newId = () => `web_page_${Date.now()}_${counter++}`;
const user = { name: 'Asha Rao', phoneNumber: '+919000000001' };

beforeAll(async () => {
  receiver = await startReceiver();
  t = await startSandbox({ config: { partner: { webhookUrl: receiver.url, merchantName: EVIL } } });
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});
afterEach(() => {
  expect(t.loggedErrors).toEqual([]);
});

async function initiate(extra: Record<string, unknown> = {}): Promise<string> {
  const id = newId();
  const answer = await t.web('POST', '/api/transaction', { id, amount: 150_000, user, ...extra });
  expect(answer.status, answer.text).toBe(200);
  return id;
}

const post = (path: string, body?: unknown) =>
  t.request('POST', path, body === undefined ? {} : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } });

describe('sdk.js', () => {
  it('builds into one small script that parses as ES2019 and holds no secret', async () => {
    const sdk = await loadBrowserAsset('sdk');
    if (!sdk.ok) throw new Error(sdk.problem);
    const size = Buffer.byteLength(sdk.code);
    expect(size).toBeGreaterThan(1000);
    expect(size, `sdk.js is ${size} bytes`).toBeLessThan(SDK_BUDGET_BYTES);
    expect(() => new Script(sdk.code)).not.toThrow();
    expect(sdk.code).toContain('initiateServiceTransactionOnElementClick');
    expect(sdk.code).not.toContain(PRIVATE_KEY);
    const page = await loadBrowserAsset('checkout');
    if (!page.ok) throw new Error(page.problem);
    expect(() => new Script(page.code)).not.toThrow();
  });

  it('is served at GET /sdk.js as application/javascript, as the contract says', async () => {
    const answer = await t.request('GET', '/sdk.js');
    expect(answer.operationId).toBe('downloadBrowserScript');
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('application/javascript; charset=utf-8');
    expect(answer.text).toContain('initiateServiceTransactionOnElementClick');
  });
});

describe('the hosted page', () => {
  it('escapes the brand name and shows the amount in rupees; the colour override is applied', async () => {
    const id = await initiate({ redirect: { colorOverride: '#1A73E8', logoOverride: 'https://cdn.example.in/logo.png?a=1&b=2' } });
    const answer = await t.request('GET', `/checkout/${id}`);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const html = answer.text;
    expect(html).not.toContain('<script>alert');
    expect(html).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;Co&#39; &#96;tick&#96;');
    // The JSON island cannot be closed by the brand name.
    expect(html).toContain('\\u003cscript\\u003ealert');
    expect(html.match(/<script\b/g)).toHaveLength(2);
    expect(html).toContain('₹1,500.00');
    expect(html).toContain('--accent: #1a73e8');
    expect(html).toContain('<img src="https://cdn.example.in/logo.png?a=1&amp;b=2"');
    const csp = answer.headers.get('content-security-policy') ?? '';
    const nonce = /script-src 'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeDefined();
    expect(html).toContain(`<script nonce="${nonce}">`);
    expect(csp).toContain("img-src 'self' data: https://cdn.example.in");
    expect(csp).toContain("frame-ancestors 'none'");
  });

  it('renders nothing unsafe from values that bypass the schema', () => {
    const config: CheckoutPageConfig = {
      transactionId: 'x"><img src=x onerror=alert(1)>',
      merchantName: '</script><script>alert(1)</script>',
      flow: 'direct',
      openerOrigin: null,
      returnTo: null,
      endpoints: { otp: '/o', pay: '/p', cancel: '/c', fail: '/f', state: '/s' },
      otpLength: 6,
      final: null,
      problem: null,
    };
    const reply = renderCheckoutPage({
      config,
      amount: 150_000,
      downPayment: 37_500,
      phoneNumber: '+919000000001',
      logoOverride: 'javascript:alert(1)',
      colorOverride: 'red;}</style><script>alert(1)</script>',
      step: 'otp',
      script: 'void "</script><b>injected</b>"',
    });
    const html = String(reply.body);
    expect(html).not.toMatch(/<img src=x/);
    expect(html).not.toContain('javascript:');
    expect(html).not.toContain('</style><script>');
    expect(html).not.toContain('<script>alert');
    // Neither the JSON island nor the inline script can be closed early.
    expect(html.match(/<script\b/g)).toHaveLength(2);
    expect(html.match(/<\/script>/g)).toHaveLength(2);
    expect(html).toContain('--accent: #0f766e');
  });

  it('answers a 404 page for an unknown id, and refuses malformed sdk.js links', async () => {
    const unknown = await t.request('GET', '/checkout/no_such_id');
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain('Payment link not found');

    const id = await initiate();
    const query = (extra: Record<string, string>) =>
      new URLSearchParams({ partnerId: 'partner_test', amount: '150000', phoneNumber: user.phoneNumber, ...extra }).toString();
    const badOrigin = await t.request('GET', `/checkout/${id}?${query({ flow: 'popup', origin: 'javascript:alert(1)' })}`);
    expect(badOrigin.text).toContain('malformed link');
    const badReturn = await t.request('GET', `/checkout/${id}?${query({ flow: 'redirect', returnUrl: 'javascript:alert(1)' })}`);
    expect(badReturn.text).toContain('malformed link');
    expect(badReturn.text).not.toContain('javascript:');
    const mismatch = await t.request('GET', `/checkout/${id}?${query({ flow: 'popup', origin: 'http://shop.example', amount: '100' })}`);
    expect(mismatch.text).toContain('The amount given by the shop');
    const good = await t.request('GET', `/checkout/${id}?${query({ flow: 'redirect', returnUrl: 'https://shop.example/back?x=1#top' })}`);
    expect(good.text).not.toContain('cannot continue</h2>\n    <p id="problem-message">The');
    expect(good.text).toContain(`"returnTo":"https://shop.example/back?x=1\\u0026tid=${id}#top"`);
  });
});

describe('the endpoints behind the hosted page', () => {
  it('OTP: wrong codes count, an expired code does not, the third wrong one fails with a signature and a webhook', async () => {
    const id = await initiate();
    const base = `/sandbox/web/transactions/${id}`;
    expect((await post(`${base}/otp`, { otp: '111111' })).body).toMatchObject({ result: 'INVALID', attemptsLeft: 2, status: 'PENDING' });
    expect((await post(`${base}/otp`, { otp: '000000' })).body).toMatchObject({ result: 'EXPIRED', attemptsLeft: 2, status: 'PENDING' });
    expect((await post(`${base}/otp`, { otp: '222222' })).body).toMatchObject({ result: 'INVALID', attemptsLeft: 1 });
    const third = await post(`${base}/otp`, { otp: '333333' });
    expect(third.body).toMatchObject({ result: 'INVALID', attemptsLeft: 0, status: 'FAILURE', failureReason: 'OTP_ATTEMPTS_EXCEEDED' });
    expect(verifyStatusSignature(third.body.signature, id, 'FAILURE', PRIVATE_KEY)).toBe(true);
    expect(third.body.redirectTo).toBe(`https://merchant.example.in/?txnId=${id}&txnStatus=FAILURE`);
    expect((await post(`${base}/otp`, { otp: '123456' })).status).toBe(409);
    const status = await t.web('GET', `/api/transaction/status?id=${id}`);
    expect(status.body.status).toBe('FAILURE');
    const hook = await waitFor(() => receiver.received.find((r) => r.body.includes(`"${id}"`)));
    const verified = verifyWebWebhook(hook.body, hook.headers, PRIVATE_KEY);
    expect(verified.payload).toEqual({ transactionId: id, status: 'FAILURE', signature: statusSignature(id, 'FAILURE', PRIVATE_KEY) });
  });

  it('the down payment needs the OTP first, then succeeds; bodies are checked', async () => {
    const id = await initiate({ redirect: { url: 'https://shop.example/done', failureUrl: 'https://shop.example/failed' } });
    const base = `/sandbox/web/transactions/${id}`;
    expect((await post(`${base}/pay`)).status).toBe(409);
    expect((await post(`${base}/otp`, {})).status).toBe(400);
    const verified = await post(`${base}/otp`, { otp: '123456' });
    expect(verified.body).toMatchObject({ result: 'VERIFIED', downPayment: { amount: 37_500, remaining: 112_500 } });
    expect((await post(`${base}/pay`, { method: 'CHEQUE' })).status).toBe(400);
    const paid = await post(`${base}/pay`, { method: 'CARD' });
    expect(paid.body).toEqual({
      transactionId: id,
      status: 'SUCCESS',
      signature: statusSignature(id, 'SUCCESS', PRIVATE_KEY),
      redirectTo: `https://shop.example/done?txnId=${id}&txnStatus=SUCCESS`,
    });
    expect((await t.web('GET', `/api/transaction/status?id=${id}`)).body.status).toBe('SUCCESS');
  });

  it('abandon (the popup was closed): CANCELLED if pending, else the recorded status; readable cross-origin', async () => {
    const id = await initiate();
    const abandoned = await post(`/sandbox/web/transactions/${id}/abandon`);
    expect(abandoned.headers.get('access-control-allow-origin')).toBe('*');
    expect(abandoned.body).toEqual({ transactionId: id, status: 'CANCELLED', signature: statusSignature(id, 'CANCELLED', PRIVATE_KEY) });
    const again = await post(`/sandbox/web/transactions/${id}/abandon`);
    expect(again.body.status).toBe('CANCELLED');

    const paid = await initiate();
    await post(`/sandbox/web/transactions/${paid}/otp`, { otp: '123456' });
    await post(`/sandbox/web/transactions/${paid}/pay`);
    expect((await post(`/sandbox/web/transactions/${paid}/abandon`)).body.status).toBe('SUCCESS');
    const unknown = await post('/sandbox/web/transactions/nope/abandon');
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('access-control-allow-origin')).toBe('*');
  });
});

describe('helpers', () => {
  it('appends tid, keeping the query and the fragment', () => {
    expect(appendTid('https://shop.example/return', 'w_1')).toBe('https://shop.example/return?tid=w_1');
    expect(appendTid('https://shop.example/return?a=b%20c&d', 'w_1')).toBe('https://shop.example/return?a=b%20c&d&tid=w_1');
    expect(appendTid('https://shop.example/return?', 'w_1')).toBe('https://shop.example/return?tid=w_1');
    expect(appendTid('https://shop.example/r?x=1#pay', 'w_1')).toBe('https://shop.example/r?x=1&tid=w_1#pay');
    expect(appendTid('https://shop.example/r?tid=old&x=1', 'w_1')).toBe('https://shop.example/r?x=1&tid=w_1');
  });

  it('appends several parameters, encoded, replacing earlier pairs of the same names only', () => {
    expect(appendQuery('https://shop.example/?wc-api=paylater&key=wc_order_a%2Fb', { txnId: 'w 1', txnStatus: 'SUCCESS' })).toBe(
      'https://shop.example/?wc-api=paylater&key=wc_order_a%2Fb&txnId=w%201&txnStatus=SUCCESS',
    );
    expect(appendQuery('https://shop.example/r?txnStatus=old&txnIdx=1#f', { txnId: 'w_1', txnStatus: 'FAILURE' })).toBe(
      'https://shop.example/r?txnIdx=1&txnId=w_1&txnStatus=FAILURE#f',
    );
  });

  it('formats rupees, masks the phone, picks readable colours, accepts only http(s) logos', () => {
    expect(formatPaise(150_000)).toBe('₹1,500.00');
    expect(formatPaise(1_000_000_000)).toBe('₹1,00,00,000.00');
    expect(maskPhone('+919000000001')).toBe('+91 ••••••0001');
    expect(webDownPayment(150_000)).toBe(37_500);
    expect(webDownPayment(100)).toBe(100);
    expect(accentColour('#ABCDEF')).toBe('#abcdef');
    expect(accentColour('red')).toBe('#0f766e');
    expect(textOn('#1a73e8')).toBe('#ffffff');
    expect(textOn('#ffeb3b')).toBe('#111827');
    expect(safeLogoUrl('https://x.example/l.png')).toBe('https://x.example/l.png');
    expect(safeLogoUrl('javascript:alert(1)')).toBeNull();
    expect(safeLogoUrl('data:image/png;base64,AAAA')).toBeNull();
  });
});

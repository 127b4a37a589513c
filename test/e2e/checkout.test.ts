/**
 * The web checkout end to end in headless Chromium (playwright-core): the example merchant
 * (examples/merchant/server.ts) and the sandbox run in-process on free ports, the sandbox's partner
 * webhook pointing at the merchant. The shop's page loads the sandbox's sdk.js; the tests click
 * through the hosted checkout page in the popup and redirect flows and as opened directly from the
 * initiate's redirectUrl, and check the callbacks, their signatures (D22), the merchant's status
 * check, the web webhook, where each flow lands, and that no page logs a console error, fails a
 * request or asks any host but the two local servers. Screenshots: artifacts/screenshots/checkout-*.png.
 *
 * Needs Chromium at /usr/bin/chromium (or CHROMIUM_PATH): `bash .ci/e2e-setup.sh`. See docs/e2e.md.
 */
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { freePort, holdClose, launchChromium } from './browser.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMerchant } from '../../examples/merchant/server.js';
import { createWebClient } from '../../src/clients/web.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { verifyStatusSignature } from '../../src/signature.js';

const root = resolve(import.meta.dirname, '..', '..');
const shotsDir = join(root, 'artifacts', 'screenshots');
const PARTNER_ID = 'partner_test';
const KEY = 'test_private_key';
const SHOPPER = { name: 'Asha Rao', phoneNumber: '+919000000001' };

let browser: Browser | undefined;
let sandbox: Sandbox | undefined;
let merchant: Awaited<ReturnType<typeof startMerchant>> | undefined;
const sandboxErrors: string[] = [];

beforeAll(async () => {
  mkdirSync(shotsDir, { recursive: true });
  const sandboxPort = await freePort();
  merchant = await startMerchant({ port: 0, sandboxUrl: `http://127.0.0.1:${sandboxPort}`, partnerId: PARTNER_ID, privateKey: KEY });
  sandbox = await createSandbox({
    config: { partner: { webhookUrl: `${merchant.url}/webhooks/paylater` } },
    logger: { info: () => undefined, warn: () => undefined, error: (message) => sandboxErrors.push(message) },
  });
  await sandbox.listen(sandboxPort);
  browser = await launchChromium();
});

afterAll(async () => {
  try {
    await browser?.close();
  } finally {
    try {
      await sandbox?.close();
    } finally {
      await merchant?.close();
    }
  }
  expect(sandboxErrors).toEqual([]);
});

function urls() {
  if (!sandbox || !merchant || !browser) throw new Error('the sandbox, the merchant or the browser did not start');
  return { sandbox: sandbox.url, merchant: merchant.url, browser };
}

/** A browser context with everything that went wrong on any of its pages (popups included). */
interface Visit {
  context: BrowserContext;
  page: Page;
  problems: string[];
  foreign: string[];
}

async function visit(path: string, options: { expectFailedRequests?: RegExp; shop?: string } = {}): Promise<Visit> {
  const { merchant: ourShop, browser: chrome } = urls();
  const shop = options.shop ?? ourShop;
  const context = await chrome.newContext({ viewport: { width: 1100, height: 760 } });
  const result: Visit = { context, page: undefined as unknown as Page, problems: [], foreign: [] };
  const isLocal = (url: string) => /^http:\/\/127\.0\.0\.1:\d+\//.test(url) || url.startsWith('data:') || url === 'about:blank';
  context.on('page', (page) => {
    page.on('console', (message) => {
      if (message.type() === 'error') result.problems.push(`console error on ${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => result.problems.push(`page error on ${page.url()}: ${error.message}`));
  });
  context.on('requestfailed', (request) => {
    if (options.expectFailedRequests?.test(request.url()) === true) return;
    result.problems.push(`failed request: ${request.url()} (${request.failure()?.errorText})`);
  });
  context.on('response', (response) => {
    if (response.status() >= 400) result.problems.push(`HTTP ${response.status()} for ${response.url()}`);
  });
  context.on('request', (request) => {
    if (!isLocal(request.url())) result.foreign.push(request.url());
  });
  result.page = await context.newPage();
  await result.page.goto(`${shop}${path}`, { waitUntil: 'load' });
  return result;
}

function expectClean(v: Visit): void {
  expect(v.foreign, 'requests to hosts other than the two local servers').toEqual([]);
  expect(v.problems, 'console errors and failed requests').toEqual([]);
}

async function shot(page: Page, step: string): Promise<void> {
  await page.screenshot({ path: join(shotsDir, `checkout-${step}.png`), fullPage: true, timeout: 90_000 });
}

/** Clicks Pay later on the shop's page and answers the popup with the hosted page loaded. */
async function openPopup(page: Page): Promise<Page> {
  const opened = page.waitForEvent('popup');
  await page.click('#pay-later');
  const popup = await opened;
  await popup.waitForURL(/\/checkout\/order_/);
  await popup.waitForSelector('#otp');
  return popup;
}

async function enterOtp(page: Page, otp: string): Promise<void> {
  await page.fill('#otp', otp);
  await page.press('#otp', 'Enter');
}

/** What the shop's page shows once its server checked the callback's transaction. */
async function shopOrder(page: Page): Promise<{ id: string; callback: string; signature: string; server: string }> {
  await page.waitForFunction(() => {
    const text = document.getElementById('order-server')?.textContent ?? '';
    return text !== '' && text !== '…';
  });
  return page.evaluate(() => ({
    id: document.getElementById('order-id')?.textContent ?? '',
    callback: document.getElementById('order-callback')?.textContent ?? '',
    signature: document.getElementById('order-signature')?.textContent ?? '',
    server: document.getElementById('order-server')?.textContent ?? '',
  }));
}

async function statusOf(id: string) {
  const client = createWebClient({ baseUrl: urls().sandbox, partnerId: PARTNER_ID, privateKey: KEY });
  const { data } = await client.GET('/api/transaction/status', { params: { query: { id } } });
  if (!data) throw new Error(`no status for ${id}`);
  return data;
}

async function webhookStatus(id: string): Promise<string | undefined> {
  return merchant?.webhooks.find((event) => event.payload.transactionId === id)?.payload.status;
}

describe('popup flow', () => {
  it('OTP 123456 and the down payment: successCallback with a verifiable signature, status check and webhook SUCCESS', async () => {
    const v = await visit('/');
    try {
      await shot(v.page, 'shop');
      const popup = await openPopup(v.page);
      // The OTP field has the focus, is labelled and asks for a one-time code.
      await expect.poll(() => popup.evaluate(() => document.activeElement?.id)).toBe('otp');
      expect(await popup.getAttribute('#otp', 'autocomplete')).toBe('one-time-code');
      expect(await popup.getAttribute('#otp', 'inputmode')).toBe('numeric');
      expect(await popup.locator('label[for="otp"]').innerText()).toBe('One-time password');
      expect(await popup.locator('.amount').innerText()).toContain('₹1,500.00');
      expect(await popup.locator('.merchant-name').innerText()).toBe('Sandbox Test Merchant');
      await shot(popup, 'otp');

      await enterOtp(popup, '123456');
      await popup.waitForSelector('#step-pay:not([hidden])');
      await expect.poll(() => popup.evaluate(() => document.activeElement?.id)).toBe('pay-title');
      expect(await popup.locator('.split').innerText()).toMatch(/Pay now\s+₹375\.00\s+Pay later\s+₹1,125\.00/);
      await shot(popup, 'down-payment');

      // Keyboard only: Tab from the heading to the UPI choice, then to the Pay button.
      await popup.keyboard.press('Tab');
      expect(await popup.evaluate(() => (document.activeElement as HTMLInputElement | null)?.value)).toBe('UPI');
      await popup.keyboard.press('Tab');
      expect(await popup.evaluate(() => document.activeElement?.id)).toBe('pay-submit');
      const held = await holdClose(popup);
      await popup.keyboard.press('Enter');
      await popup.waitForSelector('#step-result:not([hidden])');
      expect(await popup.locator('#result-title').innerText()).toBe('Payment confirmed');
      await shot(popup, 'success');
      await held.closes();

      const order = await shopOrder(v.page);
      expect(order.callback).toBe('SUCCESS');
      expect(verifyStatusSignature(order.signature, order.id, 'SUCCESS', KEY)).toBe(true);
      expect(order.server).toBe('SUCCESS (signature verified)');
      const status = await statusOf(order.id);
      expect(status.status).toBe('SUCCESS');
      expect(status.signature).toBe(order.signature);
      await expect.poll(() => webhookStatus(order.id)).toBe('SUCCESS');
      await v.page.waitForFunction(() => document.getElementById('order-title')?.textContent === 'Thank you! Your order is confirmed.');
      // The page asks the shop again until the webhook, sent after the callback, is in.
      await v.page.waitForFunction(() => document.getElementById('order-webhook')?.textContent === 'SUCCESS');
      // A webhook that lands after the page's first check is shown once it comes: the same order
      // opened again while the shop has not got it yet, then the webhook in.
      const late = merchant!.webhooks.splice(merchant!.webhooks.findIndex((event) => event.payload.transactionId === order.id), 1);
      expect(late).toHaveLength(1);
      await v.page.goto(`${urls().merchant}/?order=${order.id}`);
      await v.page.waitForFunction(() => document.getElementById('order-webhook')?.textContent === 'not received yet (waiting…)');
      merchant!.webhooks.push(...late);
      await v.page.waitForFunction(() => document.getElementById('order-webhook')?.textContent === 'SUCCESS');
      await shot(v.page, 'shop-success');
      expectClean(v);
    } finally {
      await v.context.close();
    }
  });

  it('Cancel on the hosted page: failureCallback("CANCELLED", signature)', async () => {
    const v = await visit('/');
    try {
      const popup = await openPopup(v.page);
      const held = await holdClose(popup);
      await popup.click('#cancel');
      await popup.waitForSelector('#step-result:not([hidden])');
      expect(await popup.locator('#result-title').innerText()).toBe('Payment cancelled');
      await shot(popup, 'cancelled');
      await held.closes();
      const order = await shopOrder(v.page);
      expect(order.callback).toBe('CANCELLED');
      expect(verifyStatusSignature(order.signature, order.id, 'CANCELLED', KEY)).toBe(true);
      expect((await statusOf(order.id)).status).toBe('CANCELLED');
      await expect.poll(() => webhookStatus(order.id)).toBe('CANCELLED');
      await v.page.waitForFunction(() => document.getElementById('order-webhook')?.textContent === 'CANCELLED');
      await shot(v.page, 'shop-cancelled');
      expectClean(v);
    } finally {
      await v.context.close();
    }
  });

  it('three wrong OTPs (an expired one does not count): failureCallback("FAILURE", signature)', async () => {
    const v = await visit('/');
    try {
      const popup = await openPopup(v.page);
      await enterOtp(popup, '111111');
      await expect.poll(() => popup.locator('#otp-error').innerText()).toBe('That code is not right. 2 attempts left.');
      expect(await popup.getAttribute('#otp', 'aria-invalid')).toBe('true');
      await shot(popup, 'otp-wrong');
      await enterOtp(popup, '000000');
      await expect.poll(() => popup.locator('#otp-error').innerText()).toBe('That code has expired. We sent you a new one.');
      await enterOtp(popup, '222222');
      await expect.poll(() => popup.locator('#otp-error').innerText()).toBe('That code is not right. 1 attempt left.');
      const held = await holdClose(popup);
      await enterOtp(popup, '333333');
      await popup.waitForSelector('#step-result:not([hidden])');
      expect(await popup.locator('#result-message').innerText()).toContain('Too many wrong codes');
      await shot(popup, 'failure');
      await held.closes();
      const order = await shopOrder(v.page);
      expect(order.callback).toBe('FAILURE');
      expect(verifyStatusSignature(order.signature, order.id, 'FAILURE', KEY)).toBe(true);
      expect((await statusOf(order.id)).status).toBe('FAILURE');
      await expect.poll(() => webhookStatus(order.id)).toBe('FAILURE');
      expectClean(v);
    } finally {
      await v.context.close();
    }
  });

  it('the user closes the popup: the service records CANCELLED and failureCallback gets its signature', async () => {
    const v = await visit('/');
    try {
      const popup = await openPopup(v.page);
      await popup.close();
      const order = await shopOrder(v.page);
      expect(order.callback).toBe('CANCELLED');
      expect(verifyStatusSignature(order.signature, order.id, 'CANCELLED', KEY)).toBe(true);
      expect((await statusOf(order.id)).status).toBe('CANCELLED');
      expectClean(v);
    } finally {
      await v.context.close();
    }
  });
});

describe('popup flow on a hosted sandbox', () => {
  // Hosted, the shopper's endpoints act only with the checkout token of the page's links: the page
  // gives it to sdk.js as it opens, and sdk.js passes it on in its popup-closed call.
  let hosted: Sandbox | undefined;
  let hostedShop: Awaited<ReturnType<typeof startMerchant>> | undefined;
  beforeAll(async () => {
    const port = await freePort();
    hostedShop = await startMerchant({ port: 0, sandboxUrl: `http://127.0.0.1:${port}`, partnerId: PARTNER_ID, privateKey: KEY });
    hosted = await createSandbox({
      config: { hosted: true, operatorToken: 'operator_token_for_the_popup_test', partner: { webhookUrl: `${hostedShop.url}/webhooks/paylater` } },
      logger: { info: () => undefined, warn: () => undefined, error: (message) => sandboxErrors.push(message) },
    });
    await hosted.listen(port, '127.0.0.1');
  });
  afterAll(async () => {
    try {
      await hosted?.close();
    } finally {
      await hostedShop?.close();
    }
  });

  it('the user closes the popup: sdk.js passes the page\'s checkout token, the service records CANCELLED, failureCallback gets its signature', async () => {
    const v = await visit('/', { shop: hostedShop?.url });
    try {
      const abandon = v.page.waitForRequest(/\/abandon/);
      const popup = await openPopup(v.page);
      await popup.close();
      expect(new URL((await abandon).url()).searchParams.get('checkout')).toMatch(/^[A-Za-z0-9_-]{32}$/);
      const order = await shopOrder(v.page);
      expect(order.callback).toBe('CANCELLED');
      expect(verifyStatusSignature(order.signature, order.id, 'CANCELLED', KEY)).toBe(true);
      expectClean(v);
    } finally {
      await v.context.close();
    }
  });

  it("the user closes the popup before its page loaded: sdk.js passes the order's details instead, and failureCallback still gets the signature", async () => {
    const v = await visit('/', { shop: hostedShop?.url, expectFailedRequests: /\/checkout\/order_/ });
    try {
      // The hosted page never arrives: the popup is closed while it loads, before it could post its token.
      let requested: () => void = () => undefined;
      const pageRequested = new Promise<void>((resolve) => (requested = resolve));
      await v.context.route(/\/checkout\/order_/, () => requested());
      const abandon = v.page.waitForRequest(/\/abandon/);
      const opened = v.page.waitForEvent('popup');
      await v.page.click('#pay-later');
      const popup = await opened;
      await pageRequested;
      await popup.close();
      const query = new URL((await abandon).url()).searchParams;
      expect(query.get('checkout')).toBeNull();
      expect([query.get('flow'), query.get('partnerId')]).toEqual(['popup', PARTNER_ID]);
      const order = await shopOrder(v.page);
      expect(order.callback).toBe('CANCELLED');
      expect(verifyStatusSignature(order.signature, order.id, 'CANCELLED', KEY)).toBe(true);
    } finally {
      await v.context.close();
    }
  });
});

/** Binds two extra buttons on the shop's page whose getTransactionId rejects or resolves to null. */
async function bindFailingButtons(page: Page, type: 'popup' | 'redirect'): Promise<void> {
  await page.evaluate((flow) => {
    const calls: unknown[][] = [];
    (window as unknown as { calls: unknown[][] }).calls = calls;
    const variants: [string, () => Promise<string | null>][] = [
      ['t-reject', () => Promise.reject(new Error('the merchant server is down'))],
      ['t-null', () => Promise.resolve(null)],
    ];
    for (const [id, getTransactionId] of variants) {
      const button = document.createElement('button');
      button.id = id;
      button.textContent = id;
      document.body.append(button);
      const common = { btnSelector: `#${id}`, getTransactionId, partnerId: 'partner_test', amount: 150000, phoneNumber: '+919000000001' };
      window.initiateServiceTransactionOnElementClick(
        flow === 'popup'
          ? {
              ...common,
              type: 'popup',
              successCallback: (...args: unknown[]) => calls.push([id, 'success', ...args]),
              failureCallback: (...args: unknown[]) => calls.push([id, 'failure', ...args]),
            }
          : { ...common, type: 'redirect', redirectUrl: '/?never=1', redirectFailureCallback: (...args: unknown[]) => calls.push([id, 'redirectFailure', ...args]) },
      );
    }
  }, type);
}

function calls(page: Page): Promise<unknown[][]> {
  return page.evaluate(() => (window as unknown as { calls: unknown[][] }).calls);
}

describe('GET_TXN_ID_FAILED', () => {
  it('popup: getTransactionId rejecting or resolving to null closes the popup and calls failureCallback without a signature', async () => {
    const v = await visit('/');
    try {
      await bindFailingButtons(v.page, 'popup');
      for (const id of ['t-reject', 't-null']) {
        const opened = v.page.waitForEvent('popup');
        await v.page.click(`#${id}`);
        const popup = await opened;
        if (!popup.isClosed()) await popup.waitForEvent('close');
      }
      await expect.poll(() => calls(v.page)).toEqual([
        ['t-reject', 'failure', 'GET_TXN_ID_FAILED'],
        ['t-null', 'failure', 'GET_TXN_ID_FAILED'],
      ]);
      expect(v.context.pages()).toHaveLength(1);
      expectClean(v);
    } finally {
      await v.context.close();
    }
  });

  it('redirect: getTransactionId rejecting or resolving to null stays on the page and calls redirectFailureCallback', async () => {
    const v = await visit('/?flow=redirect');
    try {
      const before = v.page.url();
      await bindFailingButtons(v.page, 'redirect');
      await v.page.click('#t-reject');
      await v.page.click('#t-null');
      await expect.poll(() => calls(v.page)).toEqual([
        ['t-reject', 'redirectFailure', 'GET_TXN_ID_FAILED'],
        ['t-null', 'redirectFailure', 'GET_TXN_ID_FAILED'],
      ]);
      expect(v.page.url()).toBe(before);
      expectClean(v);
    } finally {
      await v.context.close();
    }
  });

  it("the shop's own getTransactionId gets no id from its server: the page shows the failure", async () => {
    const v = await visit('/');
    try {
      // The shop's server answers without an id: getTransactionId resolves to null.
      await v.page.route('**/api/checkout', (route) => route.fulfill({ status: 200, contentType: 'application/json', body: '{"transactionId":null}' }));
      const opened = v.page.waitForEvent('popup');
      await v.page.click('#pay-later');
      const popup = await opened;
      if (!popup.isClosed()) await popup.waitForEvent('close');
      await v.page.waitForSelector('#order:not([hidden])');
      expect(await v.page.locator('#order-callback').innerText()).toBe('GET_TXN_ID_FAILED');
      expect(await v.page.locator('#order-signature').innerText()).toBe('(none)');
      await shot(v.page, 'shop-get-txn-id-failed');
      expectClean(v);
    } finally {
      await v.context.close();
    }
  });
});

describe('invalid options', () => {
  it('are reported on the console, bind nothing and never throw', async () => {
    const v = await visit('/');
    try {
      const thrown = await v.page.evaluate(() => {
        const bind = window.initiateServiceTransactionOnElementClick as (options: unknown) => void;
        try {
          bind(null);
          bind({ btnSelector: '#pay-later[', type: 'popups', amount: 1.5, phoneNumber: '9000000001' });
          bind({ btnSelector: '#t-redirect', type: 'redirect', getTransactionId: () => 'x', partnerId: 'p', amount: 150000, phoneNumber: '+919000000001', redirectUrl: 'javascript:alert(1)' });
          return null;
        } catch (error) {
          return String(error);
        }
      });
      expect(thrown).toBeNull();
      const reported = v.problems.filter((problem) => problem.includes('[paylater sdk.js]'));
      expect(v.problems.filter((problem) => !reported.includes(problem))).toEqual([]);
      expect(reported).toHaveLength(3);
      expect(reported[0]).toContain('the options must be an object (got null)');
      for (const expected of ['btnSelector "#pay-later[" is not a valid CSS selector', "type must be 'popup' or 'redirect'", 'getTransactionId must be', 'partnerId must be', 'amount must be an integer', 'phoneNumber must be']) {
        expect(reported[1]).toContain(expected);
      }
      expect(reported[2]).toContain('redirectUrl must be an http(s) URL');
      expect(reported[2]).toContain('redirectFailureCallback must be a function');
      expect(v.foreign).toEqual([]);
    } finally {
      await v.context.close();
    }
  });
});

describe('redirect flow', () => {
  it('success lands on redirectUrl with tid appended, keeping its query', async () => {
    const v = await visit('/?flow=redirect');
    try {
      await v.page.click('#pay-later');
      await v.page.waitForURL(/\/checkout\/order_/);
      const hosted = new URL(v.page.url());
      const id = decodeURIComponent(hosted.pathname.split('/').pop() ?? '');
      expect(hosted.searchParams.get('flow')).toBe('redirect');
      await v.page.waitForSelector('#otp');
      await shot(v.page, 'redirect-otp');
      await enterOtp(v.page, '123456');
      await v.page.click('#pay-submit');
      await v.page.waitForURL((url) => url.origin === urls().merchant);
      expect(v.page.url()).toBe(`${urls().merchant}/?flow=redirect&from=paylater&tid=${id}`);
      const order = await shopOrder(v.page);
      expect(order.server).toBe('SUCCESS (signature verified)');
      await shot(v.page, 'redirect-return');
      expectClean(v);
    } finally {
      await v.context.close();
    }
  });
});

describe('the hosted page opened directly from the initiate redirectUrl', () => {
  async function initiate(redirect: Record<string, string>): Promise<{ id: string; redirectUrl: string }> {
    const client = createWebClient({ baseUrl: urls().sandbox, partnerId: PARTNER_ID, privateKey: KEY });
    const id = `direct_${Date.now()}_${Math.random().toString(36).slice(2, 8)}`;
    const { data, error } = await client.POST('/api/transaction', { body: { id, amount: 249_900, user: SHOPPER, redirect } });
    if (!data) throw new Error(`initiate failed: ${JSON.stringify(error)}`);
    return { id, redirectUrl: data.redirectUrl };
  }

  it('honours the logo and colour overrides; cancel goes to redirect.failureUrl, success to redirect.url, with txnId and txnStatus', async () => {
    const shop = urls().merchant;
    const cancelled = await initiate({
      url: `${shop}/?result=done`,
      failureUrl: `${shop}/?result=failed`,
      logoOverride: `${shop}/logo.svg`,
      colorOverride: '#1A73E8',
    });
    const v = await visit('/');
    try {
      await v.page.goto(cancelled.redirectUrl);
      await v.page.waitForSelector('#otp');
      expect(await v.page.locator('.logo img').getAttribute('src')).toBe(`${shop}/logo.svg`);
      await v.page.waitForFunction(() => (document.querySelector('.logo img') as HTMLImageElement | null)?.complete === true);
      expect(await v.page.locator('.accent-bar').evaluate((bar) => getComputedStyle(bar).backgroundColor)).toBe('rgb(26, 115, 232)');
      expect(await v.page.locator('.amount').innerText()).toContain('₹2,499.00');
      await shot(v.page, 'direct-overrides');
      await v.page.click('#cancel');
      await v.page.waitForURL(`${shop}/?result=failed&txnId=${cancelled.id}&txnStatus=CANCELLED`);
      // The shop's page reads its order (/api/orders/<id>); leaving before that answers aborts it.
      await v.page.waitForLoadState('networkidle');

      const confirmed = await initiate({ url: `${shop}/?result=done&via=direct`, failureUrl: `${shop}/?result=failed` });
      await v.page.goto(confirmed.redirectUrl);
      await enterOtp(v.page, '123456');
      await v.page.click('#pay-submit');
      await v.page.waitForURL(`${shop}/?result=done&via=direct&txnId=${confirmed.id}&txnStatus=SUCCESS`);
      expect((await statusOf(confirmed.id)).status).toBe('SUCCESS');
      expect((await statusOf(cancelled.id)).status).toBe('CANCELLED');
      expectClean(v);
    } finally {
      await v.context.close();
    }
  });

  it('three wrong OTPs go to redirect.failureUrl', async () => {
    const shop = urls().merchant;
    const failed = await initiate({ url: `${shop}/?result=done`, failureUrl: `${shop}/?result=failed&why=otp` });
    const v = await visit('/');
    try {
      await v.page.goto(failed.redirectUrl);
      await enterOtp(v.page, '111111');
      await expect.poll(() => v.page.locator('#otp-error').innerText()).toBe('That code is not right. 2 attempts left.');
      await enterOtp(v.page, '222222');
      await expect.poll(() => v.page.locator('#otp-error').innerText()).toBe('That code is not right. 1 attempt left.');
      await enterOtp(v.page, '333333');
      await v.page.waitForURL(`${shop}/?result=failed&why=otp&txnId=${failed.id}&txnStatus=FAILURE`);
      expect((await statusOf(failed.id)).status).toBe('FAILURE');
      expectClean(v);
    } finally {
      await v.context.close();
    }
  });

  it("the sandbox's landing page links the browser script and the example merchant", async () => {
    const { browser: chrome, sandbox: service } = urls();
    const context = await chrome.newContext();
    try {
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(message.text());
      });
      const response = await page.goto(`${service}/`);
      expect(response?.status()).toBe(200);
      expect(await page.locator('h1').innerText()).toBe('Pay-later sandbox');
      const hrefs = await page.$$eval('a[href]', (links) => links.map((a) => a.getAttribute('href')));
      expect(hrefs).toContain('/sdk.js');
      expect(hrefs).toContain('http://127.0.0.1:4001/');
      expect(problems).toEqual([]);
      await shot(page, 'sandbox-landing');
    } finally {
      await context.close();
    }
  });

  it('an unknown id answers a 404 page', async () => {
    const { browser: chrome, sandbox: service } = urls();
    const context = await chrome.newContext();
    try {
      const page = await context.newPage();
      const response = await page.goto(`${service}/checkout/no_such_order`);
      expect(response?.status()).toBe(404);
      expect(await page.locator('h1').innerText()).toBe('Payment link not found');
      await shot(page, 'not-found');
    } finally {
      await context.close();
    }
  });
});

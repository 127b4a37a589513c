/**
 * The sandbox's dashboard (`/dashboard`) in headless Chromium (playwright-core), open while things
 * happen, never reloaded: a web checkout completed in the example shop shows its request, its
 * transaction's timeline and its webhook attempts live; a failing receiver's attempts, then a
 * resend that succeeds once it answers 200; a request id from a 401 finds its request and the
 * reason; an advance of the clock expires an open transaction, seen live; on a hosted sandbox a
 * partner signed in sees its own requests, transactions and webhooks and nothing of another
 * partner's. axe-core (injected into the page) finds nothing serious or critical. No console error, no failed request, no host but the
 * local servers. Screenshots: artifacts/screenshots/dashboard-*.png.
 *
 * Needs Chromium at /usr/bin/chromium (or CHROMIUM_PATH): `bash .ci/e2e-setup.sh`. See docs/e2e.md.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import { join, resolve } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMerchant } from '../../examples/merchant/server.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { sdkSignature, webSignature } from '../../src/signature.js';
import { freePort, launchChromium } from './browser.js';

const root = resolve(import.meta.dirname, '..', '..');
const shotsDir = join(root, 'artifacts', 'screenshots');
const PARTNER_ID = 'partner_test';
const KEY = 'test_private_key';

let browser: Browser | undefined;
let sandbox: Sandbox | undefined;
let merchant: Awaited<ReturnType<typeof startMerchant>> | undefined;
let receiver: Server | undefined;
/** What the SDK receiver answers. */
let receiverStatus = 500;
const sandboxErrors: string[] = [];

beforeAll(async () => {
  mkdirSync(shotsDir, { recursive: true });
  receiver = createHttpServer((request, response) => {
    request.resume();
    request.on('end', () => {
      response.writeHead(receiverStatus, { 'Content-Type': 'text/plain' });
      response.end(receiverStatus === 200 ? 'ok' : 'receiver down');
    });
  });
  await new Promise<void>((done) => receiver!.listen(0, '127.0.0.1', done));
  const receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/sdk-hook`;
  // The shop needs the sandbox's address before the sandbox needs the shop's (its web webhook URL).
  const port = await freePort();
  merchant = await startMerchant({ port: 0, sandboxUrl: `http://127.0.0.1:${port}`, partnerId: PARTNER_ID, privateKey: KEY });
  const webhookUrls = { web: `${merchant.url}/webhooks/paylater`, sdk: receiverUrl };
  const logger = { info: () => undefined, warn: () => undefined, error: (message: string) => void sandboxErrors.push(message) };
  sandbox = await createSandbox({ config: { partner: { webhookUrls } }, logger });
  await sandbox.listen(port);
  browser = await launchChromium();
});

afterAll(async () => {
  try {
    await browser?.close();
  } finally {
    await sandbox?.close();
    await merchant?.close();
    await new Promise<void>((done) => (receiver === undefined ? done() : receiver.close(() => done())));
  }
  expect(sandboxErrors).toEqual([]);
});

interface Visit {
  context: BrowserContext;
  dashboard: Page;
  problems: string[];
  foreign: string[];
}

/** The dashboard open in a fresh context, with everything that went wrong on any of its pages. */
async function openDashboard(options: { bypassCSP?: boolean } = {}): Promise<Visit> {
  if (browser === undefined || sandbox === undefined) throw new Error('the sandbox or the browser did not start');
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, ...options });
  const visit: Visit = { context, dashboard: undefined as unknown as Page, problems: [], foreign: [] };
  context.on('page', (page) => {
    page.on('console', (message) => {
      if (message.type() === 'error') visit.problems.push(`console error on ${page.url()}: ${message.text()}`);
    });
    page.on('pageerror', (error) => visit.problems.push(`page error on ${page.url()}: ${error.message}`));
  });
  context.on('requestfailed', (request) => {
    // The event stream is cut when the context closes.
    if (!request.url().includes('/sandbox/webhooks/stream')) visit.problems.push(`failed request: ${request.url()} (${request.failure()?.errorText})`);
  });
  context.on('response', (response) => {
    if (response.status() >= 400) visit.problems.push(`HTTP ${response.status()} for ${response.url()}`);
  });
  context.on('request', (request) => {
    if (!/^http:\/\/127\.0\.0\.1:\d+\//.test(request.url()) && !request.url().startsWith('data:')) visit.foreign.push(request.url());
  });
  visit.dashboard = await context.newPage();
  await visit.dashboard.goto(`${sandbox.url}/dashboard`, { waitUntil: 'load' });
  await visit.dashboard.waitForFunction(() => document.getElementById('live')?.textContent === 'live');
  return visit;
}

async function closeClean(visit: Visit): Promise<void> {
  await visit.context.close();
  expect(visit.foreign, 'requests to hosts other than the local servers').toEqual([]);
  expect(visit.problems, 'console errors and failed requests').toEqual([]);
}

/** Runs `steps` on a dashboard opened for them, then closes it and checks nothing went wrong. */
async function withDashboard(steps: (dashboard: Page, visit: Visit) => Promise<void>, options: { bypassCSP?: boolean } = {}): Promise<void> {
  const visit = await openDashboard(options);
  try {
    await steps(visit.dashboard, visit);
  } finally {
    await closeClean(visit);
  }
}

async function shot(page: Page, step: string): Promise<void> {
  await page.screenshot({ path: join(shotsDir, `dashboard-${step}.png`), fullPage: true, timeout: 90_000 });
}

/** A signed SDK initiate, as a partner's server sends it. */
async function initiateSdk(id: string): Promise<void> {
  const body = JSON.stringify({ merchantTransactionId: id, userPhoneNumber: '+919000000001', userId: 'u_1', amount: 250_000 });
  const response = await fetch(`${sandbox!.url}/merchant/credit/initiateTransaction`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', 'X-Partnerid': PARTNER_ID, 'X-Signature': sdkSignature(body, KEY) },
    body,
  });
  expect(response.status).toBe(201);
}

const requestRows = (page: Page) => page.locator('#request-table tbody tr');

/** The serious and critical findings of axe-core on the page as it is (the page's context bypasses its CSP). */
async function seriousAxeFindings(page: Page): Promise<{ id: string; impact: string; help: string; nodes: number }[]> {
  const axe = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
  await page.addScriptTag({ content: axe });
  const violations = await page.evaluate(async () => {
    const result = await (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; help: string; nodes: unknown[] }[] }> } }).axe.run();
    return result.violations.map((violation) => ({ id: violation.id, impact: violation.impact, help: violation.help, nodes: violation.nodes.length }));
  });
  return violations.filter((violation) => violation.impact === 'serious' || violation.impact === 'critical');
}

describe('the dashboard, live', () => {
  it('shows a web checkout completed in the shop: its request, its transaction timeline and its webhook attempts, without a reload', () =>
    withDashboard(async (dashboard, visit) => {
      const shop = await visit.context.newPage();
      await shop.goto(`${merchant!.url}/`, { waitUntil: 'load' });
      const opened = shop.waitForEvent('popup');
      await shop.click('#pay-later');
      const popup = await opened;
      await popup.waitForSelector('#otp');
      await popup.fill('#otp', '123456');
      await popup.press('#otp', 'Enter');
      await popup.waitForSelector('#step-pay:not([hidden])');
      const closed = popup.waitForEvent('close');
      await popup.click('#pay-submit');
      await closed;
      await shop.waitForFunction(() => (document.getElementById('order-server')?.textContent ?? '').startsWith('SUCCESS'));
      const id = (await shop.locator('#order-id').innerText()).trim();

      // The initiate and the status check, as the log recorded them.
      const initiate = requestRows(dashboard).filter({ hasText: 'initiateWebTransaction' });
      await expect.poll(() => initiate.count(), { timeout: 10_000 }).toBe(1);
      expect(await initiate.innerText()).toContain(`partner ${PARTNER_ID}`);
      await expect.poll(() => requestRows(dashboard).filter({ hasText: 'getWebTransactionStatus' }).count(), { timeout: 10_000 }).toBeGreaterThan(0);

      // The transaction, from the list of those seen, with its timeline.
      await dashboard.getByRole('button', { name: `web ${id}`, exact: true }).click();
      const detail = dashboard.locator('#transaction-detail');
      await expect.poll(() => detail.locator('dd').first().innerText(), { timeout: 10_000 }).toBe('SUCCESS');
      await expect.poll(() => detail.locator('ol.timeline').innerText(), { timeout: 10_000 }).toMatch(/webhook transactionStatus attempt 1 → 200/);
      const timeline = await detail.locator('ol.timeline li').allInnerTexts();
      const created = timeline.findIndex((line) => line.includes('created (web)'));
      const success = timeline.findIndex((line) => line.includes('became SUCCESS'));
      const attempt = timeline.findIndex((line) => line.includes('attempt 1 → 200'));
      expect(created).toBeGreaterThanOrEqual(0);
      expect(success).toBeGreaterThan(created);
      expect(attempt).toBeGreaterThan(created);
      expect(await detail.innerText()).toContain('₹1,500.00');

      // The webhook, with its attempt, in the Webhooks list.
      const delivery = dashboard.locator('#delivery-list article', { hasText: id });
      await expect.poll(() => delivery.locator('ol.attempts li').first().innerText(), { timeout: 10_000 }).toContain('HTTP 200');
      expect(await delivery.locator('[data-status]').innerText()).toBe('delivered');
      await shot(dashboard, 'checkout');
      await shop.close();
    }));

  it("shows a failing receiver's attempts, and a resend that succeeds once the receiver answers 200", () =>
    withDashboard(async (dashboard) => {
      receiverStatus = 500;
      await initiateSdk('dash_fail_1');
      // Confirmed from the dashboard's own control, which shows its curl line.
      await dashboard.fill('#control-panel input:not([type])', 'dash_fail_1');
      const confirmLine = dashboard.locator('#control-panel code', { hasText: '/sandbox/sdk/transactions/dash_fail_1/confirm' });
      expect(await confirmLine.innerText()).toBe(`curl -s -X POST '${sandbox!.url}/sandbox/sdk/transactions/dash_fail_1/confirm'`);
      await dashboard.locator('#control-panel').getByRole('button', { name: 'Confirm' }).click();
      await expect.poll(() => dashboard.locator('#control-result').innerText()).toContain('→ 200');

      const delivery = dashboard.locator('#delivery-list article', { hasText: 'dash_fail_1' });
      await expect.poll(() => delivery.first().locator('ol.attempts').innerText(), { timeout: 10_000 }).toContain('HTTP 500');
      // The start of the receiver's answer, with the attempt.
      expect(await delivery.first().locator('ol.attempts li').first().innerText()).toContain('answered receiver down');
      expect(await delivery.first().innerText()).toMatch(/next attempt due \d{4}-/);
      await shot(dashboard, 'failing-receiver');

      receiverStatus = 200;
      await delivery.first().getByRole('button', { name: 'Resend' }).click();
      await expect.poll(() => delivery.count(), { timeout: 10_000 }).toBe(2);
      await expect.poll(() => dashboard.locator('#delivery-list article', { hasText: 'dash_fail_1' }).filter({ hasText: 'HTTP 200' }).count(), { timeout: 10_000 }).toBe(1);
      const resent = dashboard.locator('#delivery-list article', { hasText: 'dash_fail_1' }).filter({ hasText: 'HTTP 200' });
      expect(await resent.locator('[data-status]').innerText()).toBe('delivered');
      expect(await dashboard.locator('#control-result').innerText()).toContain('/resend');
      await shot(dashboard, 'resend');
    }));

  it('finds the request of a 401 by the request id of its error, with the reason, credentials redacted', () =>
    withDashboard(async (dashboard) => {
      const password = 'wrong-password-3f9a';
      const answer = await fetch(`${sandbox!.url}/api/merchant/m_1`, {
        headers: { Authorization: `Basic ${Buffer.from(`pg_test:${password}`).toString('base64')}` },
    });
    expect(answer.status).toBe(401);
    const requestId = ((await answer.json()) as { requestId: string }).requestId;
    await initiateSdk('dash_after_401');

    await dashboard.getByLabel('Request id').fill(requestId);
    await dashboard.getByLabel('Request id').press('Enter');
    await expect.poll(() => requestRows(dashboard).count(), { timeout: 10_000 }).toBe(1);
    const row = await requestRows(dashboard).innerText();
    expect(row).toContain('401');
    expect(row).toContain('Invalid HTTP Basic credentials');
    const detail = dashboard.locator('#request-detail');
    await expect.poll(() => detail.innerText(), { timeout: 10_000 }).toContain('Authorization: Basic [redacted]');
    expect(await detail.innerText()).not.toContain(Buffer.from(`pg_test:${password}`).toString('base64'));
    await shot(dashboard, 'request-401');
    }));

  it('shows an advance of the clock expiring an open transaction, live', () =>
    withDashboard(async (dashboard) => {
      await initiateSdk('dash_expire_1');
      const form = dashboard.locator('#transaction-open');
      await form.getByLabel('Id').fill('dash_expire_1');
      await form.getByRole('button', { name: 'Open' }).click();
      const detail = dashboard.locator('#transaction-detail');
      await expect.poll(() => detail.locator('dd').first().innerText()).toBe('PENDING');

      const advanced = await fetch(`${sandbox!.url}/sandbox/clock/advance`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ ms: 61_000 }),
    });
    expect(advanced.status).toBe(200);
    await expect.poll(() => detail.locator('dd').first().innerText(), { timeout: 10_000 }).toBe('FAILURE');
    expect(await detail.locator('dd').nth(1).innerText()).toBe('EXPIRED');
    await expect.poll(() => detail.locator('ol.timeline').innerText()).toMatch(/became FAILURE \(EXPIRED\)/);
    await shot(dashboard, 'expired');
    }));
});

describe('the dashboard of a hosted sandbox', () => {
  const OTHER = { id: 'testPartnerId', key: 'testPrivateKey' };

  /** A signed SDK initiate of `partner` on `base`, then its confirm (signed as that partner). */
  async function paidSdk(base: string, partner: { id: string; key: string }, id: string): Promise<void> {
    const body = JSON.stringify({ merchantTransactionId: id, userPhoneNumber: '+919000000002', userId: 'u_2', amount: 120_000 });
    const initiated = await fetch(`${base}/merchant/credit/initiateTransaction`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'X-Partnerid': partner.id, 'X-Signature': sdkSignature(body, partner.key) },
      body,
    });
    expect(initiated.status).toBe(201);
    const path = `/sandbox/sdk/transactions/${id}/confirm`;
    const confirmed = await fetch(`${base}${path}`, { method: 'POST', headers: { 'X-Partner-Id': partner.id, 'X-Signature': webSignature('', path, partner.key) } });
    expect(confirmed.status).toBe(200);
  }

  it("shows a partner signed in its own requests, transactions and webhooks, and nothing of another partner's", async () => {
    const hosted = await createSandbox({ config: { hosted: true, operatorToken: 'operator-token-for-the-e2e-test', partner: { webhookUrl: `${sandbox!.url}/no-receiver` } } });
    const base = await hosted.listen(0);
    // bypassCSP: axe-core is injected to check the sign-in form.
    const context = await browser!.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
    const problems: string[] = [];
    context.on('response', (response) => {
      const expected =
        // The page's first read, before the sign-in (and the one with a wrong key); the other partner's transaction opened.
        (response.status() === 401 && response.url().endsWith('/sandbox/clock')) || (response.status() === 404 && response.url().includes('hosted_a_1'));
      if (response.status() >= 400 && !expected) problems.push(`HTTP ${response.status()} for ${response.url()}`);
    });
    try {
      await paidSdk(base, { id: PARTNER_ID, key: KEY }, 'hosted_a_1');
      await paidSdk(base, OTHER, 'hosted_b_1');
      const page = await context.newPage();
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      await page.goto(`${base}/dashboard`, { waitUntil: 'load' });
      const form = page.locator('#access-form');
      await form.waitFor();
      expect(await seriousAxeFindings(page)).toEqual([]);
      // A wrong key is refused, and says so.
      await form.getByLabel('Partner id').fill(OTHER.id);
      await form.getByLabel('Private key').fill('not-the-key');
      await form.getByRole('button', { name: 'Sign in' }).click();
      await expect.poll(() => page.locator('#access-note').innerText()).toContain('did not accept');
      await form.getByLabel('Private key').fill(OTHER.key);
      await form.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForFunction(() => document.getElementById('live')?.textContent === 'live');
      expect(await page.locator('#who').innerText()).toContain(`partner ${OTHER.id}`);
      expect(await page.locator('#access').isHidden()).toBe(true);

      // Its own: the requests, the transaction seen, the webhook.
      await expect.poll(() => requestRows(page).filter({ hasText: `initiateSdkTransaction` }).count(), { timeout: 10_000 }).toBe(1);
      expect(await requestRows(page).filter({ hasText: 'initiateSdkTransaction' }).innerText()).toContain(`partner ${OTHER.id}`);
      await expect.poll(() => page.locator('#delivery-list article', { hasText: 'hosted_b_1' }).count(), { timeout: 10_000 }).toBe(1);
      await page.getByRole('button', { name: 'sdk hosted_b_1', exact: true }).click();
      await expect.poll(() => page.locator('#transaction-detail dd').first().innerText()).toBe('SUCCESS');
      // The control's curl line names the credential by variables, never the key.
      expect(await page.locator('#control-panel').innerText()).toContain(`-H 'X-Partner-Id: ${OTHER.id}' -H "X-Signature: $SIGNATURE"`);

      // A new request of the other partner, while the page is open, does not appear either.
      await paidSdk(base, { id: PARTNER_ID, key: KEY }, 'hosted_a_2');
      await paidSdk(base, OTHER, 'hosted_b_2');
      await expect.poll(() => page.getByRole('button', { name: 'sdk hosted_b_2', exact: true }).count(), { timeout: 10_000 }).toBe(1);
      await expect.poll(() => requestRows(page).filter({ hasText: `initiateSdkTransaction` }).count(), { timeout: 10_000 }).toBe(2);
      for (const row of await requestRows(page).allInnerTexts()) expect(row).not.toContain(PARTNER_ID);
      await expect.poll(() => page.locator('#delivery-list article', { hasText: 'hosted_b_2' }).count(), { timeout: 10_000 }).toBe(1);
      const text = await page.locator('main').innerText();
      expect(text).not.toContain('hosted_a_');
      expect(text).not.toContain(`partner ${PARTNER_ID}`);
      expect(await page.locator('main').innerHTML()).not.toContain(OTHER.key);

      // Opening the other partner's transaction by its id answers as if it did not exist.
      const open = page.locator('#transaction-open');
      await open.getByLabel('Id').fill('hosted_a_1');
      await open.getByRole('button', { name: 'Open' }).click();
      await expect.poll(() => page.locator('#transaction-detail dd').first().innerText()).toContain('404');
      expect(await page.locator('#transaction-detail ol.timeline li').count()).toBe(0);
      await shot(page, 'hosted-partner');
      expect(problems).toEqual([]);
    } finally {
      await context.close();
      await hosted.close();
    }
  });
});

describe('accessibility', () => {
  it('has no serious or critical finding of axe-core, with requests, a transaction and webhooks shown', () =>
    withDashboard(async (dashboard) => {
      // Keyboard: the skip link first, and it moves the focus to the requests.
      await dashboard.keyboard.press('Tab');
      expect(await dashboard.evaluate(() => document.activeElement?.textContent)).toBe('Skip to the requests');
      await dashboard.keyboard.press('Enter');
      await dashboard.keyboard.press('Tab');
      expect(await dashboard.evaluate(() => document.activeElement?.closest('section')?.id)).toBe('requests');
      await initiateSdk('dash_axe_1');
      await expect.poll(() => requestRows(dashboard).count(), { timeout: 10_000 }).toBeGreaterThan(0);
      await requestRows(dashboard).first().getByRole('button').click();
      await dashboard.locator('#request-detail:not([hidden])').waitFor();
      await dashboard.getByRole('button', { name: 'sdk dash_axe_1', exact: true }).click();
      await dashboard.locator('#transaction-detail:not([hidden])').waitFor();
      expect(await seriousAxeFindings(dashboard)).toEqual([]);

    await shot(dashboard, 'overview');
    }, { bypassCSP: true }));
});

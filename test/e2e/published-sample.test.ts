/**
 * The service's own web sample, played as a new user runs it: pages written the way
 * `bharatx-in/BharatX-Sample-Web-SDK-Integration-PHP` (revision 5720a2aa) writes `popup.html` and
 * `redirect.html` (a form, a click handler calling `initiateBharatXTransaction({...})` at once,
 * `getTransactionId` asking the shop's server), and a server that does what its
 * `start-transaction.php` does (the body as `json_encode` writes it, signed over body + path + key
 * with the published test credentials `testPartnerId` / `testPrivateKey`, no `redirect`). The
 * sandbox runs with its defaults, so the published credentials are accepted out of the box (D72).
 *
 * Two differences, both outside what the service sees: the sample loads jQuery from a CDN (no
 * machine here reaches one), so the page's `getTxnId` posts the form with `fetch`; and the sample
 * loads `https://web.bharatx.tech/sdk.js`, here the sandbox's `/sdk.js`. Its `alert`s are kept and
 * read as dialogs.
 *
 * Needs Chromium at /usr/bin/chromium (or CHROMIUM_PATH): `bash .ci/e2e-setup.sh`. See docs/e2e.md.
 */
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLISHED_TEST_PARTNER } from '../../src/sandbox/fixtures.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/server.js';
import { launchChromium } from './browser.js';

const SHOPPER = { name: 'Asha Rao', phone: '9000000001', email: 'asha@example.in' };

let browser: Browser | undefined;
let sandbox: Sandbox | undefined;
let shop: Server | undefined;
let shopUrl = '';
/** What the shop's start-transaction answered, newest last. */
const started: { id: string; statusCode: number; apiResult: string }[] = [];

/** The sample's page: its form and its click handler, with `initiateBharatXTransaction`'s options as written there. */
function samplePage(sdkUrl: string, type: 'popup' | 'redirect'): string {
  const flowOptions =
    type === 'popup'
      ? `type: "popup",
                    getTransactionId: getTxnId,
                    partnerId,
                    amount: Number.parseInt(document.getElementById("amount").value),
                    phoneNumber: "+91" + document.getElementById("phone").value,
                    redirectUrl: "https://bharatx.tech/",
                    successCallback: () => {
                        alert("TRANSACTION SUCCESSFUL!")
                    },
                    failureCallback: (status) => {
                        alert("TRANSACTION FAILURE:" + status);
                    }`
      : `type: "redirect",
                    getTransactionId: getTxnId,
                    partnerId,
                    amount: Number.parseInt(document.getElementById("amount").value),
                    phoneNumber: "+91" + document.getElementById("phone").value,
                    redirectUrl: "${shopUrl}/payment-status/?mode=TEST",
                    redirectFailureCallback: (status) => {
                        alert("TRANSACTION FAILED: " + status);
                    },`;
  return `<html>
    <head>
        <title>Web SDK | Sample Integration | PHP</title>
        <script src="${sdkUrl}"></script>
    </head>
    <body>
        <form id="txn-form">
            <label for="name">Name: </label>
            <input id="name" type="text" name="name"/> </br>
            <label for="phone">Phone Number without country code: </label>
            <input id="phone" type="text" name="phone"/> </br>
            <label for="email">Email: </label>
            <input id="email" type="email" name="email" /> </br>
            <label for="amount">Amount in paise: </label>
            <input id="amount" type="number" name="amount"/>
            <button type="button" id="bx-button">Start Transaction</button>
        </form>
        <script>
            document.getElementById("txn-form").addEventListener("submit", (e) => e.preventDefault());

            async function getTxnId() {
                const response = await fetch("/start-transaction.php", {
                    method: "POST",
                    body: new URLSearchParams(new FormData(document.getElementById("txn-form"))),
                });
                if (!response.ok) throw new Error("HTTP " + response.status);
                return (await response.json()).merchant_txn_id;
            }

            const partnerId = "${PUBLISHED_TEST_PARTNER.id}";

            document.getElementById("bx-button").addEventListener("click", (e) => {
                initiateBharatXTransaction({
                    ${flowOptions}
                });
            });
        </script>
    </body>
</html>
`;
}

/** PHP's uniqid(): 13 hex digits from the time. */
function uniqid(): string {
  const micros = BigInt(Date.now()) * 1000n + BigInt(started.length);
  return micros.toString(16).padStart(13, '0').slice(-13);
}

/** What start-transaction.php does: json_encode, the web signature with the published key, curl. */
async function startTransaction(form: URLSearchParams): Promise<string> {
  const id = uniqid();
  const body = JSON.stringify({
    id,
    amount: Number.parseInt(form.get('amount') ?? '', 10),
    user: { name: form.get('name'), email: form.get('email'), phoneNumber: `+91${form.get('phone') ?? ''}` },
  });
  const path = '/api/transaction';
  const signature = createHash('sha256').update(body + path + PUBLISHED_TEST_PARTNER.privateKey).digest('base64');
  const response = await fetch(`${sandbox!.url}${path}`, {
    method: 'POST',
    body,
    headers: { 'Content-Type': 'application/json', 'x-partner-id': PUBLISHED_TEST_PARTNER.id, 'x-signature': signature },
  });
  const apiResult = await response.text();
  started.push({ id, statusCode: response.status, apiResult });
  return JSON.stringify({ api_result: apiResult, status_code: response.status, merchant_txn_id: id });
}

beforeAll(async () => {
  sandbox = await createSandbox({ logger: { info: () => undefined, warn: () => undefined, error: () => undefined } });
  await sandbox.listen(0);
  shop = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://localhost');
    const send = (status: number, type: string, text: string) => {
      response.writeHead(status, { 'Content-Type': type });
      response.end(text);
    };
    if (url.pathname === '/popup.html' || url.pathname === '/redirect.html') {
      send(200, 'text/html; charset=utf-8', samplePage(`${sandbox!.url}/sdk.js`, url.pathname === '/popup.html' ? 'popup' : 'redirect'));
    } else if (url.pathname === '/start-transaction.php' && request.method === 'POST') {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        startTransaction(new URLSearchParams(Buffer.concat(chunks).toString('utf8'))).then(
          (text) => send(200, 'application/json', text),
          (error: unknown) => send(500, 'text/plain', String(error)),
        );
      });
    } else if (url.pathname === '/favicon.ico') {
      send(204, 'image/x-icon', '');
    } else if (url.pathname === '/payment-status/') {
      send(200, 'text/html; charset=utf-8', '<html><body><h1>Payment status</h1></body></html>');
    } else {
      send(404, 'text/plain', 'not found');
    }
  });
  await new Promise<void>((done) => shop!.listen(0, '127.0.0.1', done));
  shopUrl = `http://127.0.0.1:${(shop.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  try {
    await browser?.close();
  } finally {
    try {
      await sandbox?.close();
    } finally {
      await new Promise<void>((done) => (shop === undefined ? done() : shop.close(() => done())));
    }
  }
});

interface Visit {
  context: BrowserContext;
  page: Page;
  dialogs: string[];
  problems: string[];
}

async function visit(path: string): Promise<Visit> {
  const context = await browser!.newContext();
  const visit: Visit = { context, page: undefined as unknown as Page, dialogs: [], problems: [] };
  context.on('page', (page) => {
    page.on('pageerror', (error) => visit.problems.push(`page error on ${page.url()}: ${error.message}`));
    page.on('console', (message) => {
      if (message.type() === 'error') visit.problems.push(`console error on ${page.url()}: ${message.text()}`);
    });
    page.on('dialog', (dialog) => {
      visit.dialogs.push(dialog.message());
      void dialog.accept();
    });
  });
  visit.page = await context.newPage();
  await visit.page.goto(`${shopUrl}${path}`);
  return visit;
}

async function fillForm(page: Page, amount: string): Promise<void> {
  await page.fill('#name', SHOPPER.name);
  await page.fill('#phone', SHOPPER.phone);
  await page.fill('#email', SHOPPER.email);
  await page.fill('#amount', amount);
}

async function confirmOnHostedPage(page: Page): Promise<void> {
  await page.waitForSelector('#otp');
  await page.fill('#otp', '123456');
  await page.press('#otp', 'Enter');
  await page.waitForSelector('#step-pay:not([hidden])');
  await page.click('#pay-submit');
}

describe("the service's PHP web sample, unchanged in what it sends", () => {
  it('popup.html: the click calls initiateBharatXTransaction, the published credentials initiate, success reaches successCallback', async () => {
    const v = await visit('/popup.html');
    try {
      await fillForm(v.page, '30000');
      const opened = v.page.waitForEvent('popup');
      await v.page.click('#bx-button');
      const popup = await opened;
      await popup.waitForURL(/\/checkout\//);
      const initiated = started.at(-1)!;
      expect(initiated.statusCode).toBe(200);
      expect(JSON.parse(initiated.apiResult)).toMatchObject({ message: 'TRANSACTION_INITIATED' });
      expect(popup.url()).toContain(`/checkout/${initiated.id}?`);
      await confirmOnHostedPage(popup);
      await expect.poll(() => v.dialogs).toEqual(['TRANSACTION SUCCESSFUL!']);
      expect(v.problems).toEqual([]);
    } finally {
      await v.context.close();
    }
  });

  it('popup.html: Cancel on the hosted page reaches failureCallback with CANCELLED', async () => {
    const v = await visit('/popup.html');
    try {
      await fillForm(v.page, '30000');
      const opened = v.page.waitForEvent('popup');
      await v.page.click('#bx-button');
      const popup = await opened;
      await popup.waitForSelector('#otp');
      await popup.click('#cancel');
      await expect.poll(() => v.dialogs).toEqual(['TRANSACTION FAILURE:CANCELLED']);
    } finally {
      await v.context.close();
    }
  });

  it('redirect.html: the hosted page returns to the return URL with its own query and tid', async () => {
    const v = await visit('/redirect.html');
    try {
      await fillForm(v.page, '30000');
      await v.page.click('#bx-button');
      await v.page.waitForURL(/\/checkout\//);
      const initiated = started.at(-1)!;
      expect(initiated.statusCode).toBe(200);
      await confirmOnHostedPage(v.page);
      await v.page.waitForURL((url) => url.pathname === '/payment-status/');
      expect(v.page.url()).toBe(`${shopUrl}/payment-status/?mode=TEST&tid=${initiated.id}`);
      const status = await fetch(`${sandbox!.url}/api/transaction/status?id=${initiated.id}`, {
        headers: { 'X-Partner-Id': PUBLISHED_TEST_PARTNER.id },
      });
      expect(await status.json()).toMatchObject({ transactionId: initiated.id, status: 'SUCCESS' });
      expect(v.dialogs).toEqual([]);
      expect(v.problems).toEqual([]);
    } finally {
      await v.context.close();
    }
  });

  it('a failing getTransactionId reaches redirectFailureCallback with GET_TXN_ID_FAILED before any redirect', async () => {
    const v = await visit('/redirect.html');
    try {
      // The shop's server is down: the sample's getTxnId rejects.
      await v.page.route('**/start-transaction.php', (route) => route.fulfill({ status: 500, body: 'down' }));
      await fillForm(v.page, '30000');
      await v.page.click('#bx-button');
      await expect.poll(() => v.dialogs).toEqual(['TRANSACTION FAILED: GET_TXN_ID_FAILED']);
      expect(new URL(v.page.url()).pathname).toBe('/redirect.html');
    } finally {
      await v.context.close();
    }
  });
});

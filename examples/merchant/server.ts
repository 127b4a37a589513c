/**
 * An example merchant of the web flow: a product page that takes pay-later payments with sdk.js.
 *
 *   npx tsx examples/merchant/server.ts      # then open http://127.0.0.1:4001/
 *
 * See README.md. In your own project import from 'paylater-api/clients/web', 'paylater-api/signature'
 * and 'paylater-api/webhooks' instead of ../../src.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pathToFileURL } from 'node:url';
import { baseUrlFromEnvironment, DEFAULT_SANDBOX_URL } from '../../src/cli/urls.js';
import { createWebClient } from '../../src/clients/web.js';
import { APPROVED_TEST_USER, TEST_CREDENTIALS } from '../../src/sandbox/fixtures.js';
import { verifyStatusSignature } from '../../src/signature.js';
import { createWebhookHandler, type VerifiedWebWebhook } from '../../src/webhooks/index.js';

export interface MerchantOptions {
  port?: number;
  sandboxUrl?: string;
  partnerId?: string;
  privateKey?: string;
}

/** The one product of the shop, and the shopper (a sandbox test user). */
const PRODUCT = { name: 'Handwoven cotton kurta', amount: 150_000 };
const SHOPPER = { name: APPROVED_TEST_USER.name, phoneNumber: APPROVED_TEST_USER.phoneNumber };

export async function startMerchant(options: MerchantOptions = {}) {
  // PAYLATER_BASE_URL, as the guides' servers (PAYLATER_SANDBOX_URL, its name in 2.0.0, still works, with a warning).
  const sandboxUrl = options.sandboxUrl ?? baseUrlFromEnvironment()?.value ?? DEFAULT_SANDBOX_URL;
  // Default: the sandbox's published test partner (partner_test, test_private_key); an empty variable counts as unset.
  const partnerId = options.partnerId ?? (process.env.PAYLATER_PARTNER_ID || TEST_CREDENTIALS.partner.id);
  const privateKey = options.privateKey ?? (process.env.PAYLATER_PRIVATE_KEY || TEST_CREDENTIALS.partner.privateKey);
  const paylater = createWebClient({ baseUrl: sandboxUrl, partnerId, privateKey });
  const webhooks: VerifiedWebWebhook[] = [];
  const onWebhook = createWebhookHandler({ family: 'web', secret: privateKey, onEvent: (event) => void webhooks.push(event) });
  const json = (res: ServerResponse, status: number, body: unknown) =>
    res.writeHead(status, { 'Content-Type': 'application/json' }).end(JSON.stringify(body));

  const handle = async (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://merchant.local');
    const origin = `http://${req.headers.host ?? '127.0.0.1'}`;
    if (req.method === 'GET' && url.pathname === '/') {
      const config = JSON.stringify({ partnerId, amount: PRODUCT.amount, phoneNumber: SHOPPER.phoneNumber });
      const page = readFileSync(new URL('./index.html', import.meta.url), 'utf8')
        .replaceAll('{{SANDBOX_URL}}', () => encodeURI(sandboxUrl))
        .replaceAll('{{CONFIG}}', () => config.replaceAll('<', '\\u003c'));
      return res.writeHead(200, { 'Content-Type': 'text/html; charset=utf-8' }).end(page);
    }
    if (req.method === 'GET' && url.pathname === '/logo.svg') {
      return res.writeHead(200, { 'Content-Type': 'image/svg+xml' }).end(readFileSync(new URL('./logo.svg', import.meta.url)));
    }
    if (req.method === 'POST' && url.pathname === '/api/checkout') {
      // Initiate server-side (signed with the private key); the page only learns the id.
      const id = `order_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
      const redirect = { url: `${origin}/?order=${id}`, logoOverride: `${origin}/logo.svg`, colorOverride: '#b4233c' };
      const { data, error } = await paylater.POST('/api/transaction', { body: { id, amount: PRODUCT.amount, user: SHOPPER, redirect } });
      return data ? json(res, 200, { transactionId: id }) : json(res, 502, { error: error?.message ?? 'initiate failed' });
    }
    const order = /^\/api\/orders\/([A-Za-z0-9_-]{1,64})$/.exec(url.pathname);
    if (req.method === 'GET' && order?.[1] !== undefined) {
      // Never trust the browser: ask the service, and check the status signature (D22).
      const id = order[1];
      const { data } = await paylater.GET('/api/transaction/status', { params: { query: { id } } });
      if (!data) return json(res, 404, { error: 'unknown order' });
      const verified = verifyStatusSignature(data.signature, id, data.status, privateKey);
      const webhook = webhooks.find((event) => event.payload.transactionId === id);
      return json(res, 200, { transactionId: id, status: data.status, signatureVerified: verified, webhookStatus: webhook?.payload.status ?? null });
    }
    const refund = /^\/api\/orders\/([A-Za-z0-9_-]{1,64})\/refund$/.exec(url.pathname);
    if (req.method === 'POST' && refund?.[1] !== undefined) {
      // A full refund (no amount: whatever is not refunded yet), signed by the client like every
      // web call: body + "/api/refund" + private key. In a real shop, only staff may do this.
      const { data, error } = await paylater.POST('/api/refund', { body: { transactionId: refund[1] } });
      return data ? json(res, 200, { refunded: true }) : json(res, 409, { error: error?.message ?? 'refund failed' });
    }
    if (req.method === 'POST' && url.pathname === '/webhooks/paylater') return onWebhook(req, res);
    json(res, 404, { error: 'not found' });
  };
  const server = createServer((req, res) => void handle(req, res).catch(() => json(res, 502, { error: 'pay-later service unreachable' })));

  await new Promise<void>((resolve) => server.listen(options.port ?? Number(process.env.PORT ?? 4001), '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()).closeAllConnections());
  return { url, webhooks, close };
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const merchant = await startMerchant();
  console.log(`Example merchant on ${merchant.url}/ (webhooks: ${merchant.url}/webhooks/paylater)`);
}
